import HearthCore
import HearthStore

/// The rules checks of live updates, with the listener's own identity: when a target is added (`get` for a
/// document, `list` for a query) and for each change delivered to a document target. Admin bypasses.
public struct ListenAuthorizer: Sendable {
    /// Throws `permission-denied` when the identity may not add the target.
    public var authorizeTarget: @Sendable (Identity, ListenTarget) throws -> Void
    /// Throws `permission-denied` when the identity may no longer read the document (nil when missing).
    public var authorizeRead: @Sendable (Identity, DocumentPath, Document?) throws -> Void

    /// Makes an authorizer from its two checks.
    public init(authorizeTarget: @escaping @Sendable (Identity, ListenTarget) throws -> Void,
                authorizeRead: @escaping @Sendable (Identity, DocumentPath, Document?) throws -> Void) {
        self.authorizeTarget = authorizeTarget
        self.authorizeRead = authorizeRead
    }
}

extension Database {
    /// The engine's own checks: the security rules' `get` (with the document as stored) and `list` (rules are
    /// not filters), as its reads and queries use them.
    public var listenAuthorizer: ListenAuthorizer {
        ListenAuthorizer(
            authorizeTarget: { [self] identity, target in
                switch target {
                case .document(let path):
                    let stored = identity.isAdmin ? nil : try store.pointRead { try $0.document(at: path) }
                    try authorizeRead(path: path, document: stored, identity: identity)
                case .query(let query): try authorizeQuery(query, identity)
                }
            },
            authorizeRead: { [self] identity, path, doc in
                try authorizeRead(path: path, document: doc.map(StoredDocument.init), identity: identity)
            })
    }
}
