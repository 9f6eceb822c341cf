/// A renderer (for example a Chromecast) found by a `VLCRendererDiscoverer`; holds its
/// libvlc item for as long as it exists (a replayed renderer has none).
public final class VLCRendererItem: Sendable {
    /// The libvlc item; `nil` for a renderer a replay made from a recording.
    let native: NativeRendererItem?
    /// The renderer's name, for example "Living Room TV".
    public let name: String
    /// Its type, for example "chromecast".
    public let type: String
    /// An icon URI, if it has one.
    public let iconURI: String?
    /// Whether it can play audio (`LIBVLC_RENDERER_CAN_AUDIO`).
    public let canAudio: Bool
    /// Whether it can play video (`LIBVLC_RENDERER_CAN_VIDEO`).
    public let canVideo: Bool

    /// Holds `item` (libvlc lends it for the callback only) and copies its fields.
    init(holding item: NativeRendererItem) {
        native = item.hold()
        name = item.name
        type = item.type
        iconURI = item.iconURI
        (canAudio, canVideo) = item.capabilities
    }

    /// A renderer as a recording describes it, with no libvlc item (libvlc has no call that
    /// makes one): what a replay delivers.
    init(recordedName name: String, type: String, iconURI: String?, canAudio: Bool, canVideo: Bool) {
        native = nil
        self.name = name
        self.type = type
        self.iconURI = iconURI
        self.canAudio = canAudio
        self.canVideo = canVideo
    }

    // Dropping a reference never blocks or calls back.
    deinit {
        native?.release()
    }
}

/// An event of a `VLCRendererDiscoverer`.
public enum RendererDiscovererEvent: VLCEvent {
    /// Whether this event carries wrappers made for it (see `VLCEvent.holdsWrappers`).
    public var holdsWrappers: Bool { true }

    /// A renderer appeared (`RendererDiscovererItemAdded`).
    case itemAdded(VLCRendererItem)
    /// A renderer went away (`RendererDiscovererItemDeleted`).
    case itemDeleted(VLCRendererItem)

    /// The kinds of renderer discoverer events.
    public enum Kind: Int, VLCEventKind {
        /// One kind per `RendererDiscovererEvent` case, of the same name: `itemAdded` is
        /// `RendererDiscovererItemAdded` (0x502), `itemDeleted` `RendererDiscovererItemDeleted` (0x503).
        case itemAdded, itemDeleted

        /// The libvlc event type (`libvlc_event_e`): 0x502 plus the kind's raw value.
        public var nativeType: Int32 { 0x502 + Int32(rawValue) }
        /// The kind's position among the renderer discoverer kinds: its raw value.
        public var index: Int { rawValue }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch self {
        case .itemAdded: .itemAdded
        case .itemDeleted: .itemDeleted
        }
    }

    /// The renderer the event is about.
    public var item: VLCRendererItem {
        switch self {
        case .itemAdded(let item), .itemDeleted(let item): item
        }
    }

    /// libvlc's name of the event, then the renderer's name and type.
    public var description: String { "\(name) item=\(item.name) (\(item.type))" }
}
