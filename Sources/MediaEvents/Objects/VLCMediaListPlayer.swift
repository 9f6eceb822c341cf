import Dispatch

/// How a list player goes on after an item (`libvlc_playback_mode_t`).
public enum PlaybackMode: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// Plays the list once, in order.
    case `default` = 0
    /// Starts again at the first item after the last one.
    case loop = 1
    /// Plays the current item again and again.
    case `repeat` = 2

    /// The case's name: `default`, `loop` or `repeat`.
    public var description: String {
        switch self {
        case .default: "default"
        case .loop: "loop"
        case .repeat: "repeat"
        }
    }
}

/// Plays the items of a `VLCMediaList` one after another with a `VLCMediaPlayer`.
///
/// libvlc sends the list player's events with the list player's locks held, so raw libvlc
/// deadlocks when a listener changes the list player's state. Here every control call
/// (`play`, `pause`, `stop`, `next`, `previous`, playing an index, setting the list or the
/// mode) is queued on the list player's own control queue and carried out in call order,
/// so it is safe from any thread, this list player's handlers included. The list player's
/// calls and those of its `mediaPlayer` run on one queue, in the order they were made (libvlc
/// takes the two objects' locks in opposite orders). The `…AndWait` variants return once
/// libvlc has carried the call out.
///
/// The player that plays the items is `mediaPlayer`; observe it for playback events.
///
/// `next()`, `previous()`, `play(at:)` and `play(_:)` stop the item that plays before libvlc
/// moves on (libvlc 3.0's list player deadlocks when an item ends during the move): the player
/// sends `Stopped` before its `MediaChanged`, and that playback ends as `skipped`.
///
/// One limit of libvlc 3.0's list player remains (<doc:ThreadingModel>, "Known limits"): an
/// edit of the list made as an item ends races libvlc's read of it. Edit the list while the
/// list player is stopped or while an item plays.
public final class VLCMediaListPlayer: VLCEventSource {
    /// The native list player: created at once, or by the first block of its control queue
    /// when made inside a handler (see `init(mediaPlayer:configuration:)`).
    let native: NativeSlot<NativeMediaListPlayer>
    /// The subscribers of this list player.
    public let eventHub = EventHub<MediaListPlayerEvent>()
    /// How this list player's events are dispatched.
    public let configuration: any EventsConfiguring
    /// The player that plays the items; the list player sets its media.
    public let mediaPlayer: VLCMediaPlayer
    let control: ControlQueue<NativeMediaListPlayer>
    /// Whether libvlc's own thread is moving to the next item: the calls wait for it (rule 16).
    private let advance = AdvanceGate()
    /// Whether libvlc's list player has a list yet: `play(at:)` and `play(_:)` need one (rule 17).
    private let listGuard = ListPlayerListGuard()

    private struct Settings {
        var list: VLCMediaList?
        var mode: PlaybackMode = .default
    }

    private let settings = Protected(Settings())

    /// Creates a list player with a new `VLCMediaPlayer`.
    ///
    /// - Parameters:
    ///   - library: the libvlc instance.
    ///   - configuration: how events of the list player and of its new player are
    ///     dispatched; `nil` uses `VLCLibrary.sharedEventsConfiguration` as it is now.
    public convenience init(library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        let configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        self.init(
            mediaPlayer: VLCMediaPlayer(library: library, configuration: configuration),
            configuration: configuration)
    }

