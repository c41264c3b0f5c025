import HearthCore

/// The rules checks of live updates, with the listener's own identity: when a target is added (`get` for a
/// document, `list` for a query) and for each change delivered to a document target. Admin bypasses.
public struct ListenAuthorizer: Sendable {
    /// The target as the identity may listen to it (a query's document cursors replaced by the values of the
    /// documents they name); throws `permission-denied` when it may not.
    public var admitTarget: @Sendable (Identity, ListenTarget) throws -> ListenTarget
    /// Throws `permission-denied` when the identity may no longer read the document (nil when missing).
    public var authorizeRead: @Sendable (Identity, DocumentPath, Document?) throws -> Void

    /// Makes an authorizer from its two checks.
    public init(admitTarget: @escaping @Sendable (Identity, ListenTarget) throws -> ListenTarget,
                authorizeRead: @escaping @Sendable (Identity, DocumentPath, Document?) throws -> Void) {
        self.admitTarget = admitTarget
        self.authorizeRead = authorizeRead
    }
}

extension Database {
    /// The engine's own checks: the security rules' `get` (with the document as stored) and `list` (rules are
    /// not filters), as its reads and queries use them, cursors included.
    public var listenAuthorizer: ListenAuthorizer {
        ListenAuthorizer(
            admitTarget: { [self] identity, target in
                switch target {
                case .document(let path):
                    let stored = identity.isAdmin ? nil : try storage.pointRead { try $0.document(at: path) }
                    try authorizeRead(path: path, document: stored, identity: identity)
                    return target
                case .query(let query): return .query(try admit(query, as: identity))
                }
            },
            authorizeRead: { [self] identity, path, doc in
                try authorizeRead(path: path, document: doc.map(StoredDocument.init), identity: identity)
            })
    }
}
