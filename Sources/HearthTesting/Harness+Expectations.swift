import HearthCore
import HearthEngine

extension Harness {
    /// Expects a request to have succeeded (a 2xx status); returns the response for further checks.
    @discardableResult
    public func expectAllowed(_ result: HTTPResult, _ what: String = "request") throws -> HTTPResult {
        guard (200..<300).contains(result.status) else {
            throw ExpectationFailure("expected \(what) to be allowed, got \(result.status) \(result.errorCode ?? ""): \(result.errorMessage ?? result.text)")
        }
        return result
    }

    /// Expects a request to have been refused by the rules: 403 `permission-denied`, as Firestore answers.
    @discardableResult
    public func expectDenied(_ result: HTTPResult, _ what: String = "request") throws -> HTTPResult {
        guard result.status == 403, result.errorCode == "permission-denied" else {
            throw ExpectationFailure("expected \(what) to be denied (403 permission-denied), got \(result.status) \(result.errorCode ?? ""): \(result.text.prefix(300))")
        }
        return result
    }

    /// Expects an engine call made as `identity` (say `.testUser("alice", claims: [...])`) to pass the rules;
    /// in-process backend only.
    public func expectAllowed(as identity: Identity, _ what: String = "operation",
                              _ body: (Database, Identity) async throws -> Void) async throws {
        if let denial = try await denial(as: identity, body) {
            throw ExpectationFailure("expected \(what) to be allowed for \(identity), denied: \(denial.message)")
        }
    }

    /// Expects an engine call made as `identity` to be refused by the rules; in-process backend only.
    public func expectDenied(as identity: Identity, _ what: String = "operation",
                             _ body: (Database, Identity) async throws -> Void) async throws {
        if try await denial(as: identity, body) == nil {
            throw ExpectationFailure("expected \(what) to be denied for \(identity), but it was allowed")
        }
    }

    /// The rules' refusal of the call, or nil when it passed; any other error is rethrown.
    private func denial(as identity: Identity, _ body: (Database, Identity) async throws -> Void) async throws -> HearthError? {
        let database = try engine()
        do {
            try await body(database, identity)
            return nil
        } catch let error as HearthError where error.code == .permissionDenied {
            return error
        }
    }

    /// Runs rules test files (docs/rules.md, Rules tests) with the runner `hearth rules test` uses; throws,
    /// naming every failing case, unless all pass. Returns the number of cases run.
    @discardableResult
    public static func runRulesTests(_ files: [String]) async throws -> Int {
        let reports = await RulesTestRunner().run(files: files)
        let (passed, failed) = RulesTestRunner.summary(reports)
        if failed > 0 {
            let lines = reports.flatMap(\.failureLines)
            throw ExpectationFailure((lines + ["\(passed) passed, \(failed) failed"]).joined(separator: "\n"))
        }
        return passed
    }

    func engine() throws -> Database {
        guard let database else {
            throw ExpectationFailure("calls as an engine identity need the in-process backend; over HTTP use a client")
        }
        return database
    }
}
