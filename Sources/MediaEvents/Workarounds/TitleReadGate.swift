import Dispatch
import Glibc

/// Keeps the reads of title and chapter descriptions away from an input that is ending.
///
/// libvlc 3 answers `get_full_title_descriptions` and `get_full_chapter_descriptions` by
/// copying the input's title array under the item's lock (`INPUT_GET_FULL_TITLE_INFO` and
/// `INPUT_GET_SEEKPOINTS` in src/input/control.c). At its end the input thread sends
/// `EndReached` (or `EncounteredError`), then frees that array without the lock and only
/// later clears its pointer (`End` and `InputSourceDestroy` in src/input/input.c), and the
/// player keeps the ending input until it is stopped: a read made from an `EndReached`
/// handler copies freed memory, a crash inside libvlccore. So once an input has sent
/// `EndReached` or `EncounteredError`, reads answer nothing until the next input sends
/// `Opening`; and the ending input's callback waits for a read already running (it is
/// copying, in microseconds) before libvlc goes on to free the titles.
final class TitleReadGate: Sendable {
    private struct State {
        var inputEnding = false
        var readsRunning = 0
    }

    private let state = Protected(State())

    /// How long the ending input's callback waits for a running read. A read that waits for
    /// the player's input lock (held by a `stop` that waits for this very callback) has not
    /// reached the input yet: after the bound it finds the input stopped and gone.
    static let runningReadBound: UInt64 = 100_000_000

    /// Runs `read` (on the control queue) unless the input is ending; `nil` when it is.
    func read<Value>(_ read: () -> Value) -> Value? {
        let allowed = state.withLock { state -> Bool in
            guard !state.inputEnding else { return false }
            state.readsRunning += 1
            return true
        }
        guard allowed else { return nil }
        defer { state.withLock { $0.readsRunning -= 1 } }
        return read()
    }

    /// In libvlc's callback of `EndReached` and `EncounteredError`, before any delivery.
    func inputEnds() {
        state.withLock { $0.inputEnding = true }
        let deadline = DispatchTime.now().uptimeNanoseconds + Self.runningReadBound
        while state.withLock({ $0.readsRunning }) > 0, DispatchTime.now().uptimeNanoseconds < deadline {
            usleep(50)
        }
    }

    /// In libvlc's callback of `Opening`: a new input, whose titles stay until it ends.
    func inputStarts() {
        state.withLock { $0.inputEnding = false }
    }
}
