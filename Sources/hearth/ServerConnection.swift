import Foundation
import HearthCore
import HearthStore

/// A tool's way to the server that holds its data folder: the admin API over loopback HTTP or HTTPS, at the
/// address the server recorded in the folder (`DataFolderInUse.address`), with the admin key; over HTTPS
/// trusting exactly the certificate in the file the server recorded (`PinnedCertificate`). One connection per
/// request (`Connection: close`); the server answers it as it answers any admin client.
struct ServerConnection {
    /// The server's URL as it recorded it (`http://127.0.0.1:8080`, `https://127.0.0.1:8443`).
    let address: String
    /// For HTTPS, the certificate the server must present.
    let pinned: PinnedCertificate?
    let host: String
    let port: Int
    let adminKey: AdminKeySource
    /// The server's process id, as it recorded it, for messages.
    let pid: Int32?
    /// The data folder, for messages.
    let folder: String

    /// Seconds a request may wait for the server's next byte (a large fixture load takes a while).
    static let timeoutSeconds = 300

    /// Where the admin key comes from: `HEARTH_ADMIN_KEY` (what `hearth serve` reads too), else the folder's
    /// `admin.key` (what the server generated there when none was configured). No key is written anywhere.
    struct AdminKeySource {
        let key: String
        /// Named in the message when the server refuses the key.
        let origin: String

