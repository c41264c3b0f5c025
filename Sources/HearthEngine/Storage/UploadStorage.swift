import HearthCore

/// Where uploads in progress live (tus, `Database+Uploads`): each upload's record and its bytes so far, both
/// durable, apart from stored objects (no object names them, and a sweep of blobs never touches them). The
/// record's offset counts only bytes already synced, so after a crash an upload goes on from there.
public protocol UploadStorage: AnyObject, Sendable {
    /// Makes an upload's record and its empty bytes, durably.
    func create(_ upload: ResumableUpload) async throws
    /// An upload's record; nil when there is none (never made, finished, cancelled or swept).
    func load(_ id: String) async throws -> ResumableUpload?
    /// Appends the chunks at the upload's offset, hashing them when a checksum is given, syncs, and records
    /// the new offset. Bytes past the upload's length are refused, and so are bytes whose checksum differs;
    /// either way none of them is kept. When the chunks fail (a client gone mid-request) without a checksum,
    /// the bytes that came are kept, as tus asks.
    func append(_ upload: ResumableUpload, _ bytes: ByteChunks, checksum: UploadChecksum?) async throws -> ResumableUpload
    /// Opens an upload's bytes for reading.
    func open(_ id: String) throws -> any BlobHandle
    /// Removes an upload's record and bytes.
    func remove(_ id: String) async throws
    /// Marks an upload busy (one request at a time may append to it, finish or remove it); false when it is.
    func claim(_ id: String) -> Bool
    /// Ends a `claim`.
    func release(_ id: String)
    /// Removes uploads expired at `now`, and what a crash left half made. Returns how many uploads went.
    func sweep(now: Timestamp) throws -> Int
}
