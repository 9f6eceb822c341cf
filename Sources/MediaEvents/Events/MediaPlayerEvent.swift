/// An event of a `VLCMediaPlayer`. Times and lengths are in milliseconds.
public enum MediaPlayerEvent: VLCEvent {
    /// Whether this event carries wrappers made for it (see `VLCEvent.holdsWrappers`).
    public var holdsWrappers: Bool {
        if case .mediaChanged(let media) = self { return media != nil }
        return false
    }

    /// The player's media changed (`MediaPlayerMediaChanged`); the new media, retained.
    case mediaChanged(VLCMedia?)
    /// The player entered the `nothingSpecial` state (`MediaPlayerNothingSpecial`).
    case nothingSpecial
    /// The player started opening its media (`MediaPlayerOpening`).
    case opening
    /// Buffering progress in percent, 0 to 100 (`MediaPlayerBuffering`).
    case buffering(percent: Float)
    /// The player started playing (`MediaPlayerPlaying`).
    case playing
    /// The player paused (`MediaPlayerPaused`).
    case paused
    /// The player stopped (`MediaPlayerStopped`).
    case stopped
    /// Declared by libvlc 3 but never sent.
    case forward
    /// Declared by libvlc 3 but never sent.
    case backward
    /// The player reached the end of its media (`MediaPlayerEndReached`).
    case endReached
    /// Playback failed (`MediaPlayerEncounteredError`).
    case encounteredError
    /// The playback time changed, in milliseconds (`MediaPlayerTimeChanged`).
    case timeChanged(milliseconds: Int64)
    /// The position, 0 to 1.
    case positionChanged(Float)
    /// The media became seekable (`true`) or not (`false`) (`MediaPlayerSeekableChanged`).
    case seekableChanged(Bool)
    /// The media became pausable (`true`) or not (`false`) (`MediaPlayerPausableChanged`).
    case pausableChanged(Bool)
    /// The current title changed; the new title's index (`MediaPlayerTitleChanged`).
    case titleChanged(Int)
    /// A snapshot was written (sent to every player of the library).
    case snapshotTaken(path: String)
    /// The media's length changed, in milliseconds (`MediaPlayerLengthChanged`).
    case lengthChanged(milliseconds: Int64)
    /// The number of video outputs changed.
    case voutChanged(count: Int)
    /// The media became scrambled (encrypted, `true`) or not (`false`) (`MediaPlayerScrambledChanged`).
    case scrambledChanged(Bool)
    /// An elementary stream (track) was added; `id` -1 on deletion means all of that type.
    case esAdded(type: TrackType, id: Int)
    /// An elementary stream (track) was removed; `id` -1 means all of `type` (`MediaPlayerESDeleted`).
    case esDeleted(type: TrackType, id: Int)
    /// The selected elementary stream of `type` changed to `id` (`MediaPlayerESSelected`).
    case esSelected(type: TrackType, id: Int)
    /// The audio output was corked: the audio system asked it to pause (`MediaPlayerCorked`).
    case corked
    /// The audio output was uncorked (`MediaPlayerUncorked`).
    case uncorked
    /// The audio was muted (`MediaPlayerMuted`).
    case muted
    /// The audio was unmuted (`MediaPlayerUnmuted`).
    case unmuted
    /// The volume, 0 to 1 (1 = 100 %), or below 0 when unknown.
    case audioVolume(Float)
    /// The audio device identifier, or `nil` for the default.
    case audioDevice(String?)
    /// The current chapter changed; the new chapter's index (`MediaPlayerChapterChanged`).
    case chapterChanged(Int)

    /// The kinds of player events.
    public enum Kind: Int, VLCEventKind {
        /// One kind per `MediaPlayerEvent` case, of the same name, in libvlc's order: `mediaChanged` is
        /// `MediaPlayerMediaChanged` (0x100) … `chapterChanged` `MediaPlayerChapterChanged` (0x11D).
        case mediaChanged, nothingSpecial, opening, buffering, playing, paused, stopped, forward,
            backward, endReached, encounteredError, timeChanged, positionChanged, seekableChanged,
            pausableChanged, titleChanged, snapshotTaken, lengthChanged, voutChanged,
            scrambledChanged, esAdded, esDeleted, esSelected, corked, uncorked, muted, unmuted,
            audioVolume, audioDevice, chapterChanged

        /// The libvlc event type (`libvlc_event_e`): 0x100 plus the kind's raw value.
        public var nativeType: Int32 { 0x100 + Int32(rawValue) }
        /// The kind's position among the player kinds: its raw value.
        public var index: Int { rawValue }

        /// Progress events: frequent values where only the latest matters.
        public var isProgress: Bool {
            switch self {
            case .timeChanged, .positionChanged, .buffering, .audioVolume: true
            default: false
            }
        }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch self {
        case .mediaChanged: .mediaChanged
        case .nothingSpecial: .nothingSpecial
        case .opening: .opening
        case .buffering: .buffering
        case .playing: .playing
        case .paused: .paused
        case .stopped: .stopped
        case .forward: .forward
        case .backward: .backward
        case .endReached: .endReached
        case .encounteredError: .encounteredError
        case .timeChanged: .timeChanged
        case .positionChanged: .positionChanged
        case .seekableChanged: .seekableChanged
        case .pausableChanged: .pausableChanged
        case .titleChanged: .titleChanged
        case .snapshotTaken: .snapshotTaken
        case .lengthChanged: .lengthChanged
        case .voutChanged: .voutChanged
        case .scrambledChanged: .scrambledChanged
        case .esAdded: .esAdded
        case .esDeleted: .esDeleted
        case .esSelected: .esSelected
        case .corked: .corked
        case .uncorked: .uncorked
        case .muted: .muted
        case .unmuted: .unmuted
        case .audioVolume: .audioVolume
        case .audioDevice: .audioDevice
        case .chapterChanged: .chapterChanged
        }
    }

    /// libvlc's name of the event and its payload, for example `MediaPlayerTimeChanged time=1200ms`.
    public var description: String {
        switch self {
        case .mediaChanged(let media): "\(name) media=\(media?.mrl ?? "none")"
        case .buffering(let percent): "\(name) percent=\(percent)"
        case .timeChanged(let ms): "\(name) time=\(ms)ms"
        case .positionChanged(let position): "\(name) position=\(position)"
        case .seekableChanged(let flag), .pausableChanged(let flag), .scrambledChanged(let flag):
            "\(name) \(flag)"
        case .titleChanged(let title): "\(name) title=\(title)"
        case .snapshotTaken(let path): "\(name) path=\(path)"
        case .lengthChanged(let ms): "\(name) length=\(ms)ms"
        case .voutChanged(let count): "\(name) count=\(count)"
        case .esAdded(let type, let id), .esDeleted(let type, let id), .esSelected(let type, let id):
            "\(name) type=\(type) id=\(id)"
        case .audioVolume(let volume): "\(name) volume=\(volume)"
        case .audioDevice(let device): "\(name) device=\(device ?? "default")"
        case .chapterChanged(let chapter): "\(name) chapter=\(chapter)"
        default: name
        }
    }
}
