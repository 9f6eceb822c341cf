import Foundation

/// The bytes of one opening of a media made with `VLCMedia(library:open:)`.
///
/// libvlc opens a media each time it plays it, and every opening gets a new stream from the
/// media's `open` closure. For one opening (measured on libvlc 3.0.24, `StreamMediaTests`):
///
/// - `open`, then `size`, and at the end `close()` are called on the input's thread (the
///   thread on which the player sends that playback's `Opening` and its end).
/// - `read` and `seek` are called on one other libvlc thread, the one that reads ahead for the
///   input (libvlc's prefetch), from the first read to the last.
/// - Never two of these at once, and each after the one before has returned: libvlc joins
///   the reading thread before it closes the stream. They need no lock between them.
/// - `cancel()` is the exception: it comes from a MediaEvents queue, while `read` or `seek`
///   may be waiting on the reading thread, when libvlc stops reading this opening (a `stop`,
///   a new media, the player's release, a list player moving on), before `close()` and never
///   during or after it.
///
/// Two openings (two players of one media) may run at once, each with its own stream.
public protocol VLCMediaStream: AnyObject {
    /// The total size in bytes, `nil` when unknown.
    var size: UInt64? { get }
    /// Reads at most `buffer.count` bytes into `buffer`; returns how many, 0 at the end.
    ///
    /// May wait for data (a network source): libvlc's `stop` waits for it to return, so it
    /// must return once `cancel()` is called (0, or throw). Throwing reports a read error:
    /// libvlc ends the playback as at the end of the stream, and MediaEvents keeps the error
    /// as the playback's failure (`VLCMedia.streamFailure`, and the cause of the input's
    /// `PlaybackEnd`, reported as `encounteredError`).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Moves to byte `offset`; throwing tells libvlc the seek failed.
    func seek(to offset: UInt64) throws
    /// libvlc is stopping this opening while `read` or `seek` may be waiting: make them
    /// return now. Called at most once, on a MediaEvents queue, concurrently with them; what
    /// `read` throws from then on is no failure. Whatever `read` returns afterwards, libvlc
    /// reads no more.
    func cancel()
    /// The opening is over: libvlc reads no more from this stream. Called once.
    func close()
}

