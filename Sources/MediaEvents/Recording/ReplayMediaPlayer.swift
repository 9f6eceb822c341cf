/// A recorded player played back: the events, values, playbacks and outcomes the real player
/// had, through `VLCMediaPlayer`'s API (``MediaPlayerControlling``). Get one from a
/// ``ReplaySession``.
///
/// - Its events and its `playbacks`' events come from the recording, in the recorded order, each
///   delivered through an `EventsHandler` as the session's configuration says.
/// - `state`, `time`, `position`, `length`, `isSeekable`, `isPausable`, `media` and
///   `currentPlayback` follow the delivered events as a real player's cache follows libvlc's:
///   they are updated when an event is handed to its handler, before it runs.
/// - `outcome(of:timeout:)` answers with the recorded end of a playback once it has been
///   delivered (its timeout is real time).
/// - The control calls do nothing to the player: each is recorded (``ReplaySession/calls``)
///   and, when the session is told so, answered with a recorded segment.
public final class ReplayMediaPlayer: MediaPlayerControlling {
    /// The subscribers of this player.
    public let eventHub = EventHub<MediaPlayerEvent>()
    /// The player's playbacks, as recorded.
    public let playbacks = PlaybackEventSource()
    /// How this player's events (and its playbacks') are dispatched: the session's.
    public let configuration: any EventsConfiguring
    /// The recorded object this player plays back.
    public let recordedObject: RecordedObject
    let feed: ReplayPlayerFeed
    private let scheduler: ReplayScheduler
    private let answersCalls: Bool

    init(
        object: RecordedObject, configuration: any EventsConfiguring, scheduler: ReplayScheduler, answersCalls: Bool
    ) {
        recordedObject = object
        self.configuration = configuration
        self.scheduler = scheduler
        self.answersCalls = answersCalls
        feed = ReplayPlayerFeed()
        feed.bind(EventsHandler(object: self, configuration: configuration))
    }

    deinit {
        feed.tearDown()
        _ = eventHub.finish()
        _ = playbacks.eventHub.finish()
    }

    /// Records the call `name` with `fields`. When the app's calls drive the replay
    /// (`answeringCalls`), the call also has its effect on the player's values and its answer
    /// is scheduled.
    @discardableResult
    func call(_ name: String, _ fields: [RecordedField] = []) -> ReplayCall {
        if answersCalls { feed.apply(call: name) }
        return scheduler.call(name, on: recordedObject.id, fields: fields, answers: answersCalls)
    }

    // MARK: Control calls

    /// The media last set, or the one the last delivered `MediaChanged` carried, whichever is
    /// newer. Setting it is recorded as `setMedia` with its `mrl`.
    public var media: VLCMedia? {
        get { feed.media }
        set {
            feed.setMedia(newValue)
            call("setMedia", [RecordedField("mrl", .optional(newValue?.mrl))])
        }
    }

    /// Records `play`.
    public func play() { call("play") }
    /// Records `pause`.
    public func pause() { call("pause") }
    /// Records `resume`.
    public func resume() { call("resume") }
    /// Records `stop`.
    public func stop() { call("stop") }
    /// Returns at once: a call is recorded, and its answer scheduled, before it returns.
    public func waitForPendingControls() async {}

    // MARK: Values

    /// The state, as of the last delivered state event.
    public var state: PlaybackState { feed.values.state }
    /// Whether `state` is `playing`.
    public var isPlaying: Bool { state == .playing }

    /// The time as of the last delivered `TimeChanged` (-1 without input). Setting it is
    /// recorded as `setTime` with `time_ms`.
    public var time: Int64 {
        get { feed.values.time }
        set { call("setTime", [RecordedField("time_ms", .integer(newValue))]) }
    }

    /// The position as of the last delivered `PositionChanged` (-1 without input). Setting it is
    /// recorded as `setPosition` with `position`.
    public var position: Float {
        get { feed.values.position }
        set { call("setPosition", [RecordedField("position", .float(newValue))]) }
    }

