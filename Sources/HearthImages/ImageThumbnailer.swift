import CVips
import Foundation
import HearthCore

/// The formats thumbnails are written in: JPEG for a JPEG, WebP for a WebP, PNG for a PNG or a GIF (both may
/// be transparent, and PNG keeps the alpha).
public enum ImageFormat: String, Sendable {
    case jpeg, png, webp

    /// The `Content-Type` of the format.
    public var contentType: String { "image/\(rawValue)" }

    /// The format of encoded bytes, from their first 12 (their signature); nil when they are none of the three.
    public init?(signature bytes: [UInt8]) {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), bytes[8..<12].elementsEqual("WEBP".utf8) {
            self = .webp
        } else {
            return nil
        }
    }
}

/// A thumbnail made: its encoded bytes, their format, and its size in pixels.
public struct Thumbnail: Sendable {
    /// The encoded image.
    public var bytes: [UInt8]
    /// Its format.
    public var format: ImageFormat
    /// Its width in pixels.
    public var width: Int
    /// Its height in pixels.
    public var height: Int
}

/// Where an image's bytes come from: read by offset, as the decoder asks for them, so a large image is never
/// held in memory whole.
public struct ImageSource: Sendable {
    /// How many bytes.
    public var size: Int64
    /// Up to `count` bytes from `offset` (fewer only at the end).
    public var read: @Sendable (_ offset: Int64, _ count: Int) throws -> [UInt8]

    /// A source of `size` bytes read with `read`.
    public init(size: Int64, read: @escaping @Sendable (_ offset: Int64, _ count: Int) throws -> [UInt8]) {
        self.size = size
        self.read = read
    }
}

/// Why no thumbnail was made.
public enum ImageError: Error, Equatable {
    /// The bytes are no JPEG, PNG, WebP or GIF that libvips can read.
    case notAnImage(detail: String)
    /// The header announces more pixels than `ImageThumbnailer.maxPixels`; nothing was decoded.
    case tooManyPixels(width: Int, height: Int)
    /// libvips could not be set up.
    case unavailable(String)
}

/// Thumbnails with libvips: the header is read first and an image of more than `maxPixels` refused before any
/// pixel is decoded (a decompression bomb costs nothing); then `vips_thumbnail` shrinks while it loads (a JPEG
/// is decoded at a fraction of its size). The work runs on threads of its own, at most one image per core at
/// once, each on one libvips thread.
public final class ImageThumbnailer: Sendable {
    /// The most pixels (width × height) an image may announce: 50 megapixels, a large camera's photo.
    public static let maxPixels = 50_000_000

    /// The process's thumbnailer: libvips is set up once per process.
    public static let shared = ImageThumbnailer(workers: ProcessInfo.processInfo.activeProcessorCount)

    private let workers: WorkerThreads

    init(workers: Int) { self.workers = WorkerThreads(count: workers, name: "hearth-images") }

    /// A thumbnail of the image in `source`, fitting within `size` with its aspect ratio kept, never enlarged.
    public func thumbnail(of source: ImageSource, fitting size: ThumbnailSize) async throws -> Thumbnail {
        try await workers.run { try Self.make(source, fitting: size) }
    }

    static func make(_ source: ImageSource, fitting size: ThumbnailSize) throws -> Thumbnail {
        try Vips.ready.get()
        let format = try Vips.withSource(source) { vipsSource throws -> ImageFormat in
            guard let header = hearth_vips_header(vipsSource) else { throw ImageError.notAnImage(detail: Vips.takeError()) }
            defer { hearth_vips_unref(header) }
            let width = Int(vips_image_get_width(header))
            let height = Int(vips_image_get_height(header))
            guard width * height <= maxPixels else { throw ImageError.tooManyPixels(width: width, height: height) }
            var loader: UnsafePointer<CChar>?
            guard vips_image_get_string(header, "vips-loader", &loader) == 0, let loader else {
                throw ImageError.notAnImage(detail: Vips.takeError())
            }
            return try Vips.outputFormat(loader: String(cString: loader))
        }
        // A fresh source for the decode: the loader starts from the first byte again.
        return try Vips.withSource(source) { vipsSource in
            var image: UnsafeMutablePointer<VipsImage>?
            guard hearth_vips_thumbnail(vipsSource, &image, Int32(size.width), Int32(size.height)) == 0, let image else {
                throw ImageError.notAnImage(detail: Vips.takeError())
            }
            defer { hearth_vips_unref(image) }
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            let saved: Int32
            switch format {
            case .jpeg: saved = hearth_vips_jpegsave(image, &buffer, &length)
            case .png: saved = hearth_vips_pngsave(image, &buffer, &length)
            case .webp: saved = hearth_vips_webpsave(image, &buffer, &length)
            }
            defer { g_free(buffer) }
            // Pixels are decoded as the saver asks for them: bytes that fail here are no image either.
            guard saved == 0, let buffer else { throw ImageError.notAnImage(detail: Vips.takeError()) }
            return Thumbnail(bytes: Array(UnsafeRawBufferPointer(start: buffer, count: length)), format: format,
                             width: Int(vips_image_get_width(image)), height: Int(vips_image_get_height(image)))
        }
    }
}

