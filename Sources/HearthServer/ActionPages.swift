import Foundation
import HearthAuth
import HearthCore
import HTTPTypes
import Hummingbird
import NIOCore

/// The pages behind the account messages' links (docs/messages.md, The pages): `GET /auth/action?mode=
/// verifyEmail&code=…` verifies the address; `GET /auth/action?mode=resetPassword&code=…` shows a form
/// (plain HTML, no script) that posts the new password back, form-encoded, to `POST /auth/action`. Both run
/// the same `AuthService` calls as the JSON endpoints. A GET never spends a reset code: only the POST does.
/// The code is read from the query of a GET and from the form of a POST, nowhere else.
struct ActionPages {
    /// Where the pages are served.
    static let path = "/auth/action"
    /// The largest form body read.
    static let maxFormBytes = 16 << 10

    /// What a link asks for (Firebase's `mode` values).
    enum Mode: String {
        case verifyEmail, resetPassword
    }

    let auth: AuthService
    let accountMail: AccountMail

    func register(on router: Router<HearthRequestContext>) {
        router.get(RouterPath(stringLiteral: Self.path)) { request, _ in
            await show(request)
        }
        router.post(RouterPath(stringLiteral: Self.path)) { request, _ in
            await submit(request)
        }
    }

    // MARK: GET

    func show(_ request: Request) async -> Response {
        do {
            var values: [String: String] = [:]
            for (key, value) in request.uri.queryParameters where ["mode", "code"].contains(String(key)) {
                guard values[String(key)] == nil else {
                    return page(.pageError, status: .badRequest, ["message": "The link names its \(key) twice."])
                }
                values[String(key)] = String(value)
            }
            guard let code = values["code"], !code.isEmpty else { return page(.pageLinkInvalid, status: .badRequest) }
            switch Mode(rawValue: values["mode"] ?? "") {
            case .verifyEmail?: return try await verify(code)
            case .resetPassword?: return try await resetForm(code)
            case nil: return page(.pageError, status: .badRequest, ["message": Self.unknownMode(values["mode"])])
            }
        } catch {
            return failure(error)
        }
    }

    func verify(_ code: String) async throws -> Response {
        guard case .valid = try await auth.oneTimeCodeState(code, purpose: .emailVerification) else {
            return try await refusal(code, .emailVerification)
        }
        switch await Self.outcome({ () async throws(HearthError) in try await auth.confirmEmailVerification(token: code) }) {
        case .success(let user):
            return page(.pageEmailVerified, ["email": user.email ?? ""])
        case .failure(let error) where error.code == .invalidArgument:
            return try await refusal(code, .emailVerification)  // spent or changed since it was looked at
        case .failure(let error):
            throw error
        }
    }

    func resetForm(_ code: String) async throws -> Response {
        guard case .valid(let email) = try await auth.oneTimeCodeState(code, purpose: .passwordReset) else {
            return try await refusal(code, .passwordReset)
        }
        return form(code: code, email: email, error: nil)
    }

    // MARK: POST

