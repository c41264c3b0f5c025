/// A documentation example that does not run as printed, or a block that breaks the convention.
public struct DocExampleError: Error, CustomStringConvertible {
    /// What went wrong, with the file and line.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
