/// What a ``ReplaySession`` delivers by itself.
public enum ReplayMode: Sendable, Hashable {
    /// Every recorded event and mark, at its recorded time. The app's calls are recorded, and
    /// answered only as ``ReplaySession/answer(_:on:with:)`` says.
    case timeline
    /// What was recorded before the first recorded call, then, for each call the app makes,
    /// what followed the same call in the recording: the `n`-th call of a name on an object is
    /// answered with what followed its `n`-th recorded occurrence, up to the next recorded call
    /// (with the last one again once they are used up), at the recorded distance from the
    /// call. A segment answering a call again begins playbacks with new ids (the ones the
    /// player would give them), and its late events of the playback before are of the
    /// playback the player had before.
    case answeringCalls
}

/// A control call the app made on a replayed object.
public struct ReplayCall: Sendable, Hashable, CustomStringConvertible {
    /// The call's name: `play`, `pause`, `resume`, `stop`, `setMedia`, `setTime`,
    /// `setPosition`; for a playlist also `playEntry`, `next`, `previous`, `setLoop`.
    public let name: String
    /// The recorded object it was made on.
    public let object: RecordedObject.ID
    /// Its arguments (`mrl`, `time_ms`, `position`, `entry`, `loop`).
    public let fields: [RecordedField]
    /// The replay's clock when it was made: the time of the entry whose handler made it, or the
    /// clock's time for a call made outside a handler.
    public let time: Duration
    /// The entry whose handler made the call (on whatever thread or queue it ran), as it was
    /// delivered: its `time` on the replay's clock, its `playback` as the replay numbered it;
    /// `nil` for a call made outside a handler of the replay.
    public let trigger: RecordedEntry?
    /// The entry delivered last before the call was made, as delivered.
    public let previous: RecordedEntry?
    /// Whether a recorded segment was scheduled to answer it.
    public let isAnswered: Bool

    /// `name(fields) after trigger`, for test messages.
    public var description: String {
        let arguments = fields.isEmpty ? "" : "(\(fields.map(\.description).joined(separator: ", ")))"
        return name + arguments + (trigger.map { " in \($0.name) #\($0.seq)" } ?? "")
    }
}

/// Plays a ``Recording`` back through objects that have the real objects' API, deterministically:
/// the test double for code that handles MediaEvents' events.
///
/// ```swift
/// let session = try ReplaySession(recording: Recording(contentsOf: url), pace: .stepped)
/// let player = session.player()!                    // a MediaPlayerControlling
/// let controller = MyController(player: player)      // the app's code, unchanged
/// await session.runToEnd()
/// XCTAssertEqual(session.calls.map(\.name), ["stop"])
/// ```
///
/// **Objects.** Each recorded player is a ``ReplayMediaPlayer`` (with its playbacks), each
/// playlist player a ``ReplayPlaylistPlayer``, every other object a ``ReplaySource`` of its event
/// type; ``marks`` delivers the recording's marks. Subscribe to them before the replay starts.
///
/// **Delivery.** Every event goes through an `EventsHandler` with the session's configuration,
/// as libvlc's events go to the real objects: inline on the thread that delivers, or on a queue,
/// synchronously or not. Payloads that carried a `VLCMedia` (a `MediaChanged`, list items,
/// sub-items) carry a `VLCMedia` made for the recorded MRL, which is never opened; making one
/// needs a libvlc instance, the `library` given, or one the session starts on first use.
///
/// **Determinism.** The next entry is handed out only once the handlers of the previous one
/// have returned, in every configuration and at every pace, so a call a handler makes, and what
/// answers it, always land at the same place. ``ReplayPace/fast`` delivers as fast as that
/// allows, ``ReplayPace/recorded`` at the recorded times, ``ReplayPace/stepped`` only when the
/// test moves the virtual clock.
///
/// **Calls.** The replayed objects' control calls change nothing by themselves: each is kept
/// in ``calls`` with the event whose handler made it, and answered as the ``ReplayMode`` and
/// ``answer(_:on:with:)`` say.
///
/// Keep the session while it replays: when it is deinitialized, delivery stops.
public final class ReplaySession: Sendable {
    /// The recording played back.
    public let recording: Recording
    /// How the replayed objects' events are dispatched.
    public let configuration: any EventsConfiguring
    /// How fast the recording is delivered.
    public let pace: ReplayPace
    /// What is delivered by itself.
    public let mode: ReplayMode
    /// The recorded players, in the recording's order (a playlist's player included).
    public let players: [ReplayMediaPlayer]
    /// The recorded playlist players, in the recording's order.
    public let playlistPlayers: [ReplayPlaylistPlayer]
    /// The recording's marks, each in its place among the events.
    public let marks: ReplaySource<RecordedMark>
    private let sources: [any ReplaySourceBox]
    private let targets: [RecordedObject.ID: any ReplayTarget]
    private let scheduler: ReplayScheduler
    private let mediaFactory: ReplayMediaFactory

