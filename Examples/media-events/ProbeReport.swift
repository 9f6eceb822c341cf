import ExampleSupport
import MediaEvents

/// What `media-events probe` found for one media, in the shape of its output: the JSON
/// object that `Schemas/probe.schema.json` describes (every key always present, `null` when
/// unknown, snake_case), or the text report.
struct ProbeReport {
    /// Why a media gives no usable report; `code` is stable for scripts.
    struct Failure {
        /// `InvalidURL`, `ParseRefused`, `ParseFailed`, `Timeout`, `EncounteredError`, `NoTracks`.
        let code: String
        /// What the program saw, in its own words.
        let message: String
        /// libvlc's own error messages for it, joined with "; "; `nil` when it logged none.
        let cause: String?

        /// One line for people: libvlc's words when known, otherwise the program's.
        var text: String { cause ?? message }
    }

    /// One track, its facts merged from the preparser's and the playing stream's.
    struct Track {
        var index: Int
        var id: Int
        var type: TrackType
        var codecTag: String
        var codecDescription: String
        var profile: Int?
        var level: Int?
        var bitRate: Int?
        var language: String?
        var title: String?
        var channels: Int?
        var sampleRate: Int?
        var bitsPerSample: Int?
        var width: Int?
        var height: Int?
        var pixelFormat: String?
        var frameRate: FrameRate?
        var encoding: String?

        /// ffprobe's name of the codec, `nil` when the table does not know libvlc's FourCC.
        var codecName: String? { FFprobeNames.codecName(fourCC: codecTag) }
    }

    /// A title with its chapters.
    struct Title {
        let name: String?
        let durationMs: Int64
        let chapters: [ChapterDescription]
    }

    let input: String
    var mrl: String?
    /// How libvlc's preparser ended; `nil` when it was not asked (an invalid URL).
    var status: ParsedStatus?
    var failure: Failure?
    var durationMs: Int64?
    /// ffprobe's `format_name`.
    var formatName: String?
    /// The libvlc demuxer module that opened the media.
    var demuxer: String?
    var sizeBytes: Int64?
    var meta: [(key: String, value: String?)] = []
    var tracks: [Track] = []
    var subItems: [String] = []
    /// `nil` when not read (`--parse-only`, or the media did not play).
    var titles: [Title]?

    /// The overall bit rate as ffprobe computes it when the container does not state one:
    /// the file's size over its duration, in bits per second.
    var bitRate: Int64? {
        guard let sizeBytes, let durationMs, durationMs > 0 else { return nil }
        return sizeBytes * 8 * 1000 / durationMs
    }

    // MARK: JSON

    /// The report as one JSON line.
    var json: String {
        JSON.line([
            ("input", .string(input)), ("mrl", Self.value(mrl)),
            ("status", Self.value(status?.description)),
            (
                "error",
                failure.map { failure in
                    .object([
                        ("code", .string(failure.code)), ("message", .string(failure.message)),
                        ("cause", Self.value(failure.cause)),
                    ])
                } ?? .null
            ),
            ("duration_ms", Self.value(durationMs)),
            (
                "format",
                .object([
                    ("name", Self.value(formatName)), ("demuxer", Self.value(demuxer)),
                    ("size", Self.value(sizeBytes)), ("bit_rate", Self.value(bitRate)),
                ])
            ),
            ("meta", .object(meta.map { ($0.key, Self.value($0.value)) })),
            ("tracks", .array(tracks.map(Self.json))),
            ("sub_items", .array(subItems.map { .string($0) })),
            ("titles", titles.map { .array($0.map(Self.json)) } ?? .null),
        ])
    }

    private static func json(_ track: Track) -> JSONValue {
        .object([
            ("index", .int(Int64(track.index))), ("id", .int(Int64(track.id))),
            ("type", .string(track.type.description)),
            ("codec_name", value(track.codecName)), ("codec_tag", .string(track.codecTag)),
            ("codec_description", .string(track.codecDescription)),
            ("profile", value(track.profile)), ("level", value(track.level)),
            ("bit_rate", value(track.bitRate)), ("language", value(track.language)),
            ("title", value(track.title)), ("channels", value(track.channels)),
            ("sample_rate", value(track.sampleRate)), ("bits_per_sample", value(track.bitsPerSample)),
            ("width", value(track.width)), ("height", value(track.height)),
            ("pixel_format", value(track.pixelFormat)),
            ("frame_rate", value(track.frameRate.map { Self.ffmpegFraction($0).description })),
            ("encoding", value(track.encoding)),
        ])
    }

    private static func json(_ title: Title) -> JSONValue {
        .object([
            ("name", value(title.name)), ("duration_ms", .int(title.durationMs)),
            (
                "chapters",
                .array(
                    title.chapters.map { chapter in
                        .object([
                            ("name", value(chapter.name)), ("offset_ms", .int(chapter.offset)),
                            ("duration_ms", .int(chapter.duration)),
                        ])
                    })
            ),
        ])
    }

