import HearthCore

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
    /// The engine's own checks: the same `get` and `list` authorization its reads and queries use.
    public var listenAuthorizer: ListenAuthorizer {
        ListenAuthorizer(
            authorizeTarget: { [self] identity, target in
                switch target {
                case .document(let path): try authorize(identity, "get", path.description)
                case .query(let query): try authorizeQuery(query, identity)
                }
            },
            authorizeRead: { [self] identity, path, _ in try authorize(identity, "get", path.description) })
    }
}
