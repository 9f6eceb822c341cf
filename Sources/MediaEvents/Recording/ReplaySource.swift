/// A recorded object played back with its events only: a media, a list, a list player, a
/// discoverer, the VLM, a player's playbacks recorded without their player, or the session's
/// marks. Observe it like the real object (`observe`, `events()`, `waitFor`); its events come
/// from the recording, through an `EventsHandler`, as the session's configuration says.
public final class ReplaySource<Event: VLCEvent>: VLCEventSource {
    /// The subscribers of this source.
    public let eventHub = EventHub<Event>()
    /// How this source's events are dispatched: the session's.
    public let configuration: any EventsConfiguring
    /// The recorded object this source plays back (`nil` for the session's marks).
    public let recordedObject: RecordedObject?
    let feed: ReplaySourceFeed<Event>

    init(object: RecordedObject?, configuration: any EventsConfiguring) {
        recordedObject = object
        self.configuration = configuration
        feed = ReplaySourceFeed()
        feed.bind(EventsHandler(object: self, configuration: configuration))
    }

    deinit { _ = eventHub.finish() }
}

/// The handler a replayed source's deliveries go through; holds the source weakly.
final class ReplaySourceFeed<Event: VLCEvent>: Sendable {
    private let handler = Protected<EventsHandler<ReplaySource<Event>>?>(nil)

    func bind(_ handler: EventsHandler<ReplaySource<Event>>) { self.handler.withLock { $0 = handler } }

    func deliver(_ event: Event, _ entry: RecordedEntry) {
        handler.withLock { $0 }?.handleEvent((event, entry)) { source, delivery in
            ReplayDeliveryContext.withEntry(delivery.1) { source.eventHub.publish(delivery.0) }
        }
    }
}

/// A mark of a recording, as a replay delivers it (``ReplaySession/marks``): a note the app
/// wrote with ``EventRecorder/mark(_:source:fields:)``, or a log's line of a source that is no
/// object (a program's `ItemFailed`, libvlc's `LogMessage`).
public struct RecordedMark: VLCEvent, Hashable {
    /// Marks have one kind.
    public enum Kind: Int, VLCEventKind {
        /// A mark.
        case mark

        /// No libvlc type: -201.
        public var nativeType: Int32 { -201 }
        /// The kind's position: 0.
        public var index: Int { 0 }
        /// `Mark`.
        public var name: String { "Mark" }
        /// `Mark`.
        public var description: String { name }
    }

    /// Always `mark`.
    public var kind: Kind { .mark }
    /// The mark's name (`ItemFailed`).
    public let name: String
    /// What it came from (`program`), if recorded.
    public let source: String?
    /// Its fields, in the recorded order.
    public let fields: [RecordedField]

    /// A mark.
    public init(name: String, source: String? = nil, fields: [RecordedField] = []) {
        self.name = name
        self.source = source
        self.fields = fields
    }

    /// The name and fields, for logs.
    public var description: String {
        ([name] + fields.map(\.description)).joined(separator: " ")
    }
}

/// A recorded playlist player played back: its events, entries and current entry, with its
/// player (``ReplayMediaPlayer``), through `VLCPlaylistPlayer`'s API
/// (``PlaylistPlayerControlling``). Get one from a ``ReplaySession``.
///
/// `entries`, `currentEntry` and `isActive` follow the delivered events (`entriesAdded`,
/// `entryRemoved`, `entryMoved`, `cleared`, `expanded`, `currentEntryChanged`, `endReached`, and
/// the player's playbacks beginning). The control calls change nothing: each is recorded and,
/// when the session is told so, answered; `next()`, `previous()` and `play(_:)` return what the
/// real playlist would, from the entries as they are.
public final class ReplayPlaylistPlayer: PlaylistPlayerControlling {
    /// The subscribers of this playlist.
    public let eventHub = EventHub<PlaylistEvent>()
    /// The player that played the entries.
    public let player: ReplayMediaPlayer
    /// How this playlist's events are dispatched: the session's.
    public var configuration: any EventsConfiguring { player.configuration }
    /// The recorded object this playlist plays back.
    public let recordedObject: RecordedObject
    let feed: ReplayPlaylistFeed
    private let scheduler: ReplayScheduler
    private let answersCalls: Bool

    init(
        object: RecordedObject, player: ReplayMediaPlayer, scheduler: ReplayScheduler, answersCalls: Bool
    ) {
        recordedObject = object
        self.player = player
        self.scheduler = scheduler
        self.answersCalls = answersCalls
        feed = ReplayPlaylistFeed()
        feed.bind(EventsHandler(object: self, configuration: player.configuration))
        let feed = feed
        player.feed.observePlaybacks { event in feed.note(event) }
    }

    deinit { _ = eventHub.finish() }

    private func call(_ name: String, _ fields: [RecordedField] = []) {
        if answersCalls { feed.apply(call: name, fields: fields) }
        _ = scheduler.call(name, on: recordedObject.id, fields: fields, answers: answersCalls)
    }

