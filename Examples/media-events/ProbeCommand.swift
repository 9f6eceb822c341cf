import ExampleSupport
import Foundation
import Glibc
import MediaEvents

/// `media-events probe`: parses media, opens those with tracks briefly in a silent player for
/// what libvlc knows only while they play, and prints one report per media.
struct ProbeCommand {
    let options: ProbeOptions

    /// Runs the command; returns the exit status.
    func run() async -> Int32 {
        let library: VLCLibrary
        do {
            library = try VLCLibrary()
        } catch {
            printError("media-events: \(error)")
            return 1
        }
        var failed = false
        for input in options.inputs {
            let report = await probe(input, library: library)
            printOutput(options.json ? report.json : report.text)
            if let failure = report.failure {
                printError("media-events: \(input): \(failure.text)")
                failed = true
            }
        }
        return failed ? 1 : 0
    }

    private func probe(_ input: String, library: VLCLibrary) async -> ProbeReport {
        var report = ProbeReport(input: input)
        report.meta = Self.metaKeys.map { ($0.name, nil) }
        guard let media = MediaInput.media(input, library: library) else {
            report.failure = .init(code: "InvalidURL", message: "not a valid URL", cause: nil)
            return report
        }
        report.mrl = media.mrl
        // A network URL is only opened when asked to: the local-only default skips it.
        let isNetwork = input.contains("://") && !input.hasPrefix("file://")
        let status: ParsedStatus
        do {
            status = try await media.parse(
                options: isNetwork ? .network : .local,
                timeout: .milliseconds(Int64(options.timeout * 1000)))
        } catch {
            report.failure = .init(code: "ParseRefused", message: "\(error)", cause: nil)
            return report
        }
        report.status = status
        let preparsed = media.tracks
        report.durationMs = media.duration.flatMap { $0 > 0 ? $0 : nil }
        report.subItems = media.subItems.map(\.mrl)
        report.sizeBytes = Self.fileSize(input)

        // A media with tracks plays for its facts; one the preparser could not open plays for
        // libvlc's words on why (the preparser logs none).
        var playback: ProbePlayback?
        let wouldPlay = (status == .done && !preparsed.isEmpty) || status == .failed || status == .timeout
        if !options.parseOnly && wouldPlay {
            let tracing = Self.traceFile != nil
            let first = await ProbePlayback.run(
                media, library: library, timeout: options.timeout, windowMs: options.windowMs, tracing: tracing)
            playback = first
            if Self.playsAgain(first, windowMs: options.windowMs) {
                let second = await ProbePlayback.run(
                    media, library: library, timeout: options.timeout, windowMs: options.windowMs, tracing: tracing)
                let kept = second.played && !second.facts.audioDecoderOutputNothing
                if kept { playback = second }
                Self.writeTrace(
                    input: input,
                    lines: first.trace + ["-- played again: no decoded audio reached the output (kept: \(kept))"]
                        + second.trace)
            } else {
                Self.writeTrace(input: input, lines: first.trace)
            }
        }
        report.meta = Self.meta(of: media, demuxer: playback?.facts.demuxer)
        report.tracks = Self.tracks(preparsed: preparsed, playback: playback)
        if let playback, playback.played {
            report.titles = playback.titles
            if playback.durationMs > 0 { report.durationMs = playback.durationMs }
            report.demuxer = playback.facts.demuxer
            report.formatName = playback.facts.demuxer.flatMap {
                FFprobeNames.formatName(demuxer: $0, firstCodec: report.tracks.first?.codecTag)
            }
        }
        report.failure = Self.failure(status: status, report: report, playback: playback, timeout: options.timeout)
        return report
    }

    /// Whether `first` is played once more: an audio decoder was loaded and nothing it
    /// decoded reached the audio output, so what only the decoder tells (a FLAC's channel
    /// count and bit depth) is unknown. Seen once in CI, where a FLAC's playback ended with
    /// neither. Not when the window was empty (`--play 0`), timed out or ended in an error:
    /// playing again would not change that.
    static func playsAgain(_ first: ProbePlayback, windowMs: Int64) -> Bool {
        first.played && windowMs > 0 && !first.windowTimedOut && first.end?.kind != .encounteredError
            && first.facts.audioDecoderOutputNothing
    }

