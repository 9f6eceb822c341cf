/// A player's events in a recording: the fields `media-events log` prints, by the same names.
extension MediaPlayerEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .player }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map(fieldNames(of:))
    }

    private static func fieldNames(of kind: Kind) -> [String] {
        switch kind {
        case .mediaChanged: ["mrl"]
        case .buffering: ["percent"]
        case .timeChanged: ["time_ms"]
        case .positionChanged: ["position"]
        case .seekableChanged: ["seekable"]
        case .pausableChanged: ["pausable"]
        case .scrambledChanged: ["scrambled"]
        case .titleChanged: ["title"]
        case .snapshotTaken: ["path"]
        case .lengthChanged: ["length_ms"]
        case .voutChanged: ["count"]
        case .esAdded, .esDeleted, .esSelected: ["type", "id"]
        case .audioVolume: ["volume"]
        case .audioDevice: ["device"]
        case .chapterChanged: ["chapter"]
        case .nothingSpecial, .opening, .playing, .paused, .stopped, .forward, .backward, .endReached,
            .encounteredError, .corked, .uncorked, .muted, .unmuted:
            []
        }
    }

    var recordedFields: [RecordedField] {
        let values: [RecordedValue]
        switch self {
        case .mediaChanged(let media): values = [.optional(media?.mrl)]
        case .buffering(let percent): values = [.float(percent)]
        case .timeChanged(let ms): values = [.integer(ms)]
        case .positionChanged(let position): values = [.float(position)]
        case .seekableChanged(let flag), .pausableChanged(let flag), .scrambledChanged(let flag): values = [.bool(flag)]
        case .titleChanged(let title): values = [.integer(title)]
        case .snapshotTaken(let path): values = [.string(path)]
        case .lengthChanged(let ms): values = [.integer(ms)]
        case .voutChanged(let count): values = [.integer(count)]
        case .esAdded(let type, let id), .esDeleted(let type, let id), .esSelected(let type, let id):
            values = [.string(type.description), .integer(id)]
        case .audioVolume(let volume): values = [.float(volume)]
        case .audioDevice(let device): values = [.optional(device)]
        case .chapterChanged(let chapter): values = [.integer(chapter)]
        case .nothingSpecial, .opening, .playing, .paused, .stopped, .forward, .backward, .endReached,
            .encounteredError, .corked, .uncorked, .muted, .unmuted:
            values = []
        }
        return zip(Self.fieldNames(of: kind), values).map { RecordedField($0, $1) }
    }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<MediaPlayerEvent> {
        let fields = FieldReader(entry)
        guard let kind = kinds[entry.name] else { throw fields.problem("is not a player event") }
        switch kind {
        case .mediaChanged:
            let mrl = try fields.optionalString("mrl")
            return EventMaker { materials in .mediaChanged(mrl.map(materials.media)) }
        case .nothingSpecial: return .constant(.nothingSpecial)
        case .opening: return .constant(.opening)
        case .buffering: return .constant(.buffering(percent: try fields.float("percent")))
        case .playing: return .constant(.playing)
        case .paused: return .constant(.paused)
        case .stopped: return .constant(.stopped)
        case .forward: return .constant(.forward)
        case .backward: return .constant(.backward)
        case .endReached: return .constant(.endReached)
        case .encounteredError: return .constant(.encounteredError)
        case .timeChanged: return .constant(.timeChanged(milliseconds: try fields.integer("time_ms")))
        case .positionChanged: return .constant(.positionChanged(try fields.float("position")))
        case .seekableChanged: return .constant(.seekableChanged(try fields.bool("seekable")))
        case .pausableChanged: return .constant(.pausableChanged(try fields.bool("pausable")))
        case .titleChanged: return .constant(.titleChanged(try fields.int("title")))
        case .snapshotTaken: return .constant(.snapshotTaken(path: try fields.string("path")))
        case .lengthChanged: return .constant(.lengthChanged(milliseconds: try fields.integer("length_ms")))
        case .voutChanged: return .constant(.voutChanged(count: try fields.int("count")))
        case .scrambledChanged: return .constant(.scrambledChanged(try fields.bool("scrambled")))
        case .esAdded, .esDeleted, .esSelected:
            let type = try fields.choice("type", TrackType.allCases) { $0.description }
            let id = try fields.int("id")
            return .constant(
                kind == .esAdded
                    ? .esAdded(type: type, id: id)
                    : kind == .esDeleted ? .esDeleted(type: type, id: id) : .esSelected(type: type, id: id))
        case .corked: return .constant(.corked)
        case .uncorked: return .constant(.uncorked)
        case .muted: return .constant(.muted)
        case .unmuted: return .constant(.unmuted)
        case .audioVolume: return .constant(.audioVolume(try fields.float("volume")))
        case .audioDevice: return .constant(.audioDevice(try fields.optionalString("device")))
        case .chapterChanged: return .constant(.chapterChanged(try fields.int("chapter")))
        }
    }
}

/// A media's events in a recording: the fields `media-events log` prints, by the same names.
extension MediaEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .media }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map(fieldNames(of:))
    }

    private static func fieldNames(of kind: Kind) -> [String] {
        switch kind {
        case .metaChanged: ["meta"]
        case .subItemAdded, .subItemTreeAdded: ["mrl"]
        case .durationChanged: ["duration_ms"]
        case .parsedChanged: ["status"]
        case .stateChanged: ["state"]
        case .freed: []
        }
    }

    var recordedFields: [RecordedField] {
        let values: [RecordedValue]
        switch self {
        case .metaChanged(let key): values = [.string(key.name)]
        case .subItemAdded(let item), .subItemTreeAdded(let item): values = [.string(item.mrl)]
        case .durationChanged(let ms): values = [.integer(ms)]
        case .parsedChanged(let status): values = [.string(status.description)]
        case .stateChanged(let state): values = [.string(state.description)]
        case .freed: values = []
        }
        return zip(Self.fieldNames(of: kind), values).map { RecordedField($0, $1) }
    }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<MediaEvent> {
        let fields = FieldReader(entry)
        guard let kind = kinds[entry.name] else { throw fields.problem("is not a media event") }
        switch kind {
        case .metaChanged:
            let name = try fields.string("meta")
            guard let key = MetaKey(recordedName: name) else { throw fields.problem("has an unknown meta '\(name)'") }
            return .constant(.metaChanged(key))
        case .subItemAdded, .subItemTreeAdded:
            let mrl = try fields.string("mrl")
            let isTree = kind == .subItemTreeAdded
            return EventMaker { materials in
                isTree ? .subItemTreeAdded(materials.media(mrl)) : .subItemAdded(materials.media(mrl))
            }
        case .durationChanged: return .constant(.durationChanged(milliseconds: try fields.integer("duration_ms")))
        case .parsedChanged:
            return .constant(.parsedChanged(try fields.choice("status", ParsedStatus.allCases) { $0.description }))
        case .stateChanged:
            return .constant(.stateChanged(try fields.choice("state", PlaybackState.allCases) { $0.description }))
        case .freed: return .constant(.freed)
        }
    }
}

extension MetaKey {
    /// The key named `name` as `MetaKey.name` spells it (`Title`, or `Meta30` for a key libvlc
    /// 3 does not define).
    init?(recordedName name: String) {
        if let key = MetaKey.allKeys.first(where: { $0.name == name }) {
            self = key
        } else if name.hasPrefix("Meta"), let raw = UInt32(name.dropFirst(4)), raw >= MetaKey.allKeys.count {
            self.init(rawValue: raw)
        } else {
            return nil
        }
    }
}
