import Foundation
import HearthCore
import HearthTesting
import Testing

/// Every commit of more than one write that docs/apps/README.md lists, run over real HTTP against its app's
/// rules and fixtures, one row at a time: an allowed commit leaves each written document as it says, and a
/// denied one changes none of them. Each row works on documents of its own (`$ID` is a fresh id per row),
/// laid out first with the admin key by the row's `setup`. A row's caller is a fixture user, or "admin".
@Suite(.serialized) struct AppCommitTableTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let what: String
        let caller: String
        let setup: [String]
        let writes: [String]
        let allowed: Bool

        var testDescription: String { what }
    }

    struct App: CustomTestStringConvertible, Sendable {
        let name: String
        let rows: [Row]
        var testDescription: String { name }
    }

    static let now = #"{"$serverTimestamp": true}"#
    static let tomorrow = #"{"$timestamp": "\#(Timestamp(microseconds: Timestamp.now().microseconds + 86_400_000_000).rfc3339)"}"#

    // MARK: Prolific

    /// A thread `projects/$ID` of alice's with round 1 open: bob's snippet `s1` (one vote, carol's) and
    /// carol's `s2` (none).
    static let thread = [
        #"{"set": "projects/$ID", "data": {"owner": "alice", "ownerName": "Alice", "title": "T", "starter": "Once.", "story": ["Once."], "currentRound": 1, "isComplete": false, "roundHours": 48, "createdAt": $NOW, "updatedAt": $NOW}}"#,
        #"{"set": "projects/$ID/rounds/1", "data": {"number": 1, "isComplete": false, "openedAt": $NOW, "closesAt": $TOMORROW}}"#,
        #"{"set": "projects/$ID/rounds/1/snippets/s1", "data": {"author": "bob", "authorName": "Bob", "text": "It rained.", "votes": 1, "createdAt": $NOW}}"#,
        #"{"set": "projects/$ID/rounds/1/snippets/s1/votes/carol", "data": {"votedAt": $NOW}}"#,
        #"{"set": "projects/$ID/rounds/1/snippets/s2", "data": {"author": "carol", "authorName": "Carol", "text": "It snowed.", "votes": 0, "createdAt": $NOW}}"#,
    ]

    static func vote(_ snippet: String, by voter: String, step: Int = 1, createFirst: Bool = false) -> [String] {
        let count = #"{"update": "projects/$ID/rounds/1/snippets/\#(snippet)", "data": {"votes": {"$increment": \#(step)}}}"#
        let ballot = #"{"create": "projects/$ID/rounds/1/snippets/\#(snippet)/votes/\#(voter)", "data": {"votedAt": $NOW}}"#
        return createFirst ? [ballot, count] : [count, ballot]
    }

    /// The commit the owner's app used to close a round (now the closing function's alone, as the admin).
    static func closeRound(winner: String = "s1", text: String = "It rained.", author: String = "bob",
                           next: Int? = 2, ends: Bool = false) -> [String] {
        var writes = [
            #"{"update": "projects/$ID/rounds/1", "data": {"isComplete": true, "winner": "\#(winner)", "winnerText": "\#(text)", "winnerAuthor": "\#(author)", "closedAt": $NOW}}"#,
            #"{"update": "projects/$ID", "data": {"story": ["Once.", "\#(text)"], "currentRound": \#(ends ? 1 : (next ?? 2)), "isComplete": \#(ends), "updatedAt": $NOW}}"#,
        ]
        if let next, !ends {
            writes.append(#"{"create": "projects/$ID/rounds/\#(next)", "data": {"number": \#(next), "isComplete": false, "openedAt": $NOW, "closesAt": $TOMORROW}}"#)
        }
        return writes
    }

    static func startThread(owner: String) -> [String] {
        [#"{"create": "projects/$ID", "data": {"owner": "\#(owner)", "ownerName": "Alice", "title": "New", "starter": "Begin.", "story": ["Begin."], "currentRound": 1, "isComplete": false, "roundHours": 48, "createdAt": $NOW, "updatedAt": $NOW}}"#,
         #"{"create": "projects/$ID/rounds/1", "data": {"number": 1, "isComplete": false, "openedAt": $NOW, "closesAt": $TOMORROW}}"#]
    }

    static let closedRound = thread + [#"{"update": "projects/$ID/rounds/1", "data": {"isComplete": true}}"#]

    static let prolific = App(name: "Prolific", rows: [
        Row(what: "vote: count +1, then the vote", caller: "alice", setup: thread, writes: vote("s2", by: "alice"), allowed: true),
        Row(what: "vote: the vote, then count +1", caller: "alice", setup: thread, writes: vote("s2", by: "alice", createFirst: true), allowed: true),
        Row(what: "a second vote by the same user", caller: "carol", setup: thread, writes: vote("s1", by: "carol"), allowed: false),
        Row(what: "a vote counted +2", caller: "alice", setup: thread, writes: vote("s2", by: "alice", step: 2), allowed: false),
        Row(what: "a vote at another user's id", caller: "alice", setup: thread,
            writes: [vote("s2", by: "dave")[0], vote("s2", by: "dave")[1]], allowed: false),
        Row(what: "a vote on a closed round", caller: "alice", setup: closedRound, writes: vote("s2", by: "alice"), allowed: false),
        Row(what: "unvote: count -1 and the vote deleted", caller: "carol", setup: thread,
            writes: [#"{"update": "projects/$ID/rounds/1/snippets/s1", "data": {"votes": {"$increment": -1}}}"#,
                     #"{"delete": "projects/$ID/rounds/1/snippets/s1/votes/carol"}"#], allowed: true),
        Row(what: "unvote without a vote to delete", caller: "alice", setup: thread,
            writes: [#"{"update": "projects/$ID/rounds/1/snippets/s1", "data": {"votes": {"$increment": -1}}}"#,
                     #"{"delete": "projects/$ID/rounds/1/snippets/s1/votes/alice"}"#], allowed: false),
        // Closing rounds is the closing function's (its answer commits as the admin): refused to every user.
        Row(what: "close round 1 by the owner", caller: "alice", setup: thread, writes: closeRound(), allowed: false),
        Row(what: "close round 1 by another user", caller: "bob", setup: thread, writes: closeRound(), allowed: false),
        Row(what: "end the story by the owner", caller: "alice", setup: thread, writes: closeRound(ends: true), allowed: false),
        Row(what: "close round 1 as the admin, as the closing function's answer does", caller: "admin", setup: thread,
            writes: closeRound(), allowed: true),
        Row(what: "start a thread with its round 1", caller: "alice", setup: [], writes: startThread(owner: "alice"), allowed: true),
        Row(what: "start a thread in another user's name", caller: "alice", setup: [], writes: startThread(owner: "bob"), allowed: false),
    ])

    // MARK: Letter

    static func compose(index owner: String) -> [String] {
        [#"{"create": "letters/$ID", "data": {"category": "study", "title": "Nerves", "content": "Finals soon.", "createdAt": $NOW}}"#,
         #"{"create": "users/\#(owner)/letters/$ID", "data": {"title": "Nerves", "category": "study", "createdAt": $NOW}}"#]
    }

    static let written = [
        #"{"set": "letters/$ID", "data": {"category": "study", "title": "Nerves", "content": "Finals soon.", "createdAt": $NOW}}"#,
        #"{"set": "users/alice/letters/$ID", "data": {"title": "Nerves", "category": "study", "createdAt": $NOW}}"#,
    ]

    static let letter = App(name: "Letter", rows: [
        Row(what: "compose: the letter and the author's index entry", caller: "alice", setup: [], writes: compose(index: "alice"), allowed: true),
        Row(what: "compose with the index under another user", caller: "alice", setup: [], writes: compose(index: "bob"), allowed: false),
        Row(what: "withdraw: the letter and its index entry", caller: "alice", setup: written,
            writes: [#"{"delete": "letters/$ID"}"#, #"{"delete": "users/alice/letters/$ID"}"#], allowed: true),
        Row(what: "withdraw the index entry alone", caller: "alice", setup: written,
            writes: [#"{"delete": "users/alice/letters/$ID"}"#], allowed: false),
        Row(what: "withdraw another user's letter", caller: "bob", setup: written,
            writes: [#"{"delete": "letters/$ID"}"#, #"{"delete": "users/alice/letters/$ID"}"#], allowed: false),
    ])

    // MARK: Blue Avalanche

    static func outlet(_ network: String, of uid: String) -> String {
        #"{"create": "users/\#(uid)/outlets/\#(network)", "data": {"network": "\#(network)", "handle": "\#(uid)", "targetUrl": "https://\#(network).com/\#(uid)", "authToken": "t-1", "tokenExpiresAt": $TOMORROW, "connectedAt": $NOW}}"#
    }

    static func post(by uid: String, to network: String) -> String {
        #"{"create": "posts/$ID", "data": {"author": "\#(uid)", "content": "Sale", "networks": ["\#(network)"], "scheduledAt": $TOMORROW, "status": "scheduled", "createdAt": $NOW, "updatedAt": $NOW}}"#
    }

    /// tom's whole account as the app keeps it: settings, one connected account, one post.
    static let toms = [
        #"{"set": "users/tom", "data": {"email": "tom@example.com", "createdAt": $NOW}}"#,
        outlet("twitter", of: "tom").replacingOccurrences(of: #""create""#, with: #""set""#),
        post(by: "tom", to: "twitter").replacingOccurrences(of: #""create""#, with: #""set""#),
    ]

    static let wipe = [#"{"delete": "users/tom"}"#, #"{"delete": "users/tom/outlets/twitter"}"#, #"{"delete": "posts/$ID"}"#]

    static let blueAvalanche = App(name: "Blue Avalanche", rows: [
        Row(what: "connect a network and post to it", caller: "priya", setup: [#"{"delete": "users/priya/outlets/instagram"}"#],
            writes: [outlet("instagram", of: "priya"), post(by: "priya", to: "instagram")], allowed: true),
        Row(what: "post to a network connected in no commit", caller: "priya", setup: [#"{"delete": "users/priya/outlets/instagram"}"#],
            writes: [post(by: "priya", to: "instagram")], allowed: false),
        Row(what: "delete the account's settings, outlets and posts", caller: "tom", setup: toms, writes: wipe, allowed: true),
        Row(what: "delete another account's settings, outlets and posts", caller: "maria", setup: toms, writes: wipe, allowed: false),
    ])

    // MARK: ComeOver

    static func event(author: String) -> String {
        #"{"create": "events/$ID", "data": {"author": "\#(author)", "title": "Tacos", "description": "", "startsAt": $TOMORROW, "createdAt": $NOW, "updatedAt": $NOW}}"#
    }

    static let invitations = [
        #"{"create": "events/$ID/invitations/sam", "data": {"name": "Sam", "uid": "sam", "addedAt": $NOW}}"#,
        #"{"create": "events/$ID/invitations/guest1", "data": {"name": "Ada", "email": "ada@example.com", "addedAt": $NOW}}"#,
    ]

    static let comeOver = App(name: "ComeOver", rows: [
        Row(what: "an event with its first invitations", caller: "omar", setup: [], writes: [event(author: "omar")] + invitations, allowed: true),
        Row(what: "invitations to an event someone else creates", caller: "omar", setup: [], writes: [event(author: "nina")] + invitations, allowed: false),
        Row(what: "invitations whose event is not in the commit", caller: "omar", setup: [], writes: invitations, allowed: false),
    ])

    static let apps = [prolific, letter, blueAvalanche, comeOver]

    static func files(of app: App) -> (rules: String, fixtures: String, indexes: String) {
        let base = app.name.lowercased().replacingOccurrences(of: " ", with: "-")
        return ("rules/\(base).rules", "fixtures/\(base).json", "indexes/\(base).json")
    }

    /// A row's writes with its id and times filled in.
    static func filled(_ writes: [String], id: String) throws -> [JSON] {
        try writes.map {
            try JSON.parse($0.replacingOccurrences(of: "$ID", with: id).replacingOccurrences(of: "$NOW", with: now)
                .replacingOccurrences(of: "$TOMORROW", with: tomorrow))
        }
    }

    static func commit(_ writes: [String], id: String) throws -> String {
        JSON.object([("writes", .array(try filled(writes, id: id)))]).text
    }

    /// The documents a row's writes name.
    static func paths(of writes: [String], id: String) throws -> [String] {
        try filled(writes, id: id).map { write in
            guard case .object(let pairs) = write, let path = pairs.first?.1.stringValue else {
                throw ExpectationFailure("a write without a path: \(write.text)")
            }
            return path
        }
    }

    @Test(arguments: apps) func everyMultiWriteCommitOfTheAppsTable(app: App) async throws {
        let files = Self.files(of: app)
        try await Harness.with(rules: files.rules, fixtures: files.fixtures, indexes: files.indexes) { hearth in
            let admin = hearth.client()
            var callers: [String: HearthClient] = [:]
            for row in app.rows {
                let id = makeAutoID()
                if !row.setup.isEmpty {
                    try hearth.expectAllowed(try await admin.post("/v1/commit", Self.commit(row.setup, id: id)), "\(row.what): setup")
                }
                if callers[row.caller] == nil {
                    // "admin" commits with the admin key, as a function's answer is committed.
                    callers[row.caller] = row.caller == "admin" ? hearth.client() : try await hearth.signIn(row.caller).client
                }
                let paths = try Self.paths(of: row.writes, id: id)
                var before: [String: HTTPResult] = [:]
                for path in paths { before[path] = try await admin.get("/v1/docs/\(path)") }
                let result = try await callers[row.caller]!.post("/v1/commit", Self.commit(row.writes, id: id))
                if row.allowed {
                    try hearth.expectAllowed(result, row.what)
                    for (path, write) in zip(paths, row.writes) {
                        let deleted = write.hasPrefix(#"{"delete""#)
                        #expect(try await admin.get("/v1/docs/\(path)").status == (deleted ? 404 : 200), "\(row.what): \(path)")
                    }
                } else {
                    try hearth.expectDenied(result, row.what)
                    for path in paths {
                        let after = try await admin.get("/v1/docs/\(path)")
                        #expect(after.status == before[path]?.status && after.json?["data"] == before[path]?.json?["data"]
                                && after.json?["updateTime"] == before[path]?.json?["updateTime"], "\(row.what) changed \(path)")
                    }
                }
            }
            await admin.close()
            for client in callers.values { await client.close() }
        }
    }
}
