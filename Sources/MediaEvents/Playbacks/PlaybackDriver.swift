import Dispatch

/// What one delivery of a player carries: a player event, or none (a playback's start, stall
/// or end reported by a control call), and what it did to the playbacks.
struct PlayerDelivery: Sendable {
    var event: MediaPlayerEvent?
    var update = PlaybackTracker.Update()
    var stalled: (stamp: PlaybackTracker.Stamp, reason: StallReason)?

    init(event: MediaPlayerEvent?, update: PlaybackTracker.Update = PlaybackTracker.Update()) {
        self.event = event
        self.update = update
    }
}

/// The control-queue side of a player's playbacks: the calls that start and end them, and the
/// listener of the playing media's events. Every method runs on the player's control queue,
/// in the order the calls were made.
final class PlaybackDriver: Sendable {
    let tracker: PlaybackTracker
    /// The player's handler: playback events reported here go the way of its events. Set
    /// once, in the player's `init`, before any control call.
    private let handler = Protected<EventsHandler<VLCMediaPlayer>?>(nil)
    /// The listeners on the playing media's events, and a reference of that media (its event
    /// manager goes with it); only touched on the control queue.
    private let mediaTable = Protected<(media: NativeMedia, table: NativeEventTable)?>(nil)

    init(tracker: PlaybackTracker) {
        self.tracker = tracker
    }

    func bind(_ handler: EventsHandler<VLCMediaPlayer>) {
        self.handler.withLock { $0 = handler }
    }

    /// Reports what a control call did, as the player's configuration says.
    func deliver(_ delivery: PlayerDelivery) {
        handler.withLock { $0 }?.handle(delivery, sender: 0) { player, delivery in player.publish(delivery) }
    }

    private func deliver(ended: (stamp: PlaybackTracker.Stamp, summary: PlaybackSummary)?) {
        guard let ended else { return }
        var update = PlaybackTracker.Update()
        update.ended = ended
        deliver(PlayerDelivery(event: nil, update: update))
        tracker.endDelivered(ended)
    }

    /// `play()`: resumes a running input, or starts a new one (a new playback), after
    /// stopping an input that ended or failed (raw libvlc 3 ignores `play` then). Returns the
    /// playback it began, if any.
    @discardableResult
    func play(_ player: NativeMediaPlayer) -> PlaybackID? {
        // A call queued before the wrapper went runs before the native teardown, on a player
        // no subscriber sees any more: it neither resumes it nor stops an ended input. A
        // teardown that comes after this read is caught by `begin`, under the tracker's lock.
        guard !tracker.isTornDown else { return nil }
        let state = PlaybackState(native: player.state)
        if state == .ended || state == .error {
            // The ended playback has its outcome already: this only forgets it.
            tracker.reserveEnding(.stopped)
            player.stop()
            deliver(ended: tracker.finishEnding(clear: true))
        }
        if !state.isRunning, let media = player.media {
            defer { media.release() }
            let mrl = media.mrl
            // Between the joined input (above, or a stop or media change before) and the one
            // `play` creates: every event from here on belongs to the new playback. Nothing
            // begins once the player is torn down.
            guard let (stamp, ended) = tracker.begin(media: media.address, mrl: mrl) else { return nil }
            listen(to: media)
            var update = PlaybackTracker.Update()
            update.endedBefore = ended
            update.began = (stamp, mrl)
            deliver(PlayerDelivery(event: nil, update: update))
            tracker.endDelivered(ended)
            tracker.announce(stamp.playback)
            player.play()
            return stamp.playback
        }
        player.play()
        return nil
    }

    /// `stop()`.
    func stop(_ player: NativeMediaPlayer) {
        tracker.reserveEnding(.stopped)
        player.stop()
        deliver(ended: tracker.finishEnding(clear: true))
    }

    /// Before a list player moves to another item (rule 16): stops an input that runs or has
    /// ended, so that no item ends during the move; a running playback was skipped.
    func stopForMove(_ player: NativeMediaPlayer) {
        let state = PlaybackState(native: player.state)
        guard state.isRunning || state == .ended else { return }
        tracker.reserveEnding(.skipped)
        player.stop()
        deliver(ended: tracker.finishEnding(clear: true))
    }

    /// Setting the media: the current playback, if it still runs, was skipped.
    func setMedia(_ player: NativeMediaPlayer, _ media: NativeMedia?) {
        tracker.reserveEnding(.skipped)
        player.setMedia(media)
        deliver(ended: tracker.finishEnding(clear: true))
    }

