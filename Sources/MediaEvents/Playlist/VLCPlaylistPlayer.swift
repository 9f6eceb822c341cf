import Dispatch

/// A playlist played through one `VLCMediaPlayer`, owned in Swift.
///
/// Entries have ids that are never reused; they can be added, inserted, removed, moved and
/// cleared at any time. `next()` and `previous()` say whether they changed anything. A
/// playlist file or a directory is played like any entry, and replaced by its entries (which
/// name it as their `parent`) once libvlc has read them. While an entry plays, the next one is
/// parsed, so that it starts as soon as libvlc allows.
///
/// Every playback of the player belongs to an entry: `player.playbacks` tags each event with
/// its playback and entry, and each playback ends once (`ended`, `failed`, …), after which the
/// playlist goes on by itself: to the next entry after an end or a failure (after a pause of
/// `failureBackoff` once every entry has failed in a row), to the same entry with `loop ==
/// .entry`, to the first after the last with `loop == .list`.
///
/// It never uses libvlc's list player (`VLCMediaListPlayer`), whose `next` can deadlock against
/// its own thread. Every call is safe from any thread and any handler in every configuration:
/// the decision is made at once under a lock (so `next()` can say whether there was a next
/// entry), and what libvlc must do is queued on the player's control queue, where a start
/// overtaken by a later call is dropped. The playlist's events go out from there too, after
/// the libvlc calls of their transition: a call returns before its events are delivered.
public final class VLCPlaylistPlayer: VLCEventSource {
    /// The player that plays the entries. Its control calls work as usual (`pause`, `volume`,
    /// `time` …); its `media`, `play()` and `stop()` are the playlist's to call.
    public var player: VLCMediaPlayer { storedPlayer.unsafelyUnwrapped }
    /// `player`: set at the start of `init`, emptied only by `deinit` (when no other reference
    /// is left to read it), so that the player goes before the playlist's subscriptions end.
    nonisolated(unsafe) private var storedPlayer: VLCMediaPlayer?
    /// The subscribers of this playlist.
    public let eventHub = EventHub<PlaylistEvent>()
    /// How this playlist's events are dispatched: the player's configuration.
    public var configuration: any EventsConfiguring { player.configuration }
    /// How long to wait before starting again once every entry has failed in a row.
    public let failureBackoff: Duration

    private let state: Protected<PlaylistState<VLCMedia>>
    /// Delivers the playlist's events; set once, at the end of `init`.
    private let handler = Protected<EventsHandler<VLCPlaylistPlayer>?>(nil)

    /// Creates an empty playlist and its player.
    ///
    /// - Parameters:
    ///   - library: the libvlc instance.
    ///   - configuration: how the playlist's and its player's events are dispatched; `nil`
    ///     uses `VLCLibrary.sharedEventsConfiguration` as it is now.
    ///   - options: the player's options; by default failures carry libvlc's cause.
    ///   - failureBackoff: how long to wait before starting again once every entry has
    ///     failed in a row.
    ///   - maximumEntries: how many entries the playlist holds at most; entries beyond are
    ///     not added (also those a playlist file expands to).
    ///   - maximumDepth: how deep playlists and directories inside playlists and directories
    ///     are expanded.
    public init(
        library: VLCLibrary, configuration: (any EventsConfiguring)? = nil,
        options: PlayerOptions = PlayerOptions(recordsFailureCauses: true),
        failureBackoff: Duration = .seconds(1), maximumEntries: Int = 10_000, maximumDepth: Int = 8
    ) {
        storedPlayer = VLCMediaPlayer(library: library, configuration: configuration, options: options)
        self.failureBackoff = failureBackoff
        state = Protected(PlaylistState(maximumEntries: maximumEntries, maximumDepth: maximumDepth))
        handler.withLock { $0 = EventsHandler(object: self, configuration: player.configuration) }
        // Told of every end on the thread that decided it (libvlc's, inside its callback, or
        // the control queue): the playlist only decides, and queues what follows.
        // The tag is the generation of the start that began the playback: the end of one that
        // a later call (a stop, a play) overtook moves nothing.
        player.driver.tracker.addEndObserver { [weak self] summary, generation in
            guard let self, let entry = summary.entry else { return }
            if case .expanded(let count) = summary.outcome {
                self.expandWhenRead(entry, count: count)
            } else {
                self.apply(self.state.withLock { $0.ended(entry, summary.outcome, started: generation) })
            }
        }
    }

