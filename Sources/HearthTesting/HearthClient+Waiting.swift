import Foundation
import HearthCore

extension HearthClient {
    /// Waits (up to a minute) until the document at `path` (its `data`, nil while it does not exist) satisfies
    /// `done`, and answers that data: for changes made by something else, such as a function's answer.
    public func document(_ path: String, until done: (JSON?) -> Bool) async throws -> JSON? {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let data = try await get("/v1/docs/\(path)").json?["data"]
            if done(data) { return data }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ExpectationFailure("\(path) did not reach the expected state: \(try await get("/v1/docs/\(path)").text)")
    }
}
