import Foundation
import HearthRules

/// The rules the engine enforces: one compiled, immutable program, swapped atomically when the rules file
/// is reloaded. Requests read the program once and decide with it, so a reload never mixes two rule sets.
///
/// Decisions that outlast a request (an open listener's target) must be taken again under a new program:
/// observers registered with `onInstall` hear of every swap.
public final class RulesInForce: @unchecked Sendable {
    private let lock = NSLock()
    private var current: RulesProgram?
    private var installs = 0
    private var observers: [@Sendable (Int) -> Void] = []
    private var devMode = false

    /// Makes an empty holder: until a program is installed, every caller but the admin is denied.
    public init() {}

    /// The program in force, or nil when no rules file is configured.
    public var program: RulesProgram? {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// How many programs were installed so far: a decision taken after reading generation `g` was taken
    /// under program `g` or a later one.
    public var generation: Int {
        lock.lock()
        defer { lock.unlock() }
        return installs
    }

    /// Calls `body` with the new generation after every install, on the installing thread.
    public func onInstall(_ body: @escaping @Sendable (Int) -> Void) {
        lock.lock()
        observers.append(body)
        lock.unlock()
    }

    /// Development mode: a denial names the deciding rule (`file:line`) and expression instead of
    /// Firestore's generic message.
    public var dev: Bool {
        get {
            lock.lock()
            defer { lock.unlock() }
            return devMode
        }
        set {
            lock.lock()
            devMode = newValue
            lock.unlock()
        }
    }

    /// Installs a program (nil removes the rules: every caller but the admin is then denied).
    public func install(_ program: RulesProgram?) {
        lock.lock()
        current = program
        installs += 1
        let (generation, observers) = (installs, self.observers)
        lock.unlock()
        for observer in observers { observer(generation) }
    }

    /// Compiles a rules file and installs it. On a read or compile error the rules in force stay as they
    /// were and the error (with every diagnostic and its caret) is thrown.
    @discardableResult
    public func load(file path: String) throws -> RulesProgram {
        let program = try Self.compile(file: path)
        install(program)
        return program
    }

    /// Reads and compiles a rules file without installing it.
    public static func compile(file path: String) throws -> RulesProgram {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RulesFileError(message: "cannot read rules file \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw RulesFileError(message: "rules file \(path) is not UTF-8 text")
        }
        return try RulesProgram.compile(source: text, fileName: path)
    }
}

/// A rules file could not be read.
public struct RulesFileError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the file.
    public let message: String
    /// Makes the error.
    public init(message: String) { self.message = message }
    public var description: String { message }
}
