import MediaEvents

/// One event as the example programs print it: where it came from, libvlc's name for it and
/// its payload as named fields.
public struct EventRecord: Sendable {
    /// The kind of object that sent it: `player`, `media`, `list`, `list-player`.
    public let source: String
    /// libvlc's own name, for example `MediaPlayerEndReached`.
    public let name: String
    /// The payload, by name (`time_ms`, `position`, `type`, `id`, `status`, `mrl` …).
    public let fields: [(String, JSONValue)]
    /// Whether this is a frequent progress event (time, position, buffering, volume).
    public let isProgress: Bool

    /// A record of any event.
    public init(source: String, name: String, fields: [(String, JSONValue)] = [], isProgress: Bool = false) {
        self.source = source
        self.name = name
        self.fields = fields
        self.isProgress = isProgress
    }

    /// The payload as `key=value` pairs, for the text output.
    public var fieldText: String {
        fields.map { key, value in
            if case .string(let text) = value { return "\(key)=\(text)" }
            return "\(key)=\(value.encoded)"
        }.joined(separator: " ")
    }
}

extension EventRecord {
    /// A player event.
    public init(_ event: MediaPlayerEvent) {
        let fields: [(String, JSONValue)]
        switch event {
        case .mediaChanged(let media): fields = [("mrl", media.map { .string($0.mrl) } ?? .null)]
        case .buffering(let percent): fields = [("percent", Self.number(percent))]
        case .timeChanged(let ms): fields = [("time_ms", .int(ms))]
        case .positionChanged(let position): fields = [("position", Self.number(position))]
        case .seekableChanged(let flag): fields = [("seekable", .bool(flag))]
        case .pausableChanged(let flag): fields = [("pausable", .bool(flag))]
        case .scrambledChanged(let flag): fields = [("scrambled", .bool(flag))]
        case .titleChanged(let title): fields = [("title", .int(Int64(title)))]
        case .snapshotTaken(let path): fields = [("path", .string(path))]
        case .lengthChanged(let ms): fields = [("length_ms", .int(ms))]
        case .voutChanged(let count): fields = [("count", .int(Int64(count)))]
        case .esAdded(let type, let id), .esDeleted(let type, let id), .esSelected(let type, let id):
            fields = [("type", .string(type.description)), ("id", .int(Int64(id)))]
        case .audioVolume(let volume): fields = [("volume", Self.number(volume))]
        case .audioDevice(let device): fields = [("device", device.map { .string($0) } ?? .null)]
        case .chapterChanged(let chapter): fields = [("chapter", .int(Int64(chapter)))]
        case .nothingSpecial, .opening, .playing, .paused, .stopped, .forward, .backward, .endReached,
            .encounteredError, .corked, .uncorked, .muted, .unmuted:
            fields = []
        }
        self.init(source: "player", name: event.name, fields: fields, isProgress: event.kind.isProgress)
    }

    /// A media event.
    public init(_ event: MediaEvent, source: String = "media") {
        let fields: [(String, JSONValue)]
        switch event {
        case .metaChanged(let key): fields = [("meta", .string(key.name))]
        case .subItemAdded(let item), .subItemTreeAdded(let item): fields = [("mrl", .string(item.mrl))]
        case .durationChanged(let ms): fields = [("duration_ms", .int(ms))]
        case .parsedChanged(let status): fields = [("status", .string(status.description))]
        case .stateChanged(let state): fields = [("state", .string(state.description))]
        case .freed: fields = []
        }
        self.init(source: source, name: event.name, fields: fields)
    }

    /// Floats printed short: 6 significant digits, which is all a Float holds (16.3, not
    /// 16.299999237060547 or 16.300001).
    static func number(_ value: Float) -> JSONValue {
        value.isFinite ? .double(TextFormat.significant(Double(value), digits: 6)) : .null
    }
}

extension EventRecord {
    /// A media list event.
    public init(_ event: MediaListEvent) {
        var fields: [(String, JSONValue)] = []
        if let index = event.itemIndex { fields.append(("index", .int(Int64(index)))) }
        if let item = event.item { fields.append(("mrl", .string(item.mrl))) }
        self.init(source: "list", name: event.name, fields: fields)
    }

    /// A list player event.
    public init(_ event: MediaListPlayerEvent) {
        let fields: [(String, JSONValue)]
        switch event {
        case .nextItemSet(let media): fields = [("mrl", .string(media.mrl))]
        case .played, .stopped: fields = []
        }
        self.init(source: "list-player", name: event.name, fields: fields)
    }
}
