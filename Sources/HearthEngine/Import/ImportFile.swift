import Foundation
import HearthCore

#if canImport(Glibc)
import Glibc
#endif

/// An import file read forward from a byte offset through a buffer of bounded size: what has been consumed
/// is dropped when more is read, except from a `mark` on, which a reader sets while it scans one document.
final class ImportFile {
    /// The file's path, as given.
    let path: String
    private let descriptor: Int32
    private(set) var buffer: [UInt8] = []
    /// The next unread byte's index in `buffer`.
    var position = 0
    /// The file offset of `buffer[0]`.
    private var base: Int64
    private var atEnd = false
    /// Bytes kept from here on when the buffer is refilled (nil: none beyond `position`).
    var mark: Int?
    /// The line of the next unread byte (1-based), counted by the readers as they pass newlines.
    var line: Int
    /// Longest a document may be in the file; a reader fails past it rather than buffer more.
    let maxDocumentBytes: Int
    /// Bytes read from the file at a time.
    static let chunkBytes = 1 << 20

    /// Opens the file at `offset`, which is at the start of `line`.
    init(path: String, offset: Int64 = 0, line: Int = 1, maxDocumentBytes: Int) throws(HearthError) {
        self.path = path
        self.maxDocumentBytes = maxDocumentBytes
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .invalidArgument("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        base = offset
        self.line = line
        if offset > 0 && lseek(descriptor, off_t(offset), SEEK_SET) < 0 {
            close(descriptor)
            throw .invalidArgument("cannot read \(path) from byte \(offset): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// The file offset of the next unread byte.
    var offset: Int64 { base + Int64(position) }

    /// The file's size now.
    var size: Int64 {
        var s = stat()
        return fstat(descriptor, &s) == 0 ? Int64(s.st_size) : 0
    }

    /// Reads more of the file into the buffer, first dropping what is consumed and not marked. False at the
    /// end of the file.
    func fill() throws(HearthError) -> Bool {
        if atEnd { return false }
        let keep = min(mark ?? position, position)
        if keep > 0 {
            buffer.removeSubrange(0..<keep)
            base += Int64(keep)
            position -= keep
            if let m = mark { mark = m - keep }
        }
        if buffer.count - (mark ?? position) > maxDocumentBytes {
            throw .invalidArgument("\(path):\(line): a document longer than \(maxDocumentBytes) bytes")
        }
        let old = buffer.count
        buffer.reserveCapacity(old + Self.chunkBytes)
        buffer.append(contentsOf: repeatElement(0, count: Self.chunkBytes))
        var n = 0
        repeat {
            n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + old, Self.chunkBytes) }
        } while n < 0 && errno == EINTR
        guard n >= 0 else {
            buffer.removeSubrange(old...)
            throw .invalidArgument("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        buffer.removeSubrange((old + n)...)
        if n == 0 { atEnd = true }
        return n > 0
    }

    /// The next unread byte without consuming it; nil at the end of the file.
    func peek() throws(HearthError) -> UInt8? {
        while position >= buffer.count { if try !fill() { return nil } }
        return buffer[position]
    }

    /// Reads the bytes of `range` of the file (for the samples an import's progress keeps).
    func bytes(at range: Range<Int64>) -> [UInt8] {
        if range.isEmpty { return [] }
        var out = [UInt8](repeating: 0, count: Int(range.count))
        let n = out.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(range.lowerBound)) }
        return Array(out.prefix(max(0, n)))
    }
}
