import Dispatch
import ExampleSupport
import MediaEvents

/// Finds the player's events that belong to no playback (`MediaChanged`, a volume change while
/// idle), which `player.playbacks` does not deliver, among the player's own events.
///
/// The library tags an event with its playback when libvlc sends it, and delivers it in one go
/// to the player's subscribers and then, when it has a playback, to those of `playbacks`. So:
/// - inline and queue-sync (libvlc's thread runs the handlers, or waits for them): the playback
///   the player has when its subscriber runs is the one the event was tagged with. No playback
///   begins or is forgotten meanwhile: both happen on the player's control queue after libvlc
///   joined the input thread, and an event sent from the control queue itself (`MediaChanged`
///   from `set_media`, a volume change) holds that queue until its handlers return;
/// - queue-async: the handlers run later, so the event is kept as pending and the `playbacks`
///   subscriber, which runs right after it in the same delivery when it has a playback, takes
///   it back. What is still pending after that delivery (a block queued behind it on the same
///   serial queue, or the next delivery, whichever runs first) belonged to no playback.
final class OutsidePlaybackEvents: Sendable {
    /// The serial queue deliveries run on when handlers are queued (queue-async).
    private let asyncQueue: DispatchQueue?
    private let report: @Sendable (MediaPlayerEvent) -> Void
    /// queue-async: the player's event whose `playbacks` twin has not come (yet).
    private let pending = Guarded<MediaPlayerEvent?>(nil)

    /// `report` is called with each event outside any playback, in order.
    init(configuration: any EventsConfiguring, report: @escaping @Sendable (MediaPlayerEvent) -> Void) {
        asyncQueue = configuration.isAsync ? configuration.dispatchQueue : nil
        self.report = report
    }

    /// The player's own subscriber.
    func playerEvent(_ event: MediaPlayerEvent, of player: VLCMediaPlayer) {
        guard let asyncQueue else {
            if case .mediaChanged = event {
                report(event)
            } else if player.currentPlayback == nil {
                report(event)
            }
            return
        }
        flush()
        pending.withLock { $0 = event }
        asyncQueue.async { [weak self] in self?.flush() }
    }

    /// The `playbacks` subscriber, before it handles `event`.
    func playbackEvent(_ event: PlaybackEvent) {
        guard asyncQueue != nil else { return }
        if case .player = event.payload {
            pending.withLock { $0 = nil }
        } else {
            flush()
        }
    }

    private func flush() {
        let event = pending.withLock { pending in
            defer { pending = nil }
            return pending
        }
        if let event { report(event) }
    }
}
