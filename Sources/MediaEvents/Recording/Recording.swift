import Foundation

/// What objects really sent, in order: a test double that behaves like libvlc because it is
/// what libvlc did.
///
/// Make one with an ``EventRecorder`` attached to real objects, read one from a file
/// (`init(contentsOf:)`), or write one by hand (`init(jsonLines:)`); replay it with a
/// ``ReplaySession``. The text is JSON Lines, one object per line (see <doc:TestingWithRecordings>):
///
/// ```
/// {"format":"media-events-recording","version":1,"libvlc":"3.0.24 Vetinari","objects":[{"object":1,"source":"player"},{"object":2,"source":"playbacks","of":1}]}
/// {"seq":1,"t":0.000412,"object":1,"source":"player","call":"play"}
/// {"seq":2,"t":0.001027,"object":2,"source":"playbacks","event":"PlaybackBegan","playback":1,"mrl":"file:///tmp/a.mkv"}
/// {"seq":3,"t":0.002310,"object":1,"source":"player","event":"MediaPlayerOpening"}
/// ```
///
/// The first line is the header: the format's name and version, libvlc's version, and the
/// objects recorded (an id, the kind of object as `source`, and optionally a `name`, the object
/// it belongs to as `of`, and `context` fields). Every other line is an entry: an event
/// (`event`), a control call the app made (`call`) or a mark the app wrote (`mark`), with its
/// position `seq`, its time `t` in seconds on a monotonic clock, its object, and its fields.
/// An event's payload fields are named as `media-events log --json` names them (`mrl`,
/// `time_ms`, `position`, `type`, `id` …); playback events add `playback` and `entry`.
///
/// A `media-events log --json` output, and the media daemon's log, read as a recording too
/// (version 0): each line's `source` with its context fields (`item`, `pass` …) is an object,
/// lines of other sources (`program`, `libvlc`) are marks. Their floating-point values are
/// rounded to 6 significant digits for people, so a log replays them as printed, not bit for
/// bit.
public struct Recording: Sendable, Hashable {
    /// The format's name in the header: `media-events-recording`.
    public static var formatName: String { "media-events-recording" }
    /// The version this library writes, and the newest it reads: 1.
    public static var formatVersion: Int { 1 }

    /// The version of the text it was read from: 1, or 0 for a log read as a recording.
    public var version: Int
    /// libvlc's version where it was recorded (`3.0.24 Vetinari`); `nil` when unknown.
    public var libvlcVersion: String?
    /// When the recording started, UTC, ISO 8601 (`2026-12-01T10:40:00.123Z`); `nil` when unknown.
    public var started: String?
    /// The objects recorded.
    public var objects: [RecordedObject]
    /// The events, calls and marks, in the order they were recorded.
    public var entries: [RecordedEntry]

    /// A recording of `objects` with `entries`, in the current version.
    public init(
        libvlcVersion: String? = nil, started: String? = nil, objects: [RecordedObject], entries: [RecordedEntry]
    ) {
        version = Self.formatVersion
        self.libvlcVersion = libvlcVersion
        self.started = started
        self.objects = objects
        self.entries = entries
    }

    /// The object with `id`.
    public func object(_ id: RecordedObject.ID) -> RecordedObject? {
        objects.first { $0.id == id }
    }

    /// The objects of `kind`, in the order they were recorded.
    public func objects(of kind: RecordedObject.Kind) -> [RecordedObject] {
        objects.filter { $0.kind == kind }
    }

    /// The calls the app made, in order.
    public var calls: [RecordedEntry] { entries.filter { $0.kind == .call } }

    /// The events and marks (calls left out), in order.
    public var events: [RecordedEntry] { entries.filter { $0.kind != .call } }

    /// The payload fields a recording holds for `event`, as ``EventRecorder`` writes them
    /// (for an event type MediaEvents does not know, its `description`).
    public static func fields(of event: some VLCEvent) -> [RecordedField] {
        RecordingCodec.fields(of: event)
    }
}

/// One object of a recording: a player, its playbacks, a media, a list …
public struct RecordedObject: Sendable, Hashable, Identifiable {
    /// An object's id, unique in its recording (1, 2, 3 … in the order attached).
    public struct ID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The number.
        public let rawValue: Int
        /// The id `rawValue`.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The number, as text.
        public var description: String { String(rawValue) }
        /// Whether `lhs` was attached before `rhs`.
        public static func < (lhs: ID, rhs: ID) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What kind of object it is: the `source` of its lines, as `media-events log` names it.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The name (`player`, `list-player` …).
        public let rawValue: String
        /// The kind named `rawValue`; recordings may name kinds this version does not know.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A `VLCMediaPlayer` (`MediaPlayerEvent`s).
        public static let player = Kind(rawValue: "player")
        /// A player's `playbacks` (`PlaybackEvent`s); its `parent` is the player.
        public static let playbacks = Kind(rawValue: "playbacks")
        /// A `VLCMedia` (`MediaEvent`s).
        public static let media = Kind(rawValue: "media")
        /// A `VLCMediaList` (`MediaListEvent`s).
        public static let list = Kind(rawValue: "list")
        /// A `VLCMediaListPlayer` (`MediaListPlayerEvent`s).
        public static let listPlayer = Kind(rawValue: "list-player")
        /// A `VLCPlaylistPlayer` (`PlaylistEvent`s); its player's `parent` is the playlist.
        public static let playlist = Kind(rawValue: "playlist")
        /// A `VLCMediaDiscoverer` (`MediaDiscovererEvent`s).
        public static let mediaDiscoverer = Kind(rawValue: "media-discoverer")
        /// A `VLCRendererDiscoverer` (`RendererDiscovererEvent`s).
        public static let rendererDiscoverer = Kind(rawValue: "renderer-discoverer")
        /// A `VLCVLM` (`VLMEvent`s).
        public static let vlm = Kind(rawValue: "vlm")
        /// An event source of a type MediaEvents does not know: its events are recorded by
        /// name and description, and not replayed.
        public static let other = Kind(rawValue: "other")