    /// The length as of the last delivered `LengthChanged` (-1 while unknown).
    public var length: Int64 { feed.values.length }
    /// Whether the media can seek, as of the last delivered `SeekableChanged`.
    public var isSeekable: Bool { feed.values.isSeekable }
    /// Whether the media can pause, as of the last delivered `PausableChanged`.
    public var isPausable: Bool { feed.values.isPausable }

    // MARK: Playbacks

    /// The playback of the last delivered `began`, until a `MediaChanged`, or an end that a call
    /// made (`stopped`, `skipped`, `quit`, a stall) clears it, as a real player's does.
    public var currentPlayback: PlaybackID? { feed.values.currentPlayback }

    /// The recorded end of `playback`: at once when it has been delivered, otherwise once it is.
    ///
    /// - Throws: `VLCError.timedOut` when it is not delivered within `timeout` (real time);
    ///   `VLCError.sourceEnded` when the player is torn down first; `CancellationError`.
    public func outcome(of playback: PlaybackID, timeout: Duration) async throws -> PlaybackSummary {
        let feed = feed
        let what = "the end of playback \(playback)"
        return try await withThrowingTaskGroup(of: PlaybackSummary.self) { group in
            group.addTask {
                guard let summary = await feed.outcome(of: playback) else {
                    throw VLCError.sourceEnded(waitingFor: what)
                }
                return summary
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw VLCError.timedOut(waitingFor: what, seconds: timeout.seconds)
            }
            defer { group.cancelAll() }
            guard let summary = try await group.next() else { throw CancellationError() }
            return summary
        }
    }
}

/// What a replayed player's deliveries update, and the handler they go through. Kept by the
/// scheduler's entries; holds the player only weakly (through its handler), so the player can
/// be torn down while entries are still scheduled.
final class ReplayPlayerFeed: Sendable {
    struct Values: Sendable {
        var state = PlaybackState.nothingSpecial
        var time: Int64 = -1
        var position: Float = -1
        var length: Int64 = -1
        var isSeekable = false
        var isPausable = false
        var currentPlayback: PlaybackID?
    }

    private struct Media {
        var current: VLCMedia?
    }

    private struct Waiter {
        let id: UInt64
        let playback: PlaybackID
        let continuation: CheckedContinuation<PlaybackSummary?, Never>
    }

    private struct Outcomes {
        var summaries: [PlaybackID: PlaybackSummary] = [:]
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        var tornDown = false
    }

    private let state = Protected(Values())
    private let mediaState = Protected(Media())
    private let outcomes = Protected(Outcomes())
    private let handler = Protected<EventsHandler<ReplayMediaPlayer>?>(nil)
    /// Told of every playback event before it is delivered (a replayed playlist's `isActive`).
    private let playbackObserver = Protected<(@Sendable (PlaybackEvent) -> Void)?>(nil)

    var values: Values { state.withLock { $0 } }
    var media: VLCMedia? { mediaState.withLock { $0.current } }

    func bind(_ handler: EventsHandler<ReplayMediaPlayer>) { self.handler.withLock { $0 = handler } }

    func observePlaybacks(_ observer: @escaping @Sendable (PlaybackEvent) -> Void) {
        playbackObserver.withLock { $0 = observer }
    }

    func setMedia(_ media: VLCMedia?) {
        let replaced = mediaState.withLock { state in
            defer { state.current = media }
            return state.current
        }
        _ = replaced
    }

    /// What a call does to the values without an event: a `stop` forgets the current playback
    /// (as `VLCMediaPlayer`'s does, even after a natural end, which sends no new end).
    func apply(call name: String) {
        if name == "stop" { state.withLock { $0.currentPlayback = nil } }
    }