    /// Prepares a replay of `recording`; nothing is delivered before `start()` (or, with
    /// `stepped`, before the clock moves).
    ///
    /// - Parameters:
    ///   - recording: what to play back.
    ///   - mode: the whole timeline, or only answers to the app's calls.
    ///   - pace: as fast as possible, at the recorded times, or stepped by the test.
    ///   - configuration: how the replayed objects' events are dispatched; `nil` uses
    ///     `VLCLibrary.sharedEventsConfiguration` as it is now.
    ///   - library: the libvlc instance that makes the `VLCMedia` of media payloads; `nil`
    ///     starts one (headless) the first time a payload needs it.
    /// - Throws: `RecordingError` when an entry's payload does not make an event of its object.
    public init(
        recording: Recording, mode: ReplayMode = .timeline, pace: ReplayPace = .fast,
        configuration: (any EventsConfiguring)? = nil, library: VLCLibrary? = nil
    ) throws {
        let configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        let barrier = ReplayBarrier(configuration: configuration)
        let scheduler = ReplayScheduler(pace: pace) { done in barrier.pass(done) }
        let mediaFactory = ReplayMediaFactory(library: library, configuration: configuration)
        let answers = mode == .answeringCalls
        let marks = ReplaySource<RecordedMark>(object: nil, configuration: configuration)

        var players: [RecordedObject.ID: ReplayMediaPlayer] = [:]
        var targets: [RecordedObject.ID: any ReplayTarget] = [:]
        for object in recording.objects(of: .player) {
            let player = ReplayMediaPlayer(
                object: object, configuration: configuration, scheduler: scheduler, answersCalls: answers)
            players[object.id] = player
            targets[object.id] = PlayerTarget(feed: player.feed)
        }
        var playlists: [ReplayPlaylistPlayer] = []
        for object in recording.objects(of: .playlist) {
            let owned = recording.objects.first { $0.kind == .player && $0.parent == object.id }
            // A playlist recorded without its player gets one with no events, under an id no
            // recorded object has (its calls must not be taken for the playlist's).
            let player =
                owned.flatMap { players[$0.id] }
                ?? ReplayMediaPlayer(
                    object: RecordedObject(
                        id: RecordedObject.ID(rawValue: -object.id.rawValue), kind: .player, parent: object.id),
                    configuration: configuration, scheduler: scheduler, answersCalls: answers)
            let playlist = ReplayPlaylistPlayer(
                object: object, player: player, scheduler: scheduler, answersCalls: answers)
            playlists.append(playlist)
            targets[object.id] = PlaylistTarget(feed: playlist.feed)
        }
        var sources: [any ReplaySourceBox] = []
        for object in recording.objects where targets[object.id] == nil {
            if object.kind == .playbacks, let parent = object.parent, let player = players[parent] {
                targets[object.id] = PlaybacksTarget(feed: player.feed)
            } else if let codable = RecordingCodec.codable(for: object.kind) {
                let (source, target) = Self.makeSource(codable, object: object, configuration: configuration)
                sources.append(source)
                targets[object.id] = target
            }
        }

        // Every entry is checked now, so that a bad one fails here rather than mid-replay.
        let prepared = try recording.entries.map { entry in
            entry.kind == .call ? nil : try Self.prepare(entry, targets: targets, marks: marks, media: mediaFactory)
        }
        switch mode {
        case .timeline:
            // The recorded calls' effects on the values (the app's calls have none here).
            let calls = recording.entries.map { entry in
                entry.kind == .call ? entry.object.flatMap { targets[$0] }?.prepare(call: entry) : nil
            }
            scheduler.schedule(zip(prepared, calls).compactMap { $0 ?? $1 })
        case .answeringCalls:
            let firstCall = recording.entries.firstIndex { $0.kind == .call } ?? recording.entries.endIndex
            scheduler.schedule(prepared[..<firstCall].compactMap { $0 })
            var recorded: [CallKey: [PreparedAnswer]] = [:]
            for (index, entry) in recording.entries.enumerated() where entry.kind == .call {
                guard let object = entry.object else { continue }
                let rest = recording.entries[(index + 1)...]
                let end = rest.firstIndex { $0.kind == .call } ?? recording.entries.endIndex
                let answer = PreparedAnswer(
                    entries: prepared[(index + 1)..<end].compactMap { $0 }, start: entry.time)
                recorded[CallKey(object: object, name: entry.name), default: []].append(answer)
            }
            scheduler.setRecordedAnswers(recorded)
        }

        self.recording = recording
        self.configuration = configuration
        self.pace = pace
        self.mode = mode
        self.scheduler = scheduler
        self.mediaFactory = mediaFactory
        self.marks = marks
        self.players = recording.objects.compactMap { players[$0.id] }
        playlistPlayers = playlists
        self.sources = sources
        self.targets = targets
    }

