import MediaEvents

/// Which events the programs print: an include list, an exclude list (libvlc names) and
/// whether progress events are dropped.
public struct EventFilter: Sendable {
    /// Names to keep; empty keeps all.
    public var include: Set<String> = []
    /// Names to drop.
    public var exclude: Set<String> = []
    /// Drops TimeChanged, PositionChanged, Buffering and AudioVolume.
    public var dropProgress = false

    public init() {}

    /// Whether `record` is printed.
    public func allows(_ record: EventRecord) -> Bool {
        if dropProgress && record.isProgress { return false }
        if !include.isEmpty && !include.contains(record.name) { return false }
        return !exclude.contains(record.name)
    }
}

/// Every event name the programs can print, and the short forms accepted on the command line.
public enum EventCatalog {
    /// libvlc's names of every event of the sources the programs observe.
    public static var allNames: [String] {
        MediaPlayerEvent.Kind.allCases.map(\.name) + MediaEvent.Kind.allCases.map(\.name)
            + MediaListEvent.Kind.allCases.map(\.name) + MediaListPlayerEvent.Kind.allCases.map(\.name)
    }

    private static let prefixes = ["MediaListPlayer", "MediaListView", "MediaList", "MediaPlayer", "Media"]

    /// The libvlc names `token` stands for: a full name (`MediaPlayerEndReached`) or the name
    /// without its source prefix (`EndReached`), case-insensitively; empty when none.
    public static func resolve(_ token: String) -> [String] {
        let wanted = token.lowercased()
        return allNames.filter { name in
            if name.lowercased() == wanted { return true }
            guard let prefix = prefixes.first(where: { name.hasPrefix($0) }) else { return false }
            return name.dropFirst(prefix.count).lowercased() == wanted
        }
    }
}
