import Dispatch
import Synchronization

/// The playbacks of one player: which one is current, what it has shown, and its one outcome.
///
/// **Which playback an event belongs to** is decided inside libvlc's callback, when the event
/// is sent. A new playback begins on the player's control queue, after the previous input was
/// stopped and joined (so every event of that input has been sent) and before
/// `libvlc_media_player_play` creates the new one (so every event of the new input, and those
/// `play` sends itself, come after). Events are therefore tagged with the playback whose input
/// sent them, however late an asynchronous configuration delivers them. A playback started by
/// something else than this player's own calls (libvlc's list player sets the media and plays
/// inside libvlc) begins at its input's `Opening`, which libvlc sends after the media change
/// that ended the previous one.
///
/// **Exactly one outcome.** All state is one struct behind one lock; the outcome is a
/// transition from `nil`, made by whichever comes first: the input's end in libvlc's callback
/// (`EndReached`, `EncounteredError`, a `Stopped` of a dying input), the media change that
/// replaced it, or the control call that ended it (`stop`, a stall, the player's teardown),
/// which reserves its reason before calling libvlc so that the `Stopped` libvlc sends from
/// inside that call decides with it. Whoever made the transition reports it; nobody else can.
final class PlaybackTracker: Sendable {
    /// What the callback tags an event with.
    struct Stamp: Sendable {
        let playback: PlaybackID
        let entry: PlaylistEntryID?
        /// What the starter said of this playback (a playlist player's generation), 0 when
        /// nothing.
        var tag: UInt64 = 0
    }

    /// What one event did to the current playback.
    struct Update: Sendable {
        /// The playback the event belongs to; `nil` when none is current.
        var stamp: Stamp?
        /// A playback this event began (an input opening without a control call of this
        /// player: libvlc's list player).
        var began: (stamp: Stamp, mrl: String)?
        /// The playback this event ended, reported after the event.
        var ended: (stamp: Stamp, summary: PlaybackSummary)?
        /// A playback ended by this event before it (a media change), reported before it.
        var endedBefore: (stamp: Stamp, summary: PlaybackSummary)?
    }

    private struct Current {
        let stamp: Stamp
        let media: UInt
        let mrl: String
        let began: DispatchTime
        /// Its `began` was handed to the delivery route: the media's events (which other
        /// threads send too, a parse of the same media) are tagged only from then on, so that
        /// none is delivered before it.
        var announced = false
        var sawOpening = false
        var sawTrack = false
        var reachedPlaying = false
        var paused = false
        var buffering = false
        var subItems = 0
        var time: Int64 = -1
        var position: Float = -1
        var length: Int64 = -1
        /// The last time the playback showed progress (see `noteProgress`).
        var lastProgress: DispatchTime
        /// Reserved by a control call about to end the playback (stop, stall, teardown).
        var ending: PlaybackOutcome?
        var outcome: PlaybackOutcome?
        /// The stall was reported.
        var stalled = false
    }

    private struct Waiter {
        let playback: PlaybackID
        let continuation: CheckedContinuation<PlaybackSummary?, Never>
    }

    private struct State {
        var nextID: UInt64 = 1
        var current: Current?
        /// The entry the next playback plays (set by a playlist player just before it starts).
        var nextEntry: PlaylistEntryID?
        /// The tag of the next playback's stamp (set with `nextEntry`).
        var nextTag: UInt64 = 0
        /// The most recent ended playbacks, newest last, for `summary(of:)`.
        var recent: [PlaybackSummary] = []
        var waiters: [Waiter] = []
        var stallTimeout: Duration?
        var checkScheduled = false
        /// The media the last `MediaChanged` named (its address), for a playback begun at an
        /// `Opening`.
        var changedMedia: UInt = 0
        var isTornDown = false
    }

    static let keptSummaries = 64

