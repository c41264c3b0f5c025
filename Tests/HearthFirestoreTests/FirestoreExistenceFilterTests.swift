import Foundation
import HearthCore
import HearthEngine
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// Existence filters over a real Listen stream: a target resumed with a token is told what changed while the
/// client was away, then the count of its documents (the client compares it with its view), then `CURRENT`.
@Suite struct FirestoreExistenceFilterTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// The target, listened to first and then resumed.
        let target: @Sendable (FirestoreTestClient) -> Google_Firestore_V1_Target
        /// What is written while no listener is open.
        let away: @Sendable (FirestoreTestClient) -> [Google_Firestore_V1_Write]
        /// The token to resume with, when not the one the first listen ended at.
        var token: (@Sendable (Data) -> Data)? = nil
        /// The resumed target's responses up to the global `NO_CHANGE`, with its document changes as a set.
        let control: [String]
        let documents: Set<String>
        var testDescription: String { name }
    }

    /// `rooms/a` (n 1), `rooms/b` (n 2), `rooms/c` (n 3) are stored before the first listen.
    static func rooms(_ f: FirestoreTestClient) -> Google_Firestore_V1_Target {
        .with { $0.query = .with { $0.parent = f.name(""); $0.structuredQuery = .from("rooms") } }
    }

    static let cases: [Case] = [
        Case(name: "nothing changed: the count alone", target: rooms, away: { _ in [] },
             control: ["add", "filter 3", "current", "no_change"], documents: []),
        Case(name: "added, changed and removed while away", target: rooms, away: { f in
            [f.set("rooms/d", ["n": .int(4)]), f.set("rooms/b", ["n": .int(20)]), .with { $0.delete = f.name("rooms/c") }]
        }, control: ["add", "filter 3", "current", "no_change"], documents: ["change rooms/b", "change rooms/d", "remove rooms/c"]),
        Case(name: "a query with a filter: a document that left it", target: { f in
            var t = rooms(f)
            t.query.structuredQuery.where = Google_Firestore_V1_StructuredQuery.fieldFilter("n", .lessThan, .int(3))
            return t
        }, away: { f in [f.set("rooms/a", ["n": .int(9)])] },
             control: ["add", "filter 1", "current", "no_change"], documents: ["remove rooms/a"]),
        Case(name: "a document target whose document was deleted", target: { f in
            .with { $0.documents = .with { $0.documents = [f.name("rooms/a")] } }
        }, away: { f in [.with { $0.delete = f.name("rooms/a") }] },
             control: ["add", "filter 0", "current", "no_change"], documents: ["remove rooms/a"]),
        Case(name: "a token the log does not know: RESET, every document, then the count", target: rooms,
             away: { _ in [] }, token: { _ in Data(LogPosition(sequence: 1, commitTime: Timestamp(microseconds: 1)).resumeToken.utf8) },
             control: ["add", "reset", "filter 3", "current", "no_change"],
             documents: ["change rooms/a", "change rooms/b", "change rooms/c"]),
    ]

    /// A response as a line: a target change's kind, `change NAME`, `remove NAME` or `filter COUNT`.
    static func line(_ response: Google_Firestore_V1_ListenResponse, _ f: FirestoreTestClient) -> String {
        let root = f.name("") + "/"
        switch response.responseType {
        case .targetChange(let t)?:
            switch t.targetChangeType {
            case .add: return "add"
            case .reset: return "reset"
            case .current: return "current"
            case .noChange: return "no_change"
            case .remove: return "remove"
            case .UNRECOGNIZED(let n): return "target change \(n)"
            }
        case .documentChange(let c)?: return "change " + c.document.name.replacingOccurrences(of: root, with: "")
        case .documentRemove(let r)?: return "remove " + r.document.replacingOccurrences(of: root, with: "")
        case .documentDelete(let d)?: return "delete " + d.document.replacingOccurrences(of: root, with: "")
        case .filter(let e)?: return "filter \(e.count)" + (e.targetID == 9 ? "" : " of target \(e.targetID)")
        case nil: return "empty"
        }
    }

    @Test(arguments: cases)
    func resumedTarget(_ c: Case) async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { f in
                _ = try await f.commit([f.set("rooms/a", ["n": .int(1)]), f.set("rooms/b", ["n": .int(2)]), f.set("rooms/c", ["n": .int(3)])])
                var target = c.target(f)
                target.targetID = 9
                let first = f.listen()
                first.send(.with { $0.database = f.database; $0.addTarget = target })
                let initial = try await first.nextSnapshot()
                #expect(!initial.contains { if case .filter? = $0.responseType { true } else { false } },
                        "a target listened to afresh gets no existence filter")
                await first.close()

                let away = c.away(f)
                if !away.isEmpty { _ = try await f.commit(away) }
                let token = initial.last!.targetChange.resumeToken
                target.resumeToken = c.token?(token) ?? token
                let resumed = f.listen()
                resumed.send(.with { $0.database = f.database; $0.addTarget = target })
                let lines = try await resumed.nextSnapshot().map { Self.line($0, f) }
                let documentLines = lines.filter { $0.hasPrefix("change ") || $0.hasPrefix("remove ") }
                #expect(lines.filter { !documentLines.contains($0) } == c.control)
                #expect(Set(documentLines) == c.documents && documentLines.count == c.documents.count)
                // The filter follows every document change of the snapshot it counts.
                if let filter = lines.firstIndex(where: { $0.hasPrefix("filter") }), let last = lines.lastIndex(where: documentLines.contains) {
                    #expect(last < filter)
                }
                await resumed.close()
            }
        }
    }
}
