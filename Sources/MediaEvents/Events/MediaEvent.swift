/// An event of a `VLCMedia`.
public enum MediaEvent: VLCEvent {
    /// Whether this event carries wrappers made for it (see `VLCEvent.holdsWrappers`).
    public var holdsWrappers: Bool {
        switch self {
        case .subItemAdded, .subItemTreeAdded: true
        default: false
        }
    }

    /// A metadata value changed (`MediaMetaChanged`).
    case metaChanged(MetaKey)
    /// A sub-item was added, for example an entry of a playlist being parsed (`MediaSubItemAdded`).
    case subItemAdded(VLCMedia)
    /// The duration became known or changed, in milliseconds (`MediaDurationChanged`).
    case durationChanged(milliseconds: Int64)
    /// Parsing ended or its status changed (`MediaParsedChanged`).
    case parsedChanged(ParsedStatus)
    /// This `VLCMedia` was torn down: sent once, to its subscribers of this kind, just before
    /// their completions. It stands for libvlc's `MediaFreed`, which the wrapper cannot see
    /// (it detaches before releasing its reference, and other references may keep the native
    /// media alive longer).
    case freed
    /// The media's state changed (`MediaStateChanged`).
    case stateChanged(PlaybackState)
    /// The tree of sub-items was added (`MediaSubItemTreeAdded`).
    case subItemTreeAdded(VLCMedia)

    /// The kinds of media events.
    public enum Kind: Int, VLCEventKind {
        /// One kind per `MediaEvent` case, of the same name, in libvlc's order: `metaChanged` is
        /// `MediaMetaChanged` (0) … `subItemTreeAdded` `MediaSubItemTreeAdded` (6). `freed` stands for
        /// `MediaFreed`, which MediaEvents sends itself when the wrapper is torn down.
        case metaChanged, subItemAdded, durationChanged, parsedChanged, freed, stateChanged,
            subItemTreeAdded

        /// The libvlc event type (`libvlc_event_e`): the kind's raw value (`MediaMetaChanged` is 0).
        public var nativeType: Int32 { Int32(rawValue) }
        /// The kind's position among the media kinds: its raw value.
        public var index: Int { rawValue }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch self {
        case .metaChanged: .metaChanged
        case .subItemAdded: .subItemAdded
        case .durationChanged: .durationChanged
        case .parsedChanged: .parsedChanged
        case .freed: .freed
        case .stateChanged: .stateChanged
        case .subItemTreeAdded: .subItemTreeAdded
        }
    }

    /// libvlc's name of the event and its payload, for example `MediaDurationChanged duration=1000ms`.
    public var description: String {
        switch self {
        case .metaChanged(let key): "\(name) meta=\(key)"
        case .subItemAdded(let media): "\(name) item=\(media.mrl)"
        case .durationChanged(let ms): "\(name) duration=\(ms)ms"
        case .parsedChanged(let status): "\(name) status=\(status)"
        case .freed: name
        case .stateChanged(let state): "\(name) state=\(state)"
        case .subItemTreeAdded(let media): "\(name) item=\(media.mrl)"
        }
    }
}
