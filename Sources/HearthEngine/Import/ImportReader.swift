import HearthCore

/// One document of an import file: the write that stores it, and where it is in the file.
struct ImportItem {
    /// A `set` of the document.
    var write: Write
    /// The line the document starts on.
    var line: Int
    /// Where the bytes after it start (the next document's, or the end): the progress record's offset and line.
    var end: Int64
    var endLine: Int
}

/// Reads an import file's documents in order, from where its file was opened.
protocol ImportReader: AnyObject {
    /// The file read.
    var file: ImportFile { get }
    /// The next document, or nil after the last.
    func next() throws(HearthError) -> ImportItem?
    /// Accounts the file holds, which an import leaves out (known once the reader has passed them).
    var accounts: Int { get }
}

extension ImportReader {
    /// A failure at `line` of the file, as `FILE:LINE: what`.
    func failure(_ line: Int, _ message: String) -> HearthError {
        .invalidArgument("\(file.path):\(line): \(message)")
    }

    /// The write that stores document `path` (as written in the file) with `data`, checked as a commit
    /// would check it: path, values, size.
    func setWrite(_ path: String, _ data: JSON, line: Int) throws(HearthError) -> Write {
        let documentPath: DocumentPath
        do { documentPath = try DocumentPath(path) } catch { throw failure(line, "'\(path)': \(error.message)") }
        guard case .object = data else { throw failure(line, "the data of \(path) must be an object of fields, got \(data.kind)") }
        do {
            let write = try Write(kind: "set", path: documentPath, data: data)
            try Document.checkSize(path: documentPath, fields: write.fields)
            return write
        } catch {
            throw failure(line, "\(path): \(error.message)")
        }
    }
}
