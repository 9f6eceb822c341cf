import CLibVLC
import Glibc

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
        guard
            let text = libvlc_media_get_codec_description(
                libvlc_track_type_t(rawValue: type.rawValue), codec)
        else { return codecName }
        return String(cString: text)
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

    init(native track: libvlc_media_track_t) {
        let type = TrackType(native: track.i_type.rawValue)
        self.type = type
        codec = track.i_codec
        originalFourCC = track.i_original_fourcc
        id = Int(track.i_id)
        profile = Int(track.i_profile)
        level = Int(track.i_level)
        bitrate = Int(track.i_bitrate)
        language = track.psz_language.map { String(cString: $0) }
        trackDescription = track.psz_description.map { String(cString: $0) }
        let audio = type == .audio ? track.audio?.pointee : nil
        audioChannels = audio.map { Int($0.i_channels) }
        audioRate = audio.map { Int($0.i_rate) }
        let video = type == .video ? track.video?.pointee : nil
        videoWidth = video.map { Int($0.i_width) }
        videoHeight = video.map { Int($0.i_height) }
        frameRateFraction = video.flatMap { video in
            video.i_frame_rate_num > 0 && video.i_frame_rate_den > 0
                ? FrameRate(numerator: Int(video.i_frame_rate_num), denominator: Int(video.i_frame_rate_den)) : nil
        }
        frameRate = frameRateFraction.map { Double($0.numerator) / Double($0.denominator) }
        subtitleEncoding = type == .text ? track.subtitle?.pointee.psz_encoding.map { String(cString: $0) } : nil
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
    public var tracks: [MediaTrack] {
        var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_track_t>?>?
        let count = libvlc_media_tracks_get(native.raw, &array)
        guard count > 0, let array else { return [] }
        defer { libvlc_media_tracks_release(array, count) }
        return (0..<Int(count)).compactMap { array[$0].map { MediaTrack(native: $0.pointee) } }
    }
}