    private let state = Protected(State())
    /// The error messages libvlc logs for each input, when the player records causes.
    let causes: InputTracker?
    /// Called with every decided outcome, outside the lock, once the `ended` event is on its
    /// way to the player's subscribers (`endDelivered`): a playlist player's advance.
    private let endObservers = Protected<[@Sendable (PlaybackSummary, UInt64) -> Void]>([])

    init(causes: InputTracker?) {
        self.causes = causes
    }

    // MARK: Settings

    var stallTimeout: Duration? {
        get { state.withLock { $0.stallTimeout } }
        set { state.withLock { $0.stallTimeout = newValue } }
    }

    /// The playback the next start belongs to the entry `entry` (a playlist player's), and
    /// its stamp carries `tag` to the end observers.
    func setNextEntry(_ entry: PlaylistEntryID?, tag: UInt64 = 0) {
        state.withLock { state in
            state.nextEntry = entry
            state.nextTag = tag
        }
    }

    /// `observer` gets each decided outcome with its playback's stamp's tag.
    func addEndObserver(_ observer: @escaping @Sendable (PlaybackSummary, UInt64) -> Void) {
        endObservers.withLock { $0.append(observer) }
    }

    // MARK: Reads

    /// The current playback, ended or not; `nil` before the first and after a stop or a media
    /// change.
    var current: Stamp? { state.withLock { $0.current?.stamp } }

    /// Whether the player's wrapper is gone (`tearDown()`): no playback begins any more.
    var isTornDown: Bool { state.withLock { $0.isTornDown } }

    /// The summary of a playback that ended (among the last `keptSummaries`).
    func summary(of playback: PlaybackID) -> PlaybackSummary? {
        state.withLock { state in state.recent.last { $0.playback == playback } }
    }

