// Values/ — plain values that cross the API: states, parse results, track types and metadata
// keys, tracks, and `VLCError`. No state and no queues; the only libvlc calls read values (the
// track list, codec descriptions, libvlc's last error message).

/// The state of a media or player, as libvlc reports it (`libvlc_state_t`).
public enum PlaybackState: Int32, Sendable, CaseIterable, CustomStringConvertible {
    case nothingSpecial = 0, opening, buffering, playing, paused, stopped, ended, error

    init(native: Int32) { self = PlaybackState(rawValue: native) ?? .nothingSpecial }

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
    case failed
    case timeout
    case done

    init(native: Int32) { self = ParsedStatus(rawValue: native) ?? .none }

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
    case unknown = -1, audio = 0, video = 1, text = 2

    init(native: Int32) { self = TrackType(rawValue: native) ?? .unknown }

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
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let title = MetaKey(rawValue: 0)
    public static let artist = MetaKey(rawValue: 1)
    public static let genre = MetaKey(rawValue: 2)
    public static let copyright = MetaKey(rawValue: 3)
    public static let album = MetaKey(rawValue: 4)
    public static let trackNumber = MetaKey(rawValue: 5)
    public static let description = MetaKey(rawValue: 6)
    public static let rating = MetaKey(rawValue: 7)
    public static let date = MetaKey(rawValue: 8)
    public static let setting = MetaKey(rawValue: 9)
    public static let url = MetaKey(rawValue: 10)
    public static let language = MetaKey(rawValue: 11)
    public static let nowPlaying = MetaKey(rawValue: 12)
    public static let publisher = MetaKey(rawValue: 13)
    public static let encodedBy = MetaKey(rawValue: 14)
    public static let artworkURL = MetaKey(rawValue: 15)
    public static let trackID = MetaKey(rawValue: 16)
    public static let trackTotal = MetaKey(rawValue: 17)
    public static let director = MetaKey(rawValue: 18)
    public static let season = MetaKey(rawValue: 19)
    public static let episode = MetaKey(rawValue: 20)
    public static let showName = MetaKey(rawValue: 21)
    public static let actors = MetaKey(rawValue: 22)
    public static let albumArtist = MetaKey(rawValue: 23)
    public static let discNumber = MetaKey(rawValue: 24)
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

    public var description: String { name }
}
