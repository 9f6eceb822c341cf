// Playlist/ — a playlist owned in Swift over one `VLCMediaPlayer` (VLCPlaylistPlayer): entries
// with ids never reused, edits, next/previous/loop, playlists and directories expanded into
// entries that name their parent, and the next entry prepared while one plays. libvlc's list
// player is never used (its `next` can deadlock against its own thread); every decision is a
// transition of one state machine (PlaylistState) made under one lock, and every libvlc call
// runs on the player's control queue.

/// One entry of a `VLCPlaylistPlayer`.
public struct PlaylistEntry: Sendable, Hashable, CustomStringConvertible {
    /// The entry's id, never reused by its playlist.
    public let id: PlaylistEntryID
    /// The media's location (MRL).
    public let mrl: String
    /// The entry this one was expanded from (a playlist file or a directory), if any.
    public let parent: PlaylistEntryID?

    /// The id and location.
    public var description: String { "\(id) \(mrl)" }
}

/// How a playlist goes on after an entry ends.
public enum PlaylistLoop: String, Sendable, CaseIterable {
    /// To the next entry; after the last, the playlist ends (the player stops).
    case off
    /// To the next entry; after the last, the first.
    case list
    /// The same entry again after it played to its end (a failed entry is left for the next).
    case entry
}

/// An event of a `VLCPlaylistPlayer`: its entries changed, the current entry changed, or it
/// reached its end. What each playback did comes from `player.playbacks`, tagged with the entry.
public enum PlaylistEvent: VLCEvent, CustomStringConvertible {
    /// Entries were added, the first at `index`.
    case entriesAdded([PlaylistEntry], index: Int)
    /// An entry was removed from `index`.
    case entryRemoved(PlaylistEntry, index: Int)
    /// An entry moved from one index to another.
    case entryMoved(PlaylistEntry, from: Int, to: Int)
    /// Every entry was removed.
    case cleared
    /// A playlist file or a directory was replaced by its entries (at the parent's index).
    case expanded(parent: PlaylistEntry, children: [PlaylistEntry])
    /// The entry the playlist plays (or will play) changed; `nil` once it has ended or was
    /// cleared.
    case currentEntryChanged(PlaylistEntry?)
    /// The last entry ended with no loop: the playlist is idle and its player stopped.
    case endReached

    /// The kinds of playlist events.
    public enum Kind: Int, VLCEventKind {
        /// `PlaylistEntriesAdded`, `PlaylistEntryRemoved`, `PlaylistEntryMoved`,
        /// `PlaylistCleared`, `PlaylistExpanded`, `PlaylistCurrentEntryChanged`,
        /// `PlaylistEndReached`.
        case entriesAdded, entryRemoved, entryMoved, cleared, expanded, currentEntryChanged, endReached

        /// No libvlc type: -101 and below.
        public var nativeType: Int32 { -101 - Int32(rawValue) }
        /// The kind's position.
        public var index: Int { rawValue }

        /// `Playlist` and the case's name.
        public var name: String {
            switch self {
            case .entriesAdded: "PlaylistEntriesAdded"
            case .entryRemoved: "PlaylistEntryRemoved"
            case .entryMoved: "PlaylistEntryMoved"
            case .cleared: "PlaylistCleared"
            case .expanded: "PlaylistExpanded"
            case .currentEntryChanged: "PlaylistCurrentEntryChanged"
            case .endReached: "PlaylistEndReached"
            }
        }

        /// The name.
        public var description: String { name }
    }

    /// Which kind of event this is.
    public var kind: Kind {
        switch self {
        case .entriesAdded: .entriesAdded
        case .entryRemoved: .entryRemoved
        case .entryMoved: .entryMoved
        case .cleared: .cleared
        case .expanded: .expanded
        case .currentEntryChanged: .currentEntryChanged
        case .endReached: .endReached
        }
    }

    /// The kind's name.
    public var name: String { kind.name }

    /// The name and payload, for logs.
    public var description: String {
        switch self {
        case .entriesAdded(let entries, let index): "\(name) index=\(index) entries=\(entries.map(\.id))"
        case .entryRemoved(let entry, let index): "\(name) entry=\(entry.id) index=\(index)"
        case .entryMoved(let entry, let from, let to): "\(name) entry=\(entry.id) from=\(from) to=\(to)"
        case .cleared, .endReached: name
        case .expanded(let parent, let children): "\(name) parent=\(parent.id) children=\(children.map(\.id))"
        case .currentEntryChanged(let entry): "\(name) entry=\(entry.map { "\($0.id)" } ?? "none")"
        }
    }
}
