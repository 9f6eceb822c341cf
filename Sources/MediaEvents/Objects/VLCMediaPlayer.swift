import Dispatch

/// A media player.
///
/// Control calls (`play`, `pause`, `stop`, setting `media`, seeking, volume, tracks,
/// chapters, rate) never block:
/// they are carried out in order on the player's own control queue, so they are safe from
/// any thread, a handler of this player's events included (raw libvlc hangs forever when
/// `stop` runs on the thread that sends the player's events). The `…AndWait` variants return
/// once libvlc has carried the call out.
public final class VLCMediaPlayer: VLCEventSource {
    /// The native player: created at once, or, when the player is made inside a handler, by
    /// the first block of its control queue (see `init`).
    let native: NativeSlot<NativeMediaPlayer>
    /// The library the player was created with.
    public let library: VLCLibrary
    /// The subscribers of this player.
    public let eventHub = EventHub<MediaPlayerEvent>()
    /// How this player's events are dispatched.
    public let configuration: any EventsConfiguring
    /// Carries out blocking libvlc calls in order, away from libvlc's threads.
    let control: ControlQueue<NativeMediaPlayer>
    private let currentMedia = Protected(CurrentMedia())
    /// The values the getters answer, as the player's events last reported them (rules 1, 2).
    let cache: PlaybackCache
    /// Title and chapter reads kept away from an ending input (rule 15).
    let titleReads = TitleReadGate()
    /// The advance gates of the list players that play with this player (rule 16).
    let listAdvances = PlayerAdvanceGates()
    /// Starts and ends playbacks on the control queue.
    let driver: PlaybackDriver
    /// Whether the library's log is captured for the causes of failed playbacks.
    private let recordsFailureCauses: Bool

    /// The player's playbacks: every player event and every event of the playing media, each
    /// tagged with the playback it belongs to, and each playback's start, stall and one end
    /// (see `PlaybackEvent`). Its events are delivered as the player's configuration says, in
    /// order with the player's own.
    public let playbacks: PlaybackEventSource

    /// Creates a player.
    ///
    /// Made inside a handler (or on a queue a synchronous configuration delivers to), the
    /// native player is created on the player's control queue, before its first call:
    /// `libvlc_media_player_new` waits for a running `snapshot-file` callback of the library,
    /// which sends `SnapshotTaken` to every player in turn and so waits for the event lock a
    /// handler of one of them holds. Until then `volume` and `isMuted` answer as for a player
    /// without audio output, and `rate` 1.
    ///
    /// - Parameters:
    ///   - library: the libvlc instance.
    ///   - configuration: how events are dispatched; `nil` uses
    ///     `VLCLibrary.sharedEventsConfiguration` as it is now.
    ///   - options: what the player's playbacks record, how long one may make no progress,
    ///     and where audio goes.
    public init(
        library: VLCLibrary, configuration: (any EventsConfiguring)? = nil, options: PlayerOptions = PlayerOptions()
    ) {
        let instance = library.native
        let pacedAudio = options.audio == .discardInRealTime
        let create: @Sendable () -> NativeMediaPlayer = {
            guard let player = NativeMediaPlayer.new(in: instance) else {
                preconditionFailure("libvlc_media_player_new failed: \(VLCError.lastMessage(or: "out of memory"))")
            }
            // Before any play: the audio callbacks are read when an input starts.
            if pacedAudio { PacedAudioOutput.install(on: player) }
            return player
        }
        control =
            DeferredFromHandlers().around(create).map { ControlQueue(for: "player", native: $0) }
            ?? ControlQueue(for: "player", creating: create)
        native = control.native
        self.library = library
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        recordsFailureCauses = options.recordsFailureCauses
        let tracker = PlaybackTracker(
            causes: options.recordsFailureCauses ? InputTracker(router: library.logs.router) : nil)
        tracker.stallTimeout = options.stallTimeout
        if options.recordsFailureCauses { library.logs.startCapturing() }
        cache = PlaybackCache(configuration: self.configuration)
        playbacks = PlaybackEventSource()
        driver = PlaybackDriver(tracker: tracker)
        let handler = EventsHandler(object: self, configuration: self.configuration)
        driver.bind(handler)
        let listener = PlayerListener(
            handler: handler, cache: cache, titleReads: titleReads, listAdvances: listAdvances, tracker: tracker,
            detour: LockedSendDetour(configuration: self.configuration))
        let table: @Sendable (NativeMediaPlayer) -> NativeEventTable = { player in
            NativeEventTable(
                manager: player.eventManager, types: MediaPlayerEvent.Kind.allCases.map(\.nativeType),
                callback: playerCallback, receiver: listener)
        }
        // Attached at once (as every source is), or right after the native player is made,
        // before any call: the cache behind the getters must follow the player from the start.
        if let player = native.current {
            eventHub.bind(table(player), attachNow: true)
        } else {
            let eventHub = eventHub
            control.perform { player in _ = eventHub.bindLate(table(player)) }
        }
        // Weakly: the tracker keeps this closure, and the driver keeps the tracker.
        let control = control
        tracker.onStall { [weak driver] stamp, reason in
            guard let driver else { return }
            let seconds = driver.tracker.stallTimeout?.seconds ?? 0
            driver.reportStall(stamp, reason)
            control.perform { player in driver.stall(player, stamp, reason, seconds: seconds) }
        }
    }