    /// A stall the tracker found: reported, then the input is stopped and the playback fails.
    func stall(_ player: NativeMediaPlayer, _ stamp: PlaybackTracker.Stamp, _ reason: StallReason, seconds: Double) {
        guard tracker.current?.playback == stamp.playback else { return }
        tracker.reserveEnding(.failed(PlaybackFailure(.stalled(reason, seconds: seconds))))
        player.stop()
        deliver(ended: tracker.finishEnding(clear: true))
    }

    /// Reports a stall before the control call that ends the playback.
    func reportStall(_ stamp: PlaybackTracker.Stamp, _ reason: StallReason) {
        var delivery = PlayerDelivery(event: nil)
        delivery.stalled = (stamp, reason)
        deliver(delivery)
    }

    /// Listens to `media`'s events for the playbacks (on the control queue, where attaching
    /// and detaching wait for no lock a handler could hold meanwhile).
    private func listen(to media: NativeMedia) {
        if mediaTable.withLock({ $0?.media.pointer == media.pointer }) { return }
        guard let handler = handler.withLock({ $0 }) else { return }
        let table = NativeEventTable(
            manager: media.eventManager,
            types: MediaEvent.Kind.allCases.filter { $0 != .freed }.map(\.nativeType),
            callback: playbackMediaCallback,
            receiver: PlaybackMediaListener(handler: handler, tracker: tracker))
        media.retain()
        table.attachIfNeeded()
        let old = mediaTable.withLock { current in
            defer { current = (media, table) }
            return current
        }
        Self.detach(old)
    }

    private static func detach(_ listener: (media: NativeMedia, table: NativeEventTable)?) {
        guard let listener else { return }
        listener.table.detachAll()
        listener.media.release()
    }

    /// Detaches the media listener: the player's teardown, on the control queue, before the
    /// native player is released (it releases its media). The handler is let go with it.
    func tearDown() {
        handler.withLock { $0 = nil }
        let old = mediaTable.withLock { current in
            defer { current = nil }
            return current
        }
        Self.detach(old)
    }
}

extension VLCMediaPlayer {
    /// Publishes what one delivery carries: to the player's subscribers, and, tagged with its
    /// playback, to the subscribers of `playbacks`.
    func publish(_ delivery: PlayerDelivery) {
        let update = delivery.update
        if let ended = update.endedBefore {
            playbacks.eventHub.publish(PlaybackEvent(ended.stamp, .ended(ended.summary)))
        }
        if let began = update.began {
            playbacks.eventHub.publish(PlaybackEvent(began.stamp, .began(mrl: began.mrl)))
        }
        if let event = delivery.event {
            eventHub.publish(event)
            if let stamp = update.stamp { playbacks.eventHub.publish(PlaybackEvent(stamp, .player(event))) }
        }
        if let stalled = delivery.stalled {
            playbacks.eventHub.publish(PlaybackEvent(stalled.stamp, .stalled(stalled.reason)))
        }
        if let ended = update.ended {
            playbacks.eventHub.publish(PlaybackEvent(ended.stamp, .ended(ended.summary)))
        }
    }

    /// Publishes an event of the playing media, tagged with its playback.
    func publish(_ event: MediaEvent, _ stamp: PlaybackTracker.Stamp) {
        playbacks.eventHub.publish(PlaybackEvent(stamp, .media(event)))
    }
}

extension PlaybackEvent {
    init(_ stamp: PlaybackTracker.Stamp, _ payload: Payload) {
        self.init(playback: stamp.playback, entry: stamp.entry, payload: payload)
    }
}

/// The receiver of the listeners on the playing media's events: tags each with the current
/// playback (when the media is still that playback's) and delivers it the way of the player's
/// events.
final class PlaybackMediaListener: NativeEventReceiver {
    private let handler: EventsHandler<VLCMediaPlayer>
    private let tracker: PlaybackTracker

    init(handler: EventsHandler<VLCMediaPlayer>, tracker: PlaybackTracker) {
        self.handler = handler
        self.tracker = tracker
    }

    func receive(_ event: consuming MediaEvent, sender: UInt) {
        let event = event
        if let stamp = tracker.record(event, sender: sender) {
            handler.handle((event, stamp), sender: sender) { player, tagged in player.publish(tagged.0, tagged.1) }
        }
        if event.holdsWrappers { ServiceQueues.releaseLater(consume event) }
    }
}

private let playbackMediaCallback: NativeCallback = {
    NativeEvents.forward($0, $1, to: PlaybackMediaListener.self)
}