    /// Where `MEDIA_EVENTS_PROBE_TRACE` says the probe appends how each playback went (for the
    /// tests, which show it when a report disagrees with ffprobe's); `nil` when unset.
    private static let traceFile = ProcessInfo.processInfo.environment["MEDIA_EVENTS_PROBE_TRACE"]

    /// Appends `input`'s section (a line `== input`, then `lines`) to the trace file, if any.
    private static func writeTrace(input: String, lines: [String]) {
        guard let path = traceFile,
            FileManager.default.fileExists(atPath: path) || FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else { return }
        _ = try? file.seekToEnd()
        try? file.write(contentsOf: Data((["== \(input)"] + lines).map { $0 + "\n" }.joined().utf8))
        try? file.close()
    }

    /// Why the media gives no usable report, `nil` when it does.
    private static func failure(
        status: ParsedStatus, report: ProbeReport, playback: ProbePlayback?, timeout: Double
    ) -> ProbeReport.Failure? {
        if let playback, playback.played {
            return report.tracks.isEmpty
                ? .init(code: "NoTracks", message: "no tracks or sub-items found", cause: nil) : nil
        }
        if let end = playback?.end, end.kind == .encounteredError {
            return .init(
                code: "EncounteredError", message: "libvlc could not open it (parsing \(status))",
                cause: end.causeText)
        }
        switch status {
        case .done:
            guard report.tracks.isEmpty && report.subItems.isEmpty else { return nil }
            return .init(code: "NoTracks", message: "no tracks or sub-items found", cause: nil)
        case .timeout:
            return .init(
                code: "Timeout", message: "parsing timed out after \(TextFormat.seconds(timeout)) s", cause: nil)
        default:
            if playback?.timedOut == true {
                return .init(
                    code: "Timeout", message: "not playing after \(TextFormat.seconds(timeout)) s (parsing \(status))",
                    cause: nil)
            }
            return .init(code: "ParseFailed", message: "parsing \(status)", cause: nil)
        }
    }

    // MARK: Tracks

    /// The tracks, each fact from the playing stream where it played and libvlc knows it
    /// there (the decoders' output corrects the preparser: a FLAC's channel count), the
    /// preparser's otherwise. 0 means unknown in libvlc's track list: `nil` here.
    private static func tracks(preparsed: [MediaTrack], playback: ProbePlayback?) -> [ProbeReport.Track] {
        let played = playback.map { $0.played ? $0.tracks : [] } ?? []
        let source = preparsed.isEmpty ? played : preparsed
        return source.enumerated().map { index, track in
            let live = played.first { $0.id == track.id && $0.type == track.type }
            func known(_ value: Int?) -> Int? { value.flatMap { $0 > 0 ? $0 : nil } }
            func pick(_ value: (MediaTrack) -> Int?) -> Int? { known(live.flatMap(value)) ?? known(value(track)) }
            func text(_ value: String?) -> String? {
                guard let value, !value.isEmpty, value != "und" else { return nil }
                return value
            }
            var report = ProbeReport.Track(
                index: index, id: track.id, type: track.type,
                codecTag: track.codecName.trimmingCharacters(in: CharacterSet(charactersIn: " \0")),
                codecDescription: track.codecDescription,
                profile: pick(\.profile), level: pick(\.level), bitRate: pick(\.bitrate),
                language: text(track.language), title: text(track.trackDescription),
                channels: pick(\.audioChannels), sampleRate: pick(\.audioRate), bitsPerSample: nil,
                width: pick(\.videoWidth), height: pick(\.videoHeight), pixelFormat: nil,
                frameRate: live?.frameRateFraction ?? track.frameRateFraction,
                encoding: text(track.subtitleEncoding))
            if let playback {
                if track.type == .audio, Self.isDecoded(track, id: playback.decodedAudio, among: source) {
                    report.bitsPerSample = playback.facts.bitsPerSample ?? pcmBits(report.codecTag)
                } else if track.type == .audio {
                    report.bitsPerSample = pcmBits(report.codecTag)
                }
                if track.type == .video, Self.isDecoded(track, id: playback.decodedVideo, among: source) {
                    report.pixelFormat = playback.facts.pixelFormat
                }
            } else if track.type == .audio {
                report.bitsPerSample = pcmBits(report.codecTag)
            }
            return report
        }
    }