extension VLCMediaStream {
    /// Does nothing: a stream whose reads never wait has nothing to interrupt.
    public func cancel() {}

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
    /// playback (`EncounteredError`), a throwing `read` ends it (`EndReached`); either error
    /// is the media's `streamFailure`. libvlc 3's preparser never parses such a media (it
    /// parses files, directories and playlists; `parse` answers `skipped` whatever the
    /// options): its tracks and duration are known once it plays.
    public convenience init(
        library: VLCLibrary, configuration: (any EventsConfiguring)? = nil,
        open: @escaping @Sendable () throws -> any VLCMediaStream
    ) {
        let source = Unmanaged.passRetained(StreamSource(open: open)).toOpaque()
        guard
            let media = NativeMedia.new(
                in: library.native, open: streamOpen, read: streamRead, seek: streamSeek, close: streamClose,
                opaque: source)
        else {
            Unmanaged<StreamSource>.fromOpaque(source).release()
            preconditionFailure("libvlc_media_new_callbacks failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        Unmanaged<StreamSource>.fromOpaque(source).takeUnretainedValue().belongs(to: media)
        // libvlc sends MediaFreed once it is done with the media, after cancelling and waiting
        // for its parse and after every player let it go (each closes its input first): the
        // source's reference is dropped then. This listener is never detached.
        media.attachUntilFreed(streamFreed, source)
        self.init(adopting: media, configuration: configuration, attachNow: true)
    }

    /// What the stream of this media's latest opening threw, `nil` when it threw nothing (or
    /// for a media not made with `VLCMedia(library:open:)`). Set before the player reports the
    /// end of that playback; cleared when libvlc opens the media again.
    ///
    /// libvlc 3 makes a read error the end of the stream (the player sends `EndReached`, as
    /// for a media played to its end) and a failed `open` an `EncounteredError`, and keeps
    /// neither error: this is where it is. The same for every wrapper of the media.
    public var streamFailure: VLCStreamFailure? {
        StreamSource.source(of: native)?.lastFailure.withLock { $0 }
    }

    /// A media over `data` in memory.
    public convenience init(data: Data, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        self.init(library: library, configuration: configuration) { VLCMemoryStream(data) }
    }
}

/// The `open` closure, owned by libvlc's media (through its opaque pointer), and what the
/// media's latest opening went through.
final class StreamSource: Sendable {
    let open: @Sendable () throws -> any VLCMediaStream
    /// The native media's address, set once it exists.
    let media = Protected<UInt>(0)
    /// The failure of the latest opening, `nil` when it has had none.
    let lastFailure = Protected<VLCStreamFailure?>(nil)

    init(open: @escaping @Sendable () throws -> any VLCMediaStream) { self.open = open }

    /// The sources of the stream media libvlc holds, by native media: every wrapper of a media
    /// (a `MediaChanged` payload, a list item) reads the same `streamFailure`.
    private static let sources = Protected<[UInt: StreamSource]>([:])

    static func source(of media: NativeMedia) -> StreamSource? {
        let key = media.address
        return sources.withLock { $0[key] }
    }

    func belongs(to media: NativeMedia) {
        let key = media.address
        self.media.withLock { $0 = key }
        Self.sources.withLock { $0[key] = self }
    }

    /// libvlc freed the media.
    func freed() {
        let key = media.withLock { $0 }
        _ = Self.sources.withLock { $0.removeValue(forKey: key) }
    }

    /// An opening failed: the media's failure, and the failure of the input on `inputThread`
    /// until that input's stream is closed (or a new input starts on a thread of that id).
    func failed(_ failure: VLCStreamFailure, inputThread: UInt) {
        lastFailure.withLock { $0 = failure }
        StreamFailures.record(failure, inputThread: inputThread)
    }
}

/// The stream failures of the inputs running now, by the thread of the input that opened the
/// stream: what a `FailureCauseRecorder` attaches to the end that input sends on that thread.
///
/// libvlc 3's `imem` turns a read error into the end of the stream (`EndReached`), and a
/// failed open into `EncounteredError`, saying nothing of the error. Both ends are sent on
/// the input's thread, before the stream is closed there; the stream is opened on it too.
enum StreamFailures {
    private static let byInputThread = Protected<[UInt: VLCStreamFailure]>([:])

    static func record(_ failure: VLCStreamFailure, inputThread: UInt) {
        byInputThread.withLock { $0[inputThread] = failure }
    }

    /// The failure of the stream of the input running on `thread`, if it had one.
    static func failure(onInputThread thread: UInt) -> VLCStreamFailure? {
        byInputThread.withLock { $0[thread] }
    }

    /// The input on `thread` is over (its stream closed), or a new one starts there: a
    /// failure recorded for that thread id belongs to no running input any more.
    static func forget(inputThread thread: UInt) {
        _ = byInputThread.withLock { $0.removeValue(forKey: thread) }
    }
}

/// One opening's stream, owned by libvlc from `open` to `close`. Only libvlc's threads for this
/// opening use `stream` (one call at a time, see `VLCMediaStream`), except `cancel()`, which
/// `interrupted()` schedules and `closing()` waits for.
final class OpenStream: @unchecked Sendable {
    // @unchecked: `stream` is used by one libvlc thread at a time (libvlc orders the calls),
    // and by the one cancellation block, which `closing()` waits for; `cancellation` is locked.
    let stream: any VLCMediaStream
    let source: StreamSource
    /// The input's thread, which opened the stream and sends the input's end.
    let inputThread: UInt

    private struct Cancellation {
        var requested = false
        var closed = false
    }

    private let cancellation = Protected(Cancellation())
    /// Entered while a scheduled `cancel()` has not finished.
    private let cancelling = DispatchGroup()

    init(_ stream: any VLCMediaStream, source: StreamSource, inputThread: UInt) {
        self.stream = stream
        self.source = source
        self.inputThread = inputThread
    }

    var isCancelled: Bool { cancellation.withLock { $0.requested } }

    /// libvlc is stopping the reading thread while it runs a call of this stream (its
    /// interrupt callback, on the stopping thread, with libvlc's interrupt lock held): the
    /// stream's `cancel()` is called on a MediaEvents queue, never here.
    func interrupted() {
        let first = cancellation.withLock { state -> Bool in
            guard !state.requested, !state.closed else { return false }
            state.requested = true
            return true
        }
        guard first else { return }
        cancelling.enter()
        StreamCancellation.queue.async {
            if self.cancellation.withLock({ !$0.closed }) { self.stream.cancel() }
            self.cancelling.leave()
        }
    }

    /// Before `close()`: no `cancel()` starts any more, and one that started has returned.
    func closing() {
        cancellation.withLock { $0.closed = true }
        cancelling.wait()
    }

}

private let streamOpen: NativeMedia.OpenCallback = { opaque, data, size in
    guard let opaque, let data, let size else { return -1 }
    let source = Unmanaged<StreamSource>.fromOpaque(opaque).takeUnretainedValue()
    let thread = currentThread()
    // A new opening on this input's thread: what an earlier one failed with is history.
    source.lastFailure.withLock { $0 = nil }
    StreamFailures.forget(inputThread: thread)
    let stream: any VLCMediaStream
    do {
        stream = try source.open()
    } catch {
        source.failed(VLCStreamFailure(operation: .open, error: error), inputThread: thread)
        return -1
    }
    size.pointee = stream.size ?? UInt64.max
    data.pointee = Unmanaged.passRetained(OpenStream(stream, source: source, inputThread: thread)).toOpaque()
    return 0
}

private let streamRead: NativeMedia.ReadCallback = { data, buffer, length in
    guard let data, let buffer else { return -1 }
    let open = Unmanaged<OpenStream>.fromOpaque(data).takeUnretainedValue()
    // Stopped: libvlc only drains what it asks for before it closes.
    if open.isCancelled { return 0 }
    do {
        let count =
            try StreamCancellation().around(open) {
                try open.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
            } ?? 0
        return count >= 0 && count <= length ? count : -1
    } catch {
        // libvlc makes the end of the stream of it, and says nothing of the error.
        if !open.isCancelled {
            open.source.failed(VLCStreamFailure(operation: .read, error: error), inputThread: open.inputThread)
        }
        return -1
    }
}

private let streamSeek: NativeMedia.SeekCallback = { data, offset in
    guard let data else { return -1 }
    let open = Unmanaged<OpenStream>.fromOpaque(data).takeUnretainedValue()
    if open.isCancelled { return -1 }
    do {
        try StreamCancellation().around(open) { try open.stream.seek(to: offset) }
        return 0
    } catch {
        return -1
    }
}

private let streamClose: NativeMedia.CloseCallback = { data in
    guard let data else { return }
    let open = Unmanaged<OpenStream>.fromOpaque(data).takeRetainedValue()
    open.closing()
    open.stream.close()
    // The input's end was sent before this: its failure has been read by then.
    StreamFailures.forget(inputThread: open.inputThread)
    // This is libvlc's thread: the stream's last reference goes to the release queue.
    ServiceQueues.releaseLater(consume open)
}

private let streamFreed: NativeCallback = { _, opaque in
    guard let opaque else { return }
    let source = Unmanaged<StreamSource>.fromOpaque(opaque).takeRetainedValue()
    source.freed()
    ServiceQueues.releaseLater(consume source)
}
