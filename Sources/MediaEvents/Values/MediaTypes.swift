// Values/ — plain values that cross the API: states, parse results, track types and metadata
// keys, tracks, and `VLCError`. No state and no queues; what they read from libvlc (the track
// list, codec descriptions, libvlc's last error message) they read through Native/.

/// The state of a media or player, as libvlc reports it (`libvlc_state_t`).
public enum PlaybackState: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// The states of `libvlc_state_t`, in its order: `nothingSpecial` (`libvlc_NothingSpecial`,
    /// the initial state), `opening`, `buffering`, `playing`, `paused`, `stopped` (`libvlc_Stopped`),
    /// `ended` (`libvlc_Ended`: the end of the media was reached) and `error` (`libvlc_Error`:
    /// playback failed).
    case nothingSpecial = 0, opening, buffering, playing, paused, stopped, ended, error

    init(native: Int32) { self = PlaybackState(rawValue: native) ?? .nothingSpecial }

    /// Whether an input runs: opening, buffering, playing or paused.
    var isRunning: Bool { self == .opening || self == .buffering || self == .playing || self == .paused }

    /// The case's name, for example `playing`.
    public var description: String {
        switch self {
        case .nothingSpecial: "nothingSpecial"
        case .opening: "opening"
        case .buffering: "buffering"
        case .playing: "playing"
        case .paused: "paused"
        case .stopped: "stopped"
        case .ended: "ended"
        case .error: "error"
        }
    }
}

/// The result of parsing a media (`libvlc_media_parsed_status_t`).
public enum ParsedStatus: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// Not parsed yet.
    case none = 0
    /// Parsing was skipped (for example a network media with local-only parsing).
    case skipped
    /// Parsing failed (`libvlc_media_parsed_status_failed`).
    case failed
    /// Parsing did not finish before its timeout (`libvlc_media_parsed_status_timeout`).
    case timeout
    /// Parsing finished (`libvlc_media_parsed_status_done`).
    case done

    init(native: Int32) { self = ParsedStatus(rawValue: native) ?? .none }

    /// The case's name, for example `done`.
    public var description: String {
        switch self {
        case .none: "none"
        case .skipped: "skipped"
        case .failed: "failed"
        case .timeout: "timeout"
        case .done: "done"
        }
    }
}

/// The type of an elementary stream (track): `libvlc_track_type_t`.
public enum TrackType: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// The values of `libvlc_track_type_t`: `unknown` (`libvlc_track_unknown`, -1), `audio`
    /// (`libvlc_track_audio`), `video` (`libvlc_track_video`) and `text` (`libvlc_track_text`:
    /// subtitles).
    case unknown = -1, audio = 0, video = 1, text = 2

    init(native: Int32) { self = TrackType(rawValue: native) ?? .unknown }

    /// The case's name, for example `audio`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .audio: "audio"
        case .video: "video"
        case .text: "text"
        }
    }
}

/// A kind of media metadata (`libvlc_meta_t`).
public struct MetaKey: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `libvlc_meta_t` value.
    public let rawValue: UInt32
    /// The key of `libvlc_meta_t` value `rawValue` (one libvlc 3 defines or not).
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The title (`libvlc_meta_Title`).
    public static let title = MetaKey(rawValue: 0)
    /// The artist (`libvlc_meta_Artist`).
    public static let artist = MetaKey(rawValue: 1)
    /// The genre (`libvlc_meta_Genre`).
    public static let genre = MetaKey(rawValue: 2)
    /// The copyright notice (`libvlc_meta_Copyright`).
    public static let copyright = MetaKey(rawValue: 3)
    /// The album (`libvlc_meta_Album`).
    public static let album = MetaKey(rawValue: 4)
    /// The track number (`libvlc_meta_TrackNumber`).
    public static let trackNumber = MetaKey(rawValue: 5)
    /// The description (`libvlc_meta_Description`).
    public static let description = MetaKey(rawValue: 6)
    /// The rating (`libvlc_meta_Rating`).
    public static let rating = MetaKey(rawValue: 7)
    /// The date (`libvlc_meta_Date`).
    public static let date = MetaKey(rawValue: 8)
    /// The setting (`libvlc_meta_Setting`).
    public static let setting = MetaKey(rawValue: 9)
    /// The URL (`libvlc_meta_URL`).
    public static let url = MetaKey(rawValue: 10)
    /// The language (`libvlc_meta_Language`).
    public static let language = MetaKey(rawValue: 11)
    /// What is playing now (a stream's current title) (`libvlc_meta_NowPlaying`).
    public static let nowPlaying = MetaKey(rawValue: 12)
    /// The publisher (`libvlc_meta_Publisher`).
    public static let publisher = MetaKey(rawValue: 13)
    /// Who or what encoded it (`libvlc_meta_EncodedBy`).
    public static let encodedBy = MetaKey(rawValue: 14)
    /// The URL of the artwork (`libvlc_meta_ArtworkURL`).
    public static let artworkURL = MetaKey(rawValue: 15)
    /// The track identifier (`libvlc_meta_TrackID`).
    public static let trackID = MetaKey(rawValue: 16)
    /// The number of tracks (`libvlc_meta_TrackTotal`).
    public static let trackTotal = MetaKey(rawValue: 17)
    /// The director (`libvlc_meta_Director`).
    public static let director = MetaKey(rawValue: 18)
    /// The season (`libvlc_meta_Season`).
    public static let season = MetaKey(rawValue: 19)
    /// The episode (`libvlc_meta_Episode`).
    public static let episode = MetaKey(rawValue: 20)
    /// The show's name (`libvlc_meta_ShowName`).
    public static let showName = MetaKey(rawValue: 21)
    /// The actors (`libvlc_meta_Actors`).
    public static let actors = MetaKey(rawValue: 22)
    /// The album's artist (`libvlc_meta_AlbumArtist`).
    public static let albumArtist = MetaKey(rawValue: 23)
    /// The disc number (`libvlc_meta_DiscNumber`).
    public static let discNumber = MetaKey(rawValue: 24)
    /// The number of discs (`libvlc_meta_DiscTotal`).
    public static let discTotal = MetaKey(rawValue: 25)

    private static let names = [
        "Title", "Artist", "Genre", "Copyright", "Album", "TrackNumber", "Description", "Rating",
        "Date", "Setting", "URL", "Language", "NowPlaying", "Publisher", "EncodedBy", "ArtworkURL",
        "TrackID", "TrackTotal", "Director", "Season", "Episode", "ShowName", "Actors",
        "AlbumArtist", "DiscNumber", "DiscTotal",
    ]

    /// Every key libvlc 3 defines.
    public static let allKeys = (0..<UInt32(names.count)).map(MetaKey.init(rawValue:))

    /// libvlc's name of the key (`Title`, `Artist` …).
    public var name: String {
        rawValue < Self.names.count ? Self.names[Int(rawValue)] : "Meta\(rawValue)"
    }

    /// libvlc's name of the key (`name`).
    public var description: String { name }
}