    /// Waits for `playback`'s end; `nil` when it is not known (never began, or so long ago
    /// that its summary is gone). The continuation is resumed on MediaEvents' stream queue.
    func outcome(of playback: PlaybackID) async -> PlaybackSummary? {
        await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> PlaybackSummary?? in
                if let summary = state.recent.last(where: { $0.playback == playback }) { return .some(summary) }
                let pending =
                    state.current.map { $0.stamp.playback == playback && $0.outcome == nil } ?? false
                if !pending && !state.isTornDown && playback.rawValue < state.nextID {
                    // Began but neither current nor kept: ended long ago.
                    return .some(nil)
                }
                if state.isTornDown { return .some(nil) }
                state.waiters.append(Waiter(playback: playback, continuation: continuation))
                return .none
            }
            if case .some(let summary) = answer { continuation.resume(returning: summary) }
        }
    }

    // MARK: Control queue

    /// A new playback of `media` begins: called on the control queue just before
    /// `libvlc_media_player_play` creates a new input. Returns its stamp and the summary of a
    /// previous playback this ended (one no call had ended: libvlc ended it without a sign);
    /// `nil` once the player is torn down: a start queued before the wrapper went (a `play`, a
    /// playlist's advance) would begin a playback after its `quit`, seen by no subscriber.
    func begin(media: UInt, mrl: String) -> (stamp: Stamp, ended: (stamp: Stamp, summary: PlaybackSummary)?)? {
        let begun = state.withLock { state -> (Stamp, (stamp: Stamp, summary: PlaybackSummary)?, Duration?)? in
            guard !state.isTornDown else { return nil }
            let ended = Self.decide(&state, .skipped)
            let stamp = Self.start(&state, media: media, mrl: mrl)
            return (stamp, ended, Self.needsCheck(&state))
        }
        guard let (stamp, ended, schedule) = begun else { return nil }
        finishDecision(ended)
        if let schedule { scheduleCheck(after: schedule) }
        return (stamp, ended)
    }

    /// The `began` of `playback` was handed to the delivery route (see `Current.announced`).
    func announce(_ playback: PlaybackID) {
        state.withLock { state in
            if state.current?.stamp.playback == playback { state.current?.announced = true }
        }
    }

    /// A control call is about to end the current playback with `outcome` (stop, stall,
    /// teardown): the `Stopped` or `MediaChanged` libvlc sends from inside it decides with it.
    func reserveEnding(_ outcome: PlaybackOutcome) {
        state.withLock { state in
            if state.current?.outcome == nil, state.current?.ending == nil { state.current?.ending = outcome }
        }
    }

    /// The control call that reserved an ending has returned: decides the outcome if libvlc
    /// sent nothing that did, then forgets the playback when `clear` (its input is gone).
    func finishEnding(clear: Bool) -> (stamp: Stamp, summary: PlaybackSummary)? {
        let ended = state.withLock { state in
            let ended = state.current?.ending.flatMap { Self.decide(&state, $0) }
            if clear { state.current = nil }
            return ended
        }
        finishDecision(ended)
        return ended
    }

    /// The player is torn down: the current playback, unless it ended, ends as `quit`; every
    /// waiter gets its answer.
    func tearDown() -> (stamp: Stamp, summary: PlaybackSummary)? {
        let (ended, waiters) = state.withLock { state in
            let ended = Self.decide(&state, .quit)
            state.isTornDown = true
            defer { state.waiters = [] }
            return (ended, state.waiters)
        }
        finishDecision(ended)
        if !waiters.isEmpty {
            ServiceQueues.pendingTeardowns.async(on: ServiceQueues.streams) {
                for waiter in waiters { waiter.continuation.resume(returning: nil) }
            }
        }
        return ended
    }

    // MARK: libvlc's callback

    /// Tags a player event and applies it; runs inside libvlc's callback, before any delivery.
    func record(_ event: MediaPlayerEvent) -> Update {
        let now = DispatchTime.now()
        var update = Update()
        // The input's log, outside the lock (the log router has a lock of its own).
        let isEnd = event.kind == .encounteredError || event.kind == .endReached
        let logged = isEnd ? causes?.inputEnded(on: currentThread())?.description : nil
        // A stream media's error (`VLCMedia(open:)`): libvlc's imem turns a read error into
        // `EndReached`, and both ends come on the thread that opened the stream.
        let streamFailure = isEnd ? StreamFailures.failure(onInputThread: currentThread()) : nil
        let cause = event.kind == .encounteredError ? logged : nil
        let schedule = state.withLock { state -> Duration? in
            switch event {
            case .mediaChanged(let media):
                // The media that the current playback played was replaced (set_media joined
                // its input first): it ends here, and no playback is current until a start.
                update.endedBefore = Self.decide(&state, state.current?.ending ?? .skipped)
                state.current = nil
                state.changedMedia = media?.native.address ?? 0
            case .opening:
                if let current = state.current, current.outcome == nil, !current.sawOpening {
                    state.current?.sawOpening = true
                } else {
                    // An input this player's calls did not start (libvlc's list player): its
                    // media is the one the last MediaChanged named; its location is not read
                    // here (that takes the item's lock, on libvlc's thread).
                    update.endedBefore = Self.decide(&state, .skipped)
                    let stamp = Self.start(&state, media: state.changedMedia, mrl: "")
                    state.current?.sawOpening = true
                    state.current?.announced = true
                    update.began = (stamp, "")
                }
            default:
                break
            }
            guard var current = state.current else { return nil }
            update.stamp = current.stamp
            switch event {
            case .playing:
                current.reachedPlaying = true
                current.paused = false
                current.buffering = false
                current.lastProgress = now
            case .paused:
                current.paused = true
            case .buffering(let percent):
                current.buffering = percent < 100
                current.lastProgress = now
            case .esAdded(let type, _):
                if type == .audio || type == .video {
                    current.sawTrack = true
                    current.lastProgress = now
                }
            case .timeChanged(let ms):
                if ms != current.time { current.lastProgress = now }
                current.time = ms
            case .positionChanged(let position):
                if position != current.position { current.lastProgress = now }
                current.position = position
            case .lengthChanged(let ms):
                current.length = ms
            default:
                break
            }
            state.current = current
            switch event {
            case .endReached:
                let outcome: PlaybackOutcome =
                    if let streamFailure {
                        .failed(PlaybackFailure(.streamError, cause: streamFailure.description))
                    } else if current.sawTrack {
                        .ended
                    } else if current.subItems > 0 {
                        .expanded(entries: current.subItems)
                    } else {
                        .failed(PlaybackFailure(.noTracks))
                    }
                update.ended = Self.decide(&state, current.ending ?? outcome)
            case .encounteredError:
                let failure =
                    streamFailure.map { PlaybackFailure(.streamError, cause: $0.description) }
                    ?? PlaybackFailure(.encounteredError, cause: cause)
                update.ended = Self.decide(&state, current.ending ?? .failed(failure))
            case .stopped:
                // From inside a stop (reserved), or from an input that died on its own (a pause
                // of an input that cannot pause stops it).
                update.ended = Self.decide(&state, current.ending ?? .stopped)
            default:
                break
            }
            return Self.needsCheck(&state)
        }
        switch event.kind {
        case .opening: causes?.inputOpening(on: currentThread())
        case .stopped: causes?.inputGone()
        default: break
        }
        finishDecision(update.endedBefore)
        finishDecision(update.ended)
        if let schedule { scheduleCheck(after: schedule) }
        return update
    }

    /// Tags an event of a media; `nil` unless it is the current playback's media.
    func record(_ event: MediaEvent, sender: UInt) -> Stamp? {
        // The media's events are attached for the playback's media only, but a media shared
        // with another player keeps sending them after this one moved on.
        state.withLock { state in
            guard let current = state.current, current.media == sender, current.announced else { return nil }
            if case .subItemAdded = event { state.current?.subItems += 1 }
            return current.stamp
        }
    }

    // MARK: Health

    /// Called when the stall check finds the current playback stalled: the player reports it
    /// and stops the input (see `VLCMediaPlayer`).
    private let stallHandler = Protected<(@Sendable (Stamp, StallReason) -> Void)?>(nil)

    func onStall(_ handler: @escaping @Sendable (Stamp, StallReason) -> Void) {
        stallHandler.withLock { $0 = handler }
    }

    /// The time from `start` to `end`; zero when `end` comes first.
    static func elapsed(from start: DispatchTime, to end: DispatchTime) -> Duration {
        end > start ? .nanoseconds(Int64(end.uptimeNanoseconds - start.uptimeNanoseconds)) : .zero
    }

    private static let healthQueue = DispatchQueue(label: "MediaEvents.playback-health", qos: ServiceQueues.qos)

    private func scheduleCheck(after delay: Duration) {
        let nanoseconds =
            max(0, delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        Self.healthQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [weak self] in
            self?.checkHealth()
        }
    }

    private func checkHealth() {
        let (stall, next) = state.withLock { state -> ((Stamp, StallReason)?, Duration?) in
            // Read under the lock: an event recorded, or a playback begun, after a clock read
            // made before it would lie in the future (and the difference would trap).
            let now = DispatchTime.now()
            state.checkScheduled = false
            guard let timeout = state.stallTimeout, let current = state.current, current.outcome == nil,
                current.ending == nil, !current.stalled
            else { return (nil, nil) }
            if current.paused {
                // Looked at again a timeout after the resume.
                state.checkScheduled = true
                return (nil, timeout)
            }
            let idle = Self.elapsed(from: current.lastProgress, to: now)
            // Progress of any kind, but a playing input that never gave a track (`/dev/zero`)
            // counts from its start.
            let sinceStart = Self.elapsed(from: current.began, to: now)
            let noTrackYet = current.reachedPlaying && !current.sawTrack && current.subItems == 0
            if idle >= timeout || (noTrackYet && sinceStart >= timeout) {
                state.current?.stalled = true
                // libvlc reports buffering (at 0 %) while it opens, too: before `Playing`, the
                // opening did not complete.
                let reason: StallReason =
                    !current.reachedPlaying
                    ? .opening
                    : !current.sawTrack && current.subItems == 0
                        ? .noTrack
                        : current.buffering ? .buffering : .noProgress
                return ((current.stamp, reason), nil)
            }
            state.checkScheduled = true
            let left = noTrackYet ? min(timeout - idle, timeout - sinceStart) : timeout - idle
            return (nil, max(left, .milliseconds(10)))
        }
        if let next { scheduleCheck(after: next) }
        if let stall, let handler = stallHandler.withLock({ $0 }) { handler(stall.0, stall.1) }
    }

    private static func needsCheck(_ state: inout State) -> Duration? {
        guard let timeout = state.stallTimeout, state.current?.outcome == nil, !state.checkScheduled else {
            return nil
        }
        state.checkScheduled = true
        return timeout
    }

    // MARK: Transitions

    private static func start(_ state: inout State, media: UInt, mrl: String) -> Stamp {
        let stamp = Stamp(playback: PlaybackID(rawValue: state.nextID), entry: state.nextEntry, tag: state.nextTag)
        state.nextID += 1
        state.nextEntry = nil
        state.nextTag = 0
        let now = DispatchTime.now()
        state.current = Current(stamp: stamp, media: media, mrl: mrl, began: now, lastProgress: now)
        return stamp
    }

    /// The one transition to an outcome: `nil` when there is no current playback or it ended.
    private static func decide(
        _ state: inout State, _ outcome: PlaybackOutcome
    ) -> (stamp: Stamp, summary: PlaybackSummary)? {
        guard let current = state.current, current.outcome == nil else { return nil }
        state.current?.outcome = outcome
        let summary = PlaybackSummary(
            playback: current.stamp.playback, entry: current.stamp.entry, mrl: current.mrl, outcome: outcome,
            time: current.time, position: current.position, length: current.length,
            seconds: Double(DispatchTime.now().uptimeNanoseconds - current.began.uptimeNanoseconds) / 1e9)
        state.recent.append(summary)
        if state.recent.count > keptSummaries { state.recent.removeFirst(state.recent.count - keptSummaries) }
        return (current.stamp, summary)
    }

    /// An `ended` decided here has been handed to the player's delivery: tells the end
    /// observers, whose events (a playlist's next entry, its end) thus come after that
    /// `PlaybackEnded` wherever both are delivered on one queue or thread.
    func endDelivered(_ ended: (stamp: Stamp, summary: PlaybackSummary)?) {
        guard let ended else { return }
        for observer in endObservers.withLock({ $0 }) { observer(ended.summary, ended.stamp.tag) }
    }

    /// After a transition, outside the lock: resumes the waiters of that playback (the
    /// caller delivers the `ended` event, then calls `endDelivered`).
    private func finishDecision(_ ended: (stamp: Stamp, summary: PlaybackSummary)?) {
        guard let ended else { return }
        let waiters = state.withLock { state -> [Waiter] in
            let (mine, others) = state.waiters.partitioned { $0.playback == ended.summary.playback }
            state.waiters = others
            return mine
        }
        if !waiters.isEmpty {
            let summary = ended.summary
            ServiceQueues.pendingTeardowns.async(on: ServiceQueues.streams) {
                for waiter in waiters { waiter.continuation.resume(returning: summary) }
            }
        }
    }
}

extension Array {
    /// The elements that satisfy `belongs`, and the others, each in order.
    fileprivate func partitioned(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
        var yes: [Element] = []
        var no: [Element] = []
        for element in self {
            if belongs(element) { yes.append(element) } else { no.append(element) }
        }
        return (yes, no)
    }
}