/// libvips's setup and the glue between its sources and `ImageSource`.
enum Vips {
    /// Set up once: no operation cache (it would keep images alive between requests), one libvips thread per
    /// image (the workers bound how many run), and every loader blocked but the four formats thumbnails take,
    /// so no other parser (SVG, PDF, TIFF, ...) ever sees uploaded bytes.
    static let ready: Result<Void, ImageError> = {
        guard hearth_vips_init() == 0 else { return .failure(.unavailable("libvips failed to start: \(takeError())")) }
        vips_cache_set_max(0)
        vips_concurrency_set(1)
        vips_operation_block_set("VipsForeignLoad", 1)
        for loader in ["VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadWebp", "VipsForeignLoadNsgif"] {
            vips_operation_block_set(loader, 0)
        }
        return .success(())
    }()

    /// The format a thumbnail of what `loader` read is written in.
    static func outputFormat(loader: String) throws -> ImageFormat {
        if loader.hasPrefix("jpegload") { return .jpeg }
        if loader.hasPrefix("webpload") { return .webp }
        if loader.hasPrefix("pngload") || loader.hasPrefix("gifload") { return .png }
        throw ImageError.notAnImage(detail: "read by \(loader)")
    }

    /// libvips's error text (its buffer is cleared).
    static func takeError() -> String {
        let text = String(cString: vips_error_buffer()).trimmingCharacters(in: .whitespacesAndNewlines)
        vips_error_clear()
        return text
    }

    /// `body` with a libvips source that reads `source`.
    static func withSource<T>(_ source: ImageSource, _ body: (UnsafeMutablePointer<VipsSource>) throws -> T) throws -> T {
        let reader = SourceReader(source)
        return try withExtendedLifetime(reader) {
            guard let vipsSource = hearth_vips_source(readBytes, seek, Unmanaged.passUnretained(reader).toOpaque()) else {
                throw ImageError.notAnImage(detail: takeError())
            }
            defer { hearth_vips_unref(vipsSource) }
            return try body(vipsSource)
        }
    }
}

/// The position a libvips source reads at, moved by its callbacks (on the one thread that runs the image).
private final class SourceReader {
    let source: ImageSource
    var position: Int64 = 0

    init(_ source: ImageSource) { self.source = source }
}

private func readBytes(_: UnsafeMutablePointer<VipsSourceCustom>?, _ buffer: UnsafeMutableRawPointer?, _ length: gint64,
                       _ context: UnsafeMutableRawPointer?) -> gint64 {
    let reader = Unmanaged<SourceReader>.fromOpaque(context!).takeUnretainedValue()
    let count = Int(min(Int64(length), max(0, reader.source.size - reader.position), 1 << 20))
    guard count > 0 else { return 0 }
    guard let bytes = try? reader.source.read(reader.position, count) else { return -1 }
    guard !bytes.isEmpty else { return 0 }
    bytes.withUnsafeBytes { buffer!.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    reader.position += Int64(bytes.count)
    return gint64(bytes.count)
}

private func seek(_: UnsafeMutablePointer<VipsSourceCustom>?, _ offset: gint64, _ whence: Int32,
                  _ context: UnsafeMutableRawPointer?) -> gint64 {
    let reader = Unmanaged<SourceReader>.fromOpaque(context!).takeUnretainedValue()
    let target: Int64
    switch whence {
    case SEEK_SET: target = Int64(offset)
    case SEEK_CUR: target = reader.position + Int64(offset)
    case SEEK_END: target = reader.source.size + Int64(offset)
    default: return -1
    }
    guard target >= 0 else { return -1 }
    reader.position = target
    return gint64(target)
}
