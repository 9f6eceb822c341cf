/// An event of one playback of a player (see `VLCMediaPlayer.playbacks`): its start, every event
/// of the player and of the playing media while it is the player's playback, a stall, and its
/// one end.
///
/// The playback is decided when libvlc sends the event, not when it is delivered: an event
/// libvlc sent for a playback is tagged with it even when it is delivered after the next one
/// began (an asynchronous configuration), and an event of the next playback never carries an
/// earlier id.
public struct PlaybackEvent: VLCEvent, CustomStringConvertible {
    /// What happened.
    public enum Payload: Sendable {
        /// The playback began: a control call started the media (`play()`, or a playlist
        /// player moving to an entry). `mrl` is the media's location.
        case began(mrl: String)
        /// An event of the player.
        case player(MediaPlayerEvent)
        /// An event of the playing media.
        case media(MediaEvent)
        /// The playback made no progress for the player's `stallTimeout`; its end
        /// (`failed`, with the stall as the reason) follows.
        case stalled(StallReason)
        /// The playback ended; this is its last event.
        case ended(PlaybackSummary)
    }

    /// The playback.
    public let playback: PlaybackID
    /// The playlist entry it plays, under a `VLCPlaylistPlayer`.
    public let entry: PlaylistEntryID?
    /// What happened.
    public let payload: Payload

    /// An event of `playback`.
    public init(playback: PlaybackID, entry: PlaylistEntryID?, payload: Payload) {
        self.playback = playback
        self.entry = entry
        self.payload = payload
    }

    /// The kinds of playback events: one per player event kind, one per media event kind, and
    /// MediaEvents' own `began`, `stalled` and `ended`.
    public enum Kind: VLCEventKind {
        /// `PlaybackBegan`.
        case began
        /// `PlaybackStalled`.
        case stalled
        /// `PlaybackEnded`.
        case ended
        /// A player event of this kind.
        case player(MediaPlayerEvent.Kind)
        /// A media event of this kind.
        case media(MediaEvent.Kind)

        /// Every kind: MediaEvents' own three, then the player's, then the media's.
        public static var allCases: [Kind] {
            [.began, .stalled, .ended] + MediaPlayerEvent.Kind.allCases.map { .player($0) }
                + MediaEvent.Kind.allCases.map { .media($0) }
        }

        /// libvlc's type for a player or media kind; -1, -2, -3 for MediaEvents' own.
        public var nativeType: Int32 {
            switch self {
            case .began: -1
            case .stalled: -2
            case .ended: -3
            case .player(let kind): kind.nativeType
            case .media(let kind): kind.nativeType
            }
        }

        /// The kind's position: 0 to 2 for MediaEvents' own, then the player's, then the
        /// media's.
        public var index: Int {
            switch self {
            case .began: 0
            case .stalled: 1
            case .ended: 2
            case .player(let kind): 3 + kind.index
            case .media(let kind): 3 + MediaPlayerEvent.Kind.allCases.count + kind.index
            }
        }

        /// The player's and the media's progress kinds.
        public var isProgress: Bool {
            switch self {
            case .began, .stalled, .ended: false
            case .player(let kind): kind.isProgress
            case .media(let kind): kind.isProgress
            }
        }

        /// `PlaybackBegan`, `PlaybackStalled`, `PlaybackEnded`, or libvlc's name of the
        /// player or media event.
        public var name: String {
            switch self {
            case .began: "PlaybackBegan"
            case .stalled: "PlaybackStalled"
            case .ended: "PlaybackEnded"
            case .player(let kind): kind.name
            case .media(let kind): kind.name
            }
        }

        /// The name.
        public var description: String { name }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch payload {
        case .began: .began
        case .stalled: .stalled
        case .ended: .ended
        case .player(let event): .player(event.kind)
        case .media(let event): .media(event.kind)
        }
    }

    /// The kind's name.
    public var name: String { kind.name }

    /// Whether a player or media event it carries holds wrappers.
    public var holdsWrappers: Bool {
        switch payload {
        case .player(let event): event.holdsWrappers
        case .media(let event): event.holdsWrappers
        default: false
        }
    }

    /// The playback, the entry and the event, for logs.
    public var description: String {
        let tag = "playback=\(playback)" + (entry.map { " entry=\($0)" } ?? "")
        switch payload {
        case .began(let mrl): return "\(name) \(tag) mrl=\(mrl)"
        case .player(let event): return "\(event) \(tag)"
        case .media(let event): return "\(event) \(tag)"
        case .stalled(let reason): return "\(name) \(tag) reason=\(reason.rawValue)"
        case .ended(let summary): return "\(name) \(tag) outcome=\(summary.outcome)"
        }
    }
}
