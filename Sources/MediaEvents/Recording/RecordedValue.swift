// Recording/ — what libvlc really sent, kept and played back: the recording format (JSON Lines,
// versioned: Recording, RecordedEntry, RecordedValue and their text), the codec between every
// typed event and its named fields (one file per family of sources), the recorder that observes
// objects like any subscriber (EventRecorder), the protocols that let app code take a real
// player or a replay (MediaPlayerControlling, PlaylistPlayerControlling), and the replay: objects
// with the real objects' API (ReplayMediaPlayer, ReplayPlaylistPlayer, ReplaySource) fed by one
// scheduler (ReplayScheduler) through the same EventsHandler and configurations as libvlc's
// events. Only public API and the module's values are used here; nothing calls libvlc but the
// media made for recorded payloads.

/// A value of a recording's line: JSON, with numbers kept as they were written.
///
/// A number is kept as its text so that every `Float` and `Double` of a payload reads back
/// exactly the value that was recorded (a `Float` is written as its shortest decimal form,
/// `0.1` rather than `0.10000000149011612`, which only parsing it as a `Float` gives back).
public enum RecordedValue: Sendable, Hashable, CustomStringConvertible {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as written (`12`, `-1`, `0.5`, `1e-05`).
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([RecordedValue])
    /// An object, its fields in the order written.
    case object([RecordedField])

    /// An integer.
    public static func integer(_ value: Int64) -> RecordedValue { .number(String(value)) }

    /// An integer.
    public static func integer(_ value: Int) -> RecordedValue { .number(String(value)) }

    /// A `Float`, written as its shortest decimal form (which reads back as the same `Float`);
    /// a value that is not finite is written as the string `nan`, `inf` or `-inf`.
    public static func float(_ value: Float) -> RecordedValue {
        value.isFinite ? .number(value.description) : .string(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf")
    }

    /// A `Double`, written as its shortest decimal form; not finite: as `float(_:)`.
    public static func double(_ value: Double) -> RecordedValue {
        value.isFinite ? .number(value.description) : .string(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf")
    }

    /// A string, or `null` for `nil`.
    public static func optional(_ value: String?) -> RecordedValue { value.map { .string($0) } ?? .null }

    /// The number as an integer, when it is one.
    public var integerValue: Int64? {
        guard case .number(let text) = self else { return nil }
        if let value = Int64(text) { return value }
        guard let value = Double(text), value == value.rounded(), abs(value) < 9.2e18 else { return nil }
        return Int64(value)
    }

    /// The number (or `nan`, `inf`, `-inf`) as a `Float`, parsed from its text.
    public var floatValue: Float? {
        switch self {
        case .number(let text): Float(text)
        case .string(let text): Self.nonFinite(text).map(Float.init)
        default: nil
        }
    }

    /// The number (or `nan`, `inf`, `-inf`) as a `Double`, parsed from its text.
    public var doubleValue: Double? {
        switch self {
        case .number(let text): Double(text)
        case .string(let text): Self.nonFinite(text)
        default: nil
        }
    }

    /// The string, for a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The flag, for `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    private static func nonFinite(_ text: String) -> Double? {
        switch text {
        case "nan": .nan
        case "inf": .infinity
        case "-inf": -.infinity
        default: nil
        }
    }

    /// The value as JSON text.
    public var description: String {
        var text = ""
        RecordingJSON.append(self, to: &text)
        return text
    }
}

/// One named value of a recording's line: a payload field (`time_ms`: 1200), a context field
/// or a field of a mark.
public struct RecordedField: Sendable, Hashable, CustomStringConvertible {
    /// The field's name, for example `time_ms`.
    public var name: String
    /// Its value.
    public var value: RecordedValue

    /// The field `name` with `value`.
    public init(_ name: String, _ value: RecordedValue) {
        self.name = name
        self.value = value
    }

    /// `name=value`, the value as JSON.
    public var description: String { "\(name)=\(value)" }
}

extension Array where Element == RecordedField {
    /// The value of the first field called `name`.
    public subscript(field name: String) -> RecordedValue? {
        first { $0.name == name }?.value
    }
}
