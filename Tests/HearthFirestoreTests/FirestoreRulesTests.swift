import Foundation
import GRPCCore
import HearthFirestoreProtos
import HearthServer
import HearthTesting
import SwiftProtobuf
import Testing

/// Who a gRPC call speaks for, and the rules applied to it: a user's access token, the admin key, nobody, and the
/// emulator's `Bearer owner`, which only a development server takes.
@Suite struct FirestoreRulesTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{uid} {
              allow read, write: if request.auth != null && request.auth.uid == uid;
            }
          }
        }
        """

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// Who calls: "user" (the signed-up user's access token), "admin", "owner", "none" or a literal token.
        let caller: String
        let dev: Bool
        /// The document read and written.
        let path: String
        /// nil: allowed.
        let code: RPCError.Code?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a user's own document", caller: "user", dev: false, path: "notes/USER", code: nil),
        Case(name: "another user's document", caller: "user", dev: false, path: "notes/someone", code: .permissionDenied),
        Case(name: "no credentials", caller: "none", dev: false, path: "notes/someone", code: .permissionDenied),
        Case(name: "the admin key", caller: "admin", dev: false, path: "notes/someone", code: nil),
        Case(name: "Bearer owner in development", caller: "owner", dev: true, path: "notes/someone", code: nil),
        Case(name: "Bearer owner otherwise", caller: "owner", dev: false, path: "notes/someone", code: .unauthenticated),
        Case(name: "a token that is not one", caller: "hat_nope", dev: false, path: "notes/someone", code: .unauthenticated),
    ]

    @Test(arguments: cases)
    func callerAndRules(_ c: Case) async throws {
        let path = TestFolders.make() + "/app.rules"
        try Self.rules.write(toFile: path, atomically: true, encoding: .utf8)
        try await TestServer.with(configure: {
            $0.grpcPort = 0
            $0.rulesFile = path
            $0.dev = c.dev
            $0.useTestAccounts()
        }) { server, http in
            let user = try await http.signedUp("ada@example.com", "correct horse battery staple")
            let token: String? = switch c.caller {
            case "user": user.token
            case "admin": server.adminKey
            case "none": nil
            default: c.caller
            }
            let document = c.path.replacingOccurrences(of: "USER", with: user.uid)
            try await FirestoreTestClient.with(port: server.grpcPort!, token: token) { firestore in
                do {
                    _ = try await firestore.commit([firestore.set(document, ["text": .string("hi")])])
                    #expect(try await firestore.get(document).fields["text"] == .string("hi"))
                    #expect(c.code == nil)
                } catch let error as RPCError {
                    #expect(error.code == c.code, "\(error)")
                    // Nothing was written.
                    #expect(try await http.get("/v1/docs/\(document)").status == 404)
                }
            }
        }
    }

    /// Logging out revokes the session, and with it the user's Listen streams.
    @Test func loggingOutEndsTheUsersListenStream() async throws {
        let path = TestFolders.make() + "/app.rules"
        try Self.rules.write(toFile: path, atomically: true, encoding: .utf8)
        try await TestServer.with(configure: {
            $0.grpcPort = 0
            $0.rulesFile = path
            $0.useTestAccounts()
        }) { server, http in
            let user = try await http.signedUp("ada@example.com", "correct horse battery staple")
            try await FirestoreTestClient.with(port: server.grpcPort!, token: user.token) { firestore in
                let listener = firestore.listen()
                listener.send(.with {
                    $0.database = firestore.database
                    $0.addTarget = .with { $0.targetID = 1; $0.documents = .with { $0.documents = [firestore.name("notes/\(user.uid)")] } }
                })
                _ = try await listener.nextSnapshot()
                #expect(try await http.post("/v1/auth/logout", as: .token(user.token)).status < 300)
                do {
                    while true { _ = try await listener.next() }
                } catch let error as RPCError {
                    #expect(error.code == .unauthenticated, "\(error)")
                }
                await listener.close()
            }
        }
    }
}
