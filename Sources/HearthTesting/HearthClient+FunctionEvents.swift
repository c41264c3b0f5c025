import Foundation
import HearthCore

extension HearthClient {
    /// Waits (up to a minute) until the admin endpoint lists function events in `state` (`pending` or `dead`)
    /// that satisfy `done`, and answers them.
    public func functionEvents(_ state: String, until done: ([JSON]) -> Bool) async throws -> [JSON] {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if case .array(let events)? = try await get("/v1/functions/events?state=\(state)").json?["events"], done(events) {
                return events
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ExpectationFailure("the \(state) events did not reach the expected state: \(try await get("/v1/functions/events?state=\(state)").text)")
    }
}