    deinit {
        // The player goes first: if this was its last reference, its teardown (which stops it)
        // is counted before the playlist's subscriptions end, so that a thread one of their
        // completions wakes finds it pending in `VLCLibrary.waitForPendingTeardowns`.
        storedPlayer = nil
        _ = eventHub.finish()
    }

    // MARK: Reading

    /// The entries, in order.
    public var entries: [PlaylistEntry] { state.withLock { $0.entries } }

    /// The entry that plays or will play (`play()`); `nil` before any and after the end.
    public var currentEntry: PlaylistEntry? { state.withLock { $0.currentItem?.entry } }

    /// Whether the playlist plays: started, and neither stopped nor at its end (a paused
    /// player still plays the playlist).
    public var isActive: Bool { state.withLock { $0.isActive } }

    /// How the playlist goes on after an entry ends.
    public var loop: PlaylistLoop {
        get { state.withLock { $0.loop } }
        set { state.withLock { $0.loop = newValue } }
    }

    // MARK: Edits

    /// Adds `media` at the end; returns the new entries' ids (fewer when the playlist is full).
    @discardableResult
    public func append(_ media: [VLCMedia]) -> [PlaylistEntryID] {
        insert(media, at: nil)
    }

    /// Adds `media` before the entry at `index` (the end when `nil` or past it); returns the
    /// new entries' ids.
    @discardableResult
    public func insert(_ media: [VLCMedia], at index: Int?) -> [PlaylistEntryID] {
        let items = media.map { (media: $0, mrl: $0.mrl) }
        let (added, effects) = state.withLock { $0.insert(items, at: index) }
        apply(effects)
        return added.map(\.id)
    }

    /// Removes the entry `id`. The current entry gives its place to the next one, which starts
    /// when the playlist plays (the playback ends as `skipped`), or the playlist stops when it
    /// was the last. Returns `false` when there is no such entry.
    @discardableResult
    public func remove(_ id: PlaylistEntryID) -> Bool {
        guard let effects = state.withLock({ $0.remove(id) }) else { return false }
        apply(effects)
        return true
    }

    /// Moves the entry `id` to `index` among the other entries (0 first; past the end: last).
    /// Returns `false` when there is no such entry.
    @discardableResult
    public func move(_ id: PlaylistEntryID, to index: Int) -> Bool {
        guard let effects = state.withLock({ $0.move(id, to: index) }) else { return false }
        apply(effects)
        return true
    }

    /// Removes every entry; the player stops.
    public func clear() {
        apply(state.withLock { $0.clear() })
    }

    // MARK: Control

    /// Starts the current entry (the first when there is none), or resumes a paused player.
    public func play() {
        apply(state.withLock { $0.play() })
    }

    /// Starts the entry `id` (a running playback ends as `skipped`). Returns `false` when
    /// there is no such entry.
    @discardableResult
    public func play(_ id: PlaylistEntryID) -> Bool {
        guard let effects = state.withLock({ $0.play(id) }) else { return false }
        apply(effects)
        return true
    }

    /// Moves to the next entry (the first after the last with `loop == .list`) and starts it
    /// when the playlist plays. Returns `false`, changing nothing, when there is none.
    @discardableResult
    public func next() -> Bool {
        guard let effects = state.withLock({ $0.next() }) else { return false }
        apply(effects)
        return true
    }

    /// Moves to the previous entry (the last before the first with `loop == .list`). Returns
    /// `false`, changing nothing, when there is none.
    @discardableResult
    public func previous() -> Bool {
        guard let effects = state.withLock({ $0.previous() }) else { return false }
        apply(effects)
        return true
    }

    /// Stops the player; the current entry stays current.
    public func stop() {
        apply(state.withLock { $0.stop() })
    }

    /// Pauses the player.
    public func pause() { player.pause() }

    /// Resumes the player.
    public func resume() { player.resume() }

    /// Waits until every call made before has been carried out by the player; keeps the
    /// playlist alive meanwhile (`player.afterPendingControls(_:)` does not).
    public func waitForPendingControls() async {
        await player.waitForPendingControls()
    }

