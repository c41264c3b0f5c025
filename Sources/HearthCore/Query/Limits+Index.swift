extension Limits {
    /// Most field-index entries one document may have (Firestore's 40,000).
    public static let maxIndexEntriesPerDocument = 40_000
}
