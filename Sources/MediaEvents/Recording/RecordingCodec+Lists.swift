/// A media list's events in a recording: the item's index and MRL, as `media-events log`
/// prints them.
extension MediaListEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .list }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map { $0 == .endReached ? [] : ["index", "mrl"] }
    }

    var recordedFields: [RecordedField] {
        guard let index = itemIndex, let item else { return [] }
        return [RecordedField("index", .integer(index)), RecordedField("mrl", .string(item.mrl))]
    }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<MediaListEvent> {
        let fields = FieldReader(entry)
        guard let kind = kinds[entry.name] else { throw fields.problem("is not a media list event") }
        if kind == .endReached { return .constant(.endReached) }
        let index = try fields.int("index")
        let mrl = try fields.string("mrl")
        return EventMaker { materials in
            let media = materials.media(mrl)
            switch kind {
            case .itemAdded: return .itemAdded(media, index: index)
            case .willAddItem: return .willAddItem(media, index: index)
            case .itemDeleted: return .itemDeleted(media, index: index)
            case .willDeleteItem: return .willDeleteItem(media, index: index)
            case .endReached: return .endReached
            }
        }
    }
}

/// A list player's events in a recording: the next item's MRL.
extension MediaListPlayerEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .listPlayer }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map { $0 == .nextItemSet ? ["mrl"] : [] }
    }

    var recordedFields: [RecordedField] {
        if case .nextItemSet(let media) = self { return [RecordedField("mrl", .string(media.mrl))] }
        return []
    }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<MediaListPlayerEvent> {
        let fields = FieldReader(entry)
        switch kinds[entry.name] {
        case .played: return .constant(.played)
        case .stopped: return .constant(.stopped)
        case .nextItemSet:
            let mrl = try fields.string("mrl")
            return EventMaker { materials in .nextItemSet(materials.media(mrl)) }
        case nil: throw fields.problem("is not a list player event")
        }
    }
}

/// A media discoverer's events in a recording: no payload.
extension MediaDiscovererEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .mediaDiscoverer }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map { _ in [] }
    }

    var recordedFields: [RecordedField] { [] }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<MediaDiscovererEvent> {
        switch kinds[entry.name] {
        case .started: .constant(.started)
        case .ended: .constant(.ended)
        case nil: throw FieldReader(entry).problem("is not a media discoverer event")
        }
    }
}

/// A renderer discoverer's events in a recording: the renderer's name, type, icon and flags
/// (a replay delivers a `VLCRendererItem` with these and no libvlc item behind it).
extension RendererDiscovererEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .rendererDiscoverer }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map { _ in ["name", "type", "icon_uri", "can_audio", "can_video"] }
    }

    var recordedFields: [RecordedField] {
        [
            RecordedField("name", .string(item.name)), RecordedField("type", .string(item.type)),
            RecordedField("icon_uri", .optional(item.iconURI)), RecordedField("can_audio", .bool(item.canAudio)),
            RecordedField("can_video", .bool(item.canVideo)),
        ]
    }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<RendererDiscovererEvent> {
        let fields = FieldReader(entry)
        guard let kind = kinds[entry.name] else { throw fields.problem("is not a renderer discoverer event") }
        let name = try fields.string("name")
        let type = try fields.string("type")
        let icon = try fields.optionalString("icon_uri")
        let canAudio = try fields.bool("can_audio")
        let canVideo = try fields.bool("can_video")
        return EventMaker { _ in
            let item = VLCRendererItem(
                recordedName: name, type: type, iconURI: icon, canAudio: canAudio, canVideo: canVideo)
            return kind == .itemAdded ? .itemAdded(item) : .itemDeleted(item)
        }
    }
}

/// The VLM's events in a recording: the media and instance names.
extension VLMEvent: RecordingCodable {
    static var recordedKind: RecordedObject.Kind { .vlm }

    private static let kinds = KindNames<Kind>()

    static func payloadFieldNames(ofEventNamed name: String) -> [String]? {
        kinds[name].map { _ in ["media_name", "instance_name"] }
    }

    var recordedFields: [RecordedField] {
        [RecordedField("media_name", .optional(mediaName)), RecordedField("instance_name", .optional(instanceName))]
    }

    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<VLMEvent> {
        let fields = FieldReader(entry)
        guard let kind = kinds[entry.name] else { throw fields.problem("is not a VLM event") }
        return .constant(
            VLMEvent(
                kind: kind, mediaName: try fields.optionalString("media_name"),
                instanceName: try fields.optionalString("instance_name")))
    }
}
