import Foundation
import HearthCore
import HearthEngine
import HearthImages
import HearthTesting
import Testing

/// Thumbnails in the engine, without HTTP: each format fits the box with its shape, the thumbnail is made
/// once and kept beside the bytes, goes with them, and what is not an image, or too big an image, is refused.
@Suite struct ThumbnailStoreTests {
    /// The kept thumbnails under a data folder, as `ab/abcdef…/WxH`.
    static func thumbnailFiles(_ folder: String) -> [String] {
        let root = folder + "/files/thumbs"
        let files = FileManager.default
        var out: [String] = []
        for sub in (try? files.contentsOfDirectory(atPath: root)) ?? [] {
            for blob in (try? files.contentsOfDirectory(atPath: "\(root)/\(sub)")) ?? [] {
                out += ((try? files.contentsOfDirectory(atPath: "\(root)/\(sub)/\(blob)")) ?? []).map { "\(sub)/\(blob)/\($0)" }
            }
        }
        return out.sorted()
    }

    static func inode(_ path: String) -> UInt64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.uint64Value
    }

    struct Shape: Sendable, CustomTestStringConvertible {
        let kind: TestImages.Kind
        let format: ImageFormat
        var testDescription: String { "\(kind) → \(format)" }
    }

    static let shapes = [Shape(kind: .jpeg, format: .jpeg), Shape(kind: .png, format: .png),
                         Shape(kind: .webp, format: .webp), Shape(kind: .gif, format: .png)]

    @Test(arguments: shapes) func eachFormatFitsTheBoxWithItsAspectRatio(_ shape: Shape) async throws {
        try await TestDatabase.with { db in
            // A GIF of two frames: its thumbnail is of the first (300×150, not 300×300).
            let image = TestImages.make(shape.kind, width: 300, height: 150, frames: shape.kind == .gif ? 2 : 1)
            _ = try await db.putFile("pics/a", image, as: .admin, contentType: "application/octet-stream")
            for (box, expected) in [((100, 100), (100, 50)), ((40, 200), (40, 20)), ((1000, 1000), (300, 150)),
                                    ((300, 10), (20, 10))] {
                let thumb = try await db.thumbnailFile("pics/a", box.0, box.1, as: .admin)
                #expect(thumb.format == shape.format)
                #expect(ImageFormat(signature: Array(thumb.bytes.prefix(12))) == shape.format)
                let seen = try #require(TestImages.describe(thumb.bytes), "\(box)")
                #expect(seen.width == expected.0 && seen.height == expected.1, "\(box): \(seen)")
                #expect(seen.frames == 1)
                #expect(seen.bands == (shape.kind.hasAlpha ? 4 : 3), "alpha kept where the format has it")
            }
        }
    }

    @Test func madeOnceKeptAndRemovedWithTheBytes() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        let first = try await db.putFile("pics/a.png", TestImages.make(.png, width: 200, height: 100), as: .admin)
        let made = try await db.thumbnailFile("pics/a.png", 50, 50, as: .admin)
        let kept = Self.thumbnailFiles(test.dataDirectory)
        #expect(kept == ["\(first.file.sha256Hex.prefix(2))/\(first.file.sha256Hex)/50x50"])
        let keptPath = "\(test.dataDirectory)/files/thumbs/\(kept[0])"
        let inode = try #require(Self.inode(keptPath))

        // The second request opens the kept copy: the same file, not made again.
        let again = try await db.thumbnailFile("pics/a.png", 50, 50, as: .admin)
        #expect(again.bytes == made.bytes)
        #expect(again.format == .png)
        #expect(Self.thumbnailFiles(test.dataDirectory) == kept)
        #expect(Self.inode(keptPath) == inode)
        _ = try await db.thumbnailFile("pics/a.png", 20, 20, as: .admin)
        #expect(Self.thumbnailFiles(test.dataDirectory).count == 2, "one per size")

        // Replaced by other bytes: a new thumbnail, and the old object's are gone with its bytes.
        let second = try await db.putFile("pics/a.png", TestImages.make(.png, width: 100, height: 200), as: .admin)
        let replaced = try await db.thumbnailFile("pics/a.png", 50, 50, as: .admin)
        #expect(TestImages.describe(replaced.bytes).map { [$0.width, $0.height] } == [25, 50])
        #expect(Self.thumbnailFiles(test.dataDirectory) == ["\(second.file.sha256Hex.prefix(2))/\(second.file.sha256Hex)/50x50"])

        // Identical bytes under another name share the kept thumbnail, which stays while one object names them.
        _ = try await db.putFile("pics/b.png", TestImages.make(.png, width: 100, height: 200), as: .admin)
        _ = try await db.deleteFile("pics/a.png", as: .admin)
        #expect(Self.thumbnailFiles(test.dataDirectory).count == 1)
        #expect(try await db.thumbnailFile("pics/b.png", 50, 50, as: .admin).bytes == replaced.bytes)
        _ = try await db.deleteFile("pics/b.png", as: .admin)
        #expect(Self.thumbnailFiles(test.dataDirectory).isEmpty)
        #expect(FileStoreTests.temporaryFiles(test.dataDirectory).isEmpty)
    }

    @Test func manyAtOnceQueueForTheThumbnailersThreads() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.putFile("pics/wide.webp", TestImages.make(.webp, width: 400, height: 100), as: .admin)
        // More requests than threads (one per core), half of them for a size another asks for at once.
        let sides = (1...12).map { 8 * $0 } + (1...12).map { 8 * $0 }
        let seen = try await withThrowingTaskGroup(of: (Int, [Int]).self) { group in
            for side in sides {
                group.addTask {
                    let thumb = try await db.thumbnailFile("pics/wide.webp", side, side, as: .admin)
                    let image = try #require(TestImages.describe(thumb.bytes))
                    return (side, [image.width, image.height])
                }
            }
            return try await group.reduce(into: [(Int, [Int])]()) { $0.append($1) }
        }
        #expect(seen.count == sides.count)
        for (side, size) in seen { #expect(size == [side, side / 4], "\(side)") }
        #expect(Self.thumbnailFiles(test.dataDirectory).count == 12, "one kept copy per size")
        #expect(FileStoreTests.temporaryFiles(test.dataDirectory).isEmpty)
    }

    @Test func thumbnailsOfBytesLostInACrashAreSwept() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (storage, db) = try ResumableUploadStoreTests.openAsOwner(folder)
        let kept = try await db.putFile("kept.png", TestImages.make(.png, width: 40, height: 40), as: .admin)
        _ = try await db.thumbnailFile("kept.png", 10, 10, as: .admin)
        let gone = try await db.putFile("gone.png", TestImages.make(.png, width: 30, height: 30), as: .admin)
        _ = try await db.thumbnailFile("gone.png", 10, 10, as: .admin)
        // A crash after the blob was removed, before its thumbnails were.
        _ = try await db.deleteFile("gone.png", as: .admin)
        let orphan = "\(folder)/files/thumbs/\(gone.file.sha256Hex.prefix(2))/\(gone.file.sha256Hex)"
        try FileManager.default.createDirectory(atPath: orphan, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: orphan + "/10x10"))
        storage.close()

        let (reopened, _) = try ResumableUploadStoreTests.openAsOwner(folder)
        defer { reopened.close() }
        #expect(Self.thumbnailFiles(folder) == ["\(kept.file.sha256Hex.prefix(2))/\(kept.file.sha256Hex)/10x10"])
        #expect(try reopened.sweepBlobs() == BlobSweep(temporaryFiles: 0, blobs: 0, derived: 0))
    }

    @Test func whatIsNotAnImageIsRefused() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        do {
            // The bytes decide, not the declared type.
            let cases: [(String, [UInt8])] = [
                ("text", Array("hello, not an image".utf8)),
                ("empty", []),
                ("png signature, then nothing", Array(TestImages.make(.png, width: 10, height: 10).prefix(20))),
                ("a format thumbnails do not take", Array("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>".utf8)),
            ]
            for (name, bytes) in cases {
                _ = try await db.putFile("x/\(name)", bytes, as: .admin, contentType: "image/png")
                do {
                    _ = try await db.thumbnailFile("x/\(name)", 10, 10, as: .admin)
                    Issue.record("\(name): a thumbnail was made")
                } catch let error as HearthError {
                    #expect(error.code == .invalidArgument, "\(name)")
                    #expect(error.message.contains("is not an image"), "\(name): \(error.message)")
                }
            }
            #expect(FileStoreTests.temporaryFiles(test.dataDirectory).isEmpty)
            #expect(Self.thumbnailFiles(test.dataDirectory).isEmpty)
        }
    }

    @Test func aDecompressionBombIsRefusedFromItsHeader() async throws {
        try await TestDatabase.with { db in
            let bomb = TestImages.pngBomb(width: 100_000, height: 100_000)
            #expect(bomb.count < 100)
            _ = try await db.putFile("bomb.png", bomb, as: .admin, contentType: "image/png")
            let before = try ServerProcess.residentBytes(of: "self")
            do {
                _ = try await db.thumbnailFile("bomb.png", 100, 100, as: .admin)
                Issue.record("a thumbnail of 10 gigapixels was made")
            } catch let error as HearthError {
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains("100000x100000 pixels"), "\(error.message)")
                #expect(error.message.contains("50 megapixels"), "\(error.message)")
            }
            // Decoding it would take 30 GB; the header alone costs nothing to speak of.
            #expect(try ServerProcess.residentBytes(of: "self") - before < 256 << 20)
        }
    }
}
