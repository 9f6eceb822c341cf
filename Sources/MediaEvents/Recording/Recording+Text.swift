import Foundation

/// A recording as JSON Lines: written in the current version, read in it or from a log.
extension Recording {
    /// Reads the recording in the file at `url` (a recording, or a `media-events log --json`
    /// output or media daemon log).
    ///
    /// - Throws: `RecordingError` saying which line is wrong and why; the file's read error.
    public init(contentsOf url: URL) throws {
        let data = try Data(contentsOf: url)
        try self.init(jsonLines: String(decoding: data, as: UTF8.self))
    }

    /// Reads a recording from its text: a header line, then one line per entry. Text whose
    /// first line is not a header is read as a log (version 0): see ``Recording``.
    ///
    /// - Throws: `RecordingError` saying which line is wrong and why.
    public init(jsonLines text: String) throws {
        var lines: [(number: Int, fields: [RecordedField])] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.last == "\r" ? raw.dropLast() : raw
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            do {
                lines.append((index + 1, try RecordingJSON.parseObject(line)))
            } catch let error as RecordingJSON.SyntaxError {
                throw RecordingError(line: index + 1, message: "not JSON: \(error.message) at byte \(error.offset)")
            }
        }
        if let first = lines.first, first.fields[field: "format"] != nil {
            self = try TextReader.recording(header: first, lines: lines.dropFirst())
        } else {
            self = try TextReader.log(lines: lines)
        }
    }

    /// The recording as JSON Lines in the current version: a header line, then one line per
    /// entry, each ending with a newline.
    public var jsonLines: String {
        var text = RecordingJSON.line(headerFields) + "\n"
        for entry in entries { text += RecordingJSON.line(entry.lineFields) + "\n" }
        return text
    }

    /// Writes `jsonLines` to the file at `url`, replacing it.
    public func write(to url: URL) throws {
        try Data(jsonLines.utf8).write(to: url, options: .atomic)
    }

    /// The header line's fields.
    var headerFields: [RecordedField] {
        var fields = [
            RecordedField("format", .string(Self.formatName)), RecordedField("version", .integer(Self.formatVersion)),
            RecordedField("libvlc", .optional(libvlcVersion)),
        ]
        if let started { fields.append(RecordedField("started", .string(started))) }
        fields.append(RecordedField("objects", .array(objects.map { .object($0.headerFields) })))
        return fields
    }
}

extension RecordedObject {
    /// The object as the header lists it.
    var headerFields: [RecordedField] {
        var fields = [RecordedField("object", .integer(id.rawValue)), RecordedField("source", .string(kind.rawValue))]
        if let name { fields.append(RecordedField("name", .string(name))) }
        if let parent { fields.append(RecordedField("of", .integer(parent.rawValue))) }
        if !context.isEmpty { fields.append(RecordedField("context", .object(context))) }
        return fields
    }
}

extension RecordedEntry {
    /// The keys of an entry's line that are not its payload.
    static func headKeys(of kind: Kind) -> Set<String> {
        switch kind {
        case .event: ["seq", "t", "ts", "object", "source", "event", "playback", "entry"]
        case .call: ["seq", "t", "ts", "object", "source", "call"]
        case .mark: ["seq", "t", "ts", "mark", "source"]
        }
    }

    /// The entry as its line writes it.
    var lineFields: [RecordedField] {
        var head = [RecordedField("seq", .integer(seq)), RecordedField("t", .number(Self.seconds(time)))]
        if kind != .mark, let object { head.append(RecordedField("object", .integer(object.rawValue))) }
        if kind == .mark { head.append(RecordedField("mark", .string(name))) }
        if let source { head.append(RecordedField("source", .string(source))) }
        switch kind {
        case .event:
            head.append(RecordedField("event", .string(name)))
            if let playback { head.append(RecordedField("playback", .integer(Int64(playback.rawValue)))) }
            if let entry { head.append(RecordedField("entry", .integer(Int64(entry.rawValue)))) }
        case .call: head.append(RecordedField("call", .string(name)))
        case .mark: break
        }
        return head + fields
    }

