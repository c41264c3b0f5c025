import Foundation
import HTTPTypes

/// One request made by curl, a real HTTP client (over HTTPS too, trusting a test's certificate), answered as
/// an `HTTPResult` with its body's bytes as they came.
public enum Curl {
    /// `method` on `url` with `headers` and an optional body; `trusting` names the certificate of an HTTPS server.
    public static func request(_ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                               trusting certificate: String? = nil) async throws -> HTTPResult {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let head = folder + "/head", out = folder + "/body"
        var arguments = ["-sS", "-D", head, "-o", out]
        // `--head` reads no body; `-X HEAD` would wait for one.
        arguments += method == "HEAD" ? ["--head"] : ["-X", method]
        if let certificate { arguments += ["--cacert", certificate] }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        if let body {
            try Data(body).write(to: URL(fileURLWithPath: folder + "/request"))
            arguments += ["--data-binary", "@" + folder + "/request"]
        }
        let run = try await CommandResult.run(program: "/usr/bin/curl", arguments + [url], timeout: 120)
        guard run.status == 0 else { throw RawHTTPConnection.Failure(description: "curl \(method) \(url): \(run.errorOutput)") }
        // `--head` writes the head where the body would go: a HEAD's answer has no body.
        let body = method == "HEAD" ? [] : Array((try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data())
        var result = HTTPResult(status: 0, headers: HTTPFields(), body: body)
        // The last head written (after any 100 Continue).
        let lines = try String(contentsOfFile: head, encoding: .utf8).components(separatedBy: "\r\n")
        for line in lines where !line.isEmpty {
            if line.hasPrefix("HTTP/") {
                result.status = Int(line.split(separator: " ")[1]) ?? 0
                result.version = String(line.split(separator: " ")[0])
                result.headers = HTTPFields()
            } else if let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) {
                result.headers.append(HTTPField(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        return result
    }
}
