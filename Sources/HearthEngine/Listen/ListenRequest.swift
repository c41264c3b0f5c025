import HearthCore

/// A message from a listening client (docs/api.md, Live updates), parsed and checked.
public enum ListenRequest: Sendable, Equatable {
    /// Credentials, as the first message.
    case auth(token: String)
    /// Adds a target.
    case listen(id: String, target: ListenTarget, resumeToken: String?)
    /// Removes a target.
    case unlisten(id: String)
    /// Asks for a `pong`.
    case ping

    /// Parses one text message. The error names what was wrong; `targetID` is set when the message had one,
    /// so that the error frame can name the target.
    public static func parse(_ text: String) -> Result<ListenRequest, ListenRequestError> {
        let json: JSON
        do {
            json = try JSON.parse(text)
        } catch {
            return .failure(ListenRequestError(targetID: nil, error: .invalidArgument("the message is not JSON: \(error.message)")))
        }
        let targetID = json["id"]?.stringValue
        do {
            return .success(try parse(json))
        } catch {
            return .failure(ListenRequestError(targetID: targetID, error: error))
        }
    }

    static func parse(_ json: JSON) throws(HearthError) -> ListenRequest {
        guard case .object(let pairs) = json else {
            throw .invalidArgument("a message must be a JSON object, got \(json.kind)")
        }
        guard let type = json["type"] else { throw .invalidArgument("the message has no 'type'") }
        guard let name = type.stringValue else { throw .invalidArgument("'type' must be a string, got \(type.kind)") }
        switch name {
        case "auth":
            try checkKeys(pairs, ["type", "token"], name)
            return .auth(token: try string(json, "token", name))
        case "listen":
            try checkKeys(pairs, ["type", "id", "doc", "query", "resumeToken"], name)
            let id = try string(json, "id", name)
            let resume = try json["resumeToken"].map { value throws(HearthError) -> String in
                guard let s = value.stringValue else { throw .invalidArgument("'resumeToken' must be a string, got \(value.kind)") }
                return s
            }
            switch (json["doc"], json["query"]) {
            case (let doc?, nil):
                guard let path = doc.stringValue else { throw .invalidArgument("'doc' must be a document path string, got \(doc.kind)") }
                do {
                    return .listen(id: id, target: .document(try DocumentPath(path)), resumeToken: resume)
                } catch {
                    throw .invalidArgument("'doc': \(error.message)")
                }
            case (nil, let query?):
                return .listen(id: id, target: .query(try Query(json: query)), resumeToken: resume)
            case (nil, nil): throw .invalidArgument("a listen message needs 'doc' (a document path) or 'query' (a query)")
            default: throw .invalidArgument("a listen message takes 'doc' or 'query', not both")
            }
        case "unlisten":
            try checkKeys(pairs, ["type", "id"], name)
            return .unlisten(id: try string(json, "id", name))
        case "ping":
            try checkKeys(pairs, ["type"], name)
            return .ping
        default:
            throw .invalidArgument("unknown message type '\(name.prefix(64))' (expected auth, listen, unlisten or ping)")
        }
    }

    static func string(_ json: JSON, _ key: String, _ type: String) throws(HearthError) -> String {
        guard let value = json[key] else { throw .invalidArgument("a \(type) message needs '\(key)'") }
        guard let s = value.stringValue else { throw .invalidArgument("'\(key)' must be a string, got \(value.kind)") }
        return s
    }

    static func checkKeys(_ pairs: [(String, JSON)], _ allowed: [String], _ type: String) throws(HearthError) {
        for (key, _) in pairs where !allowed.contains(key) {
            throw .invalidArgument("unknown field '\(key.prefix(64))' in a \(type) message (allowed: \(allowed.joined(separator: ", ")))")
        }
    }
}

/// A message that could not be parsed, with the target it named, if any.
public struct ListenRequestError: Error, Sendable, Equatable {
    /// The `id` the message carried, when it had one.
    public var targetID: String?
    /// What was wrong.
    public var error: HearthError
}
