import Dispatch
import ExampleSupport
import MediaEvents

/// What the player's events said last: the values mpv's properties read (`MpvProperties`),
/// kept by the daemon from the events it logs, so that reading a property never calls libvlc
/// (whose getters take locks it holds while it sends events).
///
/// Each update returns the mpv events it implies (`file-loaded` at a playback's first
/// `Playing`, `playback-restart` once a seek has landed).
struct PlayerFacts {
    /// A track of the running playback, as libvlc's `ESAdded` named it.
    struct Track: Equatable {
        let type: TrackType
        /// libvlc's elementary stream id.
        let esID: Int
    }

    /// The playback that began last, ended or not.
    var playback: PlaybackID?
    var entry: PlaylistEntryID?
    /// Whether that playback has not ended yet.
    var running = false
    /// Whether it reached `Playing`.
    var reachedPlaying = false
    /// Whether it reached `Playing` with an audio or video track (mpv's `file-loaded`: an
    /// input that libvlc plays without finding a track, random bytes, fails instead).
    var loaded = false
    var paused = false
    /// Milliseconds, -1 while unknown.
    var time: Int64 = -1
    /// 0 to 1, -1 while unknown.
    var position: Double = -1
    /// Milliseconds, -1 while unknown.
    var length: Int64 = -1
    var seekable = false
    /// libvlc reported the end of the running playback's input.
    var eofReached = false
    var tracks: [Track] = []
    /// The selected track of each type (libvlc's id).
    var selected: [TrackType: Int] = [:]
    /// Percent, 0 to 200; the player's (libvlc keeps it across media).
    var volume = 100
    var muted = false
    var speed = 1.0
    /// A seek was asked of this playback: its `playback-restart` waits for a time near the
    /// target (a time the input reports before the seek lands is not it), or for any time
    /// once 2 s have passed (a target the input cannot land on exactly). `echo`: libvlc's
    /// time setter sends the target itself as a `TimeChanged` before the input seeks, and the
    /// input may report the old time after it; that first report of exactly the target is
    /// not the landing.
    var seekPending: (playback: PlaybackID, target: Int64?, echo: Bool, since: DispatchTime)?

    /// A playback began.
    mutating func began(_ id: PlaybackID, entry: PlaylistEntryID?) {
        playback = id
        self.entry = entry
        running = true
        reachedPlaying = false
        loaded = false
        paused = false
        time = -1
        position = -1
        length = -1
        seekable = false
        eofReached = false
        tracks = []
        selected = [:]
        seekPending = nil
    }

    /// A playback ended.
    mutating func ended(_ id: PlaybackID) {
        guard playback == id else { return }
        running = false
        paused = false
        seekPending = nil
    }

    /// A seek of the running playback is about to be queued: to `target` milliseconds (`nil`:
    /// unknown), by setting the time (`byTime`, which echoes the target at once; a position
    /// does not). Called before the seek is queued, so that the echo comes after it. Returns
    /// the mpv events it implies at once.
    mutating func seeking(to target: Int64?, byTime: Bool) -> [String] {
        guard running, let playback else { return [] }
        if paused {
            // libvlc sends no time while paused (its player drops the input's position events
            // unless it plays), not even the echo: the input lands on the target, and the
            // facts say so now, as mpv's time-pos does after a seek while paused.
            if let target {
                time = target
                if length > 0 { position = min(1, Double(target) / Double(length)) }
            }
            seekPending = nil
            return ["playback-restart"]
        }
        // libvlc echoes a time within the length it knows; past a known length it cannot.
        let echo = byTime && target.map { length <= 0 || $0 <= length } ?? false
        seekPending = (playback, target, echo, .now())
        return []
    }

    /// Applies a player event of `playback` (`nil`: outside any playback); returns the names
    /// of the mpv events it implies, in order.
    mutating func apply(_ event: MediaPlayerEvent, playback: PlaybackID?) -> [String] {
        // Volume and mute are the player's, in a playback or not.
        switch event {
        case .audioVolume(let value):
            if value >= 0 { volume = Int((Double(value) * 100).rounded()) }
            return []
        case .muted:
            muted = true
            return []
        case .unmuted:
            muted = false
            return []
        default: break
        }
        guard let playback, playback == self.playback, running else { return [] }
        var implied: [String] = []
        switch event {
        case .playing:
            paused = false
            reachedPlaying = true
        case .paused:
            paused = true
        case .timeChanged(let ms):
            time = ms
            if let seek = seekPending, seek.playback == playback {
                if seek.echo, ms == seek.target {
                    seekPending?.echo = false
                } else if seek.target.map({ abs(ms - $0) <= 1000 }) ?? true
                    || DispatchTime.now().uptimeNanoseconds - seek.since.uptimeNanoseconds >= 2_000_000_000
                {
                    seekPending = nil
                    implied = ["playback-restart"]
                }
            }
        case .positionChanged(let value):
            position = Double(value)
        case .lengthChanged(let ms):
            length = ms
        case .seekableChanged(let flag):
            seekable = flag
        case .endReached:
            eofReached = true
        case .esAdded(let type, let id):
            if !tracks.contains(Track(type: type, esID: id)) { tracks.append(Track(type: type, esID: id)) }
        case .esDeleted(let type, let id):
            // -1: every track of that type.
            tracks.removeAll { $0.type == type && (id == -1 || $0.esID == id) }
            if id == -1 || selected[type] == id { selected[type] = nil }
        case .esSelected(let type, let id):
            selected[type] = id < 0 ? nil : id
        default:
            break
        }
        if !loaded, reachedPlaying, tracks.contains(where: { $0.type == .audio || $0.type == .video }) {
            loaded = true
            implied += ["file-loaded", "playback-restart"]
        }
        return implied
    }

    /// The tracks of `type`, in the order libvlc added them (mpv's ids: from 1 per type).
    func tracks(of type: TrackType) -> [Track] { tracks.filter { $0.type == type } }
}
