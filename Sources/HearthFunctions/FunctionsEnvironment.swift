import Foundation

/// What a functions service reads from its environment: the endpoint's secret (`HEARTH_FUNCTIONS_SECRET`,
/// required), the port to listen on (`PORT`), and Hearth's address (`HEARTH_URL`, default
/// `http://127.0.0.1:8080`) for handlers that call back with the event's token.
public struct FunctionsEnvironment: Sendable {
    /// The endpoint's secret in the functions file (`whsec_...`).
    public var secret: String
    /// Where the service listens.
    public var port: Int
    /// Hearth's HTTP API.
    public var hearthURL: URL

    /// Reads the settings from `environment`; the error names the one missing or wrong.
    public init(_ environment: [String: String] = ProcessInfo.processInfo.environment, defaultPort: Int) throws(Problem) {
        guard let secret = environment["HEARTH_FUNCTIONS_SECRET"] else {
            throw Problem("set HEARTH_FUNCTIONS_SECRET to the endpoint's secret in the functions file (whsec_...)")
        }
        let portText = environment["PORT"] ?? String(defaultPort)
        guard let port = Int(portText), (0...65535).contains(port) else { throw Problem("PORT: '\(portText)' is not a port number") }
        let hearthText = environment["HEARTH_URL"] ?? "http://127.0.0.1:8080"
        guard let hearthURL = URL(string: hearthText), ["http", "https"].contains(hearthURL.scheme ?? ""), hearthURL.host != nil else {
            throw Problem("HEARTH_URL must be Hearth's http(s) address, got '\(hearthText)'")
        }
        (self.secret, self.port, self.hearthURL) = (secret, port, hearthURL)
    }

    /// A setting missing or wrong, said as the line to print.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
}

extension FunctionsServer {
    /// Runs a functions service as a program's whole `main`: reads `FunctionsEnvironment`, makes the handlers
    /// with it and serves them at `path` until SIGINT or SIGTERM. A setting missing or wrong (or a `Problem`
    /// thrown by `functions`) is printed and the process exits with status 2.
    public static func main(defaultPort: Int, path: String = "/hooks",
                            _ functions: (FunctionsEnvironment) throws(FunctionsEnvironment.Problem) -> Functions) async throws {
        let environment: FunctionsEnvironment
        let made: Functions
        do {
            environment = try FunctionsEnvironment(defaultPort: defaultPort)
            made = try functions(environment)
        } catch {
            print(error)
            exit(2)
        }
        try await FunctionsServer(secret: environment.secret, path: path, functions: made).run(port: environment.port)
    }
}
