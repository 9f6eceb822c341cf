import Dispatch

/// Rule 20: a stream's read (or seek) that waits for data is told when libvlc stops reading it,
/// through libvlc's own interruption of the thread that reads (`vlc_interrupt_register` in
/// libvlccore, what libvlc's network reads use).
///
/// `libvlc_media_player_stop` (also inside `set_media`, the player's release and a list
/// player's move) kills the input's interrupt context; libvlc forwards it to the reading
/// thread's, and the stream filter that reads ahead kills that one again when it is closed.
/// A callback registered around each `read` and `seek` is called then, on the stopping
/// thread, and schedules the stream's `cancel()`: the blocked read returns and the stop goes
/// on. Registered only while a call runs, so an ordinary read is never interrupted, and it
/// concerns only the opening being stopped, whichever player stops it. libvlc 3.0 raises these
/// contexts for nothing but a kill. Without it a waiting read is not told, and the stop waits
/// for it.
struct StreamCancellation: LibvlcWorkaround {
    typealias Call = OpenStream

    static let rule = 20
    static let test = "StreamMediaTests.testStop_whenTheStreamsReadWaitsForData_cancelsTheReadAndStops"

    /// Where `cancel()` runs: concurrent, so that one stream's slow cancel delays no other.
    static let queue = DispatchQueue(
        label: "MediaEvents.stream.cancel", qos: ServiceQueues.qos, attributes: .concurrent)

    private static let interrupted: NativeInterrupt.Callback = { data in
        guard let data else { return }
        // Alive: libvlc unregisters (and waits for a running callback) before the call that
        // registered returns, and closes the stream only after that.
        Unmanaged<OpenStream>.fromOpaque(data).takeUnretainedValue().interrupted()
    }

    /// Around one of `open`'s stream calls, on libvlc's reading thread: told of libvlc stopping
    /// that thread meanwhile.
    func around<Result>(_ open: OpenStream, _ body: () throws -> Result) rethrows -> Result? {
        let registered = NativeInterrupt.register(Self.interrupted, Unmanaged.passUnretained(open).toOpaque())
        defer { if registered { NativeInterrupt.unregister() } }
        return try body()
    }
}
