import HearthEngine
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1

/// Sends a download's bytes from the open blob with `sendfile(2)`: they never pass through the server's memory.
/// Hummingbird's body writer carries only buffers, so an answer's body (`send`) has this handler write each
/// slice of the file as a `FileRegion`, from its place in the pipeline, between the head that went before and
/// the end that follows.
///
/// It sits in plain-HTTP pipelines only, beside `ConnectionGuard`, where answers are NIOHTTP1 parts whose bodies
/// may be file regions; TLS encrypts in memory and takes no region, so there `send` finds no handler and writes
/// the same bytes as buffers through the body writer.
final class FileRegionWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var context: ChannelHandlerContext?

    /// The body of an answer that serves `bytes`: from the file on a connection with this handler, else as
    /// buffers read in turn. Either way one slice (a chunk) is in flight at a time, each written before the
    /// next starts: memory holds no more than a chunk, and a client that collects its answer slowly but
    /// steadily makes the channel writable again every chunk, as `ConnectionGuard`'s idle timeout expects.
    static func send(_ bytes: FileBytes, on channel: any Channel, through writer: inout any ResponseBodyWriter) async throws {
        var offset = bytes.range.lowerBound
        if let descriptor = bytes.handle.descriptor {
            while offset < bytes.range.upperBound {
                let slice = offset..<min(offset + Int64(FileBytes.chunkSize), bytes.range.upperBound)
                // The head was handed to the channel before this body began: this write follows it.
                let sent = try await channel.eventLoop.flatSubmit {
                    let handler = try? channel.pipeline.syncOperations.handler(type: FileRegionWriter.self)
                    return handler?.write(descriptor, slice)?.map { true } ?? channel.eventLoop.makeSucceededFuture(false)
                }.get()
                guard sent else { break }
                offset = slice.upperBound
            }
        }
        for try await chunk in FileBytes(handle: bytes.handle, range: offset..<bytes.range.upperBound) {
            try await writer.write(chunk)
        }
        try await writer.finish(nil)
    }

    /// Writes the bytes of `range` of the open file; the future completes when they have left (or failed to).
    /// Nil once the handler has left the pipeline.
    private func write(_ descriptor: Int32, _ range: Range<Int64>) -> EventLoopFuture<Void>? {
        guard let context else { return nil }
        // The blob's own descriptor, lent to NIO for the write: NIO never closes a region's file, and the blob,
        // held by `send` until the write has ended, closes it.
        let file = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
        let region = FileRegion(fileHandle: file, readerIndex: Int(range.lowerBound), endIndex: Int(range.upperBound))
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.body(.fileRegion(region))), promise: written)
        return written.futureResult.always { _ in _ = try? file.takeDescriptorOwnership() }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }
}
