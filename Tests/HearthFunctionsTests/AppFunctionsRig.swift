import Foundation
import HearthCore
import HearthFunctions
import HearthMail
import HearthServer
import HearthTesting

/// An app's functions end to end: Hearth with the app's rules, fixtures and indexes and its functions file as shipped
/// (pointed at a `FunctionsHost`), the handlers of its example target, APNs and FCM on loopback and, when given,
/// an SMTP server (aiosmtpd). The fixture's own events (its replies, its invitations) are handled first, so a
/// test starts from a quiet queue.
struct AppFunctionsRig {
    let hearth: Harness
    let push: PushTestRig
    let smtp: SMTPTestServer?
    let admin: HearthClient

    static func with(rules: String, fixtures: String, indexes: String, functionsFile: String, smtp useSMTP: Bool = false,
                     clock: ManualClock? = nil, handlers: @escaping (URL) -> Functions,
                     _ body: (AppFunctionsRig) async throws -> Void) async throws {
        try await PushTestRig.with { push in
            let smtp = useSMTP ? try await SMTPTestServer.start() : nil
            try await withCleanup({
                let host = try FunctionsHost()
                let file = try host.functionsFile(from: Harness.projectFile(functionsFile))
                let settings = try push.settings()
                let mail = try smtp?.mailSettings()
                try await Harness.with(rules: rules, fixtures: fixtures, indexes: indexes, configure: { configuration in
                    push.configure(settings)(&configuration)
                    configuration.useFunctions(file: file)
                    if let mail { configuration.mail = mail }
                    if let clock { configuration.functionsClock = clock.function }
                }) { hearth in
                    try await host.serve(handlers(URL(string: "http://127.0.0.1:\(hearth.port)")!)) {
                        let rig = AppFunctionsRig(hearth: hearth, push: push, smtp: smtp, admin: hearth.client())
                        try await withCleanup({
                            try await rig.settled()
                            try await body(rig)
                        }) { await rig.admin.close() }
                    }
                }
            }) { await smtp?.stop() }
        }
    }

    /// Waits until every function event is handled (none pending) and every message it queued has left
    /// (the push queue and the outbox have nothing pending): what the handlers sent has then been received.
    /// Answers the dead events, notifications and messages.
    @discardableResult
    func settled() async throws -> (events: [JSON], push: [JSON], mail: [JSON]) {
        _ = try await admin.functionEvents("pending") { $0.isEmpty }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let push = try await admin.get("/v1/admin/push").json
            let mail = try await admin.get("/v1/admin/outbox").json
            if push?["pending"] == .array([]), mail?["pending"] == .array([]) {
                let dead = try await admin.get("/v1/functions/events?state=dead").json?["events"]
                guard case .array(let events)? = dead, case .array(let pushDead)? = push?["dead"],
                      case .array(let mailDead)? = mail?["dead"] else { throw ExpectationFailure("queues unreadable") }
                return (events, pushDead, mailDead)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ExpectationFailure("the push queue or the outbox still has pending messages")
    }

    /// Registers a device for a signed-in user (`POST /v1/push/devices` with their token); answers its id.
    func register(_ user: SignedIn, token: String, platform: String) async throws -> String {
        let body = JSON.object([("token", .string(token)), ("platform", .string(platform))]).text
        let answer = try await admin.post("/v1/push/devices", body, as: .token(user.token))
        guard answer.status == 201, let id = answer.json?["id"]?.stringValue else {
            throw ExpectationFailure("registration failed: \(answer.status) \(answer.text)")
        }
        return id
    }
}