    // MARK: Effects

    /// Carries out a transition's effects, outside the lock: libvlc calls and the events, in
    /// that order, on the player's control queue.
    ///
    /// The events go out from the control queue, never from the caller's thread: a call made
    /// in a handler running on a queue that the playlist's synchronous queue targets would
    /// otherwise `sync` onto its own queue. They follow what libvlc did for the transition, so
    /// the `ended` (`skipped`) of the playback a `next()` replaces comes before the playlist's
    /// `currentEntryChanged`, as the `ended` of a playback that ended by itself does.
    private func apply(_ effects: PlaylistState<VLCMedia>.Effects) {
        let publish = publisher(effects.events)
        if let start = effects.start, !start.afterBackoff {
            self.start(start.item, start.generation, then: publish)
            return
        }
        if let start = effects.start {
            player.control.perform { _ in publish() }
            let nanoseconds =
                Int(failureBackoff.components.seconds) * 1_000_000_000
                + Int(failureBackoff.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
                self?.start(start.item, start.generation, then: {})
            }
        } else if effects.stop {
            let driver = player.driver
            let state = state
            player.perform { player in
                // A start requested after this stop (a newer generation) is not undone.
                if !state.withLock({ $0.isActive }) { driver.stop(player) }
                publish()
            }
        } else {
            player.control.perform { _ in publish() }
            if effects.resume { player.resume() }
        }
    }

    /// Delivers `events` to the playlist's subscribers when called.
    private func publisher(_ events: [PlaylistEvent]) -> @Sendable () -> Void {
        guard !events.isEmpty, let handler = handler.withLock({ $0 }) else { return {} }
        return {
            for event in events {
                handler.handleEvent(event) { playlist, event in playlist.eventHub.publish(event) }
            }
        }
    }

    /// Queues the start of `item` on the player's control queue, dropped there if a later
    /// transition overtook it, with `publish` between the media change (which ends the
    /// running playback) and the start.
    private func start(
        _ item: PlaylistState<VLCMedia>.Item, _ generation: UInt64, then publish: @escaping @Sendable () -> Void
    ) {
        let driver = player.driver
        let state = state
        let next = nextToPrepare(after: item.entry.id)
        player.perform { player in
            guard state.withLock({ $0.isCurrent(generation) }) else { return publish() }
            driver.tracker.setNextEntry(item.entry.id, tag: generation)
            driver.setMedia(player, item.media.native)
            publish()
            driver.play(player)
        }
        if let next { prepare(next) }
    }

    // MARK: Expansion and preparation

    /// The entry `parent` played as a playlist or a directory and yielded `count` sub-items:
    /// once they are read (on the control queue, where reading them waits for no lock a
    /// handler holds), it is replaced by them. They are the last `count` of the media's
    /// sub-items: libvlc adds them again each time the media is read (a parse made while the
    /// entry before it played, then its playback).
    private func expandWhenRead(_ parent: PlaylistEntryID, count: Int) {
        guard let item = state.withLock({ state in state.index(of: parent).map { state.items[$0] } }) else { return }
        let state = state
        player.control.perform { [weak self] _ in
            let children = item.media.subItems.suffix(count).map { (media: $0, mrl: $0.mrl) }
            guard let self else { return }
            self.apply(state.withLock { $0.expand(parent, into: children) })
        }
    }

    private func nextToPrepare(after id: PlaylistEntryID) -> VLCMedia? {
        state.withLock { state in
            guard let index = state.index(of: id), index + 1 < state.items.count else { return nil }
            return state.items[index + 1].media
        }
    }

    /// Parses `media` (local sources only, at most 5 s) so that it opens faster when its turn
    /// comes; a failure changes nothing (the playback will report it). The parse is pending
    /// work from here (before its task starts) until it returns.
    private func prepare(_ media: VLCMedia) {
        guard media.parsedStatus == .skipped || media.parsedStatus.rawValue == 0 else { return }
        ServiceQueues.pendingTeardowns.enter(.parse)
        Task.detached(priority: .utility) {
            defer { ServiceQueues.pendingTeardowns.leave(.parse) }
            _ = try? await media.parse(options: .local, timeout: .seconds(5))
        }
    }
}
