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
    /// What libvlc said about it (its log message), when known. Always `nil` for now: the
    /// programs do not read libvlc's log yet. Never guessed from the reason.
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

    /// One line for people, with the cause when known.
    public var message: String {
        let text = switch reason {
        case .encounteredError: "libvlc reported EncounteredError (could not open or play it)"
        case .noTracks: "no audio or video track found (libvlc played nothing and reported EndReached)"
        case .openTimeout(let seconds):
            "still not playing after \(TextFormat.seconds(seconds)) s (--open-timeout)"
        case .notStartedAtLimit(let seconds):
            "not playing yet when the \(TextFormat.seconds(seconds)) s --limit was up: nothing was played"
        case .invalidURL: "not a valid URL"
        case .entriesBeyondBound(let bound): "entries not played: \(bound)"
        }
        return cause.map { "\(text): \($0)" } ?? text
    }

    /// The fields of an `ItemFailed` line: `error` (the code), `message`, and `cause` only
    /// when known.
    public var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("error", .string(code)), ("message", .string(message))]
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

    /// Notes `event`; returns the outcome when the event ends the playback.
    public mutating func note(_ event: MediaPlayerEvent) -> PlaybackOutcome? {
        switch event {
        case .esAdded: sawTrack = true
        case .playing: reachedPlaying = true
        case .endReached: return endOutcome
        case .encounteredError: return .failed(PlaybackFailure(.encounteredError))
        default: break
        }
        return nil
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
