import Foundation
import HearthFunctions
import Testing

/// What a functions service reads from its environment, and the line it prints for each setting that is wrong.
@Suite struct FunctionsEnvironmentTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqr"

    @Test func defaults() throws {
        let read = try FunctionsEnvironment(["HEARTH_FUNCTIONS_SECRET": Self.secret], defaultPort: 9001)
        #expect(read.secret == Self.secret && read.port == 9001 && read.hearthURL.absoluteString == "http://127.0.0.1:8080")
    }

    @Test func given() throws {
        let read = try FunctionsEnvironment(["HEARTH_FUNCTIONS_SECRET": Self.secret, "PORT": "7000",
                                             "HEARTH_URL": "https://hearth.example:8443"], defaultPort: 9001)
        #expect(read.port == 7000 && read.hearthURL.absoluteString == "https://hearth.example:8443")
    }

    static let wrong: [(environment: [String: String], problem: String)] = [
        ([:], "set HEARTH_FUNCTIONS_SECRET to the endpoint's secret in the functions file (whsec_...)"),
        (["HEARTH_FUNCTIONS_SECRET": secret, "PORT": "nine"], "PORT: 'nine' is not a port number"),
        (["HEARTH_FUNCTIONS_SECRET": secret, "PORT": "70000"], "PORT: '70000' is not a port number"),
        (["HEARTH_FUNCTIONS_SECRET": secret, "HEARTH_URL": "hearth.example"],
         "HEARTH_URL must be Hearth's http(s) address, got 'hearth.example'"),
        (["HEARTH_FUNCTIONS_SECRET": secret, "HEARTH_URL": "ftp://hearth.example"],
         "HEARTH_URL must be Hearth's http(s) address, got 'ftp://hearth.example'"),
    ]

    @Test(arguments: wrong)
    func refused(_ environment: [String: String], _ problem: String) {
        #expect(throws: FunctionsEnvironment.Problem.self) {
            do throws(FunctionsEnvironment.Problem) { _ = try FunctionsEnvironment(environment, defaultPort: 9000) } catch {
                #expect(error.description == problem)
                throw error
            }
        }
    }
}
