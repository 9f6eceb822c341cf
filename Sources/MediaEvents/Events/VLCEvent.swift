// Events/ — the typed events: one enum per libvlc source, one case per libvlc 3.0 event type,
// and `VLCEvent`/`VLCEventKind` (names from libvlc, kind masks, progress kinds). Pure values:
// nothing here keeps state or queues work. Making one from a `libvlc_event_t` (copying or
// retaining the payload inside the callback) is Native/'s (NativeEvents).

/// A typed libvlc event: one case per libvlc event type, with its payload copied or retained.
public protocol VLCEvent: Sendable, CustomStringConvertible {
    /// The event kinds of this source, one per libvlc event type.
    associatedtype Kind: VLCEventKind
    /// Which kind of event this is.
    var kind: Kind { get }
    /// Whether the event carries wrapper objects (a `VLCMedia` …) made for it, which
    /// MediaEvents then releases on its release queue rather than on libvlc's thread.
    var holdsWrappers: Bool { get }
    /// The event's name: libvlc's own for a libvlc event, as `libvlc_event_type_name` spells
    /// it (for example `MediaPlayerEndReached`).
    var name: String { get }
}

extension VLCEvent {
    /// libvlc's own name for the event, as `libvlc_event_type_name` spells it
    /// (for example `MediaPlayerEndReached`).
    public var name: String { kind.name }
    /// `false`: a source whose events carry wrappers (a `VLCMedia` …) says so itself.
    public var holdsWrappers: Bool { false }
}

/// The kinds of events one source sends; used to filter subscriptions and streams.
public protocol VLCEventKind: CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// The libvlc event type (`libvlc_event_e`) this kind stands for; negative for the kinds
    /// of MediaEvents' own events (playbacks, playlists), which libvlc never sends.
    var nativeType: Int32 { get }
    /// The kind's name: libvlc's own for a libvlc event type (`libvlc_event_type_name`).
    var name: String { get }
    /// The kind's position among its source's kinds (0 to 63).
    var index: Int { get }
    /// Whether events of this kind report progress (time, position, buffering, volume …):
    /// frequent values of which only the latest matters. An `EventStream` with the default
    /// buffering keeps only the latest pending value of each progress kind.
    var isProgress: Bool { get }
}

extension VLCEventKind {
    /// No kind reports progress unless its source says so.
    public var isProgress: Bool { false }

    /// libvlc's own name for the event type, as `libvlc_event_type_name` spells it.
    public var name: String { EventNames.name(of: nativeType) }
    /// libvlc's name for the event type (`name`).
    public var description: String { name }
}

/// A set of event kinds as a bit mask, so that filtering costs one AND per delivery.
struct KindMask: Sendable {
    let bits: UInt64

    static var all: KindMask { KindMask(bits: ~0) }

    init(bits: UInt64) { self.bits = bits }

    init<Kind: VLCEventKind>(_ kinds: some Sequence<Kind>) {
        var bits: UInt64 = 0
        for kind in kinds { bits |= 1 << UInt64(kind.index) }
        self.bits = bits == 0 ? ~0 : bits
    }

    func contains<Kind: VLCEventKind>(_ kind: Kind) -> Bool {
        bits & (1 << UInt64(kind.index)) != 0
    }
}

/// libvlc's names for its event types, read once from `libvlc_event_type_name`.
enum EventNames {
    private static let table: [Int32: String] = {
        var table: [Int32: String] = [:]
        let ranges: [ClosedRange<Int32>] = [
            0...0x10, 0x100...0x130, 0x200...0x210, 0x300...0x310,
            0x400...0x410, 0x500...0x510, 0x600...0x610,
        ]
        for type in ranges.joined() {
            let name = NativeLibrary.eventTypeName(type)
            if name != "Unknown Event" { table[type] = name }
        }
        return table
    }()

    /// Types that libvlc 3.0's `libvlc_event_type_name` does not know ("Unknown Event"): named
    /// after their `libvlc_event_e` constant without the `libvlc_` prefix.
    private static let unnamedByLibvlc: [Int32: String] = [
        0x502: "RendererDiscovererItemAdded",
        0x503: "RendererDiscovererItemDeleted",
    ]

    static func name(of type: Int32) -> String {
        table[type] ?? unnamedByLibvlc[type] ?? "UnknownEvent(\(type))"
    }
}
