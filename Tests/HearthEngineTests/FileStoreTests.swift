import Foundation
import HearthCore
@testable import HearthEngine
import HearthRules
import HearthTesting
import Logging
import NIOCore
import Testing

/// The file store in the engine, without HTTP: puts, reads and ranges, deletes, listings, identical bytes
/// stored once, preconditions, download tokens, bad input, and what a crash leaves.
@Suite struct FileStoreTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The blob files and temporary files under a data folder.
    static func blobFiles(_ folder: String) -> [String] {
        let root = folder + "/files/blobs"
        var out: [String] = []
        for sub in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            out += ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + sub)) ?? []).map { sub + "/" + $0 }
        }
        return out.sorted()
    }

    static func temporaryFiles(_ folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder + "/files/tmp")) ?? []
    }

    static func code(_ body: () async throws -> Void) async -> HearthError.Code? {
        do {
            try await body()
            return nil
        } catch let error as HearthError {
            return error.code
        } catch {
            return .internal
        }
    }

    // MARK: Paths

    struct PathRow: CustomTestStringConvertible, Sendable {
        let path: String
        let error: String?
        var testDescription: String { "\(path.debugDescription) → \(error ?? "valid")" }
    }

    static let pathRows: [PathRow] = [
        PathRow(path: "avatars/alice/me.jpg", error: nil),
        PathRow(path: "a", error: nil),
        PathRow(path: "été/фото 1.png", error: nil),
        PathRow(path: ".hidden/..x/x..", error: nil),
        PathRow(path: String(repeating: "a", count: 1_024), error: nil),
        PathRow(path: String(repeating: "é", count: 512), error: nil),
        PathRow(path: "", error: "file path is empty"),
        PathRow(path: String(repeating: "a", count: 1_025), error: "file path is 1025 bytes; the limit is 1024"),
        PathRow(path: String(repeating: "é", count: 513), error: "file path is 1026 bytes"),
        PathRow(path: "/a", error: "empty segment (segment 1"),
        PathRow(path: "a/", error: "empty segment (segment 2"),
        PathRow(path: "a//b", error: "empty segment (segment 2"),
        PathRow(path: "a/./b", error: "has a '.' segment (segment 2"),
        PathRow(path: "a/../b", error: "has a '..' segment (segment 2"),
        PathRow(path: "..", error: "has a '..' segment (segment 1"),
        PathRow(path: "a/b\nc", error: "control character (U+000A) at byte 3"),
        PathRow(path: "a\u{0}", error: "control character (U+0000) at byte 1"),
        PathRow(path: "a\u{7F}", error: "control character (U+007F)"),
        PathRow(path: "é\u{85}", error: "control character (U+0085) at byte 2"),
    ]

    @Test(arguments: pathRows) func paths(_ row: PathRow) async throws {
        do {
            let path = try FilePath(row.path)
            #expect(row.error == nil, "accepted")
            #expect(path.name == row.path)
        } catch {
            let expected = try #require(row.error, "refused: \(error.message)")
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    // MARK: Put, get, delete

    @Test func putGetRangeReplaceDelete() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        let created = try await db.putFile("docs/hello.txt", Self.bytes("hello, world"), as: .admin, contentType: "text/plain",
                                           metadata: ["k": "v"], chunkSize: 5)
        #expect(created.created)
        #expect(created.file.size == 12)
        #expect(created.file.contentType == "text/plain")
        #expect(created.file.metadata == ["k": "v"])
        #expect(created.file.sha256Hex == "09ca7e4eaa6e8ae9c7d261167129184883644d07dfba7cbfbc4c8a2e08360d5b")
        #expect(Base64.encode(created.file.md5) == "5NfxtO0uQtFYmPSyewGdpA==")
        #expect(created.file.metageneration == 1)
        #expect(created.downloadToken?.hasPrefix("hdl_") == true)

        let read = try await db.readFile("docs/hello.txt", as: .admin)
        #expect(read.file == created.file)
        #expect(read.bytes == Self.bytes("hello, world"))
        #expect(try await db.readFile("docs/hello.txt", as: .admin, range: 7..<12).bytes == Self.bytes("world"))
        #expect(try await db.readFile("docs/hello.txt", as: .admin, range: 0..<0).bytes == [])

        // A read holds its bytes open: a replacement does not tear them.
        guard case .read(let open) = try await db.performFile(.get(try FilePath("docs/hello.txt"), token: nil), as: .admin) else {
            Issue.record("no read")
            return
        }
        let replaced = try await db.putFile("docs/hello.txt", Self.bytes("bye"), as: .admin)
        #expect(!replaced.created)
        #expect(replaced.file.generation > created.file.generation)
        #expect(replaced.file.contentType == FileUpload.defaultContentType)
        #expect(replaced.file.metadata == [:])
        #expect(try await open.bytes().collect() == Self.bytes("hello, world"))
        #expect(try await db.readFile("docs/hello.txt", as: .admin).bytes == Self.bytes("bye"))
        // The replaced bytes are gone from disk.
        #expect(Self.blobFiles(test.dataDirectory) == ["\(replaced.file.sha256Hex.prefix(2))/\(replaced.file.sha256Hex)"])

        #expect(try await db.deleteFile("docs/hello.txt", as: .admin))
        #expect(try await !db.deleteFile("docs/hello.txt", as: .admin))
        #expect(await Self.code { _ = try await db.readFile("docs/hello.txt", as: .admin) } == .notFound)
        #expect(Self.blobFiles(test.dataDirectory).isEmpty)
        #expect(Self.temporaryFiles(test.dataDirectory).isEmpty)
    }

    @Test func bytesLostFromTheFolderAreAnInternalError() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let written = try await test.database.putFile("lost", Self.bytes("gone"), as: .admin)
        let hex = written.file.sha256Hex
        #expect(unlink("\(test.dataDirectory)/files/blobs/\(hex.prefix(2))/\(hex)") == 0)
        #expect(await Self.code { _ = try await test.database.readFile("lost", as: .admin) } == .internal)
    }

    @Test func emptyAndLargeObjects() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        let empty = try await db.putFile("e", [], as: .admin)
        #expect(empty.file.size == 0)
        #expect(try await db.readFile("e", as: .admin).bytes == [])
        // Several chunks of the reader's size (and of the writes a put gathers), and a range across a boundary.
        let chunk = FileBytes.chunkSize
        var large = [UInt8](repeating: 0, count: 2 * chunk + 300_000)
        for i in large.indices { large[i] = UInt8(truncatingIfNeeded: i &* 31) }
        _ = try await db.putFile("big", large, as: .admin, chunkSize: 100_000)
        #expect(try await db.readFile("big", as: .admin).bytes == large)
        let across = (chunk - 5_000)..<(chunk + 70_000)
        #expect(try await db.readFile("big", as: .admin, range: Int64(across.lowerBound)..<Int64(across.upperBound)).bytes
                == Array(large[across]))
    }

    /// A put's chunks come in every size (a client that trickles, one that sends more than a write gathers):
    /// the object holds the bytes in order, whatever the sizes.
    @Test func chunksOfEverySizeAreStoredInOrder() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let sizes = [1, 3, 70_000, 1, 65_535, 2, 1 << 20, 5, 64 << 10, 1, 300_000] + Array(repeating: 1, count: 500)
        var all: [UInt8] = []
        var chunks: [[UInt8]] = []
        for (n, size) in sizes.enumerated() {
            let chunk = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ n) }
            chunks.append(chunk)
            all += chunk
        }
        let stream = AsyncStream<[UInt8]> { out in
            for chunk in chunks { out.yield(chunk) }
            out.finish()
        }
        let upload = FileUpload(path: try FilePath("uneven.bin"), bytes: ByteChunks(stream), maxSize: 1 << 30)
        let written = try await test.database.putFile(upload, as: .admin)
        #expect(written.file.size == Int64(all.count))
        #expect(try await test.database.readFile("uneven.bin", as: .admin).bytes == all)
        #expect(Self.temporaryFiles(test.dataDirectory).isEmpty)
    }

    /// The folders of temporary files and of blobs are made when a put first needs them, also when they were
    /// removed while the server ran.
    @Test func foldersRemovedUnderARunningServerAreMadeAgain() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let first = try await test.database.putFile("a", Self.bytes("first"), as: .admin)
        let files = test.dataDirectory + "/files"
        let hex = first.file.sha256Hex
        try await test.database.deleteFile("a", as: .admin)
        try FileManager.default.removeItem(atPath: "\(files)/tmp")
        try FileManager.default.removeItem(atPath: "\(files)/blobs/\(hex.prefix(2))")
        _ = try await test.database.putFile("b", Self.bytes("first"), as: .admin)
        #expect(try await test.database.readFile("b", as: .admin).bytes == Self.bytes("first"))
        #expect(Self.blobFiles(test.dataDirectory) == ["\(hex.prefix(2))/\(hex)"])
        #expect(Self.temporaryFiles(test.dataDirectory).isEmpty)
    }

    /// A download reuses its buffers in turn: a buffer the consumer still holds keeps its bytes, and one it let
    /// go is refilled with the right ones.
    @Test(arguments: [true, false]) func aDownloadsReusedBuffersKeepTheirBytes(consumerHolds: Bool) async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let chunk = FileBytes.chunkSize
        var large = [UInt8](repeating: 0, count: 7 * chunk + 12_345)
        for i in large.indices { large[i] = UInt8(truncatingIfNeeded: (i / chunk) &* 97 &+ i &* 13) }
        _ = try await test.database.putFile("many", large, as: .admin, chunkSize: chunk)
        guard case .read(let read) = try await test.database.performFile(.get(try FilePath("many"), token: nil), as: .admin) else {
            Issue.record("a get comes to a read")
            return
        }
        var held: [ByteBuffer] = []
        var copied: [UInt8] = []
        for try await buffer in read.bytes() {
            if consumerHolds { held.append(buffer) } else { copied += buffer.readableBytesView }
        }
        if consumerHolds { copied = held.flatMap { Array($0.readableBytesView) } }
        #expect(copied == large)
    }

    @Test func identicalBytesAreStoredOnce() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        let a = try await db.putFile("a.bin", Self.bytes("same bytes"), as: .admin)
        let b = try await db.putFile("dir/b.bin", Self.bytes("same bytes"), as: .admin)
        #expect(a.file.sha256 == b.file.sha256)
        #expect(Self.blobFiles(test.dataDirectory).count == 1)
        try await db.deleteFile("a.bin", as: .admin)
        // The other object still names the bytes.
        #expect(Self.blobFiles(test.dataDirectory).count == 1)
        #expect(try await db.readFile("dir/b.bin", as: .admin).bytes == Self.bytes("same bytes"))
        // Replacing an object with the bytes it already has keeps them.
        _ = try await db.putFile("dir/b.bin", Self.bytes("same bytes"), as: .admin)
        #expect(Self.blobFiles(test.dataDirectory).count == 1)
        try await db.deleteFile("dir/b.bin", as: .admin)
        #expect(Self.blobFiles(test.dataDirectory).isEmpty)
    }

    /// An upload and a delete of the same bytes under two names at once, many times over: the delete never
    /// removes bytes that the upload in flight is about to name, and the last name gone takes the bytes with it.
    @Test func concurrentPutsAndDeletesOfTheSameBytes() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        let payload = Self.bytes("shared by everyone")
        for _ in 0..<60 {
            _ = try await db.putFile("a", payload, as: .admin)
            async let deleted = db.deleteFile("a", as: .admin)
            async let written = db.putFile("b", payload, as: .admin)
            _ = try await (deleted, written)
            #expect(try await db.readFile("b", as: .admin).bytes == payload)
            try await db.deleteFile("b", as: .admin)
            #expect(Self.blobFiles(test.dataDirectory).isEmpty)
        }
        #expect(Self.temporaryFiles(test.dataDirectory).isEmpty)
    }

    // MARK: Bad input

    @Test func refusedPutsLeaveNothing() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        _ = try await db.putFile("keep", Self.bytes("old"), as: .admin)

        // Over the limit: refused as the bytes arrive.
        #expect(await Self.code { _ = try await db.putFile("keep", Self.bytes("0123456789"), as: .admin, maxSize: 9, chunkSize: 3) }
                == .payloadTooLarge)
        // A SHA-256 that does not match.
        #expect(await Self.code { _ = try await db.putFile("keep", Self.bytes("new"), as: .admin, sha256: [UInt8](repeating: 0, count: 32)) }
                == .invalidArgument)
        // The client goes away mid-upload.
        struct Gone: Error {}
        let sent = Counter()
        let failing = ByteChunks {
            guard sent.next() < 3 else { throw Gone() }
            return Self.bytes("part")
        }
        #expect(await Self.code {
            _ = try await db.putFile(FileUpload(path: try FilePath("keep"), bytes: failing, maxSize: 1_000), as: .admin)
        } == .internal)
        // Bad attributes, refused before any byte is read.
        #expect(await Self.code { _ = try await db.putFile("keep", Self.bytes("x"), as: .admin, contentType: "") } == .invalidArgument)
        #expect(await Self.code { _ = try await db.putFile("keep", Self.bytes("x"), as: .admin, contentType: "text/\u{7}") } == .invalidArgument)
        #expect(await Self.code {
            _ = try await db.putFile("keep", Self.bytes("x"), as: .admin, metadata: ["k": String(repeating: "v", count: 8_192)])
        } == .invalidArgument)
        #expect(await Self.code { _ = try await db.putFile("keep", Self.bytes("x"), as: .admin, metadata: ["": "v"]) } == .invalidArgument)

        #expect(try await db.readFile("keep", as: .admin).bytes == Self.bytes("old"))
        #expect(Self.blobFiles(test.dataDirectory).count == 1)
        #expect(Self.temporaryFiles(test.dataDirectory).isEmpty)
    }

    @Test func preconditions() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        let first = try await db.putFile("p", Self.bytes("1"), as: .admin, ifNoneMatch: true)
        #expect(await Self.code { _ = try await db.putFile("p", Self.bytes("2"), as: .admin, ifNoneMatch: true) } == .failedPrecondition)
        #expect(await Self.code { _ = try await db.putFile("p", Self.bytes("2"), as: .admin, ifMatch: "1-1") } == .failedPrecondition)
        #expect(await Self.code { _ = try await db.putFile("q", Self.bytes("2"), as: .admin, ifMatch: first.file.etag) } == .failedPrecondition)
        let second = try await db.putFile("p", Self.bytes("2"), as: .admin, ifMatch: first.file.etag)
        #expect(second.file.etag != first.file.etag)
        #expect(await Self.code { try await db.deleteFile("p", as: .admin, ifMatch: first.file.etag) } == .failedPrecondition)
        // A metadata change is a new etag too.
        let changed = try await db.updateFile("p", FileMetadataChange(contentType: "text/plain", metadata: ["a": "b"]), as: .admin)
        #expect(changed.file.metageneration == 2)
        #expect(changed.file.generation == second.file.generation)
        #expect(changed.file.sha256 == second.file.sha256)
        #expect(changed.file.etag != second.file.etag)
        #expect(changed.downloadToken == nil)
        #expect(await Self.code { try await db.deleteFile("p", as: .admin, ifMatch: second.file.etag) } == .failedPrecondition)
        #expect(try await db.deleteFile("p", as: .admin, ifMatch: changed.file.etag))
        #expect(await Self.code { _ = try await db.updateFile("p", FileMetadataChange(contentType: "a/b"), as: .admin) } == .notFound)
        // Only what the rules let through reaches the preconditions: the remaining files are the ones written.
        #expect(try await db.listFiles(as: .admin).files.isEmpty)
        #expect(Self.temporaryFiles(test.dataDirectory).isEmpty)
    }

    // MARK: Listing

    @Test func listing() async throws {
        let test = try await TestDatabase.open()
        defer { test.close() }
        let db = test.database
        for name in ["a/1", "a/2", "a/b/3", "a/b/4", "a/c/5", "ab", "c", "é/x"] {
            _ = try await db.putFile(name, Self.bytes(name), as: .admin)
        }
        let root = try await db.listFiles(delimiter: "/", as: .admin)
        #expect(root.files.map(\.path.name) == ["ab", "c"])
        #expect(root.prefixes == ["a/", "é/"])
        #expect(root.nextPageToken == nil)
        let a = try await db.listFiles(prefix: "a/", delimiter: "/", as: .admin)
        #expect(a.files.map(\.path.name) == ["a/1", "a/2"])
        #expect(a.prefixes == ["a/b/", "a/c/"])
        let flat = try await db.listFiles(prefix: "a", as: .admin)
        #expect(flat.files.map(\.path.name) == ["a/1", "a/2", "a/b/3", "a/b/4", "a/c/5", "ab"])
        #expect(flat.prefixes.isEmpty)
        // Pages of one entry: objects and prefixes each count, in name order.
        var seen: [String] = []
        var token: String?
        repeat {
            let page = try await db.listFiles(prefix: "a/", delimiter: "/", pageSize: 1, pageToken: token, as: .admin)
            #expect(page.files.count + page.prefixes.count <= 1)
            seen += page.files.map(\.path.name) + page.prefixes
            token = page.nextPageToken
        } while token != nil
        #expect(seen == ["a/1", "a/2", "a/b/", "a/c/"])
        var two: [String] = []
        token = nil
        repeat {
            let page = try await db.listFiles(pageSize: 3, pageToken: token, as: .admin)
            two += page.files.map(\.path.name)
            token = page.nextPageToken
        } while token != nil
        #expect(two == ["a/1", "a/2", "a/b/3", "a/b/4", "a/c/5", "ab", "c", "é/x"])
        #expect(await Self.code { _ = try await db.listFiles(pageSize: 0, as: .admin) } == .invalidArgument)
        #expect(await Self.code { _ = try await db.listFiles(pageSize: 1_001, as: .admin) } == .invalidArgument)
        #expect(await Self.code { _ = try await db.listFiles(pageToken: "%%%", as: .admin) } == .invalidArgument)
        #expect(await Self.code { _ = try await db.listFiles(prefix: "a\n", as: .admin) } == .invalidArgument)
    }

    // MARK: Rules and tokens

    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents { match /{doc=**} { allow read: if false; } }
        }
        service firebase.storage {
          match /b/{bucket}/o {
            match /avatars/{uid}/{name} {
              allow read: if request.auth != null;
              allow write: if request.auth.uid == uid
                && (request.resource == null
                    || (request.resource.size < 1024 && request.resource.contentType.matches('image/.*')));
            }
            match /teams/{team}/{path=**} {
              allow read, write: if firestore.get(/databases/(default)/documents/teams/$(team)/members/$(request.auth.uid)).data.role == 'editor';
              allow list: if firestore.exists(/databases/(default)/documents/teams/$(team)/members/$(request.auth.uid));
            }
          }
        }
        """

    static let alice = Identity.user(uid: "alice", token: RulesAuth.defaultClaims(uid: "alice"))
    static let bob = Identity.user(uid: "bob", token: RulesAuth.defaultClaims(uid: "bob"))

    @Test func rulesDecideEveryOperation() async throws {
        let test = try await TestDatabase.open(rules: Self.rules, documents: [
            "teams/t1/members/alice": #"{"role": "editor"}"#,
            "teams/t1/members/bob": #"{"role": "viewer"}"#,
        ])
        defer { test.close() }
        let db = test.database
        let image = [UInt8](repeating: 7, count: 100)
        _ = try await db.putFile("avatars/alice/me.png", image, as: Self.alice, contentType: "image/png")
        // Too large, or not an image, or someone else's folder: denied, and nothing is left behind.
        #expect(await Self.code { _ = try await db.putFile("avatars/alice/big.png", [UInt8](repeating: 1, count: 2_000), as: Self.alice, contentType: "image/png") } == .permissionDenied)
        #expect(await Self.code { _ = try await db.putFile("avatars/alice/me.txt", image, as: Self.alice, contentType: "text/plain") } == .permissionDenied)
        #expect(await Self.code { _ = try await db.putFile("avatars/alice/me.png", image, as: Self.bob, contentType: "image/png") } == .permissionDenied)
        #expect(await Self.code { _ = try await db.putFile("avatars/alice/x.png", image, as: .unauthenticated, contentType: "image/png") } == .permissionDenied)
        #expect(Self.blobFiles(test.dataDirectory).count == 1)
        #expect(Self.temporaryFiles(test.dataDirectory).isEmpty)
        // Rules decide before preconditions: a denied caller does not learn that the object exists.
        #expect(await Self.code { _ = try await db.putFile("avatars/alice/me.png", image, as: Self.bob, contentType: "image/png", ifNoneMatch: true) } == .permissionDenied)

        #expect(try await db.readFile("avatars/alice/me.png", as: Self.bob).bytes == image)
        #expect(await Self.code { _ = try await db.readFile("avatars/alice/me.png", as: .unauthenticated) } == .permissionDenied)
        // A missing object: not-found only for a caller the rules let read it.
        #expect(await Self.code { _ = try await db.readFile("avatars/alice/none.png", as: Self.bob) } == .notFound)
        #expect(await Self.code { _ = try await db.readFile("avatars/alice/none.png", as: .unauthenticated) } == .permissionDenied)
        // Metadata changes are updates: the object after the change must still pass.
        #expect(await Self.code { _ = try await db.updateFile("avatars/alice/me.png", FileMetadataChange(contentType: "text/plain"), as: Self.alice) } == .permissionDenied)
        _ = try await db.updateFile("avatars/alice/me.png", FileMetadataChange(metadata: ["alt": "me"]), as: Self.alice)
        #expect(await Self.code { try await db.deleteFile("avatars/alice/me.png", as: Self.bob) } == .permissionDenied)

        // Documents decide through firestore.get and firestore.exists.
        _ = try await db.putFile("teams/t1/plans/q1.pdf", Self.bytes("plan"), as: Self.alice)
        #expect(await Self.code { _ = try await db.putFile("teams/t1/plans/q2.pdf", Self.bytes("plan"), as: Self.bob) } == .permissionDenied)
        #expect(try await db.listFiles(prefix: "teams/t1/", delimiter: "/", as: Self.bob).prefixes == ["teams/t1/plans/"])
        #expect(await Self.code { _ = try await db.listFiles(prefix: "teams/t2/", as: Self.bob) } == .permissionDenied)
        #expect(await Self.code { _ = try await db.listFiles(prefix: "", as: Self.bob) } == .permissionDenied)
        // Listing is decided once for the prefix, so only the admin lists what no rule covers.
        #expect(try await db.listFiles(as: .admin).files.count == 2)

        try await db.deleteFile("avatars/alice/me.png", as: Self.alice)
        try await db.deleteFile("teams/t1/plans/q1.pdf", as: Self.alice)
        #expect(Self.blobFiles(test.dataDirectory).isEmpty)
    }

    @Test func withoutStorageRulesOnlyTheAdmin() async throws {
        let test = try await TestDatabase.open(rules: """
            rules_version = '2';
            service cloud.firestore { match /databases/{database}/documents { match /{doc=**} { allow read, write; } } }
            """)
        defer { test.close() }
        let db = test.database
        #expect(await Self.code { _ = try await db.putFile("a", Self.bytes("x"), as: Self.alice) } == .permissionDenied)
        _ = try await db.putFile("a", Self.bytes("x"), as: .admin)
        #expect(await Self.code { _ = try await db.readFile("a", as: Self.alice) } == .permissionDenied)
        #expect(await Self.code { _ = try await db.listFiles(as: Self.alice) } == .permissionDenied)
        #expect(await Self.code { try await db.deleteFile("a", as: Self.alice) } == .permissionDenied)
        #expect(try await db.readFile("a", as: .admin).bytes == Self.bytes("x"))
    }

    @Test func downloadTokens() async throws {
        let test = try await TestDatabase.open(rules: Self.rules)
        defer { test.close() }
        let db = test.database
        let written = try await db.putFile("avatars/alice/me.png", Self.bytes("img"), as: Self.alice, contentType: "image/png")
        let token = try #require(written.downloadToken)
        // The token reads without any identity; the rules alone would deny a guest.
        #expect(try await db.readFile("avatars/alice/me.png", as: .unauthenticated, token: token).bytes == Self.bytes("img"))
        // Only its hash is stored.
        #expect(written.file.tokenHash != Array(token.utf8))
        #expect(await Self.code { _ = try await db.readFile("avatars/alice/me.png", as: .unauthenticated, token: token + "x") } == .permissionDenied)
        #expect(await Self.code { _ = try await db.readFile("avatars/alice/me.png", as: .unauthenticated, token: "hdl_" + String(repeating: "A", count: 43)) } == .permissionDenied)
        // Rotating kills old links.
        let rotated = try await db.updateFile("avatars/alice/me.png", FileMetadataChange(rotateDownloadToken: true), as: Self.alice)
        let fresh = try #require(rotated.downloadToken)
        #expect(fresh != token)
        #expect(await Self.code { _ = try await db.readFile("avatars/alice/me.png", as: .unauthenticated, token: token) } == .permissionDenied)
        #expect(try await db.readFile("avatars/alice/me.png", as: .unauthenticated, token: fresh).bytes == Self.bytes("img"))
        // A token opens only its own object.
        let other = try await db.putFile("avatars/alice/two.png", Self.bytes("two"), as: Self.alice, contentType: "image/png")
        #expect(await Self.code { _ = try await db.readFile("avatars/alice/two.png", as: .unauthenticated, token: fresh) } == .permissionDenied)
        #expect(other.downloadToken != fresh)
    }

    // MARK: Crashes

    @Test func crashLeavesNothingVisibleAndReopeningSweeps() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let logger = Logger(label: "hearth.test") { _ in SwiftLogNoOpLogHandler() }
        var configuration = StorageConfiguration(dataDirectory: folder)
        configuration.readers = 1
        let storage = try StorageBackend.open(configuration, logger: logger).documents
        let db = Database(storage: storage)
        _ = try await db.putFile("kept", Self.bytes("kept bytes"), as: .admin)

        // A put stopped after its bytes were written but before the rename: a temporary file, no object.
        #expect(FileManager.default.createFile(atPath: folder + "/files/tmp/stopped.part", contents: Data("never renamed".utf8)))
        // A put stopped after the rename but before its row committed: a blob no object names.
        _ = try await storage.blobs.store(ByteChunks(Self.bytes("never named")), maxSize: 100, expectedSHA256: nil)
        #expect(Self.temporaryFiles(folder).count == 1)
        #expect(Self.blobFiles(folder).count == 2)
        #expect(try await db.listFiles(as: .admin).files.map(\.path.name) == ["kept"])
        storage.close()

        // The next start (as the folder's owner) sweeps both; the committed object is untouched.
        configuration.dataFolderOwner = "test"
        let reopened = try StorageBackend.open(configuration, logger: logger).documents
        defer { reopened.close() }
        #expect(Self.temporaryFiles(folder).isEmpty)
        #expect(Self.blobFiles(folder).count == 1)
        let again = Database(storage: reopened)
        #expect(try await again.readFile("kept", as: .admin).bytes == Self.bytes("kept bytes"))
        #expect(try await again.listFiles(as: .admin).files.count == 1)
        #expect(try reopened.sweepBlobs() == BlobSweep(temporaryFiles: 0, blobs: 0))
    }

    @Test func aBlobNoObjectNamesIsNeverTrustedAfterARestart() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bytes = Self.bytes(String(repeating: "renamed, then the power went ", count: 100))
        let (storage, _) = try ResumableUploadStoreTests.openAsOwner(folder)
        // A put stopped between its rename and its row's commit leaves a blob no object names; whatever its
        // bytes hold after the crash (here, a torn prefix), they are never trusted.
        _ = try await storage.blobs.store(ByteChunks(bytes), maxSize: 10_000, expectedSHA256: nil)
        storage.close()
        let blob = try #require(Self.blobFiles(folder).first)
        try Data(bytes.prefix(100)).write(to: URL(fileURLWithPath: folder + "/files/blobs/" + blob))

        // The next start removes it before anything can be served or a put of the same bytes finds its name.
        let (reopened, db) = try ResumableUploadStoreTests.openAsOwner(folder)
        defer { reopened.close() }
        #expect(Self.blobFiles(folder).isEmpty)
        _ = try await db.putFile("whole", bytes, as: .admin)
        #expect(try await db.readFile("whole", as: .admin).bytes == bytes)
        #expect(Self.blobFiles(folder) == [blob])
    }

    @Test func aReadersStartDoesNotSweep() async throws {
        let folder = TestFolders.make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let logger = Logger(label: "hearth.test") { _ in SwiftLogNoOpLogHandler() }
        var configuration = StorageConfiguration(dataDirectory: folder)
        configuration.readers = 1
        let owner = try StorageBackend.open(configuration, logger: logger).documents
        // An upload in flight on the folder's owner, its first batch written and the rest still to come...
        let (rest, more) = AsyncStream<[UInt8]>.makeStream()
        more.yield([UInt8](repeating: 7, count: DiskBlobStorage.writeSize))
        let upload = Task { try await owner.blobs.store(ByteChunks(rest), maxSize: 1 << 22, expectedSHA256: nil) }
        for _ in 0..<500 where Self.temporaryFiles(folder).isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try #require(Self.temporaryFiles(folder).count == 1)
        // ...survives a tool that opens the folder only to read.
        let reader = try StorageBackend.open(configuration, logger: logger).documents
        reader.close()
        #expect(Self.temporaryFiles(folder).count == 1)
        more.yield([1, 2, 3])
        more.finish()
        #expect(try await upload.value.size == Int64(DiskBlobStorage.writeSize + 3))
        #expect(Self.temporaryFiles(folder).isEmpty)
        #expect(Self.blobFiles(folder).count == 1)
        owner.close()
    }
}

/// Counts calls, from the one task reading a stream.
final class Counter: @unchecked Sendable {
    private var count = 0
    func next() -> Int {
        defer { count += 1 }
        return count
    }
}