    func submit(_ request: Request) async -> Response {
        do {
            let type = request.headers[.contentType] ?? ""
            guard type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
                    == "application/x-www-form-urlencoded" else {
                return page(.pageError, status: .unsupportedMediaType,
                            ["message": "The form must be sent as application/x-www-form-urlencoded."])
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: Self.maxFormBytes)
            } catch {
                return page(.pageError, status: .contentTooLarge, ["message": "The form is over \(Self.maxFormBytes) bytes."])
            }
            let fields: [String: String]
            do {
                fields = try Self.formFields(String(decoding: body.readableBytesView, as: UTF8.self))
            } catch {
                return page(.pageError, status: .badRequest, ["message": error.message])
            }
            guard fields["mode"] == Mode.resetPassword.rawValue else {
                return page(.pageError, status: .badRequest, ["message": Self.unknownMode(fields["mode"])])
            }
            guard let code = fields["code"], !code.isEmpty else { return page(.pageLinkInvalid, status: .badRequest) }
            return try await reset(code: code, password: fields["newPassword"] ?? "", again: fields["confirmPassword"])
        } catch {
            return failure(error)
        }
    }

    func reset(code: String, password: String, again: String?) async throws -> Response {
        guard case .valid(let email) = try await auth.oneTimeCodeState(code, purpose: .passwordReset) else {
            return try await refusal(code, .passwordReset)
        }
        if let again, again != password {
            return form(code: code, email: email, error: "The two passwords differ; type the same one twice.")
        }
        switch await Self.outcome({ () async throws(HearthError) in
            try await auth.confirmPasswordReset(token: code, newPassword: password)
        }) {
        case .success(let user):
            return page(.pagePasswordChanged, ["email": user.email ?? email])
        case .failure(let error) where error.code == .invalidArgument:
            // The policy is checked before the code is spent: a code still valid means the password was refused.
            guard case .valid = try await auth.oneTimeCodeState(code, purpose: .passwordReset) else {
                return try await refusal(code, .passwordReset)
            }
            return form(code: code, email: email, error: Self.readable(error.message))
        case .failure(let error):
            throw error
        }
    }

    /// An account call's result, so that a refusal can be looked at before deciding the page.
    static func outcome<T>(_ call: () async throws(HearthError) -> T) async -> Result<T, HearthError> {
        do throws(HearthError) {
            return .success(try await call())
        } catch {
            return .failure(error)
        }
    }

    // MARK: Answers

    /// The page for a code that does not work: 410 once it has expired, 400 when it is malformed, forged or
    /// already used (Hearth keeps no trace of a spent code, so those read the same).
    func refusal(_ code: String, _ purpose: OneTimeTokenRecord.Purpose) async throws -> Response {
        switch try await auth.oneTimeCodeState(code, purpose: purpose) {
        case .expired: page(.pageLinkExpired, status: .gone)
        case .malformed, .unknown, .valid: page(.pageLinkInvalid, status: .badRequest)
        }
    }

    func form(code: String, email: String, error: String?) -> Response {
        let policy = auth.configuration.passwordPolicy
        var values = ["code": code, "email": email, "action": Self.path, "minLength": "\(policy.minLength)",
                      "maxLength": "\(policy.maxLength)"]
        values["error"] = error
        return page(.pageResetPassword, status: error == nil ? .ok : .badRequest, values)
    }

    /// Any other failure (storage unavailable, a throttle) as a page with its status; unknown errors say no more.
    func failure(_ error: any Error) -> Response {
        guard let error = error as? HearthError, error.code != .internal else {
            return page(.pageError, status: .internalServerError, ["message": "The server could not complete this; try again later."])
        }
        var response = page(.pageError, status: httpStatus(error.code), ["message": error.message])
        if let wait = error.retryAfter { response.headers[.retryAfter] = "\(wait)" }
        return response
    }

    func page(_ name: MailTemplates.Name, status: HTTPResponse.Status = .ok, _ values: [String: String] = [:]) -> Response {
        var all: [String: Any] = ["appName": accountMail.appName]
        for (key, value) in values { all[key] = value }
        let html = accountMail.templates.render(name, all)
        return Response(status: status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// No cache keeps a page with a code, no Referer carries it away, and the page may load nothing but its
    /// own inline style, post only to this server and be framed by no one.
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .cacheControl: "no-store",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
            + "frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
    ]

    static func unknownMode(_ mode: String?) -> String {
        guard let mode, !mode.isEmpty else { return "The link names no action (mode=verifyEmail or mode=resetPassword)." }
        return "The link asks for an unknown action '\(mode.prefix(64))' (mode=verifyEmail or mode=resetPassword)."
    }

    /// The policy's message names the JSON field; a person reads "The new password", and a full stop.
    static func readable(_ message: String) -> String {
        let sentence = message.hasPrefix("newPassword ") ? "The new password " + message.dropFirst("newPassword ".count) : message
        return sentence.hasSuffix(".") ? sentence : sentence + "."
    }

    /// `application/x-www-form-urlencoded` fields (`+` is a space); a field given twice is refused.
    static func formFields(_ body: String) throws(HearthError) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else {
                throw .invalidArgument("The form is not valid application/x-www-form-urlencoded.")
            }
            guard fields[name] == nil else { throw .invalidArgument("The form has the field '\(name.prefix(64))' twice.") }
            fields[name] = value
        }
        return fields
    }

    static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