    /// Seconds with six decimals: `12.000345`.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micros = seconds * 1_000_000 + Int64((Double(attoseconds) / 1e12).rounded())
        let sign = micros < 0 ? "-" : ""
        let fraction = String(abs(micros) % 1_000_000)
        return "\(sign)\(abs(micros) / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }

    /// `seconds` (a `t` field) as a duration, to the nanosecond.
    static func duration(seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}

/// Reads the lines of a recording or of a log.
private enum TextReader {
    typealias Line = (number: Int, fields: [RecordedField])

    static func recording(header: Line, lines: ArraySlice<Line>) throws -> Recording {
        func fail(_ message: String) -> RecordingError { RecordingError(line: header.number, message: message) }
        let fields = header.fields
        guard fields[field: "format"]?.stringValue == Recording.formatName else {
            throw fail("the header's format must be \"\(Recording.formatName)\"")
        }
        guard let version = fields[field: "version"]?.integerValue else { throw fail("the header has no version") }
        guard version >= 1, version <= Recording.formatVersion else {
            throw fail("version \(version) is not one this library reads (1 to \(Recording.formatVersion))")
        }
        guard case .array(let listed)? = fields[field: "objects"] else { throw fail("the header has no objects") }
        var objects: [RecordedObject] = []
        for value in listed {
            guard case .object(let object) = value, let id = object[field: "object"]?.integerValue, id > 0,
                let source = object[field: "source"]?.stringValue
            else { throw fail("each object needs an id (object, from 1) and a source") }
            let parent = object[field: "of"]?.integerValue.map { RecordedObject.ID(rawValue: Int($0)) }
            var context: [RecordedField] = []
            if case .object(let fields)? = object[field: "context"] { context = fields }
            let recorded = RecordedObject(
                id: RecordedObject.ID(rawValue: Int(id)), kind: RecordedObject.Kind(rawValue: source),
                name: object[field: "name"]?.stringValue, parent: parent, context: context)
            guard !objects.contains(where: { $0.id == recorded.id }) else { throw fail("object \(id) is listed twice") }
            objects.append(recorded)
        }
        let known = Set(objects.map(\.id))
        var entries: [RecordedEntry] = []
        for line in lines {
            entries.append(try entry(line, known: known))
        }
        var recording = Recording(
            libvlcVersion: fields[field: "libvlc"]?.stringValue, started: fields[field: "started"]?.stringValue,
            objects: objects, entries: entries)
        recording.version = Int(version)
        return recording
    }

    private static func entry(_ line: Line, known: Set<RecordedObject.ID>) throws -> RecordedEntry {
        func fail(_ message: String) -> RecordingError { RecordingError(line: line.number, message: message) }
        let fields = line.fields
        let kinds: [(RecordedEntry.Kind, String)] = [(.event, "event"), (.call, "call"), (.mark, "mark")]
        let found = kinds.filter { fields[field: $0.1] != nil }
        guard found.count == 1, let (kind, key) = found.first, let name = fields[field: key]?.stringValue else {
            throw fail("a line needs exactly one of event, call or mark, with a name")
        }
        guard let seq = fields[field: "seq"]?.integerValue else { throw fail("the line has no seq") }
        guard let seconds = fields[field: "t"]?.doubleValue else { throw fail("the line has no time t") }
        var object: RecordedObject.ID?
        if kind != .mark {
            guard let raw = fields[field: "object"]?.integerValue else { throw fail("the \(key) has no object") }
            object = RecordedObject.ID(rawValue: Int(raw))
            guard known.contains(object!) else { throw fail("object \(raw) is not in the header") }
        }
        var playback: PlaybackID?
        var entry: PlaylistEntryID?
        if kind == .event {
            playback = try tag(fields, "playback", fail)
            entry = try tag(fields, "entry", fail).map { PlaylistEntryID(rawValue: $0.rawValue) }
        }
        let head = RecordedEntry.headKeys(of: kind)
        return RecordedEntry(
            seq: Int(seq), time: RecordedEntry.duration(seconds: seconds), kind: kind, name: name, object: object,
            source: fields[field: "source"]?.stringValue, playback: playback, entry: entry,
            fields: fields.filter { !head.contains($0.name) })
    }

