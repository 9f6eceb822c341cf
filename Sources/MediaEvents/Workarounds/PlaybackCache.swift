/// Rules 1 and 2: the player's state, media, time, position, length, seekability, title and
/// chapter as its events last reported them, which the getters answer.
///
/// libvlc's getters for these take locks that libvlc holds while it sends events: the input
/// lock (`libvlc_media_player_stop` holds it while it joins the input thread, G3) and the
/// player's object lock (`play` and `set_media` hold it while they send the media's
/// `MetaChanged`/`StateChanged`, G1, G2). A getter called from a handler, or from a queue that a
/// synchronous delivery is waiting for, would wait for the thread that waits for it: a
/// deadlock. libvlc updates these values and sends the matching events at the same moment,
/// so a cache updated inside the callback is as fresh and never blocks.
final class PlaybackCache: LibvlcWorkaround {
    typealias Event = MediaPlayerEvent

    static let rule = 1
    static let test =
        "ReentrancyCasesTests.testPlayerGetters_whenReadFromMediaHandlersDuringPlayAndSetMedia_answerWithoutHang"

    struct Values: Sendable {
        var state = PlaybackState.nothingSpecial
        var time: Int64 = -1
        var position: Float = -1
        var length: Int64 = -1
        var isSeekable = false
        var isPausable = false
        var title = -1
        var chapter = -1
        var videoOutputs = 0
    }

    /// The media the player's last `MediaChanged` carried.
    struct SeenMedia: Sendable {
        /// The native media's address (0 for none).
        var native: UInt
        /// A wrapper of it, made with the player's configuration.
        var wrapper: VLCMedia?
    }

    private let values = Protected(Values())
    private let media = Protected<SeenMedia?>(nil)
    private let configuration: any EventsConfiguring

    init(configuration: any EventsConfiguring) {
        self.configuration = configuration
    }

    var current: Values { values.withLock { $0 } }

    /// The media of the last `MediaChanged`, `nil` before the first one.
    var seenMedia: SeenMedia? { media.withLock { $0 } }

    /// Inside the player's callback, before any delivery: the values the event reports.
    func inCallback(_ event: MediaPlayerEvent) -> Bool {
        if event.kind == .opening {
            // A new input on this thread: a stream failure recorded for a thread of this id
            // (an earlier input's open that failed) is not this one's.
            StreamFailures.forget(inputThread: currentThread())
        }
        if let state = Self.state(after: event) { values.withLock { $0.state = state } }
        switch event {
        case .timeChanged(let ms): values.withLock { $0.time = ms }
        case .positionChanged(let position): values.withLock { $0.position = position }
        case .lengthChanged(let ms): values.withLock { $0.length = ms }
        case .seekableChanged(let flag): values.withLock { $0.isSeekable = flag }
        case .pausableChanged(let flag): values.withLock { $0.isPausable = flag }
        case .titleChanged(let title): values.withLock { $0.title = title }
        case .chapterChanged(let chapter): values.withLock { $0.chapter = chapter }
        case .voutChanged(let count): values.withLock { $0.videoOutputs = count }
        // libvlc's getters answer -1 once the input is gone; so does the cache.
        case .stopped: values.withLock { $0 = Values(state: .stopped) }
        case .mediaChanged(let new):
            values.withLock { $0 = Values() }
            let seen = SeenMedia(
                native: new?.native.address ?? 0,
                wrapper: new.map { VLCMedia(retaining: $0.native, configuration: configuration) })
            let replaced = media.withLock { current in
                defer { current = seen }
                return current
            }
            // This is libvlc's thread: the replaced wrapper's last reference goes elsewhere.
            if replaced != nil { ServiceQueues.releaseLater(consume replaced) }
        default: break
        }
        return false
    }
}

extension PlaybackCache {
    /// The state libvlc's `get_state` answers once it has sent `event` (libvlc sets the state
    /// and sends the event together: `set_state` in lib/media_player.c).
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
