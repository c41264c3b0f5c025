/// A document's fields in the forms its storage writes them (the stored encoding, and the storage's own index
/// entries), made by `DocumentStorage.prepare` before the writer's transaction, on the thread that parsed
/// them: a commit of many documents (an import's batch) then leaves the one writer thread only the storing.
/// A write uses them only when the document it leaves has exactly the fields they were made from.
public struct PreparedFields: Sendable {
    /// The fields as canonical wire JSON (`StoredDocument.data`).
    public let encoded: [UInt8]
    /// What the storage's index keeps for these fields at this path, opaque above it.
    public let index: any Sendable

    /// Makes prepared fields.
    public init(encoded: [UInt8], index: any Sendable) {
        self.encoded = encoded
        self.index = index
    }
}
