import Foundation
import GRPCCore
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// Commit over gRPC: Firestore's write kinds, preconditions and field transforms, each case from one stored
/// document (`counters/c`, `{"n": 5, "tags": ["a"], "keep": true}`).
@Suite struct FirestoreCommitTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let write: @Sendable (FirestoreTestClient, Google_Protobuf_Timestamp) -> Google_Firestore_V1_Write
        /// The fields after the commit (nil: the document is gone), or the code it fails with.
        let expected: Expected
        var testDescription: String { name }
    }

    enum Expected: Sendable, Equatable {
        case fields([String: Google_Firestore_V1_Value]?)
        case code(RPCError.Code)
    }

    static let stored: [String: Google_Firestore_V1_Value] = ["n": .int(5), "tags": .array([.string("a")]), "keep": .bool(true)]

    static func transform(_ field: String, _ body: (inout Google_Firestore_V1_DocumentTransform.FieldTransform) -> Void)
        -> Google_Firestore_V1_DocumentTransform.FieldTransform {
        var t = Google_Firestore_V1_DocumentTransform.FieldTransform()
        t.fieldPath = field
        body(&t)
        return t
    }

    static let cases: [Case] = [
        Case(name: "set replaces", write: { f, _ in f.set("counters/c", ["m": .int(1)]) }, expected: .fields(["m": .int(1)])),
        Case(name: "update mask merges and deletes masked fields left out", write: { f, _ in
            var w = f.set("counters/c", ["m": .int(1)])
            w.updateMask = .with { $0.fieldPaths = ["m", "keep"] }
            return w
        }, expected: .fields(["m": .int(1), "n": .int(5), "tags": .array([.string("a")])])),
        Case(name: "create of an existing document", write: { f, _ in
            var w = f.set("counters/c", ["m": .int(1)])
            w.currentDocument = .with { $0.exists = false }
            return w
        }, expected: .code(.alreadyExists)),
        Case(name: "update requires the document", write: { f, _ in
            var w = f.set("counters/missing", ["m": .int(1)])
            w.updateMask = .with { $0.fieldPaths = ["m"] }
            w.currentDocument = .with { $0.exists = true }
            return w
        }, expected: .code(.notFound)),
        Case(name: "update time that matches", write: { f, time in
            var w = f.set("counters/c", ["m": .int(2)])
            w.currentDocument = .with { $0.updateTime = time }
            return w
        }, expected: .fields(["m": .int(2)])),
        Case(name: "update time that does not match", write: { f, time in
            var w = f.set("counters/c", ["m": .int(2)])
            w.currentDocument = .with { $0.updateTime = Google_Protobuf_Timestamp(seconds: time.seconds - 1, nanos: time.nanos) }
            return w
        }, expected: .code(.failedPrecondition)),
        Case(name: "delete", write: { f, _ in .with { $0.delete = f.name("counters/c") } }, expected: .fields(nil)),
        Case(name: "delete that must exist, of a missing document", write: { f, _ in
            .with { $0.delete = f.name("counters/missing"); $0.currentDocument = .with { $0.exists = true } }
        }, expected: .code(.notFound)),
        Case(name: "increment, maximum, minimum", write: { f, _ in
            var w = f.set("counters/c", [:])
            w.updateMask = .with { $0.fieldPaths = [] }
            w.updateTransforms = [
                transform("n") { $0.increment = .int(2) },
                transform("hi") { $0.maximum = .double(1.5) },
                transform("lo") { $0.minimum = .int(-1) },
            ]
            return w
        }, expected: .fields(["n": .int(7), "hi": .double(1.5), "lo": .int(-1), "tags": .array([.string("a")]), "keep": .bool(true)])),
        Case(name: "array union and remove", write: { f, _ in
            var w = f.set("counters/c", [:])
            w.updateMask = .with { $0.fieldPaths = [] }
            w.updateTransforms = [
                transform("tags") { $0.appendMissingElements = .with { $0.values = [.string("a"), .string("b")] } },
                transform("gone") { $0.removeAllFromArray = .with { $0.values = [.int(1)] } },
            ]
            return w
        }, expected: .fields(["n": .int(5), "tags": .array([.string("a"), .string("b")]), "gone": .array([]), "keep": .bool(true)])),
        Case(name: "increment by a string", write: { f, _ in
            var w = f.set("counters/c", [:])
            w.updateMask = .with { $0.fieldPaths = [] }
            w.updateTransforms = [transform("n") { $0.increment = .string("1") }]
            return w
        }, expected: .code(.invalidArgument)),
    ]

    @Test(arguments: cases)
    func commit(_ c: Case) async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("counters/c", Self.stored)])
                let before = try await firestore.get("counters/c")
                do {
                    let response = try await firestore.commit([c.write(firestore, before.updateTime)])
                    guard case .fields(let fields) = c.expected else {
                        Issue.record("committed, expected \(c.expected)")
                        return
                    }
                    #expect(response.writeResults.count == 1 && response.hasCommitTime)
                    if let fields {
                        let after = try await firestore.get("counters/c")
                        #expect(after.fields == fields)
                        #expect(response.writeResults[0].updateTime == after.updateTime)
                    } else {
                        await #expect(throws: RPCError.self) { try await firestore.get("counters/c") }
                        #expect(!response.writeResults[0].hasUpdateTime)
                    }
                } catch let error as RPCError {
                    #expect(c.expected == .code(error.code), "\(error)")
                    // Nothing changed.
                    #expect(try await firestore.get("counters/c") == before)
                }
            }
        }
    }

    @Test func serverTimestampIsTheCommitTime() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, _ in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                var w = firestore.set("stamps/s", ["a": .int(1)])
                w.updateTransforms = [Self.transform("at") { $0.setToServerValue = .requestTime }]
                let response = try await firestore.commit([w])
                let read = try await firestore.get("stamps/s")
                #expect(read.fields["at"]?.timestampValue == response.commitTime)
                #expect(response.writeResults[0].transformResults == [read.fields["at"]!])
            }
        }
    }

    @Test func transactionAbortsWhenAReadDocumentChanged() async throws {
        try await TestServer.with(configure: { $0.grpcPort = 0 }) { server, http in
            try await FirestoreTestClient.with(port: server.grpcPort!, token: server.adminKey) { firestore in
                _ = try await firestore.commit([firestore.set("accounts/a", ["balance": .int(10)])])
                let begun = try await firestore.stub.beginTransaction(.with { $0.database = firestore.database },
                                                                      metadata: firestore.metadata)
                _ = try await firestore.stub.getDocument(.with {
                    $0.name = firestore.name("accounts/a")
                    $0.transaction = begun.transaction
                }, metadata: firestore.metadata)
                // Another writer, over the other face.
                #expect(try await http.put("/v1/docs/accounts/a", #"{"balance": 0}"#).status == 200)
                do {
                    _ = try await firestore.commit([firestore.set("accounts/a", ["balance": .int(20)])], transaction: begun.transaction)
                    Issue.record("the transaction committed over a changed read")
                } catch let error as RPCError {
                    #expect(error.code == .aborted, "\(error)")
                }
                #expect(try await firestore.get("accounts/a").fields["balance"] == .int(0))
            }
        }
    }
}
