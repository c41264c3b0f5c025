import Foundation
import HearthCore

/// Your handlers, by what they handle: a document path and change, an account or file change, a schedule or
/// a timer of the functions file. `FunctionsServer` serves them.
///
/// An event goes to the first handler that matches, in this order:
/// 1. a handler registered with the event's `name` (the trigger's, schedule's or timer's name in the file);
///    schedules and timers are always matched this way, names being unique in a functions file;
/// 2. else the first handler of the event's `type` whose path matches the event's document or file path,
///    segment by segment (`{wildcard}` matches any one id).
///
/// The `type` is the trigger's `on`, so `onDocumentWritten` handles triggers declared `document.written`,
/// `onDocumentCreated` those declared `document.created`. An event no handler takes is answered `404`:
/// Hearth retries it and, at its maximum age, keeps it as dead with the reason, to be retried once a
/// handler is deployed.
public struct Functions: Sendable {
    /// A handler's answer: the writes to commit with the delivery (none: a plain acknowledgement). Each method
    /// also takes a handler that returns nothing; where a closure fits both (one that only throws), the one
    /// returning writes is taken.
    public typealias Handler = @Sendable (FunctionEvent) async throws -> [FunctionWrite]

    struct Entry: Sendable {
        var type: String?
        var pattern: [String]?
        var name: String?
        var handler: Handler

        var summary: String {
            [type ?? "any", pattern?.joined(separator: "/"), name.map { "'\($0)'" }].compactMap { $0 }.joined(separator: " ")
        }
    }

    var entries: [Entry] = []

    public init() {}

    // MARK: Documents

    /// Handles `document.created` triggers on `path` (`"posts/{postId}"`).
    public mutating func onDocumentCreated(_ path: String, name: String? = nil, _ handler: @escaping Handler) {
        add("document.created", path: path, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onDocumentCreated(_ path: String, name: String? = nil,
                                           _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("document.created", path: path, name: name, Self.acknowledging(handler))
    }

    /// Handles `document.updated` triggers on `path`.
    public mutating func onDocumentUpdated(_ path: String, name: String? = nil, _ handler: @escaping Handler) {
        add("document.updated", path: path, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onDocumentUpdated(_ path: String, name: String? = nil,
                                           _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("document.updated", path: path, name: name, Self.acknowledging(handler))
    }

    /// Handles `document.deleted` triggers on `path`.
    public mutating func onDocumentDeleted(_ path: String, name: String? = nil, _ handler: @escaping Handler) {
        add("document.deleted", path: path, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onDocumentDeleted(_ path: String, name: String? = nil,
                                           _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("document.deleted", path: path, name: name, Self.acknowledging(handler))
    }

    /// Handles `document.written` triggers on `path` (a create, update or delete).
    public mutating func onDocumentWritten(_ path: String, name: String? = nil, _ handler: @escaping Handler) {
        add("document.written", path: path, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onDocumentWritten(_ path: String, name: String? = nil,
                                           _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("document.written", path: path, name: name, Self.acknowledging(handler))
    }

    // MARK: Accounts and files

    /// Handles `user.created` triggers.
    public mutating func onUserCreated(name: String? = nil, _ handler: @escaping Handler) {
        add("user.created", path: nil, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onUserCreated(name: String? = nil, _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("user.created", path: nil, name: name, Self.acknowledging(handler))
    }

    /// Handles `user.deleted` triggers.
    public mutating func onUserDeleted(name: String? = nil, _ handler: @escaping Handler) {
        add("user.deleted", path: nil, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onUserDeleted(name: String? = nil, _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("user.deleted", path: nil, name: name, Self.acknowledging(handler))
    }

    /// Handles `file.finalized` triggers on `path` (an object's name, `"media/{uid}/{file}"`).
    public mutating func onFileFinalized(_ path: String, name: String? = nil, _ handler: @escaping Handler) {
        add("file.finalized", path: path, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onFileFinalized(_ path: String, name: String? = nil,
                                         _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("file.finalized", path: path, name: name, Self.acknowledging(handler))
    }

    /// Handles `file.deleted` triggers on `path`.
    public mutating func onFileDeleted(_ path: String, name: String? = nil, _ handler: @escaping Handler) {
        add("file.deleted", path: path, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onFileDeleted(_ path: String, name: String? = nil,
                                       _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add("file.deleted", path: path, name: name, Self.acknowledging(handler))
    }

    // MARK: Schedules and timers

    /// Handles the runs of the schedule `name` of the functions file.
    public mutating func onSchedule(_ name: String, _ handler: @escaping Handler) {
        add(nil, path: nil, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onSchedule(_ name: String, _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add(nil, path: nil, name: name, Self.acknowledging(handler))
    }

    /// Handles the firings of the timer `name` of the functions file (its document is `event.document`).
    public mutating func onTimer(_ name: String, _ handler: @escaping Handler) {
        add(nil, path: nil, name: name, handler)
    }
    /// The same, for a handler that returns nothing (it acknowledges, writing nothing).
    @_disfavoredOverload
    public mutating func onTimer(_ name: String, _ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) {
        add(nil, path: nil, name: name, Self.acknowledging(handler))
    }

    // MARK: Matching

    mutating func add(_ type: String?, path: String?, name: String?, _ handler: @escaping Handler) {
        let pattern = path.map { $0.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }
        entries.append(Entry(type: type, pattern: pattern, name: name, handler: handler))
    }

    static func acknowledging(_ handler: @escaping @Sendable (FunctionEvent) async throws -> Void) -> Handler {
        { event in
            try await handler(event)
            return []
        }
    }

    /// The handler for `event`, with the event's params completed by the handler's own wildcard names.
    func match(_ event: FunctionEvent) -> (Handler, FunctionEvent)? {
        if let entry = entries.first(where: { $0.name != nil && $0.name == event.name
                                              && ($0.type == nil || $0.type == event.type) }) {
            return (entry.handler, bind(entry, event) ?? event)
        }
        for entry in entries where entry.name == nil && entry.type == event.type {
            if entry.pattern == nil { return (entry.handler, event) }
            if let bound = bind(entry, event) { return (entry.handler, bound) }
        }
        return nil
    }

    /// The event with the entry's wildcards bound, or nil when its path does not match the entry's pattern.
    func bind(_ entry: Entry, _ event: FunctionEvent) -> FunctionEvent? {
        guard let pattern = entry.pattern,
              let path = event.document?.path ?? event.file?["path"]?.stringValue else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.count == pattern.count else { return nil }
        var event = event
        for (segment, part) in zip(segments, pattern) {
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                event.params[String(part.dropFirst().dropLast())] = String(segment)
            } else if part != segment {
                return nil
            }
        }
        return event
    }

    /// What the handlers serve, for the message of an event none takes.
    var summary: String { entries.isEmpty ? "none" : entries.map(\.summary).joined(separator: "; ") }
}