    /// Creates a player for `media`.
    public convenience init(
        media: VLCMedia, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil,
        options: PlayerOptions = PlayerOptions()
    ) {
        self.init(library: library, configuration: configuration, options: options)
        self.media = media
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            let table = eventHub.finish()
            // A playback still running ends here, for the player's subscribers, as `quit`.
            let ended = driver.tracker.tearDown()
            _ = playbacks.eventHub.finish(lastEvent: ended.map { PlaybackEvent($0.stamp, .ended($0.summary)) })
            driver.tracker.endDelivered(ended)
            if recordsFailureCauses { library.logs.stopCapturing() }
            let driver = driver
            // This may run on any thread, a libvlc one included: releasing a player stops it,
            // which joins the input thread. The control queue is never a libvlc thread.
            control.tearDown { player in
                table?.detachAll()
                driver.tearDown()
                player.release()
            }
        }
    }

    // MARK: Control

    /// The wrapper of the player's media, and the sets not yet carried out.
    private struct CurrentMedia {
        var wrapper: VLCMedia?
        /// Sets queued but not yet applied: until then the native player still has an older
        /// media, and the wrapper (the latest set) is the answer.
        var pendingSets = 0
    }

    /// The media to play: the one last set, or the one libvlc last reported with
    /// `MediaChanged` (a `VLCMediaListPlayer` changes it for each item). Setting it is queued
    /// like the other control calls (the getter returns the new media at once); libvlc then
    /// sends `MediaChanged`.
    ///
    /// Never calls libvlc (its `get_media` takes the player's object lock, which libvlc
    /// holds while it sends the media's events from `play` and `set_media`). Returns the
    /// same `VLCMedia` as long as the media stays the same; when something else (a list
    /// player) set another one, a wrapper of that one, made with this player's configuration.
    public var media: VLCMedia? {
        get {
            let seen = cache.seenMedia
            return currentMedia.withLock { current in
                guard current.pendingSets == 0, let seen else { return current.wrapper }
                let mine = current.wrapper?.native.address ?? 0
                if seen.native == mine { return current.wrapper }
                // Another media (a list player's item): the cache's wrapper of it, which the
                // cache keeps until the next MediaChanged.
                return seen.wrapper
            }
        }
        set {
            let previous = currentMedia.withLock { current in
                defer {
                    current.wrapper = newValue
                    current.pendingSets += 1
                }
                return current.wrapper
            }
            let currentMedia = currentMedia
            let driver = driver
            perform { player in
                driver.setMedia(player, newValue?.native)
                currentMedia.withLock { $0.pendingSets -= 1 }
            }
            // This may be a handler on libvlc's thread (`media = nil` from `EndReached`): the
            // previous media's last reference goes to the release queue.
            ServiceQueues.releaseLater(consume previous)
        }
    }

    /// Starts or resumes playback. After the end of the media (or an error) it plays the
    /// media again from the start, where raw libvlc 3 silently ignores `play`.
    ///
    /// A play that starts the media (rather than resuming it) begins a new playback (see
    /// `playbacks`).
    public func play() {
        perform(playCall)
    }

    /// Pauses playback (no effect when the media cannot pause).
    public func pause() {
        perform { $0.setPause(true) }
    }

    /// Resumes paused playback.
    public func resume() {
        perform { $0.setPause(false) }
    }

    /// Stops playback; libvlc sends `Stopped` unless the player was already stopped. A playback
    /// that was running ends as `stopped`.
    public func stop() {
        perform(stopCall)
    }

    /// `play()`, returning once libvlc has started opening the media.
    public func playAndWait() async {
        await performAndWait(playCall)
    }

    /// `stop()`, returning once the input thread has been stopped and joined.
    public func stopAndWait() async {
        await performAndWait(stopCall)
    }

    /// Waits until every control call made before has been carried out.
    ///
    /// The caller's reference keeps the player alive until the wait returns, behind a `stop`
    /// that may take long: a player dropped meanwhile is not torn down, and
    /// `VLCLibrary.waitForPendingTeardowns` does not wait for its calls. A watchdog that
    /// probes the queue should use `afterPendingControls(_:)`.
    public func waitForPendingControls() async {
        await performAndWait(PlayerCall<Void> { _ in })
    }

    /// Calls `body` on a global queue once every control call made before has been carried
    /// out (never, while one of them hangs in libvlc). Unlike `waitForPendingControls()`, it
    /// does not keep the player alive: the last reference may go meanwhile, and the player's
    /// teardown then runs after those calls (`body` may run during or after it).
    public func afterPendingControls(_ body: @escaping @Sendable () -> Void) {
        control.queue.async { DispatchQueue.global().async(execute: body) }
    }

    private var playCall: PlayerCall<Void> {
        let driver = driver
        return PlayerCall { _ = driver.play($0) }
    }

    private var stopCall: PlayerCall<Void> {
        let driver = driver
        return PlayerCall { driver.stop($0) }
    }

    /// Queues `call`; when list players play with this player, it waits first until none of
    /// them is moving to its next item (rule 16, `AdvanceGate`).
    func perform<Result>(_ call: PlayerCall<Result>) {
        control.perform(gated(call))
    }

    /// Queues `call` and returns its result once it has run, after the same wait.
    func performAndWait<Result>(_ call: PlayerCall<Result>) async -> Result {
        await control.performAndWait(gated(call))
    }

    /// `perform` for a call defined where it is made.
    func perform(_ operation: @escaping @Sendable (NativeMediaPlayer) -> Void) {
        perform(PlayerCall(operation))
    }

    private func gated<Result>(_ call: PlayerCall<Result>) -> PlayerCall<Result> {
        let listAdvances = listAdvances
        return PlayerCall { player in
            listAdvances.waitUntilSettled()
            return call.body(player)
        }
    }

    // MARK: State

    // The state, time, position, length and the flags come from the player's own events
    // (see PlaybackCache): libvlc's getters take locks it holds while it sends events.

    /// The player's state, as of its last state event (`Opening`, `Playing`, `Paused`,
    /// `Stopped`, `EndReached`, `EncounteredError`, `MediaChanged`).
    public var state: PlaybackState { cache.current.state }

    /// Whether the player is playing (`state == .playing`, as libvlc's `is_playing`).
    public var isPlaying: Bool { state == .playing }

    /// Whether the current media can seek.
    public var isSeekable: Bool { cache.current.isSeekable }

    /// Whether the current media can pause.
    public var isPausable: Bool { cache.current.isPausable }

    /// The playback time in milliseconds, as of the last `TimeChanged` (-1 without input).
    /// Setting it seeks (queued). libvlc sends `TimeChanged` with the new time as the call
    /// runs, before its input has seeked (when the length is known): the echo is no sign that
    /// the seek landed, and the input may report the old time once after it. While paused,
    /// libvlc sends no `TimeChanged` at all until playing resumes.
    public var time: Int64 {
        get { cache.current.time }
        set { perform { $0.setTime(newValue) } }
    }

    /// The position, 0 to 1, as of the last `PositionChanged` (-1 without input). Setting it
    /// seeks (queued).
    public var position: Float {
        get { cache.current.position }
        set { perform { $0.setPosition(newValue) } }
    }

    /// The values the player's last events reported.
    var cachedValues: PlaybackCache.Values { cache.current }

    /// The length of the current media in milliseconds (-1 while unknown).
    public var length: Int64 { cache.current.length }

    /// The volume in percent, 0 to 200 (-1 when there is no audio output yet). Setting it is
    /// queued.
    public var volume: Int {
        get { native.current.map { Int($0.volume) } ?? -1 }
        set { perform(setVolumeCall(newValue)) }
    }

    /// Whether audio is muted. Setting it is queued.
    public var isMuted: Bool {
        get { native.current.map { $0.mute == 1 } ?? false }
        set { perform(setMutedCall(newValue)) }
    }
}

