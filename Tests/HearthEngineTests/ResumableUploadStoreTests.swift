import Foundation
import HearthCore
@testable import HearthEngine
import HearthRules
import HearthTesting
import Logging
import Testing

/// Resumable uploads in the engine, without HTTP: what a crash mid-request leaves, bytes a failing stream
/// brought, checksums, the rules decided at the start and again at the end, and expiry.
@Suite struct ResumableUploadStoreTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    static let logger = Logger(label: "hearth.test") { _ in SwiftLogNoOpLogHandler() }

    static func uploadFiles(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/files/uploads")) ?? []).sorted()
    }

    /// Chunks that fail after yielding `bytes` (a client gone mid-request).
    static func failing(after bytes: [UInt8]) -> ByteChunks {
        let sent = Counter()
        return ByteChunks(next: {
            guard sent.next() == 0 else { throw HearthError.invalidArgument("the client went away") }
            return bytes
        })
    }

    /// The folder opened as its owner would open it (sweeping what a crash left), and an engine over it.
    static func openAsOwner(_ folder: String) throws -> (any DocumentStorage, Database) {
        var configuration = StorageConfiguration(dataDirectory: folder)
        configuration.readers = 1
        configuration.dataFolderOwner = "test"
        let storage = try StorageBackend.open(configuration, logger: logger).documents
        return (storage, Database(storage: storage))
    }

    @Test func aCrashMidRequestLosesOnlyTheBytesNotYetCounted() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (storage, db) = try Self.openAsOwner(folder)
        let upload = try await db.startUpload("media/a.txt", length: 10, as: .admin, contentType: "text/plain")
        _ = try await db.appendUpload(upload.id, at: 0, ByteChunks(Self.bytes("abcd")), as: .admin)
        // A request killed after writing bytes but before they were synced and counted.
        let part = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(folder)/files/uploads/\(upload.id).part"))
        try part.seekToEnd()
        try part.write(contentsOf: Self.bytes("XXXXX"))
        try part.close()
        storage.close()

        let (reopened, again) = try Self.openAsOwner(folder)
        defer { reopened.close() }
        #expect(try await again.uploadStatus(upload.id, as: .admin).offset == 4)
        let done = try await again.appendUpload(upload.id, at: 4, ByteChunks(Self.bytes("efghij")), as: .admin)
        #expect(done.written?.file.size == 10)
        #expect(try await again.readFile("media/a.txt", as: .admin).bytes == Self.bytes("abcdefghij"))
        #expect(Self.uploadFiles(folder) == [])
    }

    @Test func aFailingStreamKeepsItsBytesUnlessTheyCarryAChecksum() async throws {
        try await TestDatabase.with { db in
            let upload = try await db.startUpload("a/b", length: 8, as: .admin)
            await #expect(throws: HearthError.self) {
                _ = try await db.appendUpload(upload.id, at: 0, Self.failing(after: Self.bytes("abc")), as: .admin)
            }
            #expect(try await db.uploadStatus(upload.id, as: .admin).offset == 3, "tus keeps what came")
            let sha1 = UploadChecksum(algorithm: .sha1, digest: [UInt8](repeating: 0, count: 20))
            await #expect(throws: HearthError.self) {
                _ = try await db.appendUpload(upload.id, at: 3, Self.failing(after: Self.bytes("de")), as: .admin, checksum: sha1)
            }
            #expect(try await db.uploadStatus(upload.id, as: .admin).offset == 3, "bytes that cannot be checked are not kept")
            await #expect(throws: UploadRefusal(kind: .checksumMismatch, message: "")) {
                do {
                    _ = try await db.appendUpload(upload.id, at: 3, ByteChunks(Self.bytes("de")), as: .admin, checksum: sha1)
                } catch var refusal as UploadRefusal {
                    refusal.message = ""
                    throw refusal
                }
            }
            #expect(try await db.uploadStatus(upload.id, as: .admin).offset == 3)
            let done = try await db.appendUpload(upload.id, at: 3, ByteChunks(Self.bytes("defgh")), as: .admin)
            #expect(try await db.readFile("a/b", as: .admin).bytes == Self.bytes("abcdefgh"))
            #expect(done.upload.offset == 8)
        }
    }

    static let rules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /avatars/{uid}/{name} {
              allow read: if request.auth != null;
              allow write: if request.auth.uid == uid && request.resource.size < 1024
                           && request.resource.contentType.matches('image/.*');
            }
          }
        }
        """

    @Test func theRulesDecideAtTheStartAndAgainAtTheEnd() async throws {
        let test = try await TestDatabase.open(rules: Self.rules)
        defer { test.close() }
        let db = test.database
        let alice = Identity.testUser("alice")
        // Refused as declared: nothing is made.
        for (path, length, type) in [("avatars/alice/a.txt", Int64(10), "text/plain"), ("avatars/alice/big.png", 5_000, "image/png"),
                                     ("avatars/bob/a.png", 10, "image/png")] {
            #expect(await FileStoreTests.code { _ = try await db.startUpload(path, length: length, as: alice, contentType: type) }
                    == .permissionDenied, "\(path)")
        }
        #expect(Self.uploadFiles(test.dataDirectory) == [])
        // Another caller may not go on with alice's upload, even knowing its id.
        let upload = try await db.startUpload("avatars/alice/me.png", length: 4, as: alice, contentType: "image/png")
        #expect(await FileStoreTests.code { _ = try await db.appendUpload(upload.id, at: 0, ByteChunks([1, 2]), as: .testUser("bob")) }
                == .permissionDenied)
        _ = try await db.appendUpload(upload.id, at: 0, ByteChunks([1, 2]), as: alice)
        // The rules change before the last byte: the put at the end decides again, and refuses.
        db.rules.install(try RulesProgram.compile(source: Self.rules.replacingOccurrences(of: "< 1024", with: "< 3"), fileName: "t.rules"))
        #expect(await FileStoreTests.code { _ = try await db.appendUpload(upload.id, at: 2, ByteChunks([3, 4]), as: alice) }
                == .permissionDenied)
        #expect(await (try? db.readFile("avatars/alice/me.png", as: .admin)) == nil, "nothing stored")
        #expect(Self.uploadFiles(test.dataDirectory) == [], "a refused upload is ended")
    }

    @Test func expiredUploadsAreRefusedAndSweptAtOpen() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (storage, db) = try Self.openAsOwner(folder)
        let gone = try await db.startUpload("a/gone", length: 4, as: .admin, lifetime: .zero)
        let kept = try await db.startUpload("a/kept", length: 4, as: .admin)
        await #expect(throws: UploadRefusal.self) { _ = try await db.uploadStatus(gone.id, as: .admin) }
        storage.close()
        #expect(Self.uploadFiles(folder).count == 4)

        let (reopened, _) = try Self.openAsOwner(folder)
        defer { reopened.close() }
        #expect(Self.uploadFiles(folder) == ["\(kept.id).json", "\(kept.id).part"])
        #expect(await FileStoreTests.code { _ = try await Database(storage: reopened).uploadStatus(gone.id, as: .admin) } == .notFound)
    }
}
