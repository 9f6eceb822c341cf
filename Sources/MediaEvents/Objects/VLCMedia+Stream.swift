import CLibVLC
import Foundation

/// The bytes of one opening of a media made with `VLCMedia(library:open:)`.
///
/// libvlc opens a media each time it plays or parses it, and reads it on its own threads:
/// every opening gets a new stream from the media's `open` closure, and one opening's calls
/// (`read`, `seek`, then `close`) come one at a time, from one libvlc thread, in that order.
/// Two openings (a parse and a playback) may run at once, each with its own stream.
/// `read` may block (a network source); stopping the player waits for it to return.
public protocol VLCMediaStream: AnyObject {
    /// The total size in bytes, `nil` when unknown.
    var size: UInt64? { get }
    /// Reads at most `buffer.count` bytes into `buffer`; returns how many, 0 at the end.
    /// Throwing reports a read error to libvlc (the playback fails).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Moves to byte `offset`; throwing tells libvlc the seek failed.
    func seek(to offset: UInt64) throws
    /// The opening is over: libvlc reads no more from this stream. Called once.
    func close()
}

extension VLCMediaStream {
    /// Does nothing: a stream that holds nothing to release needs no closing.
    public func close() {}
}

/// A stream over bytes in memory.
public final class VLCMemoryStream: VLCMediaStream {
    private let data: Data
    private var offset = 0

    /// A stream over `data`, from its first byte.
    public init(_ data: Data) { self.data = data }

    /// The number of bytes of the data.
    public var size: UInt64? { UInt64(data.count) }

    /// Copies the next bytes, at most `buffer.count`, into `buffer`; returns how many, 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, data.count - offset)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
        }
        offset += count
        return count
    }

    /// Moves to byte `offset`; throws `VLCError.invalidState` when it is past the end.
    public func seek(to offset: UInt64) throws {
        guard offset <= UInt64(data.count) else {
            throw VLCError.invalidState("seek to \(offset) past the end (\(data.count) bytes)")
        }
        self.offset = Int(offset)
    }
}

extension VLCMedia {
    /// A media whose bytes come from Swift: libvlc calls `open` (on its own thread) each time
    /// it opens the media, and reads the stream it returns (`libvlc_media_new_callbacks`).
    ///
    /// Safe when the media is dropped while libvlc reads it: the `open` closure and every
    /// stream stay alive until libvlc has closed them and freed its media (a player may keep
    /// playing a media whose wrapper is gone), and their last references are dropped on
    /// MediaEvents' release queue, never on libvlc's thread. A throwing `open` fails that
    /// playback (`EncounteredError`). libvlc 3's preparser never parses such a media (it
    /// parses files, directories and playlists; `parse` answers `skipped` whatever the
    /// options): its tracks and duration are known once it plays.
    public convenience init(
        library: VLCLibrary, configuration: (any EventsConfiguring)? = nil,
        open: @escaping @Sendable () throws -> any VLCMediaStream
    ) {
        let source = Unmanaged.passRetained(StreamSource(open: open)).toOpaque()
        guard
            let media = libvlc_media_new_callbacks(
                library.native.raw, streamOpen, streamRead, streamSeek,
                streamClose, source)
        else {
            Unmanaged<StreamSource>.fromOpaque(source).release()
            preconditionFailure("libvlc_media_new_callbacks failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        // libvlc sends MediaFreed once it is done with the media, after cancelling and waiting
        // for its parse and after every player let it go (each closes its input first): the
        // source's reference is dropped then. This listener is never detached.
        attachUntilFreed(media, streamFreed, source)
        self.init(adopting: media, configuration: configuration, attachNow: true)
    }

    /// A media over `data` in memory.
    public convenience init(data: Data, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        self.init(library: library, configuration: configuration) { VLCMemoryStream(data) }
    }
}

/// The `open` closure, owned by libvlc's media (through its opaque pointer).
private final class StreamSource: Sendable {
    let open: @Sendable () throws -> any VLCMediaStream

    init(open: @escaping @Sendable () throws -> any VLCMediaStream) { self.open = open }
}

/// One opening's stream, owned by libvlc from `open` to `close`. Only the thread libvlc
/// calls it on uses it.
private final class OpenStream: @unchecked Sendable {
    let stream: any VLCMediaStream

    init(_ stream: any VLCMediaStream) { self.stream = stream }
}

private let streamOpen: libvlc_media_open_cb = { opaque, data, size in
    guard let opaque, let data, let size else { return -1 }
    let source = Unmanaged<StreamSource>.fromOpaque(opaque).takeUnretainedValue()
    guard let stream = try? source.open() else { return -1 }
    size.pointee = stream.size ?? UInt64.max
    data.pointee = Unmanaged.passRetained(OpenStream(stream)).toOpaque()
    return 0
}

private let streamRead: libvlc_media_read_cb = { data, buffer, length in
    guard let data, let buffer else { return -1 }
    let open = Unmanaged<OpenStream>.fromOpaque(data).takeUnretainedValue()
    do {
        let count = try open.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
        return count >= 0 && count <= length ? count : -1
    } catch {
        return -1
    }
}

private let streamSeek: libvlc_media_seek_cb = { data, offset in
    guard let data else { return -1 }
    let open = Unmanaged<OpenStream>.fromOpaque(data).takeUnretainedValue()
    do {
        try open.stream.seek(to: offset)
        return 0
    } catch {
        return -1
    }
}

private let streamClose: libvlc_media_close_cb = { data in
    guard let data else { return }
    let open = Unmanaged<OpenStream>.fromOpaque(data).takeRetainedValue()
    open.stream.close()
    // This is libvlc's thread: the stream's last reference goes to the release queue.
    ServiceQueues.releaseLater(consume open)
}

private let streamFreed: libvlc_callback_t = { _, opaque in
    guard let opaque else { return }
    ServiceQueues.releaseLater(Unmanaged<StreamSource>.fromOpaque(opaque).takeRetainedValue())
}
