import ExampleSupport
import MediaEvents

/// `media-events probe`: parses media without playing them and prints what libvlc found.
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
                status = try await media.parse(options: isNetwork ? .network : .local,
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
            printOutput(options.json ? json(report) : text(report))
            if let failure = report.failure {
                printError("media-events: \(input): \(failure)")
                failed = true
            }
        }
        return failed ? 1 : 0
    }

    private func text(_ report: Report) -> String {
        var lines = [report.mrl, "  status:   \(report.status)"]
        if let ms = report.durationMs {
            lines.append("  duration: \(String(Double(ms) / 1000, decimals: 3)) s")
        }
        for (key, value) in report.meta { lines.append("  meta:     \(key)=\(value)") }
        for track in report.tracks { lines.append("  track:    \(track)") }
        for item in report.subItems { lines.append("  sub-item: \(item)") }
        return lines.joined(separator: "\n")
    }

    private func json(_ report: Report) -> String {
        JSON.line([
            ("input", .string(report.input)), ("mrl", .string(report.mrl)),
            ("status", .string(report.status.description)),
            ("duration_ms", report.durationMs.map { .int($0) } ?? .null),
            ("meta", .object(report.meta.map { ($0.0, .string($0.1)) })),
            ("tracks", .array(report.tracks.map(Self.json))),
            ("sub_items", .array(report.subItems.map { .string($0) })),
        ])
    }

    private static func json(_ track: MediaTrack) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("type", .string(track.type.description)), ("id", .int(Int64(track.id))),
            ("codec", .string(track.codecName)), ("bitrate", .int(Int64(track.bitrate))),
        ]
        if let language = track.language { fields.append(("language", .string(language))) }
        if let channels = track.audioChannels { fields.append(("channels", .int(Int64(channels)))) }
        if let rate = track.audioRate { fields.append(("rate", .int(Int64(rate)))) }
        if let width = track.videoWidth { fields.append(("width", .int(Int64(width)))) }
        if let height = track.videoHeight { fields.append(("height", .int(Int64(height)))) }
        return .object(fields)
    }
}
