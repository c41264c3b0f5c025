import Foundation
import HearthCore
import Mustache

/// The Mustache templates of the account messages and of the pages behind their links: the built-in ones
/// (`DefaultMailTemplates`), each replaced by a file of the same name, `NAME.mustache`, in the operator's
/// folder (`--mail-templates`). Every template is parsed at start, so a broken one stops the server there
/// with its file, line and column named, never at the first message.
public struct MailTemplates: Sendable {
    /// Every template, by the name of its file without `.mustache`.
    public enum Name: String, CaseIterable, Sendable {
        /// The verification message's subject.
        case verifyEmailSubject = "verify-email.subject"
        /// The verification message's plain-text part.
        case verifyEmailText = "verify-email.text"
        /// The verification message's HTML part.
        case verifyEmailHTML = "verify-email.html"
        /// The reset message's subject.
        case resetPasswordSubject = "reset-password.subject"
        /// The reset message's plain-text part.
        case resetPasswordText = "reset-password.text"
        /// The reset message's HTML part.
        case resetPasswordHTML = "reset-password.html"
        /// The layout every page extends (`{{<page}}` with the blocks `title` and `content`).
        case page
        /// The page of a verified address.
        case pageEmailVerified = "page-email-verified"
        /// The form for a new password, shown again with `error` when it was refused.
        case pageResetPassword = "page-reset-password"
        /// The page of a password set.
        case pagePasswordChanged = "page-password-changed"
        /// The page of a code that is malformed, forged or already used.
        case pageLinkInvalid = "page-link-invalid"
        /// The page of an expired code.
        case pageLinkExpired = "page-link-expired"
        /// The page of any other failure, with its `message`.
        case pageError = "page-error"

        /// Subjects and text bodies are plain text: nothing interpolated into them is HTML-escaped.
        var isPlainText: Bool { rawValue.hasSuffix(".subject") || rawValue.hasSuffix(".text") }
    }

    /// The file extension of a template in the operator's folder.
    public static let fileExtension = "mustache"
    /// Plain-text templates are parsed with this in front, which turns Mustache's HTML escaping off.
    static let plainTextPragma = "{{%CONTENT_TYPE:TEXT}}"

    let library: MustacheLibrary
    /// The names taken from the operator's folder rather than built in.
    public let replaced: Set<Name>

    /// The built-in templates, each replaced by `NAME.mustache` in `folder` when it has one. A file that
    /// does not parse, is not UTF-8, or names no template is an error naming it.
    public init(folder: String? = nil) throws(HearthError) {
        var sources = DefaultMailTemplates.sources
        var origins: [Name: String] = [:]
        if let folder {
            for (name, (path, text)) in try Self.read(folder) {
                sources[name] = text
                origins[name] = path
            }
        }
        var library = MustacheLibrary()
        for name in Name.allCases {
            guard let text = sources[name] else { throw .internal("the built-in template \(name.rawValue) is missing") }
            let origin = origins[name] ?? "the built-in template \(name.rawValue)"
            library.register(try Self.parse(text, plainText: name.isPlainText, origin: origin), named: name.rawValue)
        }
        self.library = library
        replaced = Set(origins.keys)
    }

    /// Renders a template with `values` (strings, and nested dictionaries); a missing value renders empty.
    func render(_ name: Name, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: name.rawValue) ?? ""
    }

    /// The folder's `.mustache` files by template name; other files are left alone.
    static func read(_ folder: String) throws(HearthError) -> [Name: (String, String)] {
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        } catch {
            throw .invalidArgument("mailTemplates: cannot read the folder \(folder)")
        }
        var found: [Name: (String, String)] = [:]
        for file in files where file.hasSuffix("." + fileExtension) {
            let path = (folder as NSString).appendingPathComponent(file)
            let base = String(file.dropLast(fileExtension.count + 1))
            guard let name = Name(rawValue: base) else {
                throw .invalidArgument("mailTemplates: \(path) names no template; the templates are "
                                       + Name.allCases.map { $0.rawValue + ".\(fileExtension)" }.joined(separator: ", "))
            }
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw .invalidArgument("mailTemplates: cannot read \(path)")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .invalidArgument("mailTemplates: \(path) is not UTF-8 text")
            }
            found[name] = (path, text)
        }
        return found
    }

    /// Parses one template; an error names where it came from, with the line and column Mustache stopped at.
    static func parse(_ text: String, plainText: Bool, origin: String) throws(HearthError) -> MustacheTemplate {
        let prefix = plainText ? plainTextPragma : ""
        do {
            return try MustacheTemplate(string: prefix + text)
        } catch let error as MustacheTemplate.ParserError {
            let context = error.context
            // The pragma sits in front of the first line: take it out of what the operator is shown.
            let onFirstLine = context.lineNumber == 1
            let column = onFirstLine ? max(1, context.columnNumber - prefix.count) : context.columnNumber
            let line = onFirstLine && context.line.hasPrefix(prefix) ? String(context.line.dropFirst(prefix.count)) : context.line
            throw .invalidArgument("mailTemplates: \(origin), line \(context.lineNumber), column \(column): "
                                   + "\(describe(error.error)): \(line.prefix(200))")
        } catch {
            throw .invalidArgument("mailTemplates: \(origin): \(error)")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error as? MustacheTemplate.Error {
        case .sectionCloseNameIncorrect: "a section is closed with another name than it was opened with"
        case .unfinishedName: "a tag is not closed"
        case .expectedSectionEnd: "a section is never closed"
        case .invalidSetDelimiter: "a set-delimiter tag is malformed"
        case .transformAppliedToInheritanceSection: "a transform is applied to an inherited section"
        case .illegalTokenInsideInheritSection: "a tag that is not a block is inside an inherited partial"
        case .textInsideInheritSection: "text is inside an inherited partial, outside its blocks"
        case .invalidConfigVariableSyntax: "a pragma is malformed"
        case .unrecognisedConfigVariable: "an unknown pragma"
        case nil: "\(error)"
        }
    }
}
