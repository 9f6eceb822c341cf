/// An event of a `VLCMediaDiscoverer`. libvlc 3 sends these only from `start` and `stop`;
/// what the service finds arrives as events of the discoverer's `mediaList`.
public enum MediaDiscovererEvent: VLCEvent {
    /// The service started (`MediaDiscovererStarted`).
    case started
    /// The service stopped (`MediaDiscovererEnded`).
    case ended

    /// The kinds of media discoverer events.
    public enum Kind: Int, VLCEventKind {
        /// One kind per `MediaDiscovererEvent` case, of the same name: `started` is
        /// `MediaDiscovererStarted` (0x500), `ended` `MediaDiscovererEnded` (0x501).
        case started, ended

        /// The libvlc event type (`libvlc_event_e`): 0x500 plus the kind's raw value.
        public var nativeType: Int32 { 0x500 + Int32(rawValue) }
        /// The kind's position among the media discoverer kinds: its raw value.
        public var index: Int { rawValue }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch self {
        case .started: .started
        case .ended: .ended
        }
    }

    /// libvlc's name of the event (`name`), for example `MediaDiscovererStarted`.
    public var description: String { name }
}