    /// The entries, as the delivered events left them.
    public var entries: [PlaylistEntry] { feed.values.entries }
    /// The current entry, as the last delivered `currentEntryChanged` said.
    public var currentEntry: PlaylistEntry? { feed.values.current }
    /// Whether the playlist plays: an entry's playback began, and no end, stop or clear
    /// came after it.
    public var isActive: Bool { feed.values.isActive }

    /// How the playlist goes on after an entry ends (what `next()` and `previous()` answer
    /// with); setting it is recorded as `setLoop` with `loop`.
    public var loop: PlaylistLoop {
        get { feed.values.loop }
        set {
            feed.setLoop(newValue)
            call("setLoop", [RecordedField("loop", .string(newValue.rawValue))])
        }
    }

    /// Records `play`.
    public func play() { call("play") }

    /// Records `playEntry` with `entry`; whether the playlist has that entry.
    @discardableResult
    public func play(_ id: PlaylistEntryID) -> Bool {
        call("playEntry", [RecordedField("entry", .integer(Int64(id.rawValue)))])
        return entries.contains { $0.id == id }
    }

    /// Records `next`; whether there is an entry after the current one.
    @discardableResult
    public func next() -> Bool {
        call("next")
        return feed.values.neighbour(after: true) != nil
    }

    /// Records `previous`; whether there is an entry before the current one.
    @discardableResult
    public func previous() -> Bool {
        call("previous")
        return feed.values.neighbour(after: false) != nil
    }

    /// Records `stop`.
    public func stop() { call("stop") }
    /// Records `pause`.
    public func pause() { call("pause") }
    /// Records `resume`.
    public func resume() { call("resume") }
    /// Returns at once: a call is recorded, and its answer scheduled, before it returns.
    public func waitForPendingControls() async {}
}

/// What a replayed playlist's deliveries update, and the handler they go through.
final class ReplayPlaylistFeed: Sendable {
    struct Values: Sendable {
        var entries: [PlaylistEntry] = []
        var current: PlaylistEntry?
        var isActive = false
        var loop = PlaylistLoop.off

        /// The entry after (or before) the current one, as `VLCPlaylistPlayer` finds it.
        func neighbour(after: Bool) -> PlaylistEntry? {
            guard let current, let index = entries.firstIndex(where: { $0.id == current.id }) else { return nil }
            let target = after ? index + 1 : index - 1
            if entries.indices.contains(target) { return entries[target] }
            return loop == .list ? (after ? entries.first : entries.last) : nil
        }

        mutating func apply(_ event: PlaylistEvent) {
            switch event {
            case .entriesAdded(let added, let index):
                entries.insert(contentsOf: added, at: min(max(index, 0), entries.count))
            case .entryRemoved(let entry, _):
                entries.removeAll { $0.id == entry.id }
            case .entryMoved(let entry, _, let to):
                entries.removeAll { $0.id == entry.id }
                entries.insert(entry, at: min(max(to, 0), entries.count))
            case .cleared:
                entries = []
                current = nil
                isActive = false
            case .expanded(let parent, let children):
                guard let index = entries.firstIndex(where: { $0.id == parent.id }) else { return }
                entries.replaceSubrange(index...index, with: children)
            case .currentEntryChanged(let entry):
                current = entry
                if entry == nil { isActive = false }
            case .endReached:
                isActive = false
            }
        }
    }

    private let state = Protected(Values())
    private let handler = Protected<EventsHandler<ReplayPlaylistPlayer>?>(nil)

    var values: Values { state.withLock { $0 } }

    func bind(_ handler: EventsHandler<ReplayPlaylistPlayer>) { self.handler.withLock { $0 = handler } }

    func setLoop(_ loop: PlaylistLoop) { state.withLock { $0.loop = loop } }

    /// What a call does to the values without an event: a `stop` ends the playing (the
    /// current entry stays), `setLoop` sets the loop.
    func apply(call name: String, fields: [RecordedField] = []) {
        switch name {
        case "stop": state.withLock { $0.isActive = false }
        case "setLoop":
            if let loop = fields[field: "loop"]?.stringValue.flatMap(PlaylistLoop.init(rawValue:)) { setLoop(loop) }
        default: break
        }
    }

    /// A playback of the player began for an entry: the playlist plays.
    func note(_ event: PlaybackEvent) {
        if case .began = event.payload, event.entry != nil { state.withLock { $0.isActive = true } }
    }

    func deliver(_ event: PlaylistEvent, _ entry: RecordedEntry) {
        state.withLock { $0.apply(event) }
        handler.withLock { $0 }?.handleEvent((event, entry)) { playlist, delivery in
            ReplayDeliveryContext.withEntry(delivery.1) { playlist.eventHub.publish(delivery.0) }
        }
    }
}
