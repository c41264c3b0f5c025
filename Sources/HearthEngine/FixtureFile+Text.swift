import HearthCore

extension FixtureFile {
    /// The dataset as readable JSON in a stable form, so that two exports diff line by line: users in the
    /// given order, documents in path order, one field per line with keys in UTF-8 order, then the objects in
    /// path order, one per line.
    public var text: String {
        var out = "{\n  \"users\": ["
        for (i, user) in users.enumerated() {
            out += i == 0 ? "\n    " : ",\n    "
            var pairs: [(String, JSON)] = [("uid", .string(user.uid)), ("email", .string(user.email)),
                                           ("password", .string(user.password))]
            if !user.claims.isEmpty { pairs.append(("claims", Self.json(Value.map(user.claims)))) }
            out += Self.inline(.object(pairs), sortKeys: false)
        }
        out += users.isEmpty ? "],\n" : "\n  ],\n"
        out += "  \"documents\": {"
        for (i, doc) in documents.enumerated() {
            out += i == 0 ? "\n    " : ",\n    "
            out += Self.quoted(doc.path.description) + ": "
            guard case .object(let fields) = doc.data, !fields.isEmpty else {
                out += Self.inline(doc.data, sortKeys: true)
                continue
            }
            out += "{"
            for (k, (key, value)) in Self.sorted(fields).enumerated() {
                out += (k == 0 ? "\n      " : ",\n      ") + Self.quoted(key) + ": " + Self.inline(value, sortKeys: true)
            }
            out += "\n    }"
        }
        out += documents.isEmpty ? "}" : "\n  }"
        // Only a dataset with objects has the key, so a documents-only export reads as before.
        if !files.isEmpty {
            out += ",\n  \"files\": {"
            for (i, file) in files.enumerated() {
                var pairs: [(String, JSON)] = [("source", .string(file.source))]
                if let type = file.contentType { pairs.append(("contentType", .string(type))) }
                if !file.metadata.isEmpty {
                    pairs.append(("metadata", .object(Self.sorted(file.metadata.map { ($0.key, JSON.string($0.value)) }))))
                }
                out += (i == 0 ? "\n    " : ",\n    ") + Self.quoted(file.path.name) + ": " + Self.inline(.object(pairs), sortKeys: false)
            }
            out += "\n  }"
        }
        return out + "\n}\n"
    }

    static func json(_ value: Value) -> JSON {
        (try? JSON.parse(value.wireBytes)) ?? .null
    }

    static func sorted(_ pairs: [(String, JSON)]) -> [(String, JSON)] {
        pairs.sorted { utf8Less($0.0, $1.0) }
    }

    static func quoted(_ s: String) -> String {
        var w = JSONWriter()
        w.string(s)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// One value on one line, with a space after each `:` and `,`.
    static func inline(_ json: JSON, sortKeys: Bool) -> String {
        switch json {
        case .array(let items):
            return "[" + items.map { inline($0, sortKeys: sortKeys) }.joined(separator: ", ") + "]"
        case .object(let pairs):
            let ordered = sortKeys ? sorted(pairs) : pairs
            return "{" + ordered.map { quoted($0.0) + ": " + inline($0.1, sortKeys: sortKeys) }.joined(separator: ", ") + "}"
        default:
            var w = JSONWriter()
            w.write(json)
            return String(decoding: w.bytes, as: UTF8.self)
        }
    }
}