    deinit { scheduler.stop() }

    private static func makeSource<Event: RecordingCodable>(
        _: Event.Type, object: RecordedObject, configuration: any EventsConfiguring
    ) -> (any ReplaySourceBox, any ReplayTarget) {
        let source = ReplaySource<Event>(object: object, configuration: configuration)
        return (source, SourceTarget(feed: source.feed))
    }

    private static func prepare(
        _ entry: RecordedEntry, targets: [RecordedObject.ID: any ReplayTarget], marks: ReplaySource<RecordedMark>,
        media: ReplayMediaFactory
    ) throws -> PreparedEntry? {
        if entry.kind == .mark {
            let mark = RecordedMark(name: entry.name, source: entry.source, fields: entry.fields)
            let feed = marks.feed
            return PreparedEntry(entry: entry, playbackObject: nil) { delivered, _ in feed.deliver(mark, delivered) }
        }
        // Events of objects this version cannot replay (`other`) are left out.
        guard let object = entry.object, let target = targets[object] else { return nil }
        return try target.prepare(entry, media: media)
    }

    // MARK: Objects

    /// The first recorded player, or the first named `name`.
    public func player(named name: String? = nil) -> ReplayMediaPlayer? {
        players.first { name == nil || $0.recordedObject.name == name }
    }

    /// The first recorded playlist player, or the first named `name`.
    public func playlistPlayer(named name: String? = nil) -> ReplayPlaylistPlayer? {
        playlistPlayers.first { name == nil || $0.recordedObject.name == name }
    }

    /// The first recorded object that sends `Event`s (a media for `MediaEvent` …), or the first
    /// named `name`; players and playlist players are `player(named:)` and
    /// `playlistPlayer(named:)`.
    public func source<Event: VLCEvent>(of _: Event.Type, named name: String? = nil) -> ReplaySource<Event>? {
        sources.lazy.compactMap { $0 as? ReplaySource<Event> }.first { source in
            name == nil || source.recordedObject?.name == name
        }
    }

