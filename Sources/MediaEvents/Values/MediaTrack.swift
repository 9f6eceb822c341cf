/// An elementary stream (track) of a parsed media, copied from `libvlc_media_tracks_get`.
public struct MediaTrack: Sendable, Hashable, CustomStringConvertible {
    /// Audio, video, text or unknown.
    public let type: TrackType
    /// The codec as a FourCC (for example `s16l` for 16-bit PCM).
    public let codec: UInt32
    /// The FourCC found in the file, before libvlc normalized it.
    public let originalFourCC: UInt32
    /// The track's identifier.
    public let id: Int
    /// Codec profile, 0 when unknown.
    public let profile: Int
    /// Codec level, 0 when unknown.
    public let level: Int
    /// Bit rate in bits per second, 0 when unknown.
    public let bitrate: Int
    /// Language code, if the media declares one.
    public let language: String?
    /// Description, if the media declares one.
    public let trackDescription: String?
    /// The number of audio channels (audio tracks).
    public let audioChannels: Int?
    /// Sample rate in hertz (audio tracks).
    public let audioRate: Int?
    /// Frame width in pixels (video tracks).
    public let videoWidth: Int?
    /// Frame height in pixels (video tracks).
    public let videoHeight: Int?
    /// Frames per second (`i_frame_rate_num / i_frame_rate_den`, video tracks); `nil` when
    /// libvlc does not know it (either is 0).
    public let frameRate: Double?
    /// The frame rate as libvlc holds it, a fraction (`i_frame_rate_num` over
    /// `i_frame_rate_den`: 30000/1001, not 29.97); `nil` when libvlc does not know it (either is
    /// 0, or not a video track). Not reduced: libvlc may give 50/2 for 25/1.
    public let frameRateFraction: FrameRate?
    /// Text encoding (subtitle tracks).
    public let subtitleEncoding: String?

    /// The codec as four characters.
    public var codecName: String { Self.fourCC(codec) }

    /// libvlc's human-readable name of the codec (for example "PCM S16 LE").
    public var codecDescription: String {
        NativeMedia.codecDescription(type: type.rawValue, codec: codec) ?? codecName
    }

    /// A one-line summary: type, id and codec, then channels and rate, frame size and language
    /// when known.
    public var description: String {
        var text = "\(type) #\(id) \(codecName)"
        if let audioChannels, let audioRate { text += " \(audioChannels)ch \(audioRate)Hz" }
        if let videoWidth, let videoHeight { text += " \(videoWidth)x\(videoHeight)" }
        if let language { text += " [\(language)]" }
        return text
    }

    static func fourCC(_ value: UInt32) -> String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A track as `NativeMedia.tracks` copies it; `frameRate` follows from `frameRateFraction`.
    init(
        type: TrackType, codec: UInt32, originalFourCC: UInt32, id: Int, profile: Int, level: Int, bitrate: Int,
        language: String?, trackDescription: String?, audioChannels: Int?, audioRate: Int?, videoWidth: Int?,
        videoHeight: Int?, frameRateFraction: FrameRate?, subtitleEncoding: String?
    ) {
        self.type = type
        self.codec = codec
        self.originalFourCC = originalFourCC
        self.id = id
        self.profile = profile
        self.level = level
        self.bitrate = bitrate
        self.language = language
        self.trackDescription = trackDescription
        self.audioChannels = audioChannels
        self.audioRate = audioRate
        self.videoWidth = videoWidth
        self.videoHeight = videoHeight
        self.frameRateFraction = frameRateFraction
        frameRate = frameRateFraction.map { Double($0.numerator) / Double($0.denominator) }
        self.subtitleEncoding = subtitleEncoding
    }
}

/// A video track's frames per second as a fraction: `numerator` frames every `denominator`
/// seconds (`libvlc_video_track_t`'s `i_frame_rate_num` and `i_frame_rate_den`).
public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
    /// Frames counted (`i_frame_rate_num`), more than 0.
    public let numerator: Int
    /// In this many seconds (`i_frame_rate_den`), more than 0.
    public let denominator: Int

    /// A rate of `numerator` frames every `denominator` seconds.
    public init(numerator: Int, denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The same rate in lowest terms (50/2 is 25/1; 30000/1001 stays).
    public var reduced: FrameRate {
        var (a, b) = (numerator, denominator)
        while b != 0 { (a, b) = (b, a % b) }
        return a > 0 ? FrameRate(numerator: numerator / a, denominator: denominator / a) : self
    }

    /// `30000/1001`.
    public var description: String { "\(numerator)/\(denominator)" }
}

extension VLCMedia {
    /// The tracks found by parsing (or playing); empty before.
    public var tracks: [MediaTrack] { native.tracks }
}
