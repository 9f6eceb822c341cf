import ExampleSupport
import Foundation
import MediaEvents

/// `media-events probe`: parses media (and opens those with tracks briefly for their titles and
/// chapters) and prints what libvlc found.
struct ProbeCommand {
    let options: ProbeOptions

    /// What parsing one media gave.
    struct Report {
        let input: String
        let mrl: String
        let status: ParsedStatus
        let durationMs: Int64?
        let meta: [(String, String)]
        let tracks: [MediaTrack]
        let subItems: [String]
        /// Titles with their chapters (read from a briefly opened player: libvlc knows them
        /// only while an input runs).
        var titles: [(title: TitleDescription, chapters: [ChapterDescription])] = []

        /// libvlc says `done` for bytes it can open but not decode: without a track or a
        /// sub-item there is nothing to play, so that counts as a failure too.
        var failure: String? {
            switch status {
            case .done: tracks.isEmpty && subItems.isEmpty ? "no tracks or sub-items found" : nil
            case .timeout: "parsing timed out after \(timeoutText)"
            default: "parsing \(status)"
            }
        }

        var timeoutText = ""

        /// The duration, left out when libvlc does not know it (a playlist says 0).
        var knownDuration: Int64? { durationMs.flatMap { $0 > 0 ? $0 : nil } }
    }

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
            guard let media = MediaInput.media(input, library: library) else {
                printError("media-events: \(input): not a valid URL")
                failed = true
                continue
            }
            // A network URL is only opened when asked to: the local-only default skips it.
            let isNetwork = input.contains("://") && !input.hasPrefix("file://")
            let status: ParsedStatus
            do {
                status = try await media.parse(
                    options: isNetwork ? .network : .local,
                    timeout: .milliseconds(Int64(options.timeout * 1000)))
            } catch {
                printError("media-events: \(input): \(error)")
                failed = true
                continue
            }
            var report = Report(
                input: input, mrl: media.mrl, status: status, durationMs: media.duration,
                meta: MetaKey.allKeys.compactMap { key in media.meta(key).map { (key.name, $0) } },
                tracks: media.tracks, subItems: media.subItems.map(\.mrl))
            report.timeoutText = "\(options.timeout) s"
            if options.chapters, report.failure == nil, !report.tracks.isEmpty {
                report.titles = await Self.titles(of: media, library: library, timeout: options.timeout)
            }
            printOutput(options.json ? json(report) : text(report))
            if let failure = report.failure {
                printError("media-events: \(input): \(failure)")
                failed = true
            }
        }
        return failed ? 1 : 0
    }

    /// Opens `media` in a player until it plays, pauses it, reads its titles and chapters, and
    /// stops.
    /// Media without titles (a WAV) give none.
    private static func titles(of media: VLCMedia, library: VLCLibrary, timeout: Double)
        async -> [(title: TitleDescription, chapters: [ChapterDescription])]
    {
        let player = VLCMediaPlayer(media: media, library: library)
        defer { player.stop() }
        guard
            let event = try? await player.play(
                until: .playing, .endReached, .encounteredError,
                timeout: .milliseconds(Int64(timeout * 1000))),
            event.kind == .playing
        else { return [] }
        // Paused first (queued before the reads): an input that ends has no titles left. Not
        // when it cannot pause: libvlc 3 stops such an input instead.
        if player.isPausable { player.pause() }
        var titles: [(title: TitleDescription, chapters: [ChapterDescription])] = []
        for (index, title) in await player.titles().enumerated() {
            titles.append((title, await player.chapters(ofTitle: index)))
        }
        await player.stopAndWait()
        return titles
    }

    private func text(_ report: Report) -> String {
        var lines = [report.mrl, "  status:   \(report.status)"]
        if let ms = report.knownDuration {
            lines.append("  duration: \(String(Double(ms) / 1000, decimals: 3)) s")
        }
        for (key, value) in report.meta { lines.append("  meta:     \(key)=\(value)") }
        for track in report.tracks { lines.append("  track:    \(Self.text(track))") }
        for item in report.subItems { lines.append("  sub-item: \(item)") }
        for (index, entry) in report.titles.enumerated() {
            var line = "  title:    #\(index) \(Self.seconds(entry.title.duration)) s"
            if let name = entry.title.name { line += " \"\(name)\"" }
            lines.append(line)
            for (number, chapter) in entry.chapters.enumerated() {
                var line =
                    "  chapter:  #\(index).\(number) at \(Self.seconds(chapter.offset)) s for \(Self.seconds(chapter.duration)) s"
                if let name = chapter.name { line += " \"\(name)\"" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `audio #0 mp3 (MPEG Audio layer 1/2/3) 2ch 44100Hz 128 kb/s [eng] "Commentary"`,
    /// `video #1 h264 (H264 - MPEG-4 AVC (part 10)) 160x120 25 fps`: what libvlc does not
    /// know is left out.
    private static func text(_ track: MediaTrack) -> String {
        var text = "\(track.type) #\(track.id) \(codec(track))"
        let description = track.codecDescription
        if description != track.codecName { text += " (\(description))" }
        if let channels = known(track.audioChannels) { text += " \(channels)ch" }
        if let rate = known(track.audioRate) { text += " \(rate)Hz" }
        if let width = known(track.videoWidth), let height = known(track.videoHeight) { text += " \(width)x\(height)" }
        if let rate = frameRate(track) { text += " \(rate.encoded) fps" }
        if let bitrate = known(track.bitrate) { text += " \(bitrate / 1000) kb/s" }
        if let language = track.language, !language.isEmpty { text += " [\(language)]" }
        if let name = track.trackDescription, !name.isEmpty { text += " \"\(name)\"" }
        return text
    }

    private func json(_ report: Report) -> String {
        var fields: [(String, JSONValue)] = [
            ("input", .string(report.input)), ("mrl", .string(report.mrl)),
            ("status", .string(report.status.description)),
        ]
        if let ms = report.knownDuration { fields.append(("duration_ms", .int(ms))) }
        fields += [
            ("meta", .object(report.meta.map { ($0.0, .string($0.1)) })),
            ("tracks", .array(report.tracks.map(Self.json))),
            ("sub_items", .array(report.subItems.map { .string($0) })),
        ]
        if !report.titles.isEmpty {
            fields.append(
                (
                    "titles",
                    .array(
                        report.titles.map { entry in
                            var title: [(String, JSONValue)] = []
                            if let name = entry.title.name { title.append(("name", .string(name))) }
                            title.append(("duration_ms", .int(entry.title.duration)))
                            title.append(
                                (
                                    "chapters",
                                    .array(
                                        entry.chapters.map { chapter in
                                            var fields: [(String, JSONValue)] = []
                                            if let name = chapter.name { fields.append(("name", .string(name))) }
                                            fields += [
                                                ("offset_ms", .int(chapter.offset)),
                                                ("duration_ms", .int(chapter.duration)),
                                            ]
                                            return .object(fields)
                                        })
                                ))
                            return .object(title)
                        })
                ))
        }
        return JSON.line(fields)
    }

    /// A track as ffprobe would show it where libvlc allows: fields it does not know (a bit
    /// rate, a size or a frame rate of 0, no language) are left out.
    private static func json(_ track: MediaTrack) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("type", .string(track.type.description)), ("id", .int(Int64(track.id))),
            ("codec", .string(codec(track))), ("codec_description", .string(track.codecDescription)),
        ]
        func add(_ key: String, _ value: Int?) {
            if let value = known(value) { fields.append((key, .int(Int64(value)))) }
        }
        add("bitrate", track.bitrate)
        if let language = track.language, !language.isEmpty { fields.append(("language", .string(language))) }
        if let name = track.trackDescription, !name.isEmpty { fields.append(("description", .string(name))) }
        add("channels", track.audioChannels)
        add("rate", track.audioRate)
        add("width", track.videoWidth)
        add("height", track.videoHeight)
        if let rate = frameRate(track) { fields.append(("frame_rate", rate)) }
        return .object(fields)
    }

    /// Milliseconds as seconds with three decimals.
    private static func seconds(_ ms: Int64) -> String { String(Double(ms) / 1000, decimals: 3) }

    /// The frame rate as a short number: `25` for 25/1, `29.97` for 30000/1001.
    private static func frameRate(_ track: MediaTrack) -> JSONValue? {
        guard let rate = track.frameRate else { return nil }
        let rounded = (rate * 1000).rounded() / 1000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? .int(Int64(rounded)) : .double(rounded)
    }

    /// The FourCC without the padding libvlc's short codes have ("mp3 " is "mp3").
    private static func codec(_ track: MediaTrack) -> String {
        track.codecName.trimmingCharacters(in: CharacterSet(charactersIn: " \0"))
    }

    /// `value` when libvlc knows it: 0 means unknown in its track list.
    private static func known(_ value: Int?) -> Int? {
        value.flatMap { $0 > 0 ? $0 : nil }
    }
}