    private static func value(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
    private static func value(_ number: Int?) -> JSONValue { number.map { .int(Int64($0)) } ?? .null }
    private static func value(_ number: Int64?) -> JSONValue { number.map { .int($0) } ?? .null }

    // MARK: Text

    /// The report for people; what is unknown is left out.
    var text: String {
        var lines = [mrl ?? input]
        if let status { lines.append("  status:   \(status)") }
        if let failure { lines.append("  error:    \(failure.code): \(failure.text)") }
        if let durationMs { lines.append("  duration: \(String(Double(durationMs) / 1000, decimals: 3)) s") }
        if formatName != nil || demuxer != nil || sizeBytes != nil {
            var line = "  format:   \(formatName ?? "?")"
            if let demuxer { line += " (demuxer \(demuxer))" }
            if let sizeBytes { line += " \(sizeBytes) bytes" }
            if let bitRate { line += " \(bitRate / 1000) kb/s" }
            lines.append(line)
        }
        for (key, value) in meta { if let value { lines.append("  meta:     \(key)=\(value)") } }
        for track in tracks { lines.append("  track:    \(Self.text(track))") }
        for item in subItems { lines.append("  sub-item: \(item)") }
        for (index, title) in (titles ?? []).enumerated() {
            var line = "  title:    #\(index) \(Self.seconds(title.durationMs)) s"
            if let name = title.name { line += " \"\(name)\"" }
            lines.append(line)
            for (number, chapter) in title.chapters.enumerated() {
                var line =
                    "  chapter:  #\(index).\(number) at \(Self.seconds(chapter.offset)) s for \(Self.seconds(chapter.duration)) s"
                if let name = chapter.name { line += " \"\(name)\"" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `audio #0 flac [flac] (FLAC (Free Lossless Audio Codec)) 2ch 44100Hz 24bit`,
    /// `video #0 h264 [h264] (H264 - MPEG-4 AVC (part 10)) 160x120 yuv420p 25 fps [eng] "Main"`.
    private static func text(_ track: Track) -> String {
        var text = "\(track.type) #\(track.id) \(track.codecName ?? "?") [\(track.codecTag)]"
        if track.codecDescription != track.codecTag { text += " (\(track.codecDescription))" }
        if let channels = track.channels { text += " \(channels)ch" }
        if let rate = track.sampleRate { text += " \(rate)Hz" }
        if let bits = track.bitsPerSample { text += " \(bits)bit" }
        if let width = track.width, let height = track.height { text += " \(width)x\(height)" }
        if let format = track.pixelFormat { text += " \(format)" }
        if let rate = track.frameRate.map(ffmpegFraction) {
            let fps = TextFormat.significant(Double(rate.numerator) / Double(rate.denominator), digits: 5)
            text += " \(TextFormat.seconds(fps)) fps"
            if rate.denominator != 1 { text += " (\(rate))" }
        }
        if let bitRate = track.bitRate { text += " \(bitRate / 1000) kb/s" }
        if let language = track.language { text += " [\(language)]" }
        if let title = track.title { text += " \"\(title)\"" }
        return text
    }

    /// `rate` as FFmpeg states a rate: the nearest fraction whose terms are at most 30000
    /// (libavutil's `av_reduce`, which its Matroska demuxer applies to a frame duration in
    /// nanoseconds). libvlc turns Matroska's 41666000 ns into 500000/20833; FFmpeg, and so
    /// this report, says 24/1. Exact fractions within the bound (30000/1001) stay as they are.
    static func ffmpegFraction(_ rate: FrameRate) -> FrameRate {
        let maximum = 30000
        var (num, den) = (rate.reduced.numerator, rate.reduced.denominator)
        if num <= maximum && den <= maximum { return FrameRate(numerator: num, denominator: den) }
        var (a0, a1) = ((num: 0, den: 1), (num: 1, den: 0))
        while den != 0 {
            var x = num / den
            let nextDen = num - den * x
            let (a2n, a2d) = (x * a1.num + a0.num, x * a1.den + a0.den)
            if a2n > maximum || a2d > maximum {
                if a1.num != 0 { x = (maximum - a0.num) / a1.num }
                if a1.den != 0 { x = min(x, (maximum - a0.den) / a1.den) }
                if den * (2 * x * a1.den + a0.den) > num * a1.den {
                    a1 = (x * a1.num + a0.num, x * a1.den + a0.den)
                }
                break
            }
            (a0, a1) = (a1, (a2n, a2d))
            (num, den) = (den, nextDen)
        }
        return a1.den > 0 ? FrameRate(numerator: a1.num, denominator: a1.den) : rate.reduced
    }

    /// Milliseconds as seconds with three decimals.
    private static func seconds(_ ms: Int64) -> String { String(Double(ms) / 1000, decimals: 3) }
}
