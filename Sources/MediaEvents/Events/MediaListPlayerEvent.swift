/// An event of a `VLCMediaListPlayer`.
public enum MediaListPlayerEvent: VLCEvent {
    /// Whether this event carries wrappers made for it (see `VLCEvent.holdsWrappers`).
    public var holdsWrappers: Bool {
        if case .nextItemSet = self { return true }
        return false
    }

    /// The list was played through: there is no next item (`MediaListPlayerPlayed`).
    case played
    /// The list player moved to `item` and started playing it (`MediaListPlayerNextItemSet`);
    /// the media is retained for the event.
    case nextItemSet(VLCMedia)
    /// The list player was stopped (`MediaListPlayerStopped`).
    case stopped

    /// The kinds of list player events.
    public enum Kind: Int, VLCEventKind {
        /// One kind per `MediaListPlayerEvent` case, of the same name, in libvlc's order: `played` is
        /// `MediaListPlayerPlayed` (0x400), `nextItemSet` `MediaListPlayerNextItemSet`, `stopped`
        /// `MediaListPlayerStopped`.
        case played, nextItemSet, stopped

        /// The libvlc event type (`libvlc_event_e`): 0x400 plus the kind's raw value.
        public var nativeType: Int32 { 0x400 + Int32(rawValue) }
        /// The kind's position among the list player kinds: its raw value.
        public var index: Int { rawValue }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch self {
        case .played: .played
        case .nextItemSet: .nextItemSet
        case .stopped: .stopped
        }
    }

    /// libvlc's name of the event, with the item's MRL for `nextItemSet`.
    public var description: String {
        switch self {
        case .nextItemSet(let media): "\(name) item=\(media.mrl)"
        default: name
        }
    }
}
