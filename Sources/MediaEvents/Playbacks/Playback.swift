// Playbacks/ — which playback an event belongs to and why each playback ended: every start of
// a media on a player begins a playback with an id; every player event and every event of the
// playing media is tagged with it at the moment libvlc sends it (PlaybackTracker); each playback
// gets exactly one outcome (PlaybackOutcome), as an event and awaitable; a playback that makes
// no progress is reported stalled and failed; and a player can play audio in real time with no
// sound card (PacedAudioOutput).

/// Identifies one playback of a player: one start of a media, from `Opening` to its end.
///
/// Ids increase by one per player from 1 and are never reused by that player.
public struct PlaybackID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number, 1 for a player's first playback.
    public let rawValue: UInt64

    /// The id with the number `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The number, as text.
    public var description: String { String(rawValue) }

    /// Whether `lhs` began before `rhs` (on the same player).
    public static func < (lhs: PlaybackID, rhs: PlaybackID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Identifies one entry of a `VLCPlaylistPlayer`. Ids increase from 1 per playlist player and
/// are never reused, even after the entry is removed.
public struct PlaylistEntryID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number, 1 for a playlist's first entry.
    public let rawValue: UInt64

    /// The id with the number `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The number, as text.
    public var description: String { String(rawValue) }

    /// Whether `lhs` was added before `rhs` (to the same playlist).
    public static func < (lhs: PlaylistEntryID, rhs: PlaylistEntryID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why a playback made no progress (see `VLCMediaPlayer.stallTimeout`).
public enum StallReason: String, Sendable, Hashable, CustomStringConvertible {
    /// The input never reached `Playing`: opening never completed (a server that accepts and
    /// never answers).
    case opening
    /// After `Playing`, buffering never completed.
    case buffering
    /// The input plays but never gave an audio or video track (`/dev/zero`: libvlc reads it
    /// forever).
    case noTrack
    /// Playing, but the time did not advance.
    case noProgress

    /// A sentence for people.
    public var description: String {
        switch self {
        case .opening: "opening did not complete"
        case .buffering: "buffering did not complete"
        case .noTrack: "no audio or video track came"
        case .noProgress: "the playback time did not advance"
        }
    }
}

/// Why a playback failed.
public struct PlaybackFailure: Sendable, Hashable, CustomStringConvertible {
    /// What was seen.
    public enum Reason: Sendable, Hashable {
        /// libvlc sent `EncounteredError`: it could not open or decode the input.
        case encounteredError
        /// libvlc reached the input's end without an audio or video track or a sub-item:
        /// nothing was played (random bytes, an empty directory).
        case noTracks
        /// The playback made no progress for `seconds` (see `VLCMediaPlayer.stallTimeout`).
        case stalled(StallReason, seconds: Double)
        /// The media's stream (`VLCMedia(open:)`) failed; `cause` holds its error.
        case streamError
    }

    /// What was seen.
    public let reason: Reason
    /// What libvlc logged about it (the texts of the error messages logged for the input, see
    /// `FailureCauseRecorder`), or the stream's error; `nil` when nothing was said.
    public let cause: String?

    /// A failure for `reason`, with what was said about it.
    public init(_ reason: Reason, cause: String? = nil) {
        self.reason = reason
        self.cause = cause
    }

    /// A stable name for scripts: `encountered_error`, `no_tracks`, `stalled`, `stream_error`.
    public var code: String {
        switch reason {
        case .encounteredError: "encountered_error"
        case .noTracks: "no_tracks"
        case .stalled: "stalled"
        case .streamError: "stream_error"
        }
    }

    /// What was seen, in words, whatever libvlc said.
    public var summary: String {
        switch reason {
        case .encounteredError: "libvlc reported EncounteredError (could not open or play it)"
        case .noTracks: "no audio or video track found (libvlc played nothing)"
        case .stalled(let what, let seconds):
            "stalled: \(what) within \(seconds.formatted(places: 1)) s"
        case .streamError: "the media's stream failed"
        }
    }

    /// The cause when one is known, otherwise the summary.
    public var description: String { cause ?? summary }
}

/// How a playback ended: exactly one per playback.
public enum PlaybackOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Played to its end (`EndReached` after a track).
    case ended
    /// A playlist or a directory: it played no track of its own and yielded `entries`
    /// sub-items (mpv calls this a redirect).
    case expanded(entries: Int)
    /// A `stop()` ended it.
    case stopped
    /// Another media or entry took its place (`next`, `previous`, playing another entry,
    /// setting a new media).
    case skipped
    /// It failed.
    case failed(PlaybackFailure)
    /// The player was torn down while it played.
    case quit

    /// mpv's `end-file` reason for it: `eof`, `redirect`, `stop`, `error`, `quit`.
    public var mpvReason: String {
        switch self {
        case .ended: "eof"
        case .expanded: "redirect"
        case .stopped, .skipped: "stop"
        case .failed: "error"
        case .quit: "quit"
        }
    }

    /// A stable name for logs: `eof`, `expanded`, `stopped`, `skipped`, `failed`, `quit`.
    public var code: String {
        switch self {
        case .ended: "eof"
        case .expanded: "expanded"
        case .stopped: "stopped"
        case .skipped: "skipped"
        case .failed: "failed"
        case .quit: "quit"
        }
    }

    /// The failure, for a failed playback.
    public var failure: PlaybackFailure? {
        if case .failed(let failure) = self { return failure }
        return nil
    }

    /// The code, and the failure's words for a failed playback.
    public var description: String {
        if let failure { return "failed: \(failure)" }
        return code
    }
}

/// A playback that has ended: which one, what it played, how it ended and how far it got.
public struct PlaybackSummary: Sendable, Hashable {
    /// The playback.
    public let playback: PlaybackID
    /// The playlist entry it played, under a `VLCPlaylistPlayer`.
    public let entry: PlaylistEntryID?
    /// The media's location (MRL).
    public let mrl: String
    /// How it ended.
    public let outcome: PlaybackOutcome
    /// The last playback time reported, in milliseconds (-1 when none was).
    public let time: Int64
    /// The last position reported, 0 to 1 (-1 when none was).
    public let position: Float
    /// The media's length as last reported, in milliseconds (-1 while unknown).
    public let length: Int64
    /// Seconds from its start (the control call that began it) to its end.
    public let seconds: Double
}

extension Double {
    /// The number with at most `places` decimal places, without trailing zeros.
    func formatted(places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let rounded = (self * scale).rounded() / scale
        if rounded == rounded.rounded() { return String(Int64(rounded)) }
        return String(rounded)
    }
}
