import Foundation
import HearthCore
import HearthServer
import HearthTesting
import Testing

/// Documents created without an id (`POST /v1/docs/{collection}`), answered on the event loop or through the
/// router: by default their ids begin with the creation time and sort in creation order; with `random`, they
/// are Firestore's 20 random characters.
@Suite struct AutoIDTests {
    static func createdIDs(_ server: TestServer, count: Int, ordered: Bool) async throws -> [String] {
        let client = server.client()
        var ids: [String] = []
        for i in 0..<count {
            let before = currentMilliseconds()
            let created = try await client.post("/v1/docs/notes", #"{"n": \#(i)}"#)
            let after = currentMilliseconds()
            #expect(created.status == 201, "\(created.text)")
            let id = try #require(created.json?["id"]?.stringValue)
            #expect(id.utf8.count == 20 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(id)")
            if ordered {
                let ms = try #require(orderedAutoIDMilliseconds(id))
                #expect(ms >= before && ms <= after, "\(id): \(ms) not in \(before)...\(after)")
            }
            ids.append(id)
            // The next create in a later millisecond: within one, ids are in random order.
            try await Task.sleep(for: .milliseconds(2))
        }
        return ids
    }

    @Test(arguments: [true, false])
    func orderedIDsSortInCreationOrder(inline: Bool) async throws {
        let server = try await TestServer.start { $0.inlineAnswers = inline }
        let ids = try await Self.createdIDs(server, count: 25, ordered: true)
        #expect(Set(ids).count == ids.count)
        #expect(ids == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }, "\(ids)")
        // A listing (by id) gives them back in the order they were created.
        let listed = try await server.client().get("/v1/docs/notes?pageSize=100")
        let listedIDs = try #require(listed.json?["documents"].flatMap { json -> [String]? in
            guard case .array(let docs) = json else { return nil }
            return docs.compactMap { $0["id"]?.stringValue }
        })
        #expect(listedIDs == ids)
        await server.stop()
    }

    @Test(arguments: [true, false])
    func randomIDsCarryNoTime(inline: Bool) async throws {
        let server = try await TestServer.start { $0.inlineAnswers = inline; $0.autoIDs = .random }
        let ids = try await Self.createdIDs(server, count: 10, ordered: false)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy(carriesNoRecentTime), "\(ids)")
        await server.stop()
    }
}
