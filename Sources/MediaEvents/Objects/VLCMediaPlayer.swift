import CLibVLC
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
    let native: NativeSlot
    /// The library the player was created with.
    public let library: VLCLibrary
    /// The subscribers of this player.
    public let eventHub = EventHub<MediaPlayerEvent>()
    /// How this player's events are dispatched.
    public let configuration: any EventsConfiguring
    /// Carries out blocking libvlc calls in order, away from libvlc's threads.
    let control: ControlQueue
    private let currentMedia = Protected(CurrentMedia())
    let cache: PlaybackCache
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
        let create: @Sendable () -> OpaquePointer = {
            guard let player = libvlc_media_player_new(instance.raw) else {
                preconditionFailure("libvlc_media_player_new failed: \(VLCError.lastMessage(or: "out of memory"))")
            }
            // Before any play: the audio callbacks are read when an input starts.
            if pacedAudio { PacedAudioOutput.install(on: player) }
            return player
        }
        control =
            DeliveryContext.isInDelivery || QueueIdentity.isOnSyncDeliveryQueue
            ? ControlQueue(for: "player", creating: create) : ControlQueue(for: "player", native: create())
        native = control.native
        self.library = library
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        recordsFailureCauses = options.recordsFailureCauses
        let tracker = PlaybackTracker(
            causes: options.recordsFailureCauses ? InputTracker(router: library.logs.router) : nil)
        tracker.stallTimeout = options.stallTimeout
        if options.recordsFailureCauses { library.logs.startCapturing() }
        cache = PlaybackCache(configuration: self.configuration, playbacks: tracker)
        playbacks = PlaybackEventSource()
        driver = PlaybackDriver(tracker: tracker)
        let handler = EventsHandler(object: self, configuration: self.configuration, companion: cache)
        driver.bind(handler)
        let table: @Sendable (OpaquePointer) -> NativeEventTable = { player in
            NativeEventTable(
                manager: libvlc_media_player_event_manager(player),
                types: MediaPlayerEvent.Kind.allCases.map(\.nativeType), callback: playerCallback, handler: handler)
        }
        // Attached at once (as every source is), or right after the native player is made,
        // before any call: the cache behind the getters must follow the player from the start.
        if let player = native.raw {
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
        let table = eventHub.finish()
        // A playback still running ends here, for the player's subscribers, as `quit`.
        let quit = driver.tracker.tearDown().map { PlaybackEvent($0.stamp, .ended($0.summary)) }
        _ = playbacks.eventHub.finish(lastEvent: quit)
        if recordsFailureCauses { library.logs.stopCapturing() }
        let driver = driver
        // This may run on any thread, a libvlc one included: releasing a player stops it,
        // which joins the input thread. The control queue is never a libvlc thread.
        control.tearDown { player in
            table?.detachAll()
            driver.tearDown()
            libvlc_media_player_release(player)
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
                let mine = current.wrapper.map { UInt(bitPattern: UnsafeRawPointer($0.native.raw)) } ?? 0
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
                driver.setMedia(player, newValue?.native.raw)
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
        let driver = driver
        perform { driver.play($0) }
    }

    /// Pauses playback (no effect when the media cannot pause).
    public func pause() {
        perform { libvlc_media_player_set_pause($0, 1) }
    }

    /// Resumes paused playback.
    public func resume() {
        perform { libvlc_media_player_set_pause($0, 0) }
    }

    /// Stops playback; libvlc sends `Stopped` unless the player was already stopped. A playback
    /// that was running ends as `stopped`.
    public func stop() {
        let driver = driver
        perform { driver.stop($0) }
    }

    /// `play()`, returning once libvlc has started opening the media.
    public func playAndWait() async {
        let driver = driver
        await performAndWait { driver.play($0) }
    }

    /// `stop()`, returning once the input thread has been stopped and joined.
    public func stopAndWait() async {
        let driver = driver
        await performAndWait { driver.stop($0) }
    }

    /// Waits until every control call made before has been carried out.
    public func waitForPendingControls() async {
        await performAndWait { _ in }
    }

    /// Queues `operation`; when list players play with this player, it waits first until
    /// none of them is moving to its next item (see `AdvanceGate`).
    func perform(_ operation: @escaping @Sendable (OpaquePointer) -> Void) {
        let cache = cache
        control.perform { player in
            cache.waitForListAdvances()
            operation(player)
        }
    }

    func performAndWait(_ operation: @escaping @Sendable (OpaquePointer) -> Void) async {
        let cache = cache
        await control.performAndWait { player in
            cache.waitForListAdvances()
            operation(player)
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
    /// Setting it seeks (queued).
    public var time: Int64 {
        get { cache.current.time }
        set { perform { libvlc_media_player_set_time($0, newValue) } }
    }

    /// The position, 0 to 1, as of the last `PositionChanged` (-1 without input). Setting it
    /// seeks (queued).
    public var position: Float {
        get { cache.current.position }
        set { perform { libvlc_media_player_set_position($0, newValue) } }
    }

    /// Tells `gate` of every `EndReached`, inside libvlc's callback.
    func addEndObserver(_ gate: AdvanceGate) { cache.addEndObserver(gate) }

    func removeEndObserver(_ gate: AdvanceGate) { cache.removeEndObserver(gate) }

    /// On the control queue: waits until no list player of this player is moving on.
    func waitForListAdvances() { cache.waitForListAdvances() }

    /// The values the player's last events reported.
    var cachedValues: PlaybackCache.Values { cache.current }
    var titleReads: TitleReadGate { cache.titleReads }

    /// The length of the current media in milliseconds (-1 while unknown).
    public var length: Int64 { cache.current.length }

    /// The volume in percent, 0 to 200 (-1 when there is no audio output yet). Setting it is
    /// queued.
    public var volume: Int {
        get { native.raw.map { Int(libvlc_audio_get_volume($0)) } ?? -1 }
        set { perform { libvlc_audio_set_volume($0, Int32(newValue)) } }
    }

    /// Whether audio is muted. Setting it is queued.
    public var isMuted: Bool {
        get { native.raw.map { libvlc_audio_get_mute($0) == 1 } ?? false }
        set { perform { libvlc_audio_set_mute($0, newValue ? 1 : 0) } }
    }
}

private let playerCallback: libvlc_callback_t = { event, userData in
    guard let event, let userData else { return }
    // Borrowed without a retain: the native event table holds the handler until detached.
    Unmanaged<EventsHandler<VLCMediaPlayer>>.fromOpaque(userData)._withUnsafeGuaranteedRef { handler in
        guard let typed = MediaPlayerEvent(native: event.pointee) else { return }
        let cache = unsafeDowncast(handler.companion.unsafelyUnwrapped, to: PlaybackCache.self)
        cache.record(typed)
        let delivery = PlayerDelivery(event: typed, update: cache.playbacks.record(typed))
        let sender = UInt(bitPattern: event.pointee.p_obj)
        if !cache.detour.take(delivery, sender, handler) {
            handler.handle(delivery, sender: sender) { player, delivery in player.publish(delivery) }
        }
        // The wrappers an event carries were made for it here; their last reference must
        // not go on this libvlc thread.
        if typed.holdsWrappers { ServiceQueues.releaseLater(consume typed) }
    }
}