    /// Whether `track` is the one of its type that was decoded: the selected one, or the only
    /// one when the selection was gone (the input ended within the window).
    private static func isDecoded(_ track: MediaTrack, id: Int?, among tracks: [MediaTrack]) -> Bool {
        if let id { return track.id == id }
        return tracks.filter { $0.type == track.type }.count == 1
    }

    /// The sample size of a PCM FourCC (`s24l`: 24), `nil` for any other codec.
    private static func pcmBits(_ fourCC: String) -> Int? {
        guard fourCC.count >= 2, ["s", "u", "f"].contains(fourCC.first) else { return nil }
        let digits = fourCC.dropFirst().prefix { $0.isNumber }
        return ["8", "16", "24", "32", "64"].contains(String(digits)) ? Int(digits) : nil
    }

    // MARK: Meta

    /// libvlc's meta keys, in its order, with the snake_case names the report gives them.
    static let metaKeys: [(key: MetaKey, name: String)] = MetaKey.allKeys.map { key in
        let names: [String: String] = [
            "TrackNumber": "track_number", "URL": "url", "NowPlaying": "now_playing", "EncodedBy": "encoded_by",
            "ArtworkURL": "artwork_url", "TrackID": "track_id", "TrackTotal": "track_total",
            "ShowName": "show_name", "AlbumArtist": "album_artist", "DiscNumber": "disc_number",
            "DiscTotal": "disc_total",
        ]
        return (key, names[key.name] ?? key.name.lowercased())
    }

    /// Every meta key, `nil` where the media has none, mapped as the container means them:
    /// - libvlc gives a media without a title its file name as `Title`: that is no title.
    /// - Matroska's tags without a target (or with target 50, the whole movie or album) are
    ///   the file's own: libvlc reads `ARTIST` there as `AlbumArtist`; when it found no other
    ///   artist, that is the file's `artist` (ffprobe's `ARTIST`); `PART_NUMBER` there, which
    ///   libvlc reads as `Episode`, is the `track_number` (ffprobe's `track`, and what FFmpeg
    ///   writes for it) when libvlc found no other.
    private static func meta(of media: VLCMedia, demuxer: String?) -> [(key: String, value: String?)] {
        var values = Dictionary(
            uniqueKeysWithValues: metaKeys.map { ($0.name, media.meta($0.key).flatMap { $0.isEmpty ? nil : $0 }) })
        if let title = values["title"] ?? nil, title == Self.itemName(media.mrl) { values["title"] = .some(nil) }
        if demuxer == "mkv", (values["artist"] ?? nil) == nil, let albumArtist = values["album_artist"] ?? nil {
            values["artist"] = albumArtist
            values["album_artist"] = .some(nil)
        }
        if demuxer == "mkv", (values["track_number"] ?? nil) == nil, let episode = values["episode"] ?? nil {
            values["track_number"] = episode
            values["episode"] = .some(nil)
        }
        return metaKeys.map { ($0.name, values[$0.name] ?? nil) }
    }

    /// The name libvlc gives an input item: the last component of its MRL, percent-decoded.
    private static func itemName(_ mrl: String) -> String {
        let last = mrl.split(separator: "/").last.map(String.init) ?? mrl
        return last.removingPercentEncoding ?? last
    }

    /// The size of a local file, `nil` for a URL of another scheme or a file that cannot be
    /// read.
    private static func fileSize(_ input: String) -> Int64? {
        if input.contains("://") && !input.hasPrefix("file://") { return nil }
        var info = stat()
        let path = MediaInput.localPathBytes(input)
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}
