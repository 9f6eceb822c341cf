import Dispatch
import ExampleSupport

/// Which progress events of one media `log` prints: all of them, none (`--no-progress`), or at
/// most one of each kind per interval (`--progress-interval MS`).
///
/// Progress events are TimeChanged, PositionChanged, Buffering and AudioVolume, and also a
/// DurationChanged or LengthChanged that repeats the value before it: libvlc sends one with
/// every length it measures, and while an MP3's estimate holds still that is the same number
/// again and again (a 3 s MP3 sends 8 identical pairs). The first of a value is always
/// printed.
final class ProgressGate: Sendable {
    private struct State {
        /// The last duration or length of each event name.
        var lastValue: [String: JSONValue] = [:]
        /// When each progress event name was last admitted (uptime nanoseconds).
        var lastAdmitted: [String: UInt64] = [:]
    }

    private let dropProgress: Bool
    private let intervalNanoseconds: UInt64
    /// The clock the interval is measured with (monotonic nanoseconds).
    private let now: @Sendable () -> UInt64
    private let state = Guarded(State())

    /// `intervalMs` 0 admits every progress event (unless `dropProgress`).
    init(
        dropProgress: Bool, intervalMs: Int,
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    ) {
        self.dropProgress = dropProgress
        intervalNanoseconds = UInt64(max(0, intervalMs)) * 1_000_000
        self.now = now
    }

    /// Whether `record` is printed; counts it as printed when it is.
    func admits(_ record: EventRecord) -> Bool {
        state.withLock { state in
            // Read under the lock: a time read before it could be older than one another
            // thread stored meanwhile (such a time still counts as none passed).
            let now = now()
            var isProgress = record.isProgress
            if record.name == "MediaDurationChanged" || record.name == "MediaPlayerLengthChanged" {
                let value = record.fields.first?.1 ?? .null
                isProgress = state.lastValue[record.name] == value
                state.lastValue[record.name] = value
            }
            guard isProgress else { return true }
            if dropProgress { return false }
            guard intervalNanoseconds > 0 else { return true }
            if let last = state.lastAdmitted[record.name], (now >= last ? now - last : 0) < intervalNanoseconds {
                return false
            }
            state.lastAdmitted[record.name] = now
            return true
        }
    }
}
