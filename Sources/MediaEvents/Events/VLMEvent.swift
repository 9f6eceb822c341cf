/// An event of the VLM (VideoLAN Manager): a broadcast or VOD media was added, changed or
/// removed, or one of its instances started, stopped or changed state.
public struct VLMEvent: VLCEvent, Equatable {
    /// Which kind of event this is.
    public let kind: Kind
    /// The name of the VLM media the event is about.
    public let mediaName: String?
    /// The name of the media's instance; libvlc 3 sends it only with the `instanceStatus…`
    /// kinds, and `nil` for the default instance that `play(name:)` starts.
    public let instanceName: String?

    /// Creates an event; libvlc's events are built by `VLCVLM`.
    public init(kind: Kind, mediaName: String?, instanceName: String? = nil) {
        self.kind = kind
        self.mediaName = mediaName
        self.instanceName = instanceName
    }

    /// The kinds of VLM events, in libvlc's order (`libvlc_VlmMediaAdded` = 0x600 …).
    public enum Kind: Int, VLCEventKind {
        /// A media was added (`VlmMediaAdded`).
        case mediaAdded
        /// A media was removed (`VlmMediaRemoved`).
        case mediaRemoved
        /// A media's settings changed (`VlmMediaChanged`); libvlc also sends it right after
        /// `mediaAdded`.
        case mediaChanged
        /// An instance of a media was started (`VlmMediaInstanceStarted`).
        case instanceStarted
        /// An instance of a media was stopped (`VlmMediaInstanceStopped`), at the end of its
        /// input or by `stop(name:)`.
        case instanceStopped
        /// An instance's input is initializing (`VlmMediaInstanceStatusInit`).
        case instanceStatusInit
        /// An instance's input is opening (`VlmMediaInstanceStatusOpening`).
        case instanceStatusOpening
        /// An instance's input is playing (`VlmMediaInstanceStatusPlaying`).
        case instanceStatusPlaying
        /// An instance's input is paused (`VlmMediaInstanceStatusPause`).
        case instanceStatusPause
        /// An instance's input reached its end (`VlmMediaInstanceStatusEnd`).
        case instanceStatusEnd
        /// An instance's input failed (`VlmMediaInstanceStatusError`).
        case instanceStatusError

        /// The libvlc event type (`libvlc_event_e`): 0x600 plus the kind's raw value.
        public var nativeType: Int32 { 0x600 + Int32(rawValue) }
        /// The kind's position among the VLM kinds: its raw value.
        public var index: Int { rawValue }
    }

    /// libvlc's name of the event, then the media and instance names when there are any.
    public var description: String {
        var text = name
        if let mediaName { text += " media=\(mediaName)" }
        if let instanceName { text += " instance=\(instanceName)" }
        return text
    }
}
