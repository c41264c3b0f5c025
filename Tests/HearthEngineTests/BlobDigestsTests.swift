import Crypto
import HearthCore
@testable import HearthEngine
import HearthTesting
import Testing

/// A blob's SHA-256 and MD5, in one pass and apart: known digests, and every length around a block's edges fed
/// in chunks of every size, against BoringSSL's.
@Suite struct BlobDigestsTests {
    static func digests(_ bytes: [UInt8], chunk: Int, onePass: Bool) -> (sha256: String, md5: String) {
        var digests = BlobDigests(onePass: onePass)
        var start = 0
        while start < bytes.count {
            digests.update(Array(bytes[start..<min(start + chunk, bytes.count)]))
            start += chunk
        }
        let (sha256, md5) = digests.finalize()
        return (StoredFile.hex(sha256), StoredFile.hex(md5))
    }

    static let known: [(text: String, sha256: String, md5: String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "d41d8cd98f00b204e9800998ecf8427e"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "900150983cd24fb0d6963f7d28e17f72"),
        ("The quick brown fox jumps over the lazy dog",
         "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592", "9e107d9d372bb6826bd81d3542a419d6"),
        ("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "f371bc4a311f2b009eef952dd83ca80e2b60026c8e935592d0f9c308453c813e", "57edf4a22be3c955ac49da2e2107b67a"),
    ]

    @Test(arguments: [true, false])
    func knownDigests(onePass: Bool) {
        for known in Self.known {
            let got = Self.digests(Array(known.text.utf8), chunk: 1 << 20, onePass: onePass)
            #expect(got.sha256 == known.sha256, "'\(known.text)'")
            #expect(got.md5 == known.md5, "'\(known.text)'")
        }
    }

    @Test(arguments: [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1_000, 102_407], [true, false])
    func everyLengthInChunksOfEverySize(length: Int, onePass: Bool) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let sha256 = StoredFile.hex(Array(SHA256.hash(data: bytes)))
        let md5 = StoredFile.hex(Array(Insecure.MD5.hash(data: bytes)))
        for chunk in [1, 7, 63, 64, 100, 4_096, 65_536, max(length, 1)] {
            let got = Self.digests(bytes, chunk: chunk, onePass: onePass)
            #expect(got.sha256 == sha256, "length \(length), chunks of \(chunk)")
            #expect(got.md5 == md5, "length \(length), chunks of \(chunk)")
        }
    }

    /// This machine's processors have the SHA extensions: the pass that computes both is the one tested here.
    @Test func onePassWhereTheProcessorAllows() {
        #expect(BlobDigests().isOnePass == (BlobDigests.processorHasSHAExtensions))
        #expect(!BlobDigests(onePass: false).isOnePass)
    }
}
