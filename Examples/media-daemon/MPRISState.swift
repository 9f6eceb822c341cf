import MediaEvents

/// What the MPRIS `Player` interface shows of the daemon, read from the playlist and its
/// player in one go: the values of every property that sends `PropertiesChanged` (all but
/// `Position`), compared with the last values sent to find what changed.
///
/// Reading waits for no libvlc lock that libvlc holds while it sends events: the playlist
/// answers under its own lock, the player from the caches its events feed; the media's meta
/// and the volume are short libvlc getters.
struct MPRISState: Equatable {
    /// The object path prefix of `mpris:trackid` (the specification reserves `/org/mpris`).
    static let trackPathPrefix = "/org/mediaevents/media_daemon/entry/"

    var playbackStatus = "Stopped"
    var loopStatus = "None"
    var rate = 1.0
    var metadata: [(String, DBusValue)] = []
    var volume = 1.0
    var canGoNext = false
    var canGoPrevious = false
    var canPlay = false
    var canPause = false
    var canSeek = false
    /// The current entry's `mpris:trackid`; `nil` when there is none.
    var trackID: String?
    /// The playlist is starting the current entry and the player does not have its media yet:
    /// the metadata lacks what the media says (it is sent once the player has it).
    var metadataSettling = false

    /// The properties whose values differ from `old`, by their D-Bus names.
    func changedProperties(since old: MPRISState) -> [String] {
        var names: [String] = []
        if playbackStatus != old.playbackStatus { names.append("PlaybackStatus") }
        if loopStatus != old.loopStatus { names.append("LoopStatus") }
        if rate != old.rate { names.append("Rate") }
        if !Self.same(metadata, old.metadata) { names.append("Metadata") }
        if volume != old.volume { names.append("Volume") }
        if canGoNext != old.canGoNext { names.append("CanGoNext") }
        if canGoPrevious != old.canGoPrevious { names.append("CanGoPrevious") }
        if canPlay != old.canPlay { names.append("CanPlay") }
        if canPause != old.canPause { names.append("CanPause") }
        if canSeek != old.canSeek { names.append("CanSeek") }
        return names
    }

    static func == (lhs: MPRISState, rhs: MPRISState) -> Bool { lhs.changedProperties(since: rhs).isEmpty }

    private static func same(_ lhs: [(String, DBusValue)], _ rhs: [(String, DBusValue)]) -> Bool {
        lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    /// The track id of the entry `id`: an object path, unique because entry ids are never reused.
    static func trackID(of id: PlaylistEntryID) -> String { trackPathPrefix + String(id.rawValue) }

    /// MPRIS's `LoopStatus` for the playlist's loop, and back.
    static func loopStatus(_ loop: PlaylistLoop) -> String {
        switch loop {
        case .off: "None"
        case .entry: "Track"
        case .list: "Playlist"
        }
    }

    static func loop(_ status: String) -> PlaylistLoop? {
        switch status {
        case "None": .off
        case "Track": .entry
        case "Playlist": .list
        default: nil
        }
    }

    /// The state of `playlist` now. `volume` is the one to show (libvlc reads no volume back
    /// from its `adummy` and `amem` outputs: see `MPRISBusLoop`); `pendingRate`, a rate set
    /// and not carried out by the player yet.
    static func read(_ playlist: VLCPlaylistPlayer, volume: Double, pendingRate: Double?) -> MPRISState {
        var state = MPRISState()
        let entries = playlist.entries
        let current = playlist.currentEntry
        let active = playlist.isActive
        let loop = playlist.loop
        let player = playlist.player
        let playerState = player.state
        let running = playerState == .playing || playerState == .paused
        state.playbackStatus = !active ? "Stopped" : playerState == .paused ? "Paused" : "Playing"
        state.loopStatus = loopStatus(loop)
        state.rate = pendingRate ?? Double(player.rate)
        state.volume = volume
        state.canPlay = !entries.isEmpty
        if let current, let index = entries.firstIndex(where: { $0.id == current.id }) {
            state.canGoNext = index + 1 < entries.count || loop == .list
            state.canGoPrevious = index > 0 || loop == .list
            state.canPause = running ? player.isPausable : true
            state.canSeek = running && player.isSeekable
            state.trackID = trackID(of: current.id)
            let (metadata, hasMedia) = metadata(of: current, player: player)
            state.metadata = metadata
            state.metadataSettling = active && !hasMedia
        }
        return state
    }

    /// `Metadata` of the entry `entry`: its track id and URL, and, once the player has its media
    /// (the entry plays, played or was stopped), the length and libvlc's meta of that media;
    /// with whether it had.
    private static func metadata(of entry: PlaylistEntry, player: VLCMediaPlayer) -> ([(String, DBusValue)], Bool) {
        var metadata: [(String, DBusValue)] = [
            ("mpris:trackid", .objectPath(trackID(of: entry.id))), ("xesam:url", .string(entry.mrl)),
        ]
        // The player's media is the entry's only once the playlist has set it: before, it is
        // the previous entry's (a `next` while stopped moves the current entry only).
        guard let media = player.media, media.mrl == entry.mrl else { return (metadata, false) }
        let length = media.duration ?? (player.length > 0 ? player.length : nil)
        if let length, length > 0 { metadata.append(("mpris:length", .int64(length * 1000))) }
        // libvlc answers the title with the file name when the media has none.
        if let title = media.meta(.title), !title.isEmpty { metadata.append(("xesam:title", .string(title))) }
        if let artist = media.meta(.artist), !artist.isEmpty { metadata.append(("xesam:artist", .strings([artist]))) }
        if let album = media.meta(.album), !album.isEmpty { metadata.append(("xesam:album", .string(album))) }
        if let number = media.meta(.trackNumber).flatMap({ Int32($0) }) {
            metadata.append(("xesam:trackNumber", .int32(number)))
        }
        if let art = media.meta(.artworkURL), !art.isEmpty { metadata.append(("mpris:artUrl", .string(art))) }
        return (metadata, true)
    }
}
