import MediaEvents

/// What libvlc's debug log says about one input while it plays, and its track list does not:
/// the demuxer that opened it, the pixel format of the decoded video and the bit depth of the
/// coded audio.
///
/// Read from the texts of the messages libvlc 3.0 logs at debug level (the probe subscribes
/// to them while its player runs; the preparser logs nothing). Each is one fixed `msg_Dbg`
/// of libvlc's source, matched by its object type and its start, never guessed from other
/// text; a message that is missing leaves the fact unknown (`nil`):
/// - the demuxer: `using demux module "mkv"` (object `demux`, src/modules/modules.c);
/// - the pixel format: FFmpeg's own name from libvlc's avcodec decoder, `available software
///   decoder output format 0 (yuv420p)` (modules/codec/avcodec/video.c); for libvlc's other
///   decoders the chroma of the video output, `original format sz 160x128, …, 4cc I420, …`
///   (src/video_output/video_output.c), translated by `FFprobeNames.pixelFormat`;
/// - the bit depth: `channels:2 samplerate:44100 bitspersamples:24` (modules/codec/flac.c) and
///   `samplerate:44100Hz channels:2 bits/sample:24` (modules/codec/araw.c, PCM). Lossy codecs
///   have none, as in ffprobe;
/// - whether an audio decoder was loaded, `using audio decoder module "flac"` (object
///   `decoder`, src/modules/modules.c), and whether any audio was decoded: the audio output's `input 's32l' 44100 Hz Stereo …`
///   (src/audio_output/filters.c), logged when a decoder's first samples reach it.
struct PlaybackLogFacts: Equatable {
    var demuxer: String?
    var pixelFormat: String?
    var bitsPerSample: Int?
    var audioDecoderLoaded = false
    var audioDecoded = false

    init(demuxer: String? = nil, pixelFormat: String? = nil, bitsPerSample: Int? = nil) {
        self.demuxer = demuxer
        self.pixelFormat = pixelFormat
        self.bitsPerSample = bitsPerSample
    }

    /// An audio decoder was loaded, yet no decoded sample reached the audio output: the
    /// facts only a decoder gives are unknown.
    var audioDecoderOutputNothing: Bool { audioDecoderLoaded && !audioDecoded }

    /// The facts of `messages`, oldest first; the first message of each kind wins (a
    /// decoder restarted on a format change says the same again).
    init(_ messages: [LogMessage]) {
        var voutChroma: String?
        for message in messages {
            let text = message.text
            switch message.objectType {
            case "demux" where demuxer == nil:
                demuxer = Self.quoted(after: "using demux module ", in: text)
            case "decoder":
                if message.module == "main", text.hasPrefix("using audio decoder module ") {
                    audioDecoderLoaded = true
                }
                if pixelFormat == nil, message.module == "avcodec",
                    let name = Self.parenthesized(after: "available software decoder output format ", in: text)
                {
                    pixelFormat = name
                }
                if bitsPerSample == nil, message.module == "flac" {
                    bitsPerSample = Self.number(after: "bitspersamples:", in: text)
                }
                if bitsPerSample == nil, message.module == "araw" {
                    bitsPerSample = Self.number(after: "bits/sample:", in: text)
                }
            case "audio output" where text.hasPrefix("input '"):
                audioDecoded = true
            case "video output" where text.hasPrefix("original format "):
                // Hardware surfaces (VAOP, VDV0) come first when the decoder tries them.
                if let chroma = Self.word(after: "4cc ", in: text), let name = FFprobeNames.pixelFormat(chroma: chroma),
                    voutChroma == nil
                {
                    voutChroma = name
                }
            default: break
            }
        }
        if pixelFormat == nil { pixelFormat = voutChroma }
    }

    /// `mkv` in `using demux module "mkv"`.
    private static func quoted(after prefix: String, in text: String) -> String? {
        guard text.hasPrefix(prefix) else { return nil }
        let rest = text.dropFirst(prefix.count)
        guard rest.first == "\"", rest.count >= 2, rest.last == "\"" else { return nil }
        return String(rest.dropFirst().dropLast())
    }

    /// `yuv420p` in `available software decoder output format 0 (yuv420p)`.
    private static func parenthesized(after prefix: String, in text: String) -> String? {
        guard text.hasPrefix(prefix), let open = text.firstIndex(of: "("), text.last == ")" else { return nil }
        let name = text[text.index(after: open)..<text.index(before: text.endIndex)]
        return name.isEmpty ? nil : String(name)
    }

    /// The whole number right after `marker`.
    private static func number(after marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// The word (up to a comma or space) right after `marker`.
    private static func word(after marker: String, in text: String) -> String? {
        guard let range = text.range(of: marker) else { return nil }
        let word = text[range.upperBound...].prefix { $0 != "," && $0 != " " }
        return word.isEmpty ? nil : String(word)
    }
}
