import MediaEvents

/// How one item's playback ended: the one classification both programs use, for their exit
/// status (`log`), their counters and `ItemFailed` lines (`media-daemon`) and their messages.
public enum PlaybackOutcome: Sendable, Equatable {
    /// Played to its end, with at least one audio or video track.
    case played
    /// Playing when the `--limit` time was up.
    case stoppedAtLimit
    /// A playlist or directory: no track of its own, `entries` sub-items that are played as
    /// items of their own.
    case expanded(entries: Int)
    /// Did not play.
    case failed(PlaybackFailure)

    /// Whether the item counts as played.
    public var isPlayed: Bool {
        if case .failed = self { return false }
        return true
    }

    /// The failure, if the item failed.
    public var failure: PlaybackFailure? {
        if case .failed(let failure) = self { return failure }
        return nil
    }
}

/// Why an item did not play.
public struct PlaybackFailure: Sendable, Equatable {
    /// What the program saw.
    public enum Reason: Sendable, Equatable {
        /// libvlc sent `EncounteredError`: it could not open or decode the input (missing or
        /// empty file, unsupported scheme, connection refused, …).
        case encounteredError
        /// libvlc opened the input and reached its end without a single track or sub-item
        /// (random bytes, an empty directory): nothing was played.
        case noTracks
        /// Not playing after `seconds` (`--open-timeout`): libvlc has no open timeout of its
        /// own, a server that accepts and never answers keeps it opening forever.
        case openTimeout(seconds: Double)
        /// Not playing yet when the `--limit` of `seconds` was up.
        case notStartedAtLimit(seconds: Double)
        /// The entry looks like a URL but is not a valid one.
        case invalidURL
        /// A playlist or directory whose entries were not played: they went past `bound`
        /// (nesting depth, number of media), which keeps a wrong input from running away.
        case entriesBeyondBound(bound: String)
    }

    /// What the program saw.
    public let reason: Reason
    /// What libvlc said about it: the texts of the error messages `FailureCauseRecorder`
    /// associated with the input, joined with "; "; `nil` when none was. Never guessed from
    /// the reason.
    public var cause: String?

    public init(_ reason: Reason, cause: String? = nil) {
        self.reason = reason
        self.cause = cause
    }

    /// A stable name for scripts: the `error` field of `ItemFailed`.
    public var code: String {
        switch reason {
        case .encounteredError: "EncounteredError"
        case .noTracks: "NoTracks"
        case .openTimeout: "OpenTimeout"
        case .notStartedAtLimit: "NotStartedAtLimit"
        case .invalidURL: "InvalidURL"
        case .entriesBeyondBound: "EntriesBeyondBound"
        }
    }

    /// One line for people: libvlc's words when known (`cannot open file … (No such file or
    /// directory)`), otherwise what the program saw.
    public var message: String { cause ?? summary }

    /// What the program saw, in its own words, whatever libvlc said.
    public var summary: String {
        switch reason {
        case .encounteredError: "libvlc reported EncounteredError (could not open or play it)"
        case .noTracks: "no audio or video track found (libvlc played nothing and reported EndReached)"
        case .openTimeout(let seconds):
            "still not playing after \(TextFormat.seconds(seconds)) s (--open-timeout)"
        case .notStartedAtLimit(let seconds):
            "not playing yet when the \(TextFormat.seconds(seconds)) s --limit was up: nothing was played"
        case .invalidURL: "not a valid URL"
        case .entriesBeyondBound(let bound): "entries not played: \(bound)"
        }
    }

    /// The fields of an `ItemFailed` line: `error` (the code), `message` (the summary), and
    /// `cause` only when known.
    public var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("error", .string(code)), ("message", .string(summary))]
        if let cause { fields.append(("cause", .string(cause))) }
        return fields
    }
}

/// What one playback has shown so far, fed with the player's events; decides the outcome.
public struct PlaybackProgress: Sendable {
    /// An ESAdded was seen.
    public private(set) var sawTrack = false
    /// Playing was seen.
    public private(set) var reachedPlaying = false
    /// Sub-items the media got while it played (a playlist's or directory's entries).
    public var subItems = 0

    public init() {}

    /// Notes `event`. The end of the playback is not taken from here but from the
    /// `FailureCauseRecorder`'s `PlaybackEnd` (`note(_:)` of an end), which carries the cause.
    public mutating func note(_ event: MediaPlayerEvent) {
        switch event {
        case .esAdded: sawTrack = true
        case .playing: reachedPlaying = true
        default: break
        }
    }

    /// The outcome of the playback's end; an `EncounteredError` with libvlc's words for it.
    ///
    /// Only there: the errors logged before an `EndReached` without a track are libvlc's
    /// side attempts (an empty directory tried as a DVD, random bytes tried as a device), not
    /// why nothing played, so a `NoTracks` failure keeps the program's own words.
    public func note(_ end: PlaybackEnd) -> PlaybackOutcome {
        switch end.kind {
        case .encounteredError: .failed(PlaybackFailure(.encounteredError, cause: end.causeText))
        case .endReached: endOutcome
        }
    }

    /// The outcome of an `EndReached` now.
    public var endOutcome: PlaybackOutcome {
        if sawTrack { return .played }
        return subItems > 0 ? .expanded(entries: subItems) : .failed(PlaybackFailure(.noTracks))
    }

    /// The outcome when the `--limit` of `seconds` is up before the end.
    public func outcomeAtLimit(_ seconds: Double) -> PlaybackOutcome {
        reachedPlaying ? .stoppedAtLimit : .failed(PlaybackFailure(.notStartedAtLimit(seconds: seconds)))
    }

    /// The outcome when the `--open-timeout` of `seconds` is up: `nil` once playing.
    public func outcomeAtOpenTimeout(_ seconds: Double) -> PlaybackOutcome? {
        reachedPlaying ? nil : .failed(PlaybackFailure(.openTimeout(seconds: seconds)))
    }
}