    /// Updates the values as a real player's cache does inside libvlc's callback, then hands
    /// the event to the handler.
    func deliver(_ event: MediaPlayerEvent, _ entry: RecordedEntry) {
        state.withLock { values in
            if let state = Self.state(after: event) { values.state = state }
            switch event {
            case .timeChanged(let ms): values.time = ms
            case .positionChanged(let position): values.position = position
            case .lengthChanged(let ms): values.length = ms
            case .seekableChanged(let flag): values.isSeekable = flag
            case .pausableChanged(let flag): values.isPausable = flag
            case .stopped:
                let playback = values.currentPlayback
                values = Values(state: .stopped)
                values.currentPlayback = playback
            case .mediaChanged:
                values = Values()
            default: break
            }
        }
        if case .mediaChanged(let media) = event { setMedia(media) }
        handler.withLock { $0 }?.handleEvent((event, entry)) { player, delivery in
            ReplayDeliveryContext.withEntry(delivery.1) { player.eventHub.publish(delivery.0) }
        }
    }

    /// Notes the playback an event begins or ends, then hands the event to the handler (through
    /// the player's handler, in order with the player's own events).
    func deliver(_ event: PlaybackEvent, _ entry: RecordedEntry) {
        var finished: [Waiter] = []
        switch event.payload {
        case .began: state.withLock { $0.currentPlayback = event.playback }
        case .ended(let summary):
            // A call's end forgets the playback (its input is gone); libvlc's own end keeps it
            // current until the next start.
            if summary.outcome.isEndedByCall {
                state.withLock { values in
                    if values.currentPlayback == event.playback { values.currentPlayback = nil }
                }
            }
            finished = outcomes.withLock { outcomes in
                outcomes.summaries[summary.playback] = summary
                let (mine, others) = outcomes.waiters.split { $0.playback == summary.playback }
                outcomes.waiters = others
                return mine
            }
            for waiter in finished { waiter.continuation.resume(returning: summary) }
        default: break
        }
        playbackObserver.withLock { $0 }?(event)
        handler.withLock { $0 }?.handleEvent((event, entry)) { player, delivery in
            ReplayDeliveryContext.withEntry(delivery.1) { player.playbacks.eventHub.publish(delivery.0) }
        }
    }

    /// The recorded end of `playback`; `nil` once the player is torn down.
    func outcome(of playback: PlaybackID) async -> PlaybackSummary? {
        let id = outcomes.withLock { outcomes -> UInt64 in
            outcomes.nextID += 1
            return outcomes.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let answer = outcomes.withLock { outcomes -> PlaybackSummary?? in
                    if let summary = outcomes.summaries[playback] { return .some(summary) }
                    if outcomes.tornDown { return .some(nil) }
                    outcomes.waiters.append(Waiter(id: id, playback: playback, continuation: continuation))
                    return .none
                }
                if case .some(let summary) = answer { continuation.resume(returning: summary) }
            }
        } onCancel: {
            let waiter = outcomes.withLock { outcomes -> Waiter? in
                guard let index = outcomes.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return outcomes.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    func tearDown() {
        let waiters = outcomes.withLock { outcomes -> [Waiter] in
            outcomes.tornDown = true
            defer { outcomes.waiters = [] }
            return outcomes.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// The state a real player's `state` answers once libvlc has sent `event`.
    static func state(after event: MediaPlayerEvent) -> PlaybackState? {
        switch event {
        case .mediaChanged: .nothingSpecial
        case .opening: .opening
        case .playing: .playing
        case .paused: .paused
        case .stopped: .stopped
        case .endReached: .ended
        case .encounteredError: .error
        default: nil
        }
    }
}

extension PlaybackOutcome {
    /// Whether a control call ended the playback (a stop, a new media, a teardown, a stall).
    fileprivate var isEndedByCall: Bool {
        switch self {
        case .stopped, .skipped, .quit: true
        case .failed(let failure):
            if case .stalled = failure.reason { true } else { false }
        case .ended, .expanded: false
        }
    }
}

extension Array {
    /// The elements that satisfy `belongs`, and the others, each in order.
    fileprivate func split(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
        var yes: [Element] = []
        var no: [Element] = []
        for element in self {
            if belongs(element) { yes.append(element) } else { no.append(element) }
        }
        return (yes, no)
    }
}