/// One control call of a player (see `ControlCall`).
typealias PlayerCall<Result: Sendable> = ControlCall<NativeMediaPlayer, Result>

/// The receiver of a player's listeners: the workarounds that follow the player's events learn
/// of each first, inside libvlc's callback (rules 1, 2, 15, 16, 19), the playbacks tag it, then
/// it is delivered, or detoured when libvlc sent it with a lock held (rule 3).
final class PlayerListener: NativeEventReceiver {
    let handler: EventsHandler<VLCMediaPlayer>
    private let cache: PlaybackCache
    private let titleReads: TitleReadGate
    private let listAdvances: PlayerAdvanceGates
    private let tracker: PlaybackTracker
    private let detour: LockedSendDetour

    init(
        handler: EventsHandler<VLCMediaPlayer>, cache: PlaybackCache, titleReads: TitleReadGate,
        listAdvances: PlayerAdvanceGates, tracker: PlaybackTracker, detour: LockedSendDetour
    ) {
        self.handler = handler
        self.cache = cache
        self.titleReads = titleReads
        self.listAdvances = listAdvances
        self.tracker = tracker
        self.detour = detour
    }

    func receive(_ event: consuming MediaPlayerEvent, sender: UInt) {
        let event = event
        _ = titleReads.inCallback(event)
        _ = listAdvances.inCallback(event)
        _ = cache.inCallback(event)
        _ = SnapshotCapture().inCallback(event)
        let delivery = PlayerDelivery(event: event, update: tracker.record(event))
        if !detour.inCallback(LockedSendDetour.Request(delivery: delivery, sender: sender, handler: handler)) {
            handler.handle(delivery, sender: sender) { player, delivery in player.publish(delivery) }
        }
        tracker.endDelivered(delivery.update.endedBefore)
        tracker.endDelivered(delivery.update.ended)
        // The wrappers an event carries were made for it here; their last reference must
        // not go on this libvlc thread.
        if event.holdsWrappers { ServiceQueues.releaseLater(consume event) }
    }
}

private let playerCallback: NativeCallback = { NativeEvents.forward($0, $1, to: PlayerListener.self) }
