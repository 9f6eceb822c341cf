
/// The player's time, position, length and seekability as its events last reported them.
///
/// libvlc's getters for these take the player's input lock, which `libvlc_media_player_stop`
/// holds while it joins the input thread. A getter called from a handler (or from a queue a
/// synchronous delivery is waiting for) during a stop would wait for the input thread, which
/// waits for the handler: a deadlock. libvlc updates these values and sends the matching
/// events at the same moment, so a cache updated inside the callback is exactly as fresh
/// and never blocks.
final class PlaybackCache: Sendable {
    struct Values: Sendable {
        var time: Int64 = -1
        var position: Float = -1
        var length: Int64 = -1
        var isSeekable = false
        var isPausable = false
    }

    private let values = Protected(Values())

    var current: Values { values.withLock { $0 } }

    /// Runs inside libvlc's callback, before any dispatch.
    func record(_ event: MediaPlayerEvent) {
        switch event {
        case .timeChanged(let ms): values.withLock { $0.time = ms }
        case .positionChanged(let position): values.withLock { $0.position = position }
        case .lengthChanged(let ms): values.withLock { $0.length = ms }
        case .seekableChanged(let flag): values.withLock { $0.isSeekable = flag }
        case .pausableChanged(let flag): values.withLock { $0.isPausable = flag }
        // libvlc's getters answer -1 once the input is gone; so does the cache.
        case .stopped, .mediaChanged: values.withLock { $0 = Values() }
        default: break
        }
    }
}
