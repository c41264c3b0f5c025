import Foundation
import HearthCore

/// Documents one per line, `{"path": "users/alice", "data": {...}}` (the document's shape on the wire, which
/// `hearth export` writes; `id`, `createTime` and `updateTime` may be there too and are left aside, as an
/// import gives its documents its own commit times). Blank lines are skipped.
final class NDJSONReader: ImportReader {
    let file: ImportFile
    let accounts = 0
    static let keys: Set<String> = ["path", "data", "id", "createTime", "updateTime"]

    init(_ file: ImportFile) { self.file = file }

    func next() throws(HearthError) -> ImportItem? {
        while true {
            let line = file.line
            guard let bytes = try nextLine() else { return nil }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let write = try parse(bytes, line: line)
            return ImportItem(write: write, line: line, end: file.offset, endLine: file.line)
        }
    }

    private func parse(_ bytes: ArraySlice<UInt8>, line: Int) throws(HearthError) -> Write {
        let json: JSON
        do { json = try JSON.parse(bytes) } catch { throw failure(line, error.message) }
        guard case .object(let pairs) = json else {
            throw failure(line, #"expected a document, {"path": "...", "data": {...}}, got "# + json.kind)
        }
        for (key, _) in pairs where !Self.keys.contains(key) {
            throw failure(line, "unknown key '\(key)'; expected path and data (id, createTime and updateTime are left aside)")
        }
        guard let path = json["path"]?.stringValue else { throw failure(line, "'path' must be a document path") }
        guard let data = json["data"] else { throw failure(line, "\(path) has no 'data'") }
        return try setWrite(path, data, line: line)
    }

    /// The next line's bytes (without its newline), or nil at the end of the file.
    private func nextLine() throws(HearthError) -> ArraySlice<UInt8>? {
        file.mark = file.position
        defer { file.mark = nil }
        var searched = file.position
        while true {
            let found: Int? = file.buffer.withUnsafeBufferPointer { buffer in
                guard searched < buffer.count, let base = buffer.baseAddress,
                      let hit = memchr(base + searched, 0x0A, buffer.count - searched) else { return nil }
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }
            if let newline = found {
                let bytes = file.buffer[file.mark!..<newline]
                file.position = newline + 1
                file.line += 1
                return bytes
            }
            searched = file.buffer.count
            let before = file.mark!
            let more = try file.fill()
            searched -= before - file.mark!
            if !more {
                // The last line, without a newline.
                guard file.mark! < file.buffer.count else { return nil }
                let bytes = file.buffer[file.mark!...]
                file.position = file.buffer.count
                return bytes
            }
        }
    }
}
