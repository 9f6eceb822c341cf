/// An event of a `VLCMediaList`. The item is the list's media, retained for the event; the
/// index is its position in the list when libvlc sent the event.
public enum MediaListEvent: VLCEvent {
    /// Whether this event carries wrappers made for it (see `VLCEvent.holdsWrappers`).
    public var holdsWrappers: Bool {
        switch self {
        case .itemAdded, .willAddItem, .itemDeleted, .willDeleteItem: true
        default: false
        }
    }

    /// `item` was inserted at `index` (`MediaListItemAdded`).
    case itemAdded(VLCMedia, index: Int)
    /// `item` is about to be inserted at `index` (`MediaListWillAddItem`).
    case willAddItem(VLCMedia, index: Int)
    /// `item` was removed from `index` (`MediaListItemDeleted`).
    case itemDeleted(VLCMedia, index: Int)
    /// `item` is about to be removed from `index` (`MediaListWillDeleteItem`).
    case willDeleteItem(VLCMedia, index: Int)
    /// A discoverer that fills the list has finished (`MediaListEndReached`).
    case endReached

    /// The kinds of media list events.
    public enum Kind: Int, VLCEventKind {
        /// One kind per `MediaListEvent` case, of the same name, in libvlc's order: `itemAdded` is
        /// `MediaListItemAdded` (0x200) … `endReached` `MediaListEndReached` (0x204).
        case itemAdded, willAddItem, itemDeleted, willDeleteItem, endReached

        /// The libvlc event type (`libvlc_event_e`): 0x200 plus the kind's raw value.
        public var nativeType: Int32 { 0x200 + Int32(rawValue) }
        /// The kind's position among the media list kinds: its raw value.
        public var index: Int { rawValue }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch self {
        case .itemAdded: .itemAdded
        case .willAddItem: .willAddItem
        case .itemDeleted: .itemDeleted
        case .willDeleteItem: .willDeleteItem
        case .endReached: .endReached
        }
    }

    /// The media the event is about (`nil` for `endReached`).
    public var item: VLCMedia? {
        switch self {
        case .itemAdded(let media, _), .willAddItem(let media, _), .itemDeleted(let media, _),
            .willDeleteItem(let media, _):
            media
        case .endReached:
            nil
        }
    }

    /// The item's index (`nil` for `endReached`).
    public var itemIndex: Int? {
        switch self {
        case .itemAdded(_, let index), .willAddItem(_, let index), .itemDeleted(_, let index),
            .willDeleteItem(_, let index):
            index
        case .endReached:
            nil
        }
    }

    /// libvlc's name of the event, then the item's index and MRL (only the name for `endReached`).
    public var description: String {
        switch self {
        case .endReached: name
        default: "\(name) index=\(itemIndex ?? -1) item=\(item?.mrl ?? "")"
        }
    }
}
