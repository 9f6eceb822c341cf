import Dispatch
import ExampleSupport
import Foundation
import MediaEvents

/// The options of `media-events replay`.
struct ReplayOptions {
    var file = ""
    var json = false
    var pace = ReplayPace.fast
    /// Print the file as a recording of the current version instead of replaying it.
    var convert = false

    static func parse(_ arguments: [String]) throws -> ReplayOptions {
        var options = ReplayOptions()
        var files: [String] = []
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextOption(positional: { files.append($0) }) {
            switch argument {
            case "--json": options.json = true
            case "--convert": options.convert = true
            case "--pace":
                let value = try reader.value(for: argument)
                switch value {
                case "fast": options.pace = .fast
                case "recorded": options.pace = .recorded
                default: throw UsageError("--pace must be recorded or fast, not '\(value)'")
                }
            case "-h", "--help":
                printOutput(Usage.replay)
                exit(0)
            default: throw UsageError("unknown option \(argument)")
            }
            if reader.hasAttachedValue { throw UsageError("\(argument) takes no value") }
        }
        guard files.count == 1, let file = files.first else {
            throw UsageError(files.isEmpty ? "replay needs a FILE" : "replay takes one FILE, not \(files.count)")
        }
        options.file = file
        return options
    }
}

/// `media-events replay`: plays a recording (or a `log --json` output, which reads as one) back
/// through MediaEvents' replay and prints each event as `log` prints it.
///
/// Every replayed object is observed like a real one; its events are written with the log's
/// own code (`EventRecord`, `EventLog`), with the context fields its lines had in the log
/// (`item`, `pass` …), and the log's other lines (`ItemFailed`, libvlc's messages) come back as
/// the recording's marks, each in its place. So the output is the log it came from, but for
/// `t` and `ts`.
struct ReplayCommand {
    let options: ReplayOptions

    func run() async -> Int32 {
        let recording: Recording
        do {
            recording = try Recording(contentsOf: URL(fileURLWithPath: options.file))
        } catch let error as RecordingError {
            printError("media-events: \(options.file): \(error)")
            return 1
        } catch {
            printError("media-events: \(options.file): \(error.localizedDescription)")
            return 1
        }
        if options.convert {
            Output.write(recording.jsonLines)
            return 0
        }
        let session: ReplaySession
        do {
            // Inline: the replay's one driver thread writes every line, in the recorded order.
            session = try ReplaySession(
                recording: recording, pace: options.pace, configuration: EventsDefaultConfiguration())
        } catch {
            printError("media-events: \(options.file): \(error)")
            return 1
        }
        let log = EventLog(format: options.json ? .json : .text, wallClock: options.json)
        var tokens: [EventSubscription] = []
        for object in recording.objects {
            tokens += observe(object, in: session, log: log)
        }
        tokens.append(
            session.marks.observe { mark in
                log.writeAlways(
                    EventRecord(source: mark.source ?? "mark", name: mark.name, fields: mark.fields.map(Self.field)))
            })
        await session.run()
        tokens.forEach { $0.cancel() }
        return 0
    }

    /// Writes `object`'s replayed events: the log's own records for the sources `log` prints,
    /// the recording's fields for the others (playbacks, playlists, discoverers, the VLM).
    private func observe(_ object: RecordedObject, in session: ReplaySession, log: EventLog) -> [EventSubscription] {
        let printer = ObjectPrinter(log: log, source: object.kind.rawValue, context: object.context.map(Self.field))
        switch object.kind {
        case .player:
            guard let player = session.player(for: object.id) else { return [] }
            return [player.observe { printer.write(EventRecord($0)) }]
        case .playbacks:
            guard let parent = object.parent, let player = session.player(for: parent) else { return [] }
            return [
                player.playbacks.observe { event in
                    var tags: [(String, JSONValue)] = [("playback", .int(Int64(event.playback.rawValue)))]
                    if let entry = event.entry { tags.append(("entry", .int(Int64(entry.rawValue)))) }
                    printer.write(event, tags: tags)
                }
            ]
        case .playlist:
            guard let playlist = session.playlistPlayer(for: object.id) else { return [] }
            return [playlist.observe { printer.write($0) }]
        case .media:
            return source(MediaEvent.self, object, session) { printer.write(EventRecord($0)) }
        case .list:
            return source(MediaListEvent.self, object, session) { printer.write(EventRecord($0)) }
        case .listPlayer:
            return source(MediaListPlayerEvent.self, object, session) { printer.write(EventRecord($0)) }
        case .mediaDiscoverer:
            return source(MediaDiscovererEvent.self, object, session) { printer.write($0) }
        case .rendererDiscoverer:
            return source(RendererDiscovererEvent.self, object, session) { printer.write($0) }
        case .vlm:
            return source(VLMEvent.self, object, session) { printer.write($0) }
        default:
            return []
        }
    }

    private func source<Event: VLCEvent>(
        _ type: Event.Type, _ object: RecordedObject, _ session: ReplaySession,
        _ handler: @escaping @Sendable (Event) -> Void
    ) -> [EventSubscription] {
        guard let source = session.source(of: type, for: object.id) else { return [] }
        return [source.observe(handler: handler)]
    }

    /// A recording's field as the log writes it.
    static func field(_ field: RecordedField) -> (String, JSONValue) {
        (field.name, value(field.value))
    }

    static func value(_ value: RecordedValue) -> JSONValue {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .number(let text): Int64(text).map { .int($0) } ?? Double(text).map { .double($0) } ?? .string(text)
        case .string(let text): .string(text)
        case .array(let values): .array(values.map(Self.value))
        case .object(let fields): .object(fields.map(field))
        }
    }
}

/// Writes one replayed object's events as `log` does, with the object's context fields.
private struct ObjectPrinter: Sendable {
    let log: EventLog
    let source: String
    let context: [(String, JSONValue)]

    func write(_ record: EventRecord) { log.write(record, context: context) }

    /// An event of a source `log` never printed: its name and the recording's fields.
    func write<Event: VLCEvent>(_ event: Event, tags: [(String, JSONValue)] = []) {
        write(
            EventRecord(
                source: source, name: event.name, fields: tags + Recording.fields(of: event).map(ReplayCommand.field),
                isProgress: event.kind.isProgress))
    }
}