        static func find(folder: String) throws -> AdminKeySource {
            if let key = ProcessInfo.processInfo.environment["HEARTH_ADMIN_KEY"], !key.isEmpty {
                return AdminKeySource(key: key, origin: "HEARTH_ADMIN_KEY")
            }
            let path = (folder as NSString).appendingPathComponent("admin.key")
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw ToolError("the server that holds \(folder) takes the tool's changes with its admin key, and \(path) "
                                + "cannot be read; nothing was changed. Set HEARTH_ADMIN_KEY to the key the server was started with")
            }
            let key = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !key.isEmpty else {
                throw ToolError("\(path) is empty; nothing was changed. Set HEARTH_ADMIN_KEY to the server's admin key")
            }
            return AdminKeySource(key: key, origin: path)
        }
    }

    /// A connection to the server that holds `folder`, as its owner record names it.
    init(folder: String, holder inUse: DataFolderInUse) throws {
        guard let address = inUse.address, let parsed = Self.parse(address) else {
            throw ToolError("the data folder \(folder) is held by \(DataFolderAccess.who(inUse)), whose recorded address "
                            + "'\(inUse.address ?? "")' cannot be read; nothing was changed")
        }
        if parsed.secure {
            guard let certificate = inUse.certificate else {
                throw ToolError("the data folder \(folder) is held by \(DataFolderAccess.who(inUse)), which serves HTTPS "
                                + "(\(address)) but has not recorded its certificate file (an older version); nothing was changed")
            }
            do throws(ToolError) {
                pinned = try PinnedCertificate(path: certificate)
            } catch {
                throw ToolError("the data folder \(folder) is held by \(DataFolderAccess.who(inUse)), which serves HTTPS "
                                + "(\(address)) with the certificate in \(certificate), and the tool trusts only that: "
                                + "\(error.description); nothing was changed")
            }
        } else {
            pinned = nil
        }
        self.address = address
        (host, port) = (parsed.host, parsed.port)
        self.pid = inUse.holder
        self.folder = folder
        adminKey = try AdminKeySource.find(folder: folder)
    }

    /// Host and port of `http://host:port` or `https://host:port` (an IPv6 host in brackets).
    static func parse(_ address: String) -> (host: String, port: Int, secure: Bool)? {
        let secure = address.hasPrefix("https://")
        guard secure || address.hasPrefix("http://") else { return nil }
        let rest = address.dropFirst(secure ? "https://".count : "http://".count)
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        var host = String(rest[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port, secure)
    }

    /// A path segment (a uid) percent-encoded for a request path.
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#%")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// What the server is called in messages.
    var server: String { "hearth serve" + (pid.map { " (pid \($0))" } ?? "") + " at \(address)" }

    /// Sends an admin request; answers the JSON of a successful answer (`.null` when it has no body) and
    /// throws the server's own error for any other, so a tool fails as it would on the file.
    func send(_ method: String, _ path: String, body: [UInt8]? = nil, contentType: String = "application/json",
              headers: [(String, String)] = []) throws -> JSON {
        let (status, bytes) = try exchange(method, path, body: body, contentType: contentType, headers: headers)
        if (200..<300).contains(status) {
            if bytes.isEmpty { return .null }
            do { return try JSON.parse(bytes) } catch {
                throw ToolError("\(server) answered \(method) \(path) with a body that is not JSON")
            }
        }
        let error = (try? JSON.parse(bytes))?["error"]
        let code = error?["code"]?.stringValue.flatMap(HearthError.Code.init(rawValue:))
        let message = error?["message"]?.stringValue
        if status == 401 {
            throw ToolError("\(server) refused the admin key from \(adminKey.origin) (\(message ?? "401")); nothing was "
                            + "changed. Set HEARTH_ADMIN_KEY to the key the server was started with")
        }
        guard let code, let message else { throw ToolError("\(server) answered \(method) \(path) with status \(status)") }
        throw HearthError(code, message)
    }

    /// One request and its answer: status and body.
    private func exchange(_ method: String, _ path: String, body: [UInt8]?, contentType: String,
                          headers: [(String, String)]) throws -> (Int, [UInt8]) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
            + "Authorization: Bearer \(adminKey.key)\r\nConnection: close\r\n"
        if body != nil { head += "Content-Type: \(contentType)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method != "GET" { head += "Content-Length: \(body?.count ?? 0)\r\n" }
        head += "\r\n"
        do throws(LoopbackExchange.Failure) {
            return try LoopbackExchange.run(host: host, port: port, pinned: pinned, request: Array(head.utf8) + (body ?? []),
                                            timeoutSeconds: Self.timeoutSeconds)
        } catch {
            switch error {
            case .unreachable(let reason):
                throw unreachable(reason)
            case .handshake(_, mismatch: true):
                throw ToolError("\(server) serves a certificate other than the one in \(pinned?.path ?? "its certificate file"), "
                                + "the file it was started with, so the tool does not trust it; nothing was changed. If the "
                                + "file was renewed, send the server SIGHUP to serve it, then run this again")
            case .handshake(let reason, mismatch: false):
                throw ToolError("\(server) could not be reached over TLS (\(reason)); nothing was changed")
            case .noAnswer(let reason):
                throw ToolError("\(server) did not answer (\(reason)); the request may or may not have taken effect")
            }
        }
    }

    private func unreachable(_ reason: String) -> ToolError {
        let stop = pid.map { " (kill \($0))" } ?? ""
        return ToolError("the data folder \(folder) is held by \(server), which cannot be reached (\(reason)); nothing was "
                         + "changed. If that server is stuck, stop it\(stop) and run this again: with no server running, "
                         + "the tool opens the folder itself")
    }

    /// The status and body of a whole answer in `bytes`, or nil while more is to come. `atEnd`: the server
    /// closed the connection, which ends a body of no stated length.
    static func complete(_ bytes: [UInt8], atEnd: Bool = false) -> (Int, [UInt8])? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.firstRange(of: separator) else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n")
        let statusLine = head.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = Array(bytes[end.upperBound...])
        if let length = headers["content-length"].flatMap(Int.init) {
            return body.count >= length ? (status, Array(body.prefix(length))) : nil
        }
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            return dechunked(body).map { (status, $0) }
        }
        return atEnd ? (status, body) : nil
    }

    /// A chunked body's bytes, or nil until its last chunk has arrived.
    static func dechunked(_ body: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var i = 0
        while true {
            guard let lineEnd = body[i...].firstRange(of: Array("\r\n".utf8)) else { return nil }
            let sizeText = String(decoding: body[i..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            let start = lineEnd.upperBound
            if size == 0 { return out }
            guard body.count >= start + size + 2 else { return nil }
            out.append(contentsOf: body[start..<start + size])
            i = start + size + 2
        }
    }
}

/// A tool's failure, printed as it is.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
