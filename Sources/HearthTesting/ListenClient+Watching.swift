import HearthCore

extension ListenClient {
    /// Connects as the holder of `token`, opens a document target and waits for its first snapshot.
    public static func watching(_ path: String, port: Int, token: String, id: String = "watched") async throws -> ListenClient {
        let client = try await connect(port: port, credentials: .header(token))
        try await client.listen(id, doc: path)
        _ = try await client.expect("snapshot", id: id)
        return client
    }

    /// Waits for the next snapshot of a target and answers the document its `type` change carries
    /// (`added`, `modified` or `removed`), failing when the snapshot has no such change of `path`.
    public func expectChange(_ type: String, of path: String, id: String = "watched") async throws -> JSON {
        let snapshot = try await expect("snapshot", id: id)
        guard case .array(let changes)? = snapshot["changes"],
              let change = changes.first(where: { $0["type"] == .string(type) && $0["doc"]?["path"] == .string(path) }),
              let doc = change["doc"] else {
            throw Failure(description: "expected a '\(type)' change of \(path) in \(String(decoding: snapshot.serialized(), as: UTF8.self).prefix(500))")
        }
        return doc
    }
}
