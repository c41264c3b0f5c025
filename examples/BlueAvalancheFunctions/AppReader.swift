import Foundation
import HearthClient
import HearthCore

/// A post as the publisher reads it.
struct ScheduledPost: Sendable {
    var id: String
    var author: String
    var content: String
    var networks: [String]
    var media: [String]
    var scheduledAt: Timestamp?
    var status: String
}

/// A connected account of the post's author: where and as whom to post.
struct Outlet: Sendable {
    var network: String
    var handle: String
    var authToken: String
    var tokenExpiresAt: Timestamp?
}

/// Hearth as the functions' identity, with an event's token: the rules decide what it may read
/// (rules/blue-avalanche.rules, `isFunctions()`).
struct AppReader: Sendable {
    let hearth: Hearth

    init(_ settings: BlueAvalancheSettings, token: String) {
        hearth = Hearth(url: settings.hearthURL, token: token, httpClient: settings.httpClient)
    }

    /// The post as it is now; nil once deleted.
    func post(_ id: String) async throws -> ScheduledPost? {
        let snapshot = try await hearth.collection("posts").document(id).getDocument()
        guard let fields = snapshot.data() else { return nil }
        return ScheduledPost(id: id, author: fields["author"]?.text ?? "", content: fields["content"]?.text ?? "",
                             networks: fields["networks"]?.texts ?? [], media: fields["media"]?.texts ?? [],
                             scheduledAt: fields["scheduledAt"]?.time, status: fields["status"]?.text ?? "")
    }

    /// The author's connected account on a network; nil when it is disconnected.
    func outlet(of author: String, on network: String) async throws -> Outlet? {
        let snapshot = try await hearth.document("users/\(author)/outlets/\(network)").getDocument()
        guard let fields = snapshot.data(), let token = fields["authToken"]?.text else { return nil }
        return Outlet(network: network, handle: fields["handle"]?.text ?? "", authToken: token,
                      tokenExpiresAt: fields["tokenExpiresAt"]?.time)
    }

    /// The users who asked for a reminder at `hour` and live in one of `timeZones` (at most 30, a query's `in`).
    func users(remindedAt hour: Int, in timeZones: [String]) async throws -> [String] {
        let snapshot = try await hearth.collection("users")
            .whereField("reminderHour", isEqualTo: hour)
            .whereField("timeZone", in: timeZones)
            .getDocuments()
        return snapshot.documents.map(\.documentID)
    }
}

/// Hearth's push, sent with the event's token (the functions' identity may send; users may not).
extension AppReader {
    /// Queues the daily reminder for each of the user's devices (none registered: nothing is sent); sent
    /// again with the same `key`, nothing more is queued.
    func remind(_ uid: String, key: String) async throws {
        try await hearth.sendPush(to: .user(uid),
                                  notification: PushNotification(title: "Time to post",
                                                                 body: "Write today's post: Blue Avalanche publishes it at its time."),
                                  data: ["kind": "dailyReminder"], idempotencyKey: key)
    }
}

extension Value {
    var text: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var texts: [String]? {
        if case .array(let items) = self { return items.compactMap(\.text) }
        return nil
    }

    var time: Timestamp? {
        if case .timestamp(let t) = self { return t }
        return nil
    }
}
