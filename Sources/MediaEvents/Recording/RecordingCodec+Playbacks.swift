/// A playback's events in a recording: tagged with `playback` (and `entry`) on the line, the
/// player's and the media's events with their own fields, and a summary's every value but its
/// playback and entry, which are always its event's (as MediaEvents sends them) and are written
/// once, as the line's tags.
extension PlaybackEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .playbacks }

    private static let kinds = KindNames<Kind>()

    static let endedFieldNames = [
        "mrl", "outcome", "entries", "failure", "stall", "stall_seconds", "cause", "time_ms", "position", "length_ms",
        "seconds",
    ]

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        switch kinds[name] {
        case .began: ["mrl"]
        case .stalled: ["reason"]
        case .ended: endedFieldNames
        case .player: MediaPlayerEvent.payloadFieldNames(ofEventNamed: name)
        case .media: MediaEvent.payloadFieldNames(ofEventNamed: name)
        case nil: nil
        }
    }

    var recordedTags: (playback: PlaybackID, entry: PlaylistEntryID?)? { (playback, entry) }

    var recordedFields: [RecordedField] {
        switch payload {
        case .began(let mrl): [RecordedField("mrl", .string(mrl))]
        case .player(let event): event.recordedFields
        case .media(let event): event.recordedFields
        case .stalled(let reason): [RecordedField("reason", .string(reason.rawValue))]
        case .ended(let summary): Self.fields(of: summary)
        }
    }

    private static func fields(of summary: PlaybackSummary) -> [RecordedField] {
        var fields = [
            RecordedField("mrl", .string(summary.mrl)), RecordedField("outcome", .string(summary.outcome.code)),
        ]
        switch summary.outcome {
        case .expanded(let entries): fields.append(RecordedField("entries", .integer(entries)))
        case .failed(let failure):
            fields.append(RecordedField("failure", .string(failure.code)))
            if case .stalled(let reason, let seconds) = failure.reason {
                fields.append(RecordedField("stall", .string(reason.rawValue)))
                fields.append(RecordedField("stall_seconds", .double(seconds)))
            }
            fields.append(RecordedField("cause", .optional(failure.cause)))
        case .ended, .stopped, .skipped, .quit: break
        }
        fields += [
            RecordedField("time_ms", .integer(summary.time)), RecordedField("position", .float(summary.position)),
            RecordedField("length_ms", .integer(summary.length)), RecordedField("seconds", .double(summary.seconds)),
        ]
        return fields
    }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<PlaybackEvent> {
        let fields = FieldReader(entry)
        guard let kind = kinds[entry.name] else { throw fields.problem("is not a playback event") }
        guard let recorded = entry.playback else { throw fields.problem("has no playback") }
        let tag = entry.entry
        let payload: EventMaker<PlaybackEvent>
        switch kind {
        case .began:
            let mrl = try fields.string("mrl")
            payload = .constant(PlaybackEvent(playback: recorded, entry: tag, payload: .began(mrl: mrl)))
        case .stalled:
            let reason = try stallReason(fields, "reason")
            payload = .constant(PlaybackEvent(playback: recorded, entry: tag, payload: .stalled(reason)))
        case .ended:
            let summary = try Self.summary(fields, playback: recorded, entry: tag)
            payload = .constant(PlaybackEvent(playback: recorded, entry: tag, payload: .ended(summary)))
        case .player:
            payload = try MediaPlayerEvent.prepare(entry).map { event, _ in
                PlaybackEvent(playback: recorded, entry: tag, payload: .player(event))
            }
        case .media:
            payload = try MediaEvent.prepare(entry).map { event, _ in
                PlaybackEvent(playback: recorded, entry: tag, payload: .media(event))
            }
        }
        return payload.map { event, materials in event.renumbered(by: materials.playbackOffset) }
    }

    private static func summary(
        _ fields: FieldReader, playback: PlaybackID, entry: PlaylistEntryID?
    ) throws -> PlaybackSummary {
        let outcome: PlaybackOutcome
        switch try fields.string("outcome") {
        case "eof": outcome = .ended
        case "expanded": outcome = .expanded(entries: try fields.int("entries"))
        case "stopped": outcome = .stopped
        case "skipped": outcome = .skipped
        case "quit": outcome = .quit
        case "failed":
            let reason: PlaybackFailure.Reason
            switch try fields.string("failure") {
            case "encountered_error": reason = .encounteredError
            case "no_tracks": reason = .noTracks
            case "stream_error": reason = .streamError
            case "stalled":
                reason = .stalled(try stallReason(fields, "stall"), seconds: try fields.double("stall_seconds"))
            case let other: throw fields.problem("has an unknown failure '\(other)'")
            }
            outcome = .failed(PlaybackFailure(reason, cause: try fields.optionalString("cause")))
        case let other: throw fields.problem("has an unknown outcome '\(other)'")
        }
        return PlaybackSummary(
            playback: playback, entry: entry, mrl: try fields.string("mrl"), outcome: outcome,
            time: try fields.integer("time_ms"), position: try fields.float("position"),
            length: try fields.integer("length_ms"), seconds: try fields.double("seconds"))
    }

    private static func stallReason(_ fields: FieldReader, _ key: String) throws -> StallReason {
        let text = try fields.string(key)
        guard let reason = StallReason(rawValue: text) else { throw fields.problem("has an unknown \(key) '\(text)'") }
        return reason
    }

    /// The same event of playback `playback + offset` (a recorded segment replayed again).
    func renumbered(by offset: UInt64) -> PlaybackEvent {
        guard offset > 0 else { return self }
        let moved = PlaybackID(rawValue: playback.rawValue + offset)
        guard case .ended(let summary) = payload else {
            return PlaybackEvent(playback: moved, entry: entry, payload: payload)
        }
        let renumbered = PlaybackSummary(
            playback: moved, entry: summary.entry, mrl: summary.mrl, outcome: summary.outcome, time: summary.time,
            position: summary.position, length: summary.length, seconds: summary.seconds)
        return PlaybackEvent(playback: moved, entry: entry, payload: .ended(renumbered))
    }
}

