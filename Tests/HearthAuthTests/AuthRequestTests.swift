import HearthCore
import Testing
@testable import HearthAuth

@Suite struct AuthRequestTests {
    func json(_ text: String) throws -> JSON { try JSON.parse(text) }

    @Test func decodesTheDesignBodies() throws {
        let signUp = try AuthRequest.SignUp(json: json(#"{"email": "a@b.co", "password": "pw", "displayName": null}"#))
        #expect(try signUp == AuthRequest.SignUp(json: json(#"{"email": "a@b.co", "password": "pw"}"#)))
        #expect(signUp.displayName == nil)
        #expect(try AuthRequest.LogIn(json: json(#"{"email": "a@b.co", "password": "pw"}"#)).password == "pw")
        #expect(try AuthRequest.Refresh(json: json(#"{"refreshToken": "hrt_x"}"#)).refreshToken == "hrt_x")
        #expect(try AuthRequest.ChangePassword(json: json(#"{"currentPassword": "a", "newPassword": "b"}"#)).newPassword == "b")
        #expect(try AuthRequest.PasswordReset(json: json(#"{"email": "a@b.co"}"#)).email == "a@b.co")
        #expect(try AuthRequest.PasswordResetConfirm(json: json(#"{"token": "t", "newPassword": "n"}"#)).token == "t")
        #expect(try AuthRequest.VerifyEmailConfirm(json: json(#"{"token": "t"}"#)).token == "t")
        let create = try AuthRequest.CreateUser(json: json(
            #"{"uid": "alice", "email": "alice@example.com", "password": "pw", "emailVerified": true, "claims": {"admin": true, "since": {"$timestamp": "2026-01-01T00:00:00Z"}}}"#))
        #expect(create.user.uid == "alice" && create.user.emailVerified)
        #expect(create.user.claims["since"] == .timestamp(Timestamp(rfc3339: "2026-01-01T00:00:00Z")!))
        #expect(try AuthRequest.SetClaims(json: json(#"{"claims": {}}"#)).claims.isEmpty)
    }

    @Test func missingWrongTypedAndUnknownFieldsNameTheField() throws {
        #expect(throws: HearthError.invalidArgument("password is required")) {
            try AuthRequest.LogIn(json: self.json(#"{"email": "a@b.co"}"#))
        }
        #expect(throws: HearthError.invalidArgument("email must be a string, got a number")) {
            try AuthRequest.LogIn(json: self.json(#"{"email": 3, "password": "x"}"#))
        }
        #expect(throws: HearthError.invalidArgument("the request body must be a JSON object, got an array")) {
            try AuthRequest.Refresh(json: self.json("[]"))
        }
        #expect(throws: HearthError.invalidArgument("unknown field 'returnSecureToken'; expected email, password")) {
            try AuthRequest.LogIn(json: self.json(#"{"email": "a", "password": "b", "returnSecureToken": true}"#))
        }
        #expect(throws: HearthError.invalidArgument("emailVerified must be a boolean, got a string")) {
            try AuthRequest.CreateUser(json: self.json(#"{"emailVerified": "yes"}"#))
        }
        #expect(throws: HearthError.invalidArgument("claims is required")) {
            try AuthRequest.SetClaims(json: self.json("{}"))
        }
        #expect(throws: HearthError.self) {
            try AuthRequest.SetClaims(json: self.json(#"{"claims": {"x": {"$int": "nope"}}}"#))
        }
    }
}

@Suite struct RedactionTests {
    @Test func secretsStayOutOfDescriptions() throws {
        let secret = "pa55word-secret"
        let token = Tokens.generate(.refresh)
        let values: [any CustomStringConvertible] = [
            try AuthRequest.LogIn(json: JSON.parse(#"{"email": "a@b.co", "password": "\#(secret)"}"#)),
            try AuthRequest.SignUp(json: JSON.parse(#"{"email": "a@b.co", "password": "\#(secret)"}"#)),
            try AuthRequest.Refresh(json: JSON.parse(#"{"refreshToken": "\#(token)"}"#)),
            try AuthRequest.ChangePassword(json: JSON.parse(#"{"currentPassword": "\#(secret)", "newPassword": "\#(secret)"}"#)),
            try AuthRequest.PasswordResetConfirm(json: JSON.parse(#"{"token": "\#(token)", "newPassword": "\#(secret)"}"#)),
            try AuthRequest.VerifyEmailConfirm(json: JSON.parse(#"{"token": "\#(token)"}"#)),
            try AuthRequest.CreateUser(json: JSON.parse(#"{"email": "a@b.co", "password": "\#(secret)"}"#)),
            UserRecord(uid: "u", passwordHash: "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$" + secret, createdAt: Timestamp(microseconds: 0)),
        ]
        for value in values {
            let text = "\(value)"
            #expect(!text.contains(secret) && !text.contains(token), "\(text)")
            #expect(!String(reflecting: value).contains(secret))
        }
    }
}
