import MediaEvents

/// The programs' words for a playback's end, stall and the playlist's events: the fields of
/// their log lines.
extension EventRecord {
    /// A playback's own event (`PlaybackBegan`, `PlaybackStalled`, `PlaybackEnded`) under
    /// `source`, with `context` (the playback, its entry) before the payload; a player or media
    /// event it carries is the record of that event. The context of the latter goes to
    /// `EventLog.write(_:context:)`.
    public init(_ event: PlaybackEvent, source: String, context: [(String, JSONValue)]) {
        switch event.payload {
        case .began(let mrl):
            self.init(source: source, name: event.name, fields: context + [("mrl", .string(mrl))])
        case .player(let player):
            self.init(player)
        case .media(let media):
            self.init(media)
        case .stalled(let reason):
            self.init(
                source: source, name: event.name,
                fields: context + [("stall", .string(reason.code)), ("message", .string(reason.description))])
        case .ended(let summary):
            self.init(source: source, name: event.name, fields: context + summary.fields)
        }
    }

    /// A playlist event (`"source":"playlist"`); positions are counted from 1 (`item`).
    public init(_ event: PlaylistEvent) {
        let fields: [(String, JSONValue)]
        switch event {
        case .entriesAdded(let entries, let index):
            fields = [("item", .int(Int64(index + 1))), ("entry_ids", .array(entries.map { .int($0.id.json) }))]
        case .entryRemoved(let entry, let index):
            fields = [("entry_id", .int(entry.id.json)), ("item", .int(Int64(index + 1)))]
        case .entryMoved(let entry, let from, let to):
            fields = [
                ("entry_id", .int(entry.id.json)), ("from_item", .int(Int64(from + 1))),
                ("to_item", .int(Int64(to + 1))),
            ]
        case .cleared, .endReached:
            fields = []
        case .expanded(let parent, let children):
            fields = [("entry_id", .int(parent.id.json)), ("entry_ids", .array(children.map { .int($0.id.json) }))]
        case .currentEntryChanged(let entry):
            fields = [("entry_id", entry.map { .int($0.id.json) } ?? .null)]
        }
        self.init(source: "playlist", name: event.name, fields: fields)
    }
}

extension PlaybackSummary {
    /// The fields of a `PlaybackEnded` line after the playback and its entry: `reason`
    /// (`PlaybackOutcome.code`), `entries` for an expansion, `time_ms`, `position` and
    /// `length_ms` when libvlc reported them, `seconds`, and for a failure `error`, `message`,
    /// `cause` (libvlc's words, or the stall's) and `stall`.
    public var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("reason", .string(outcome.code))]
        if case .expanded(let entries) = outcome { fields.append(("entries", .int(Int64(entries)))) }
        if time >= 0 { fields.append(("time_ms", .int(time))) }
        if position >= 0 { fields.append(("position", EventRecord.number(position))) }
        if length > 0 { fields.append(("length_ms", .int(length))) }
        fields.append(("seconds", .double((seconds * 1000).rounded() / 1000)))
        if let failure = outcome.failure {
            fields += [("error", .string(failure.code)), ("message", .string(failure.summary))]
            if case .stalled(let reason, _) = failure.reason {
                fields += [("cause", .string(failure.cause ?? failure.summary)), ("stall", .string(reason.code))]
            } else if let cause = failure.cause {
                fields.append(("cause", .string(cause)))
            }
        }
        return fields
    }
}

extension StallReason {
    /// A stable name for scripts: `opening`, `buffering`, `no_track`, `no_progress`.
    public var code: String {
        switch self {
        case .opening: "opening"
        case .buffering: "buffering"
        case .noTrack: "no_track"
        case .noProgress: "no_progress"
        }
    }
}

extension PlaybackID {
    /// The id as a JSON number.
    public var json: Int64 { Int64(clamping: rawValue) }
}

extension PlaylistEntryID {
    /// The id as a JSON number.
    public var json: Int64 { Int64(clamping: rawValue) }
}