    /// The player that replays the recorded object `object` (a player, or a playlist's player).
    public func player(for object: RecordedObject.ID) -> ReplayMediaPlayer? {
        players.first { $0.recordedObject.id == object }
            ?? playlistPlayers.first { $0.recordedObject.id == object }?.player
    }

    /// The playlist player that replays the recorded object `object`.
    public func playlistPlayer(for object: RecordedObject.ID) -> ReplayPlaylistPlayer? {
        playlistPlayers.first { $0.recordedObject.id == object }
    }

    /// The source that replays the recorded object `object`, when it sends `Event`s.
    public func source<Event: VLCEvent>(of _: Event.Type, for object: RecordedObject.ID) -> ReplaySource<Event>? {
        sources.lazy.compactMap { $0 as? ReplaySource<Event> }.first { $0.recordedObject?.id == object }
    }

    // MARK: Calls

    /// Every call the app made on a replayed object, in order.
    public var calls: [ReplayCall] { scheduler.calls }

    /// The first call named `name` (on `object`, or on any when `nil`) among the calls from
    /// the `index`-th on (0: all of them), waiting for it if it has not been made yet.
    ///
    /// - Throws: `VLCError.timedOut` when none is made within `timeout` (real time);
    ///   `VLCError.sourceEnded` when the session is torn down first; `CancellationError`.
    public func waitForCall(
        _ name: String, on object: RecordedObject.ID? = nil, from index: Int = 0, timeout: Duration
    ) async throws -> ReplayCall {
        let scheduler = scheduler
        let what = "a call of \(name)"
        return try await withThrowingTaskGroup(of: ReplayCall.self) { group in
            group.addTask {
                guard let call = await scheduler.waitForCall(name, on: object, from: index) else {
                    try Task.checkCancellation()
                    throw VLCError.sourceEnded(waitingFor: what)
                }
                return call
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw VLCError.timedOut(waitingFor: what, seconds: timeout.seconds)
            }
            defer { group.cancelAll() }
            guard let call = try await group.next() else { throw CancellationError() }
            return call
        }
    }

    /// Answers the next call named `call` on `object` with `segment`, at the segment's distance
    /// from the call, before any answer the recording gives (in every mode). Answers queue up:
    /// one per call.
    ///
    /// The segment may come from another recording: its player, playbacks and playlist entries
    /// go to the object called and its player; its other entries to this recording's objects
    /// of the same ids.
    ///
    /// - Throws: `RecordingError` when an entry's payload does not make an event of its object,
    ///   or its object is not in this replay.
    public func answer(_ call: String, on object: RecordedObject.ID, with segment: RecordingSegment) throws {
        let called = recording.object(object)
        let family: [RecordedObject.Kind: RecordedObject.ID] = {
            var family: [RecordedObject.Kind: RecordedObject.ID] = [:]
            guard let called else { return family }
            family[called.kind] = called.id
            let player =
                called.kind == .playlist
                ? recording.objects.first { $0.kind == .player && $0.parent == called.id } : called
            if let player, player.kind == .player {
                family[.player] = player.id
                family[.playbacks] = recording.objects.first { $0.kind == .playbacks && $0.parent == player.id }?.id
            }
            return family
        }()
        var entries: [PreparedEntry] = []
        for var entry in segment.entries {
            if entry.kind == .event, let source = entry.source, let id = family[RecordedObject.Kind(rawValue: source)] {
                entry.object = id
            } else if entry.kind == .event, entry.object.map({ targets[$0] == nil }) ?? true {
                throw RecordingError(
                    line: nil,
                    message: "\(entry.name) (seq \(entry.seq)) is of object \(entry.object.map(String.init) ?? "none"),"
                        + " which this replay does not have")
            }
            if let prepared = try Self.prepare(entry, targets: targets, marks: marks, media: mediaFactory) {
                entries.append(prepared)
            }
        }
        scheduler.addAnswer(
            PreparedAnswer(entries: entries, start: segment.start), for: CallKey(object: object, name: call))
    }

    // MARK: Driving

