import Glibc

/// Rule 19: a snapshot call answers with the file it wrote itself: the `SnapshotTaken` that
/// libvlc sends on the calling thread while that thread runs `libvlc_video_take_snapshot`.
///
/// libvlc writes the file and sends the event from inside the call, on its caller's thread
/// (the library's `snapshot-file` callback, send site P16), to every player of the library.
/// Another player's snapshot sends its event on its own caller's thread. So the thread, not
/// the path, tells whose file an event is: two players writing into one directory get files
/// of the same directory, and even the same name when they write within one millisecond.
struct SnapshotCapture: LibvlcWorkaround {
    typealias Event = MediaPlayerEvent
    typealias Call = Slot

    static let rule = 19
    static let test = "PlayerCallsTests.testSnapshot_whenTwoPlayersWriteIntoOneDirectory_eachReturnsItsOwnFile"

    /// One call's answer, touched only by the thread that runs the call (the player callbacks
    /// that fill it run on that thread, inside the call).
    final class Slot {
        var path: String?
    }

    /// The calling thread's slot while it runs a snapshot call, else none.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// Around the snapshot call: the `SnapshotTaken` it sends on this thread fills `slot`.
    func around<Result>(_ slot: Slot, _ body: () throws -> Result) rethrows -> Result? {
        let previous = pthread_getspecific(Self.key)
        return try withExtendedLifetime(slot) {
            pthread_setspecific(Self.key, Unmanaged.passUnretained(slot).toOpaque())
            defer { pthread_setspecific(Self.key, previous) }
            return try body()
        }
    }

    /// Inside a player's callback: a `SnapshotTaken` on a thread that runs a snapshot call is
    /// that call's. Every player of the library records the same path; the first stays.
    func inCallback(_ event: MediaPlayerEvent) -> Bool {
        guard case .snapshotTaken(let path) = event, let raw = pthread_getspecific(Self.key) else { return false }
        let slot = Unmanaged<Slot>.fromOpaque(raw).takeUnretainedValue()
        if slot.path == nil { slot.path = path }
        return false
    }
}
