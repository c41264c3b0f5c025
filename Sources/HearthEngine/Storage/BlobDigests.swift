import CDigests
import Crypto

/// The SHA-256 (a blob's name) and MD5 (Cloud Storage's `md5Hash`) of a stream of bytes. Where the processor
/// has the SHA extensions both are computed in one pass over each block, for about the cost of MD5 alone;
/// elsewhere SHA-256 is BoringSSL's, beside the same MD5.
struct BlobDigests {
    private var context = hearth_digests()
    private var separateSHA256: SHA256?

    /// `onePass: false` keeps SHA-256 apart even where one pass is possible (so both ways are tested here).
    init(onePass: Bool = true) {
        hearth_digests_init(&context, onePass && Self.processorHasSHAExtensions ? 1 : 0)
        separateSHA256 = context.with_sha256 != 0 ? nil : SHA256()
    }

    var isOnePass: Bool { context.with_sha256 != 0 }

    /// Asked once, for the process's life.
    static let processorHasSHAExtensions = hearth_digests_sha256_supported() != 0

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            hearth_digests_update(&context, base, bytes.count)
            separateSHA256?.update(bufferPointer: bytes)
        }
    }

    consuming func finalize() -> (sha256: [UInt8], md5: [UInt8]) {
        var md5 = [UInt8](repeating: 0, count: 16)
        var sha256 = [UInt8](repeating: 0, count: 32)
        md5.withUnsafeMutableBufferPointer { md5 in
            sha256.withUnsafeMutableBufferPointer { sha256 in
                hearth_digests_final(&context, md5.baseAddress, sha256.baseAddress)
            }
        }
        if let separate = separateSHA256 { sha256 = Array(separate.finalize()) }
        return (sha256, md5)
    }
}