    /// Starts delivering (`fast` and `recorded`; with `stepped`, the clock moves only when the
    /// test moves it). Idempotent.
    public func start() { scheduler.start() }

    /// Waits until every scheduled entry has been delivered and its handlers have returned
    /// (entries that calls schedule meanwhile included). With `stepped`, see `runToEnd()`.
    public func finished() async { await scheduler.waitUntilFinished() }

    /// `start()`, then `finished()`.
    public func run() async {
        start()
        await finished()
    }

    /// With `stepped`: moves the virtual clock forward by `duration`, delivering every entry due
    /// by then (and those the calls of their handlers make due), and returns once their handlers
    /// have returned.
    public func advance(by duration: Duration) async { await scheduler.advance(by: duration) }

    /// With `stepped`: moves the virtual clock to `time` (never back); as `advance(by:)`.
    public func advance(to time: Duration) async { await scheduler.advance(to: time) }

    /// With `stepped`: delivers the next entry, moving the clock to its time, and returns it once
    /// its handlers have returned; `nil` when none is left.
    @discardableResult
    public func step() async -> RecordedEntry? { await scheduler.step() }

    /// With `stepped`: delivers everything left, and everything the calls of their handlers
    /// schedule, then returns.
    public func runToEnd() async { await scheduler.runToEnd() }

    /// The virtual clock: the recorded time of the entry delivered last, or where `advance`
    /// moved it; at the recorded pace, the time since `start()`.
    public var clock: Duration { scheduler.clock }

    /// How many entries were delivered so far.
    public var deliveredCount: Int { scheduler.deliveredCount }

    /// How many entries are scheduled and not delivered yet.
    public var pendingCount: Int { scheduler.pendingCount }

    /// Whether every scheduled entry has been delivered and its handlers have returned.
    public var isFinished: Bool { scheduler.isFinished }

    /// Ends the replay as a teardown ends real objects: nothing more is delivered, the
    /// objects' subscriptions complete and their streams end, waits return.
    public func tearDown() {
        scheduler.stop()
        for player in players {
            player.feed.tearDown()
            _ = player.eventHub.finish()
            _ = player.playbacks.eventHub.finish()
        }
        for playlist in playlistPlayers { _ = playlist.eventHub.finish() }
        for source in sources { source.finish() }
        _ = marks.eventHub.finish()
    }
}

/// Where a replayed object's entries go: checks an entry and makes it ready to deliver.
protocol ReplayTarget: Sendable {
    func prepare(_ entry: RecordedEntry, media: ReplayMediaFactory) throws -> PreparedEntry
    /// A recorded call's effect on the object's values, if it has one.
    func prepare(call entry: RecordedEntry) -> PreparedEntry?
}

extension ReplayTarget {
    func prepare(call entry: RecordedEntry) -> PreparedEntry? { nil }
}

private struct PlayerTarget: ReplayTarget {
    let feed: ReplayPlayerFeed

    func prepare(_ entry: RecordedEntry, media: ReplayMediaFactory) throws -> PreparedEntry {
        let maker = try MediaPlayerEvent.prepare(entry)
        let feed = feed
        return PreparedEntry(entry: entry, playbackObject: nil) { delivered, _ in
            feed.deliver(maker.make(ReplayMaterials(media: media.media)), delivered)
        }
    }
}

extension PlayerTarget {
    func prepare(call entry: RecordedEntry) -> PreparedEntry? {
        let feed = feed
        return PreparedEntry(entry: entry, playbackObject: nil, isSilent: true) { _, _ in feed.apply(call: entry.name) }
    }
}

private struct PlaybacksTarget: ReplayTarget {
    let feed: ReplayPlayerFeed

    func prepare(_ entry: RecordedEntry, media: ReplayMediaFactory) throws -> PreparedEntry {
        let maker = try PlaybackEvent.prepare(entry)
        let feed = feed
        return PreparedEntry(entry: entry, playbackObject: entry.object) { delivered, offset in
            feed.deliver(maker.make(ReplayMaterials(media: media.media, playbackOffset: offset)), delivered)
        }
    }
}

