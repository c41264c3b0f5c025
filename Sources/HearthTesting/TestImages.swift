import CVips
import Foundation

/// Images made for tests with libvips (never downloaded), what an encoded image holds, and a PNG whose header
/// announces far more pixels than it carries (a decompression bomb's header).
public enum TestImages {
    /// The formats thumbnails take.
    public enum Kind: String, CaseIterable, Sendable {
        case jpeg, png, webp, gif

        var suffix: String { ".\(rawValue)" }
        /// Whether the image made has an alpha channel (JPEG has none).
        public var hasAlpha: Bool { self != .jpeg }
    }

    /// What an encoded image holds: its size (of one frame), its channels, its frames.
    public struct Description: Sendable, Equatable {
        /// Width in pixels.
        public var width: Int
        /// Height of one frame in pixels.
        public var height: Int
        /// Channels: 3 for RGB, 4 with alpha.
        public var bands: Int
        /// Frames (pages) in the file.
        public var frames: Int
    }

    /// A `width`×`height` gradient in `kind`, half transparent where the format allows; a GIF of `frames`
    /// frames of that size.
    public static func make(_ kind: Kind, width: Int, height: Int, frames: Int = 1) -> [UInt8] {
        _ = hearth_vips_init()
        let bands = kind.hasAlpha ? 4 : 3
        let total = height * frames
        var pixels = [UInt8](repeating: 0, count: width * total * bands)
        for y in 0..<total {
            for x in 0..<width {
                let at = (y * width + x) * bands
                pixels[at] = UInt8(x * 255 / max(1, width - 1))
                pixels[at + 1] = UInt8((y % height) * 255 / max(1, height - 1))
                pixels[at + 2] = UInt8(y / height * 100 % 256)
                if bands == 4 { pixels[at + 3] = x < width / 2 ? 255 : 128 }
            }
        }
        return pixels.withUnsafeBytes { raw in
            let image = vips_image_new_from_memory(raw.baseAddress, raw.count, Int32(width), Int32(total), Int32(bands),
                                                   VIPS_FORMAT_UCHAR)!
            defer { hearth_vips_unref(image) }
            if frames > 1 { vips_image_set_int(image, "page-height", Int32(height)) }
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            guard hearth_vips_save_as(image, kind.suffix, &buffer, &length) == 0, let buffer else {
                fatalError("libvips could not write a \(kind): \(String(cString: vips_error_buffer()))")
            }
            defer { g_free(buffer) }
            return Array(UnsafeRawBufferPointer(start: buffer, count: length))
        }
    }

    /// The size, channels and frames of encoded image bytes; nil when libvips cannot read them.
    public static func describe(_ bytes: [UInt8]) -> Description? {
        _ = hearth_vips_init()
        return bytes.withUnsafeBytes { raw -> Description? in
            guard let image = hearth_vips_load_buffer(raw.baseAddress, raw.count) else {
                vips_error_clear()
                return nil
            }
            defer { hearth_vips_unref(image) }
            return Description(width: Int(vips_image_get_width(image)), height: Int(vips_image_get_page_height(image)),
                               bands: Int(vips_image_get_bands(image)), frames: Int(vips_image_get_n_pages(image)))
        }
    }

    /// A valid PNG header claiming `width`×`height` RGB pixels, followed by a few bytes of compressed data:
    /// decoding it whole would take width × height × 3 bytes.
    public static func pngBomb(width: UInt32, height: UInt32) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) {
            out += bigEndian(UInt32(data.count))
            let body = Array(type.utf8) + data
            out += body
            out += bigEndian(crc32(body))
        }
        // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
        chunk("IHDR", bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0])
        // A zlib stream of one empty stored block: far too little for the rows announced.
        chunk("IDAT", [0x78, 0x9C, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01])
        chunk("IEND", [])
        return out
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// PNG's CRC-32 (ISO 3309).
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }
}