        /// The name.
        public var description: String { rawValue }
    }

    /// The id.
    public var id: ID
    /// What kind of object it is.
    public var kind: Kind
    /// The name given when it was attached, if any.
    public var name: String?
    /// The object it belongs to: a player for its playbacks, a playlist player for its player.
    public var parent: ID?
    /// Fields that tell it apart from others of its kind, copied to each of its lines by the
    /// programs (a log's `item`, `pass`, `sub_item` …); empty for objects the recorder attached.
    public var context: [RecordedField]

    /// An object of a recording.
    public init(id: ID, kind: Kind, name: String? = nil, parent: ID? = nil, context: [RecordedField] = []) {
        self.id = id
        self.kind = kind
        self.name = name
        self.parent = parent
        self.context = context
    }
}

/// One line of a recording after its header: an event, a call or a mark.
public struct RecordedEntry: Sendable, Hashable, CustomStringConvertible {
    /// What the line records.
    public enum Kind: String, Sendable, Hashable {
        /// An event the object sent.
        case event
        /// A control call the app made on the object (`play`, `stop`, `setTime` …).
        case call
        /// A note the app wrote (or a log's line of another source: a program's own line,
        /// libvlc's log).
        case mark
    }

    /// Its position in the recording, from 1.
    public var seq: Int
    /// When it was recorded, since the recording started (monotonic clock, to the microsecond).
    public var time: Duration
    /// What it records.
    public var kind: Kind
    /// The event's name (libvlc's, such as `MediaPlayerEndReached`, or MediaEvents' own, such
    /// as `PlaybackEnded`), the call's, or the mark's.
    public var name: String
    /// The object that sent the event or received the call; `nil` for a mark.
    public var object: RecordedObject.ID?
    /// The `source` of the line: the object's kind, or what a mark came from (`program`).
    public var source: String?
    /// The playback a playback event belongs to.
    public var playback: PlaybackID?
    /// The playlist entry a playback event belongs to.
    public var entry: PlaylistEntryID?
    /// The payload (an event's, a call's arguments, a mark's), by name, in the recorded order.
    public var fields: [RecordedField]

    /// An entry of a recording.
    public init(
        seq: Int, time: Duration, kind: Kind, name: String, object: RecordedObject.ID? = nil, source: String? = nil,
        playback: PlaybackID? = nil, entry: PlaylistEntryID? = nil, fields: [RecordedField] = []
    ) {
        self.seq = seq
        self.time = time
        self.kind = kind
        self.name = name
        self.object = object
        self.source = source
        self.playback = playback
        self.entry = entry
        self.fields = fields
    }

    /// The value of the field `name`.
    public subscript(field name: String) -> RecordedValue? { fields[field: name] }

    /// The line as the recording writes it.
    public var description: String { RecordingJSON.line(lineFields) }
}

/// Why a recording could not be read or replayed.
public struct RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line (from 1) it is about, when it is about one.
    public let line: Int?
    /// What is wrong.
    public let message: String

    /// An error about `line`.
    public init(line: Int?, message: String) {
        self.line = line
        self.message = message
    }

    /// `line 3: …`, or the message.
    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}

/// A run of a recording's entries, with times counted from `start`: what a replay delivers in
/// answer to a call (see ``ReplaySession/answer(_:on:with:)``).
public struct RecordingSegment: Sendable, Hashable {
    /// The events and marks, in order (calls are left out: they are what the app did).
    public var entries: [RecordedEntry]
    /// The time the entries' times are counted from: when the call they answered was made, or
    /// the first entry's time.
    public var start: Duration

    /// The segment of `entries` counted from `start` (the first entry's time when `nil`).
    public init(entries: [RecordedEntry], start: Duration? = nil) {
        self.entries = entries.filter { $0.kind != .call }
        self.start = start ?? self.entries.first?.time ?? .zero
    }
}

extension Recording {
    /// What followed the `occurrence`-th call named `call` (on `object`, or on any object when
    /// `nil`), up to the next call of any object: the recorded answer to that call, counted
    /// from the call's time. `nil` when the recording has no such call.
    public func segment(after call: String, on object: RecordedObject.ID? = nil, occurrence: Int = 1)
        -> RecordingSegment?
    {
        var seen = 0
        for (index, entry) in entries.enumerated()
        where entry.kind == .call && entry.name == call && (object == nil || entry.object == object) {
            seen += 1
            guard seen == occurrence else { continue }
            let rest = entries[(index + 1)...]
            let end = rest.firstIndex { $0.kind == .call } ?? entries.endIndex
            return RecordingSegment(entries: Array(entries[(index + 1)..<end]), start: entry.time)
        }
        return nil
    }

    /// The entries from the first event named `first` through the first event named `last`
    /// after it (to the end when there is none), calls left out.
    public func segment(from first: String, through last: String) -> RecordingSegment? {
        guard let start = entries.firstIndex(where: { $0.kind == .event && $0.name == first }) else { return nil }
        let end = entries[start...].firstIndex { $0.kind == .event && $0.name == last } ?? entries.endIndex - 1
        return RecordingSegment(entries: Array(entries[start...end]))
    }
}