/// A playlist's events in a recording: entries as objects (`id`, `mrl`, `parent`), indexes.
extension PlaylistEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .playlist }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map(fieldNames(of:))
    }

    private static func fieldNames(of kind: Kind) -> [String] {
        switch kind {
        case .entriesAdded: ["index", "entries"]
        case .entryRemoved: ["removed", "index"]
        case .entryMoved: ["moved", "from", "to"]
        case .cleared, .endReached: []
        case .expanded: ["parent", "children"]
        case .currentEntryChanged: ["current"]
        }
    }

    var recordedFields: [RecordedField] {
        let values: [RecordedValue]
        switch self {
        case .entriesAdded(let entries, let index): values = [.integer(index), .array(entries.map(Self.value(of:)))]
        case .entryRemoved(let entry, let index): values = [Self.value(of: entry), .integer(index)]
        case .entryMoved(let entry, let from, let to): values = [Self.value(of: entry), .integer(from), .integer(to)]
        case .cleared, .endReached: values = []
        case .expanded(let parent, let children):
            values = [Self.value(of: parent), .array(children.map(Self.value(of:)))]
        case .currentEntryChanged(let entry): values = [entry.map(Self.value(of:)) ?? .null]
        }
        return zip(Self.fieldNames(of: kind), values).map { RecordedField($0, $1) }
    }

    private static func value(of entry: PlaylistEntry) -> RecordedValue {
        var fields = [
            RecordedField("id", .integer(Int64(entry.id.rawValue))), RecordedField("mrl", .string(entry.mrl)),
        ]
        if let parent = entry.parent { fields.append(RecordedField("parent", .integer(Int64(parent.rawValue)))) }
        return .object(fields)
    }

    private static func entry(_ value: RecordedValue, _ fields: FieldReader) throws -> PlaylistEntry {
        guard case .object(let entry) = value, let id = entry[field: "id"]?.integerValue, id > 0,
            let mrl = entry[field: "mrl"]?.stringValue
        else { throw fields.problem("has an entry without an id and an mrl") }
        let parent = try entry[field: "parent"].map { value -> PlaylistEntryID in
            guard let raw = value.integerValue, raw > 0 else { throw fields.problem("has an entry with a bad parent") }
            return PlaylistEntryID(rawValue: UInt64(raw))
        }
        return PlaylistEntry(id: PlaylistEntryID(rawValue: UInt64(id)), mrl: mrl, parent: parent)
    }

    private static func entries(_ value: RecordedValue, _ fields: FieldReader) throws -> [PlaylistEntry] {
        guard case .array(let values) = value else { throw fields.problem("needs an array of entries") }
        return try values.map { try entry($0, fields) }
    }

    static func prepare(_ recorded: RecordedEntry) throws -> EventMaker<PlaylistEvent> {
        let fields = FieldReader(recorded)
        guard let kind = kinds[recorded.name] else { throw fields.problem("is not a playlist event") }
        switch kind {
        case .entriesAdded:
            return .constant(
                .entriesAdded(try entries(fields.value("entries"), fields), index: try fields.int("index")))
        case .entryRemoved:
            return .constant(.entryRemoved(try entry(fields.value("removed"), fields), index: try fields.int("index")))
        case .entryMoved:
            return .constant(
                .entryMoved(
                    try entry(fields.value("moved"), fields), from: try fields.int("from"), to: try fields.int("to")))
        case .cleared: return .constant(.cleared)
        case .endReached: return .constant(.endReached)
        case .expanded:
            return .constant(
                .expanded(
                    parent: try entry(fields.value("parent"), fields),
                    children: try entries(fields.value("children"), fields)))
        case .currentEntryChanged:
            let current = try fields.value("current")
            return .constant(.currentEntryChanged(current.isNull ? nil : try entry(current, fields)))
        }
    }
}