private struct PlaylistTarget: ReplayTarget {
    let feed: ReplayPlaylistFeed

    func prepare(_ entry: RecordedEntry, media: ReplayMediaFactory) throws -> PreparedEntry {
        let maker = try PlaylistEvent.prepare(entry)
        let feed = feed
        return PreparedEntry(entry: entry, playbackObject: nil) { delivered, _ in
            feed.deliver(maker.make(ReplayMaterials(media: media.media)), delivered)
        }
    }
}

extension PlaylistTarget {
    func prepare(call entry: RecordedEntry) -> PreparedEntry? {
        let feed = feed
        return PreparedEntry(entry: entry, playbackObject: nil, isSilent: true) { _, _ in
            feed.apply(call: entry.name, fields: entry.fields)
        }
    }
}

private struct SourceTarget<Event: RecordingCodable>: ReplayTarget {
    let feed: ReplaySourceFeed<Event>

    func prepare(_ entry: RecordedEntry, media: ReplayMediaFactory) throws -> PreparedEntry {
        let maker = try Event.prepare(entry)
        let feed = feed
        return PreparedEntry(entry: entry, playbackObject: Event.self == PlaybackEvent.self ? entry.object : nil) {
            delivered, offset in
            feed.deliver(maker.make(ReplayMaterials(media: media.media, playbackOffset: offset)), delivered)
        }
    }
}

/// A replayed source of any event type, for the session's list and teardown.
protocol ReplaySourceBox: AnyObject, Sendable {
    func finish()
}

extension ReplaySource: ReplaySourceBox {
    func finish() { _ = eventHub.finish() }
}

/// Runs a closure once every delivery handed to the session's configuration before it has run:
/// a no-op delivery through an `EventsHandler` of the same configuration, which a queue runs
/// after the deliveries queued before it (and the inline and synchronous routes run at once,
/// after the delivery before it has returned).
private final class ReplayBarrier: Sendable {
    /// The object the handler delivers to; the barrier keeps it (the handler holds it weakly).
    private final class Target: Sendable {}

    private let target = Target()
    private let handler: EventsHandler<Target>

    init(configuration: any EventsConfiguring) {
        handler = EventsHandler(object: target, configuration: configuration)
    }

    func pass(_ done: @escaping @Sendable () -> Void) {
        withExtendedLifetime(target) { handler.handleEvent { _ in done() } }
    }
}

/// Makes the `VLCMedia` of recorded media payloads: one per MRL per session, never opened.
final class ReplayMediaFactory: Sendable {
    private let library: VLCLibrary?
    private let configuration: any EventsConfiguring
    private let made = Protected<[String: VLCMedia]>([:])

    /// The instance that makes payload media when the session was given none: started on first
    /// use, headless, and kept for the process.
    private static let sharedLibrary: VLCLibrary = {
        do { return try VLCLibrary() } catch {
            preconditionFailure("a replay needs a libvlc instance for its media payloads: \(error)")
        }
    }()

    init(library: VLCLibrary?, configuration: any EventsConfiguring) {
        self.library = library
        self.configuration = configuration
    }

    @Sendable func media(_ mrl: String) -> VLCMedia {
        if let media = made.withLock({ $0[mrl] }) { return media }
        let library = library ?? Self.sharedLibrary
        // libvlc_media_new_location keeps the location as given, so `mrl` reads back the
        // recorded string exactly.
        guard let native = NativeMedia.new(location: mrl, in: library.native) else {
            preconditionFailure("libvlc_media_new_location failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        let media = VLCMedia(adopting: native, configuration: configuration, attachNow: true)
        let (kept, extra) = made.withLock { made -> (VLCMedia, VLCMedia?) in
            if let earlier = made[mrl] { return (earlier, media) }
            made[mrl] = media
            return (media, nil)
        }
        _ = extra
        return kept
    }
}