    /// Creates a list player that plays its items with `mediaPlayer`.
    ///
    /// Do not control `mediaPlayer` directly while the list player plays: the list player
    /// sets its media and starts it for each item.
    ///
    /// Made inside a handler (or on a queue a synchronous configuration delivers to), the
    /// native list player is created on the control queue, before its first call: libvlc makes
    /// a player of its own for it, which waits as `VLCMediaPlayer.init` explains.
    public init(mediaPlayer: VLCMediaPlayer, configuration: (any EventsConfiguring)? = nil) {
        let instance = mediaPlayer.library.native
        let create: @Sendable () -> NativeMediaListPlayer = {
            guard let listPlayer = NativeMediaListPlayer.new(in: instance) else {
                preconditionFailure(
                    "libvlc_media_list_player_new failed: \(VLCError.lastMessage(or: "out of memory"))")
            }
            return listPlayer
        }
        self.mediaPlayer = mediaPlayer
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        // One order for the calls of the list player and of its player: libvlc's list player
        // calls into the player holding its own locks (`set_pause` holds them while it waits
        // for the player's input lock), while the player's `stop` holds that input lock and
        // waits for the input thread's running callback, whose EndReached listener (the list
        // player's) waits for those locks. On two queues a `pause` of one and a `stop` of the
        // other deadlock (seen in the matrix under coverage instrumentation); on one they
        // cannot overlap.
        // Targeting the player's queue, this one runs after the player's own creation.
        let target = mediaPlayer.control.queue
        control =
            DeferredFromHandlers().around(create).map { ControlQueue(for: "listplayer", native: $0, target: target) }
            ?? ControlQueue(for: "listplayer", creating: create, target: target)
        native = control.native
        // Queued, first of the list player's calls: it attaches to the player's event
        // manager, whose lock a thread sending the player's events holds, maybe while it
        // waits for the queue this initializer runs on.
        let player = mediaPlayer.native
        control.perform { $0.setMediaPlayer(player.current.unsafelyUnwrapped) }
        mediaPlayer.listAdvances.add(advance)
        let listener = ListPlayerListener(
            handler: EventsHandler(object: self, configuration: self.configuration), hook: advance)
        let table: @Sendable (NativeMediaListPlayer) -> NativeEventTable = { listPlayer in
            NativeEventTable(
                manager: listPlayer.eventManager, types: MediaListPlayerEvent.Kind.allCases.map(\.nativeType),
                callback: listPlayerCallback, receiver: listener)
        }
        if let listPlayer = native.current {
            eventHub.bind(table(listPlayer), attachNow: true)
        } else {
            let eventHub = eventHub
            control.perform { listPlayer in _ = eventHub.bindLate(table(listPlayer)) }
        }
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            mediaPlayer.listAdvances.remove(advance)
            let table = eventHub.finish()
            // Releasing joins the list player's thread, which may be the thread running this
            // deinit's caller; the control queue never is.
            control.tearDown { listPlayer in
                table?.detachAll()
                listPlayer.release()
            }
        }
    }

    // MARK: Settings

    /// The list to play. Setting it is queued like the other control calls.
    public var mediaList: VLCMediaList? {
        get { settings.withLock { $0.list } }
        set {
            let previous = settings.withLock { settings in
                defer { settings.list = newValue }
                return settings.list
            }
            let listGuard = listGuard
            guard let newValue else {
                // libvlc 3 cannot unset the list; an empty one stands in for it.
                let empty = NativeMediaList.new(in: mediaPlayer.library.native)
                perform { listPlayer in
                    guard let empty else { return }
                    listPlayer.setMediaList(empty)
                    empty.release()
                    listGuard.listSet()
                }
                _ = previous
                return
            }
            perform { listPlayer in
                listPlayer.setMediaList(newValue.native)
                listGuard.listSet()
            }
            // Dropped outside the lock: its deinit may run subscription completions.
            _ = previous
        }
    }

    /// How the list player goes on after an item. Setting it is queued.
    public var playbackMode: PlaybackMode {
        get { settings.withLock { $0.mode } }
        set {
            settings.withLock { $0.mode = newValue }
            perform { $0.setPlaybackMode(newValue.rawValue) }
        }
    }

    // MARK: Control

    /// Plays the list from its current item (the first one at first).
    public func play() { perform(playCall) }

    /// Pauses playback.
    public func pause() { perform { $0.setPause(true) } }

    /// Resumes paused playback.
    public func resume() { perform { $0.setPause(false) } }

    /// Stops playback; libvlc sends `Stopped`.
    public func stop() { perform(stopCall) }

    /// Plays the next item; at the end of the list (in the default mode) libvlc sends
    /// `Played` instead.
    public func next() {
        let stopInput = inputStopper
        perform { listPlayer in
            stopInput()
            listPlayer.next()
        }
    }

    /// Plays the previous item, if there is one.
    public func previous() {
        let stopInput = inputStopper
        perform { listPlayer in
            stopInput()
            listPlayer.previous()
        }
    }

    /// Plays the item at `index`; an index out of range changes nothing, and so does a call
    /// made before the list player has a list (in call order).
    public func play(at index: Int) {
        // In call order: the list this call is made for, with every edit made before it.
        guard index >= 0, let list = mediaList, index < list.count else { return }
        let stopInput = inputStopper
        performOnList { listPlayer in
            // libvlc 3's play_item_at_index does not check the index: past the end it keeps
            // an invalid current item, plays the player's media again and sends NextItemSet
            // for it, then Played. The native list has every edit made before this call
            // (`perform` waits for them); one made since on another thread may have shortened it.
            guard index < Int(list.native.count) else { return }
            stopInput()
            listPlayer.play(at: Int32(index))
        }
    }

    /// Plays `media`, which must be an item of the list; otherwise nothing changes (nor
    /// before the list player has a list).
    public func play(_ media: VLCMedia) {
        let stopInput = inputStopper
        performOnList { listPlayer in
            stopInput()
            listPlayer.play(media.native)
        }
    }

    /// `play()`, returning once libvlc has started the first item.
    public func playAndWait() async {
        await performAndWait(playCall)
    }

    /// `stop()`, returning once playback has stopped.
    public func stopAndWait() async {
        await performAndWait(stopCall)
    }

    /// Waits until every control call made before has been carried out.
    public func waitForPendingControls() async {
        await performAndWait(ListPlayerCall<Void> { _ in })
    }

    /// Run on the control queue just before libvlc moves to another item: stops the player's
    /// input, so that no item ends during the move (rule 16).
    private var inputStopper: @Sendable () -> Void {
        let advance = advance
        let driver = mediaPlayer.driver
        let player = mediaPlayer.native
        return {
            guard let player = player.current else { return }
            advance.stopInputBeforeMove { driver.stopForMove(player) }
        }
    }

    private var playCall: ListPlayerCall<Void> { ListPlayerCall { $0.play() } }

    private var stopCall: ListPlayerCall<Void> { ListPlayerCall { $0.stop() } }

    // MARK: State

    /// The state of the item being played: `mediaPlayer`'s state, which libvlc's own
    /// `get_state` answers too. Served from the player's events: libvlc's getter takes the
    /// list player's and the player's locks, which libvlc holds while it starts an item.
    public var state: PlaybackState { mediaPlayer.state }

    /// Whether an item is playing.
    public var isPlaying: Bool { mediaPlayer.isPlaying }

    private func perform<Result>(_ call: ListPlayerCall<Result>) {
        control.perform(gated(call))
    }

    private func perform(_ operation: @escaping @Sendable (NativeMediaListPlayer) -> Void) {
        perform(ListPlayerCall(operation))
    }

    private func performAndWait<Result>(_ call: ListPlayerCall<Result>) async -> Result {
        await control.performAndWait(gated(call))
    }

    /// `call` once libvlc's list has every edit made before it and libvlc's thread is not
    /// moving to the next item (rule 16).
    private func gated<Result>(_ call: ListPlayerCall<Result>) -> ListPlayerCall<Result> {
        let list = mediaList
        let advance = advance
        // libvlc reads the native list: let it see every edit made before this call.
        return ListPlayerCall { listPlayer in
            list?.waitForPendingEdits()
            // The advance gate waits, never skips a call.
            return advance.around(.listPlayer(hasList: list != nil)) { call.body(listPlayer) }!
        }
    }

    /// `perform`, skipped when libvlc's list player has no list yet (rule 17).
    private func performOnList(_ operation: @escaping @Sendable (NativeMediaListPlayer) -> Void) {
        let listGuard = listGuard
        perform { listPlayer in _ = listGuard.around { operation(listPlayer) } }
    }
}

/// One control call of a list player (see `ControlCall`).
typealias ListPlayerCall<Result: Sendable> = ControlCall<NativeMediaListPlayer, Result>

/// The receiver of a list player's listeners: its advance gate hears of each event first.
typealias ListPlayerListener = SourceListener<VLCMediaListPlayer, AdvanceGate>

private let listPlayerCallback: NativeCallback = { NativeEvents.forward($0, $1, to: ListPlayerListener.self) }