    private static func tag(
        _ fields: [RecordedField], _ key: String, _ fail: (String) -> RecordingError
    ) throws -> PlaybackID? {
        guard let value = fields[field: key], !value.isNull else { return nil }
        guard let raw = value.integerValue, raw > 0 else { throw fail("\(key) must be a number from 1") }
        return PlaybackID(rawValue: UInt64(raw))
    }

    /// Whether `codec` can make the event `entry` records again.
    private static func canMake<Codec: RecordingCodable>(_ entry: RecordedEntry, with codec: Codec.Type) -> Bool {
        (try? codec.prepare(entry)) != nil
    }

    /// A log: each line's source with its context is an object; a line of a source that is no
    /// object kind, or whose event that kind does not send, is a mark.
    static func log(lines: [Line]) throws -> Recording {
        var objects: [RecordedObject] = []
        var objectKeys: [String: RecordedObject.ID] = [:]
        var entries: [RecordedEntry] = []
        let head: Set<String> = ["seq", "t", "ts", "source", "event"]
        for (index, line) in lines.enumerated() {
            let fields = line.fields
            guard let source = fields[field: "source"]?.stringValue, let name = fields[field: "event"]?.stringValue
            else {
                throw RecordingError(
                    line: line.number,
                    message: "neither a recording's header nor a log line (which has source and event)")
            }
            let seq = fields[field: "seq"]?.integerValue.map(Int.init) ?? index + 1
            let time = RecordedEntry.duration(seconds: fields[field: "t"]?.doubleValue ?? 0)
            let rest = fields.filter { !head.contains($0.name) }
            let kind = RecordedObject.Kind(rawValue: source)
            let codec = RecordingCodec.codable(for: kind)
            guard let payloadNames = codec?.payloadFieldNames(ofEventNamed: name) else {
                entries.append(
                    RecordedEntry(seq: seq, time: time, kind: .mark, name: name, source: source, fields: rest))
                continue
            }
            let tags: Set<String> = kind == .playbacks ? ["playback", "entry"] : []
            let payload = rest.filter { payloadNames.contains($0.name) }
            let context = rest.filter { !payloadNames.contains($0.name) && !tags.contains($0.name) }
            // A program may write an event in words of its own (the daemon's playlist lines
            // name entries by id only): a line its codec cannot make the event again from is
            // kept, as a mark.
            let probe = RecordedEntry(seq: seq, time: time, kind: .event, name: name, source: source, fields: payload)
            if let codec, !Self.canMake(probe, with: codec) {
                entries.append(
                    RecordedEntry(seq: seq, time: time, kind: .mark, name: name, source: source, fields: rest))
                continue
            }
            let key = source + RecordingJSON.line(context)
            let id: RecordedObject.ID
            if let known = objectKeys[key] {
                id = known
            } else {
                id = RecordedObject.ID(rawValue: objects.count + 1)
                objectKeys[key] = id
                objects.append(RecordedObject(id: id, kind: kind, context: context))
            }
            func tag(_ key: String) -> UInt64? {
                tags.contains(key) ? fields[field: key]?.integerValue.flatMap { $0 > 0 ? UInt64($0) : nil } : nil
            }
            entries.append(
                RecordedEntry(
                    seq: seq, time: time, kind: .event, name: name, object: id, source: source,
                    playback: tag("playback").map(PlaybackID.init(rawValue:)),
                    entry: tag("entry").map(PlaylistEntryID.init(rawValue:)), fields: payload))
        }
        var recording = Recording(objects: objects, entries: entries)
        recording.version = 0
        return recording
    }
}
