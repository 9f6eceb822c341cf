import Dispatch
import ExampleSupport
import Glibc
import MediaEvents

/// Whether the daemon is live, the condition of systemd's watchdog pings: every control call
/// returns within `bound` seconds, the clients' requests are read, and no playback is stalled.
///
/// A control call is probed on each of the two queues that carry them out: the daemon's
/// control queue (clients' commands, signals) and the player's control queue (the libvlc calls
/// of `next`, `stop` …, which can hang in libvlc). Each `check()` queues a probe on a queue
/// that has none waiting and reports a probe that has waited longer than `bound`; a queue that
/// cannot run it is stuck behind a call that has not returned. The thread that reads the
/// control clients' requests is probed the same way (it answers once its `poll` returns). A
/// stalled playback (reported, its end not yet) is not live either: its end is a call on the
/// player's control queue.
///
/// Nothing here waits: the probes answer when they run, and `check()` only reads the clock.
final class Liveness: Sendable {
    private struct State {
        /// When the probe waiting on each queue was queued; `nil` when none waits.
        var commandProbe: DispatchTime?
        var playerProbe: DispatchTime?
        var readerProbe: DispatchTime?
        /// The playback reported stalled whose end has not come yet.
        var stalled: (playback: PlaybackID, reason: StallReason)?
        /// What `check()` last found: `nil` live, else why not.
        var verdict: String?
        /// What the verdict is about (without how long it has been so): a change of it is what
        /// `check()` reports as a change.
        var cause: String?
    }

    /// Seconds a probe may wait before the daemon is not live.
    let bound: Double
    private let commandQueue: DispatchQueue
    /// Runs its argument once every call queued on the player before it has been carried
    /// out, without keeping the player alive meanwhile (the exit waits for its teardown).
    private let afterPlayerCalls: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Runs its argument once the thread reading the clients' requests comes round; `nil`
    /// without a control socket.
    private let probeReader: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    private let state = Guarded(State())

    init(
        bound: Double = 5, commandQueue: DispatchQueue,
        probeReader: (@Sendable (@escaping @Sendable () -> Void) -> Void)? = nil,
        afterPlayerCalls: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.bound = bound
        self.commandQueue = commandQueue
        self.probeReader = probeReader
        self.afterPlayerCalls = afterPlayerCalls
    }

    /// Why the daemon is not live, as `check()` last found; `nil` when it is.
    var verdict: String? { state.withLock { $0.verdict } }

    /// Queues the probes that are not waiting and returns why the daemon is not live (`nil`
    /// when it is), with whether its cause changed since the last check (a call that keeps
    /// waiting is one change, not one per check).
    func check() -> (verdict: String?, changed: Bool) {
        let now = DispatchTime.now()
        let reads = probeReader != nil
        let (verdict, changed, probeCommand, probePlayer, probeReading) = state.withLock { state in
            let probeCommand = state.commandProbe == nil
            let probePlayer = state.playerProbe == nil
            let probeReading = reads && state.readerProbe == nil
            if probeCommand { state.commandProbe = now }
            if probePlayer { state.playerProbe = now }
            if probeReading { state.readerProbe = now }
            // The verdict and its cause: a change of cause is a change, a longer wait is not.
            var verdict: String?
            var cause: String?
            if let stalled = state.stalled {
                verdict = "playback \(stalled.playback) stalled (\(stalled.reason.code)) and has not ended"
                cause = verdict
            } else if let since = state.playerProbe, Self.seconds(since, now) > bound {
                verdict = "a call on the player's control queue has not returned for \(Self.text(since, now)) s"
                cause = "player"
            } else if let since = state.commandProbe, Self.seconds(since, now) > bound {
                verdict = "a call on the daemon's control queue has not returned for \(Self.text(since, now)) s"
                cause = "command"
            } else if let since = state.readerProbe, Self.seconds(since, now) > bound {
                verdict = "the clients' requests have not been read for \(Self.text(since, now)) s"
                cause = "reader"
            }
            let changed = cause != state.cause
            state.verdict = verdict
            state.cause = cause
            return (verdict, changed, probeCommand, probePlayer, probeReading)
        }
        if probeReading, let probeReader {
            probeReader { [state] in state.withLock { $0.readerProbe = nil } }
        }
        if probeCommand {
            commandQueue.async { [state] in state.withLock { $0.commandProbe = nil } }
        }
        if probePlayer {
            afterPlayerCalls { [state] in state.withLock { $0.playerProbe = nil } }
        }
        return (verdict, changed)
    }

    /// A playback was reported stalled; called before anything that could wait (the log).
    func noteStalled(_ playback: PlaybackID, _ reason: StallReason) {
        state.withLock { $0.stalled = (playback, reason) }
    }

    /// A playback ended: its stall, or an older one's, is over.
    func noteEnded(_ playback: PlaybackID) {
        state.withLock { state in
            if let stalled = state.stalled, stalled.playback <= playback { state.stalled = nil }
        }
    }

    /// A playback began: a stall of an older one is over.
    func noteBegan(_ playback: PlaybackID) {
        state.withLock { state in
            if let stalled = state.stalled, stalled.playback < playback { state.stalled = nil }
        }
    }

    private static func seconds(_ start: DispatchTime, _ end: DispatchTime) -> Double {
        Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    private static func text(_ start: DispatchTime, _ end: DispatchTime) -> String {
        String(seconds(start, end), decimals: 1)
    }
}

/// Checks the daemon's liveness on a timer of its own queue (never one a control call could
/// hold), and sends systemd's `WATCHDOG=1` after each check that finds it live.
///
/// With `$WATCHDOG_USEC` it checks every half of it, or every second when that is more often;
/// without, every second, for the `live` of `status` and the `Unhealthy`/`Healthy` lines.
/// Nothing is sent when `$WATCHDOG_PID` names another process.
final class Watchdog: Sendable {
    private let liveness: Liveness
    private let notifier: SystemdNotifier?
    private let onChange: @Sendable (String?) -> Void
    private let queue = DispatchQueue(label: "media-daemon.watchdog")
    private let timer: Guarded<(any DispatchSourceTimer)?> = Guarded(nil)

    /// `onChange` is called on the watchdog's queue with each new verdict (`nil`: live again);
    /// it must not wait (the log may be what is stuck).
    init(liveness: Liveness, notifier: SystemdNotifier?, onChange: @escaping @Sendable (String?) -> Void) {
        self.liveness = liveness
        self.notifier = notifier
        self.onChange = onChange
    }

    func start() {
        let pings = notifier != nil ? Self.pingInterval() : nil
        let interval = min(pings ?? 1, 1)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(Int((interval * 1000).rounded())))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let (verdict, changed) = self.liveness.check()
            if verdict == nil, pings != nil { self.notifier?.send("WATCHDOG=1") }
            if changed { self.onChange(verdict) }
        }
        self.timer.withLock { $0 = timer }
        timer.resume()
    }

    /// Half `$WATCHDOG_USEC` in seconds, `nil` when the variable is unset or names another
    /// process's watchdog (`$WATCHDOG_PID`).
    private static func pingInterval() -> Double? {
        guard let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let usec = UInt64(text), usec > 0
        else { return nil }
        if let pid = getenv("WATCHDOG_PID").map({ String(cString: $0) }), !pid.isEmpty, pid != String(getpid()) {
            return nil
        }
        return Double(usec) / 2e6
    }
}
