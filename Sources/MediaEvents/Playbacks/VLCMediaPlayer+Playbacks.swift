/// What a player's playbacks record and where its audio goes; given at creation.
public struct PlayerOptions: Sendable {
    /// Where the player's audio goes.
    public enum Audio: Sendable, Hashable {
        /// To the library's audio output (its `--aout`; `adummy` for a headless
        /// `VLCLibrary()`, which plays audio-only media faster than real time).
        case libraryOutput
        /// Nowhere, at the speed a sound card would take it (what mpv's `--ao=null` does):
        /// the samples are handed to MediaEvents, which lets each go when its time comes, so
        /// the playback time, positions and control calls behave as on a machine with
        /// speakers. The volume and mute are kept but have nothing to act on.
        case discardInRealTime
    }

    /// How long a playback may make no progress before it is reported stalled and failed
    /// (see `VLCMediaPlayer.stallTimeout`); `nil` never.
    public var stallTimeout: Duration?
    /// Whether a failed playback's outcome carries the error messages libvlc logged for its
    /// input. The library's log is then captured, at error level, while the player exists
    /// (libvlc no longer prints to standard error meanwhile).
    public var recordsFailureCauses: Bool
    /// Where the player's audio goes.
    public var audio: Audio

    /// The options: no stall timeout, no failure causes, the library's audio output.
    public init(stallTimeout: Duration? = nil, recordsFailureCauses: Bool = false, audio: Audio = .libraryOutput) {
        self.stallTimeout = stallTimeout
        self.recordsFailureCauses = recordsFailureCauses
        self.audio = audio
    }
}

/// The playbacks of one player, as an event source (`VLCMediaPlayer.playbacks`).
///
/// Subscribe with `observe`, `events()` or `waitFor` as with any source. It ends (with a last
/// `ended` event of outcome `quit`, when a playback was running) when its player is torn down.
public final class PlaybackEventSource: VLCEventSource {
    /// The subscribers.
    public let eventHub = EventHub<PlaybackEvent>()

    init() {}
}

extension VLCMediaPlayer {
    /// The playback the player runs or last ran, ended or not; `nil` before the first, and after
    /// a `stop()` or a new media until the next start.
    public var currentPlayback: PlaybackID? { driver.tracker.current?.playback }

    /// How long a playback may make no progress before it is reported `stalled` and then fails
    /// with that reason (its input stopped); `nil` (the default) never.
    ///
    /// Progress is the input reaching `Playing`, an audio or video track appearing, buffering
    /// advancing, or the time or position changing. A paused playback never stalls. A playing
    /// input that gives no track (`/dev/zero`) stalls once this long has passed since it
    /// started, whatever else it reports.
    public var stallTimeout: Duration? {
        get { driver.tracker.stallTimeout }
        set { driver.tracker.stallTimeout = newValue }
    }

    /// Starts playback as `play()` does and returns the playback it began, or `nil` when it
    /// began none: the player resumed a running one, or has no media.
    public func startPlayback() async -> PlaybackID? {
        let driver = driver
        return await performAndWait(PlayerCall { driver.play($0) })
    }

    /// The end of `playback`: waits for it, or answers at once for one that ended (among the
    /// player's last 64). Does not depend on the configuration: no queue needs to be drained.
    ///
    /// - Throws: `VLCError.timedOut` when it does not end within `timeout`;
    ///   `VLCError.sourceEnded` when the player has no such playback (never began, or ended
    ///   too long ago to be kept) or is torn down while waiting; `CancellationError`.
    public func outcome(of playback: PlaybackID, timeout: Duration) async throws -> PlaybackSummary {
        let tracker = driver.tracker
        let what = "the end of playback \(playback)"
        return try await withThrowingTaskGroup(of: PlaybackSummary.self) { group in
            group.addTask {
                guard let summary = await tracker.outcome(of: playback) else {
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

    /// Starts playback and returns how it ended: `startPlayback()`, then `outcome(of:)`.
    ///
    /// - Throws: `VLCError.invalidState` when no playback began (no media, or one was already
    ///   running: wait for that one with `outcome(of:)`); otherwise as `outcome(of:timeout:)`.
    public func playToOutcome(timeout: Duration) async throws -> PlaybackSummary {
        guard let playback = await startPlayback() else {
            throw VLCError.invalidState("playToOutcome needs a media and no playback running")
        }
        return try await outcome(of: playback, timeout: timeout)
    }
}
