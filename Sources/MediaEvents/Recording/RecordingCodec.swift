/// An event type a recording can hold: what the recorder writes for one of its events (the
/// payload as named fields, the same names the example programs' logs use), and how a replay
/// makes the event again from those fields.
///
/// Internal: the public entry points (`EventRecorder.attach`, `Recording.fields(of:)`, the
/// replay objects) look the conformance up once per type.
protocol RecordingCodable: VLCEvent {
    /// The kind of object that sends events of this type.
    static var recordedKind: RecordedObject.Kind { get }
    /// The payload's fields, in a fixed order, without the line's head (name, object, time).
    var recordedFields: [RecordedField] { get }
    /// The playback and entry an event is tagged with (playback events only).
    var recordedTags: (playback: PlaybackID, entry: PlaylistEntryID?)? { get }
    /// The payload's field names of the event called `name`; `nil` when no event of this type
    /// has that name.
    static func payloadFieldNames(ofEventNamed name: String) -> [String]?
    /// Checks a recorded event of this type and returns how to make it again.
    static func prepare(_ entry: RecordedEntry) throws -> EventMaker<Self>
}

extension RecordingCodable {
    var recordedTags: (playback: PlaybackID, entry: PlaylistEntryID?)? { nil }
}

/// What a replay needs to make an event again: a media for a recorded MRL, and the number
/// added to recorded playback ids (a recorded segment that answers a call a second time begins
/// playbacks the player has not had yet).
struct ReplayMaterials: Sendable {
    let media: @Sendable (String) -> VLCMedia
    var playbackOffset: UInt64 = 0
}

/// Makes one recorded event again; checked when the recording was read, so making it cannot
/// fail. Media payloads are made only when the event is delivered.
struct EventMaker<Event: VLCEvent>: Sendable {
    let make: @Sendable (ReplayMaterials) -> Event

    init(_ make: @escaping @Sendable (ReplayMaterials) -> Event) { self.make = make }

    /// An event that needs no media and no new ids.
    static func constant(_ event: Event) -> EventMaker { EventMaker { _ in event } }

    func map<Other: VLCEvent>(_ transform: @escaping @Sendable (Event, ReplayMaterials) -> Other) -> EventMaker<Other> {
        let make = make
        return EventMaker<Other> { materials in transform(make(materials), materials) }
    }
}

/// Reads the payload fields of one recorded event, with errors that say which field of which
/// event is wrong.
struct FieldReader {
    let entry: RecordedEntry

    init(_ entry: RecordedEntry) { self.entry = entry }

    func value(_ key: String) throws -> RecordedValue {
        guard let value = entry.fields[field: key] else { throw problem("has no field \(key)") }
        return value
    }

    func problem(_ what: String) -> RecordingError {
        RecordingError(line: nil, message: "\(entry.name) (seq \(entry.seq)) \(what)")
    }

    func integer(_ key: String) throws -> Int64 {
        guard let number = try value(key).integerValue else { throw problem("needs an integer \(key)") }
        return number
    }

    func int(_ key: String) throws -> Int {
        let number = try integer(key)
        guard let small = Int(exactly: number) else { throw problem("has \(key) out of range") }
        return small
    }

    func float(_ key: String) throws -> Float {
        guard let number = try value(key).floatValue else { throw problem("needs a number \(key)") }
        return number
    }

    func double(_ key: String) throws -> Double {
        guard let number = try value(key).doubleValue else { throw problem("needs a number \(key)") }
        return number
    }

    func bool(_ key: String) throws -> Bool {
        guard let flag = try value(key).boolValue else { throw problem("needs true or false for \(key)") }
        return flag
    }

    func string(_ key: String) throws -> String {
        guard let text = try value(key).stringValue else { throw problem("needs a string \(key)") }
        return text
    }

    /// A string or `null`; a missing field is `null`.
    func optionalString(_ key: String) throws -> String? {
        guard let value = entry.fields[field: key], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw problem("needs a string or null \(key)") }
        return text
    }

    /// One of `choices`, by its name.
    func choice<Choice>(_ key: String, _ choices: [Choice], name: (Choice) -> String) throws -> Choice {
        let text = try string(key)
        guard let choice = choices.first(where: { name($0) == text }) else {
            throw problem("has an unknown \(key) '\(text)'")
        }
        return choice
    }
}

/// The kinds of one event type by libvlc's name (or MediaEvents' own), built once per type.
struct KindNames<Kind: VLCEventKind>: Sendable {
    private let byName: [String: Kind]

    init() {
        var byName: [String: Kind] = [:]
        for kind in Kind.allCases { byName[kind.name] = kind }
        self.byName = byName
    }

    subscript(_ name: String) -> Kind? { byName[name] }
}

/// How events of any type are written, and made again where the type is one of MediaEvents'.
enum RecordingCodec {
    /// The payload fields of `event` (a `description` field for an event type MediaEvents does
    /// not know, which a replay cannot make again).
    static func fields<Event: VLCEvent>(of event: Event) -> [RecordedField] {
        if let codable = event as? any RecordingCodable { return codable.recordedFields }
        return [RecordedField("description", .string(event.description))]
    }

    /// The conformance of `type`, looked up once by the callers that handle many events.
    static func codable<Event: VLCEvent>(_ type: Event.Type) -> (any RecordingCodable.Type)? {
        type as? any RecordingCodable.Type
    }

    /// The kind of object that sends `type`'s events; `other` for a type MediaEvents does not
    /// know.
    static func kind<Event: VLCEvent>(of type: Event.Type) -> RecordedObject.Kind {
        codable(type)?.recordedKind ?? .other
    }

    /// The codec of the events that objects of `kind` send.
    static func codable(for kind: RecordedObject.Kind) -> (any RecordingCodable.Type)? {
        switch kind {
        case .player: MediaPlayerEvent.self
        case .playbacks: PlaybackEvent.self
        case .media: MediaEvent.self
        case .list: MediaListEvent.self
        case .listPlayer: MediaListPlayerEvent.self
        case .playlist: PlaylistEvent.self
        case .mediaDiscoverer: MediaDiscovererEvent.self
        case .rendererDiscoverer: RendererDiscovererEvent.self
        case .vlm: VLMEvent.self
        default: nil
        }
    }
}
