import HearthCore

/// The box a thumbnail must fit in (`?thumb=WxH`): whole numbers of pixels, 1 to `maxSide` each.
public struct ThumbnailSize: Sendable, Hashable, CustomStringConvertible {
    /// The largest width or height asked for.
    public static let maxSide = 2_048

    /// The most pixels across.
    public let width: Int
    /// The most pixels down.
    public let height: Int

    /// A box; both sides must be 1 to `maxSide`.
    public init(width: Int, height: Int) throws(HearthError) {
        for (name, value) in [("width", width), ("height", height)] where !(1...Self.maxSide).contains(value) {
            throw .invalidArgument("thumb \(name) must be 1 to \(Self.maxSide) pixels, got \(value)")
        }
        self.width = width
        self.height = height
    }

    /// `WxH`, as the query parameter gives it (`200x100`).
    public init(parsing text: String) throws(HearthError) {
        let parts = text.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw .invalidArgument("thumb must be WIDTHxHEIGHT in pixels, e.g. 200x200, got '\(text.prefix(64))'")
        }
        func side(_ name: String, _ digits: Substring) throws(HearthError) -> Int {
            // Digits only (no sign, no space); more than a few digits is out of range whatever they say.
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .invalidArgument("thumb \(name) '\(digits.prefix(64))' is not a whole number of pixels (thumb=WIDTHxHEIGHT)")
            }
            guard digits.count <= 6, let value = Int(digits) else {
                throw .invalidArgument("thumb \(name) must be 1 to \(Self.maxSide) pixels, got \(digits.prefix(64))")
            }
            return value
        }
        try self.init(width: try side("width", parts[0]), height: try side("height", parts[1]))
    }

    /// `WxH`.
    public var description: String { "\(width)x\(height)" }
}
