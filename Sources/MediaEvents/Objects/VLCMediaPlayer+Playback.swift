import Synchronization

/// Playback helpers that return when the playback they started reaches a state.
extension VLCMediaPlayer {
    /// Starts playback (as `play()` does) and returns the first event of the given kinds that
    /// this playback sends.
    ///
    /// When the player is stopped, has ended or failed, a new playback starts and events
    /// that belong to the previous one (such as the `Stopped` sent while restarting after the
    /// end) are skipped: only events from the new `Opening` on count. When it is already
    /// playing or paused, the first matching event counts.
    ///
    /// - Throws: `VLCError.invalidState` when the player has no media; `VLCError.timedOut`
    ///   when no such event arrives within `timeout`; `VLCError.sourceEnded` when the player
    ///   is torn down first; `CancellationError` when the calling task is cancelled.
    public func play(until kinds: MediaPlayerEvent.Kind..., timeout: Duration) async throws -> MediaPlayerEvent {
        try await play(untilAnyOf: kinds, timeout: timeout)
    }

    /// Plays the media to its end: starts playback and returns the `EndReached`, `Stopped`
    /// or `EncounteredError` event that ends it.
    ///
    /// - Throws: as `play(until:timeout:)`.
    public func playToEnd(timeout: Duration) async throws -> MediaPlayerEvent {
        try await play(untilAnyOf: [.endReached, .stopped, .encounteredError], timeout: timeout)
    }

    private func play(untilAnyOf kinds: [MediaPlayerEvent.Kind], timeout: Duration) async throws -> MediaPlayerEvent {
        precondition(!kinds.isEmpty, "play(until:) needs at least one kind")
        // Subscribed before the play call is queued, so nothing it causes can be missed.
        let stream = events(kinds: kinds + [.opening], buffering: .default)
        let driver = driver
        let start: PlaybackStart = await performAndWait(
            PlayerCall { player in
                guard let media = player.media else { return .noMedia }
                media.release()
                let running = PlaybackState(native: player.state).isRunning
                driver.play(player)
                return running ? .continued : .newInput
            })
        if start == .noMedia {
            stream.cancel()
            throw VLCError.invalidState("play(until:) needs a media")
        }
        let gate = OpeningGate(open: start == .continued)
        let what = kinds.map(\.name).joined(separator: " or ")
        return try await stream.first(timeout: timeout, describing: what) { event in
            if event.kind == .opening { gate.open() }
            return gate.isOpen && kinds.contains(event.kind)
        }
    }
}

private enum PlaybackStart {
    case noMedia
    /// A new input starts: its events begin with `Opening`.
    case newInput
    /// The player was already playing or paused: no `Opening` will come.
    case continued
}

/// Whether the new playback's `Opening` has been seen; events before it belong to the
/// previous playback.
private final class OpeningGate: Sendable {
    private let opened: Atomic<Bool>

    init(open: Bool) { opened = Atomic(open) }

    var isOpen: Bool { opened.load(ordering: .acquiring) }

    func open() { opened.store(true, ordering: .releasing) }
}
