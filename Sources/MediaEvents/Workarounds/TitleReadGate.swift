import Dispatch

/// Rule 15: title and chapter descriptions are never read from an input that is ending.
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
final class TitleReadGate: LibvlcWorkaround {
    typealias Event = MediaPlayerEvent

    static let rule = 15
    static let test =
        "PlayerCallsTests.testTitlesAndChapters_whenReadFromEndReachedHandler_answerEmptyUntilTheNextInputOpens"

    private struct State {
        var inputEnding = false
        var readsRunning = 0
    }

    private let state = Waitable(State())

    /// How long the ending input's callback waits for a running read, in nanoseconds. A read
    /// that waits for the player's input lock (held by a `stop` that waits for this very
    /// callback) has not reached the input yet: after the bound it finds the input stopped and
    /// gone.
    static let runningReadBound: UInt64 = 100_000_000

    /// Inside the player's callback: `EndReached` and `EncounteredError` close the gate and wait
    /// (bounded) for a read already running; `Opening` opens it for the new input.
    func inCallback(_ event: MediaPlayerEvent) -> Bool {
        switch event.kind {
        case .endReached, .encounteredError:
            let deadline = MonotonicClock.now + Self.runningReadBound
            state.withLock { $0.inputEnding = true }
            state.wait(until: { $0.readsRunning == 0 }, deadline: deadline) { _, _ in }
        case .opening:
            state.withLock { $0.inputEnding = false }
        default:
            break
        }
        return false
    }

    /// Around a title or chapter read, on the control queue: runs it unless the input is
    /// ending (`nil` then).
    func around<Result>(_ call: Void, _ body: () throws -> Result) rethrows -> Result? {
        let allowed = state.withLock { state -> Bool in
            guard !state.inputEnding else { return false }
            state.readsRunning += 1
            return true
        }
        guard allowed else { return nil }
        defer { state.change { $0.readsRunning -= 1 } }
        return try body()
    }
}
