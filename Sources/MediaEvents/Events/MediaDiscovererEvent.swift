import CLibVLC

/// An event of a `VLCMediaDiscoverer`. libvlc 3 sends these only from `start` and `stop`;
/// what the service finds arrives as events of the discoverer's `mediaList`.
public enum MediaDiscovererEvent: VLCEvent {
    /// The service started (`MediaDiscovererStarted`).
    case started
    /// The service stopped (`MediaDiscovererEnded`).
    case ended

    /// The kinds of media discoverer events.
    public enum Kind: Int, VLCEventKind {
        case started, ended

        public var nativeType: Int32 { 0x500 + Int32(rawValue) }
        public var index: Int { rawValue }
    }

    public var kind: Kind {
        switch self {
        case .started: .started
        case .ended: .ended
        }
    }

    public var description: String { name }

    init?(native event: libvlc_event_t) {
        switch event.type {
        case 0x500: self = .started
        case 0x501: self = .ended
        default: return nil
        }
    }
}
