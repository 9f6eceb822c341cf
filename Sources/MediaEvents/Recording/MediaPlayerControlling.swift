/// What app code needs of a player: its events, its control calls, the values its events last
/// reported, and its playbacks. `VLCMediaPlayer` conforms, and so do ``ReplayMediaPlayer`` (a
/// recording played back) and ``CallRecordingPlayer`` (a player whose calls are recorded), so
/// code written against this protocol runs on real libvlc in the app and on a recording in its
/// tests.
///
/// ```swift
/// final class EndWatcher<Player: MediaPlayerControlling> {
///     let token: EventSubscription
///     init(player: Player) {
///         token = player.playbacks.observe(.ended) { [weak player] event in
///             if case .ended(let summary) = event.payload, summary.outcome == .ended { player?.stop() }
///         }
///     }
/// }
/// ```
///
/// Every requirement has `VLCMediaPlayer`'s meaning; see its documentation.
public protocol MediaPlayerControlling: VLCEventSource where Event == MediaPlayerEvent {
    /// How the player's events (and its playbacks') are dispatched.
    var configuration: any EventsConfiguring { get }
    /// The media to play; setting it is a control call (libvlc sends `MediaChanged`).
    var media: VLCMedia? { get set }
    /// Starts or resumes playback; a start begins a new playback.
    func play()
    /// Pauses playback.
    func pause()
    /// Resumes paused playback.
    func resume()
    /// Stops playback; a running playback ends as `stopped`.
    func stop()
    /// Waits until every control call made before has been carried out.
    func waitForPendingControls() async
    /// The state, as of the player's last state event.
    var state: PlaybackState { get }
    /// Whether the player is playing (`state == .playing`).
    var isPlaying: Bool { get }
    /// The playback time in milliseconds as of the last `TimeChanged` (-1 without input);
    /// setting it seeks.
    var time: Int64 { get set }
    /// The position, 0 to 1, as of the last `PositionChanged` (-1 without input); setting it
    /// seeks.
    var position: Float { get set }
    /// The media's length in milliseconds as last reported (-1 while unknown).
    var length: Int64 { get }
    /// Whether the current media can seek.
    var isSeekable: Bool { get }
    /// Whether the current media can pause.
    var isPausable: Bool { get }
    /// The player's playbacks: each event tagged with its playback, and each playback's start,
    /// stall and one end.
    var playbacks: PlaybackEventSource { get }
    /// The playback the player runs or last ran; `nil` before the first, and after a `stop()`
    /// or a new media until the next start.
    var currentPlayback: PlaybackID? { get }
    /// The end of `playback`: waits for it, or answers at once for one that ended.
    ///
    /// - Throws: `VLCError.timedOut`, `VLCError.sourceEnded`, `CancellationError`.
    func outcome(of playback: PlaybackID, timeout: Duration) async throws -> PlaybackSummary
}

extension VLCMediaPlayer: MediaPlayerControlling {}

/// What app code needs of a playlist player: its events, its player, its entries and its
/// control calls. `VLCPlaylistPlayer` conforms, and so does ``ReplayPlaylistPlayer``.
///
/// Every requirement has `VLCPlaylistPlayer`'s meaning; see its documentation.
public protocol PlaylistPlayerControlling: VLCEventSource where Event == PlaylistEvent {
    /// The kind of player that plays the entries.
    associatedtype Player: MediaPlayerControlling
    /// The player that plays the entries (its events, playbacks and outcomes).
    var player: Player { get }
    /// The entries, in order.
    var entries: [PlaylistEntry] { get }
    /// The entry that plays or will play; `nil` before any and after the end.
    var currentEntry: PlaylistEntry? { get }
    /// Whether the playlist plays: started, and neither stopped nor at its end.
    var isActive: Bool { get }
    /// How the playlist goes on after an entry ends.
    var loop: PlaylistLoop { get set }
    /// Starts the current entry (the first when there is none), or resumes a paused player.
    func play()
    /// Starts the entry `id`; `false` when there is no such entry.
    @discardableResult func play(_ id: PlaylistEntryID) -> Bool
    /// Moves to the next entry; `false`, changing nothing, when there is none.
    @discardableResult func next() -> Bool
    /// Moves to the previous entry; `false`, changing nothing, when there is none.
    @discardableResult func previous() -> Bool
    /// Stops the player; the current entry stays current.
    func stop()
    /// Pauses the player.
    func pause()
    /// Resumes the player.
    func resume()
    /// Waits until every call made before has been carried out by the player.
    func waitForPendingControls() async
}

extension VLCPlaylistPlayer: PlaylistPlayerControlling {}
