import HearthCore
import HearthImages
import Logging

/// Thumbnails (`FileOperation.thumbnail`): a read of the object, then its thumbnail for the box, made with
/// `ImageThumbnailer` the first time and kept beside the bytes (`BlobStorage.keepDerived`, named by the box),
/// so every later request opens the kept copy and is served like any download. Kept copies are keyed by the
/// bytes, not the name: a replacement with other bytes gets new thumbnails, and those of bytes no object names
/// any more are removed with them.
extension Database {
    func thumbnail(_ path: FilePath, token: String?, size: ThumbnailSize, identity: Identity) async throws -> FileRead {
        let blobs = storage.blobs
        let name = size.description
        // A kept thumbnail needs only the object's metadata; its bytes are opened only to make one.
        let file = try authorizedFile(path, token: token, identity: identity)
        if let kept = try blobs.openDerived(from: file.sha256, name: name) {
            return try Self.thumbnailRead(file, kept, size)
        }
        let object = try readFile(path, token: token, identity: identity)
        if object.file.sha256 != file.sha256, let kept = try blobs.openDerived(from: object.file.sha256, name: name) {
            return try Self.thumbnailRead(object.file, kept, size)
        }
        let handle = object.handle
        let source = ImageSource(size: handle.size) { offset, count in try handle.read(offset: offset, count: count) }
        let made: Thumbnail
        do {
            made = try await ImageThumbnailer.shared.thumbnail(of: source, fitting: size)
        } catch ImageError.notAnImage(let detail) {
            logger.debug("no thumbnail of file \(path): \(detail)")
            throw HearthError.invalidArgument(
                "file \(path) is not an image: its bytes are no JPEG, PNG, WebP or GIF that can be decoded (thumb takes images only)")
        } catch ImageError.tooManyPixels(let width, let height) {
            throw HearthError.invalidArgument(
                "file \(path) is an image of \(width)x\(height) pixels; thumbnails are made of images of at most \(ImageThumbnailer.maxPixels / 1_000_000) megapixels")
        } catch ImageError.unavailable(let reason) {
            logger.error("thumbnails are unavailable: \(reason)")
            throw HearthError.unavailable("thumbnails are unavailable on this server")
        }
        // Served from the kept copy, like every later request; from memory only when the object's bytes were
        // removed meanwhile (then nothing is kept).
        if try blobs.keepDerived(from: object.file.sha256, name: name, bytes: made.bytes),
           let kept = try blobs.openDerived(from: object.file.sha256, name: name) {
            return try Self.thumbnailRead(object.file, kept, size)
        }
        return FileRead(file: object.file, handle: MemoryBlobHandle(made.bytes),
                        thumbnail: FileThumbnail(size: size, format: made.format))
    }

    private static func thumbnailRead(_ file: StoredFile, _ handle: any BlobHandle, _ size: ThumbnailSize) throws -> FileRead {
        guard let format = ImageFormat(signature: try handle.read(offset: 0, count: 12)) else {
            throw HearthError.internal("a kept thumbnail of file \(file.path) is in no known format")
        }
        return FileRead(file: file, handle: handle, thumbnail: FileThumbnail(size: size, format: format))
    }
}

/// Bytes in memory, read like a blob.
private final class MemoryBlobHandle: BlobHandle {
    let bytes: [UInt8]
    var size: Int64 { Int64(bytes.count) }
    var descriptor: Int32? { nil }

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let start = Int(min(offset, size))
        let count = min(buffer.count, bytes.count - start)
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
        return count
    }
}
