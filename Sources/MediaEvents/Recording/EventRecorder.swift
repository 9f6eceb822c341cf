import Dispatch
import Foundation

/// Records what objects send, as they send it: attach it to real objects, use them, and take
/// the ``Recording``.
///
/// ```swift
/// let recorder = EventRecorder()
/// recorder.attach(player)                        // the player and its playbacks
/// let controls = recorder.recordingCalls(of: player)
/// controls.media = VLCMedia(path: "/tmp/a.mkv", library: library)
/// controls.play()                                // recorded as a call, then carried out
/// …
/// try recorder.recording.write(to: URL(fileURLWithPath: "/tmp/a.jsonl"))
/// ```
///
/// The recorder is an ordinary subscriber (`observe`): its handler runs where the object's
/// configuration says, like every other subscriber's, and never changes what they receive. It
/// keeps every event of every kind, with the time it was delivered to it (monotonic, to the
/// microsecond since the recorder was made) and a `seq` that is its position among everything
/// this recorder saw. An event that carries a `VLCMedia` is recorded with its MRL.
///
/// Keep the recorder for as long as you record: its subscriptions end when it is deinitialized
/// (or `stop()` is called). Every method is thread-safe and callable from any handler.
public final class EventRecorder: Sendable {
    private let storage: RecorderStorage

    /// A recorder; with `maximumEntries` it keeps only the last that many entries (a flight
    /// recorder for a long-running program), otherwise all.
    public init(maximumEntries: Int? = nil) {
        precondition((maximumEntries ?? 1) > 0, "EventRecorder needs a positive maximumEntries")
        storage = RecorderStorage(maximumEntries: maximumEntries)
    }

    deinit { storage.stop() }

    /// Records `source`'s events from now on, as an object of the recording; returns its id.
    /// Attaching an object again returns the id it already has.
    ///
    /// Events of a type MediaEvents does not define are recorded by name and description;
    /// a replay does not make them again.
    @discardableResult
    public func attach<Source: VLCEventSource>(_ source: Source, name: String? = nil) -> RecordedObject.ID {
        attach(source, name: name, parent: nil)
    }

    /// Records `player`'s events and its `playbacks`' (an object whose `parent` is the
    /// player); returns the player's id.
    @discardableResult
    public func attach<Player: MediaPlayerControlling>(_ player: Player, name: String? = nil) -> RecordedObject.ID {
        let id = attach(player, name: name, parent: nil)
        attach(player.playbacks, name: nil, parent: id)
        return id
    }

    /// Records `playlist`'s events, its player's (whose `parent` is the playlist) and that
    /// player's playbacks; returns the playlist's id.
    @discardableResult
    public func attach<Playlist: PlaylistPlayerControlling>(
        _ playlist: Playlist, name: String? = nil
    ) -> RecordedObject.ID {
        let id = attach(playlist, name: name, parent: nil)
        let player = attach(playlist.player, name: nil, parent: id)
        attach(playlist.player.playbacks, name: nil, parent: player)
        return id
    }

    @discardableResult
    private func attach<Source: VLCEventSource>(
        _ source: Source, name: String?, parent: RecordedObject.ID?
    ) -> RecordedObject.ID {
        let kind = RecordingCodec.kind(of: Source.Event.self)
        let (id, isNew) = storage.register(ObjectIdentifier(source), kind: kind, name: name, parent: parent)
        guard isNew else { return id }
        let encode = RecorderStorage.encoder(for: Source.Event.self)
        let storage = storage
        let token = source.observe { event in
            let (fields, tags) = encode(event)
            storage.append(
                .event, name: event.name, object: id, source: kind.rawValue, playback: tags?.playback,
                entry: tags?.entry, fields: fields)
        }
        storage.keep(token)
        return id
    }

    /// A player that carries out `player`'s calls and records each one first (`play`,
    /// `pause`, `resume`, `stop`, `setMedia` with its `mrl`, `setTime` with `time_ms`,
    /// `setPosition` with `position`), so that the events it causes come after it. Attaches
    /// `player` if it is not attached yet.
    public func recordingCalls<Player: MediaPlayerControlling>(of player: Player) -> CallRecordingPlayer<Player> {
        CallRecordingPlayer(base: player, recorder: self, object: attach(player))
    }

    /// Records a control call the app made on the object `object` (see `attach`), with its
    /// arguments as fields: what a replay answers with what followed it.
    public func recordCall(_ name: String, on object: RecordedObject.ID, fields: [RecordedField] = []) {
        let source = storage.kind(of: object)?.rawValue
        storage.append(.call, name: name, object: object, source: source, fields: fields)
    }

    /// Records a mark: a note of the app's own (`UserPressedNext`), delivered by a replay in
    /// its place among the events (``ReplaySession/marks``).
    public func mark(_ name: String, source: String? = nil, fields: [RecordedField] = []) {
        storage.append(.mark, name: name, object: nil, source: source, fields: fields)
    }

    /// Everything recorded so far.
    public var recording: Recording { storage.recording }

    /// Ends every subscription: nothing more is recorded from the objects (calls and marks
    /// still are). Idempotent.
    public func stop() { storage.stop() }
}

/// The recorder's state, kept by its subscriptions' handlers (the recorder itself is not, so
/// that dropping it ends them).
private final class RecorderStorage: Sendable {
    private struct State {
        var objects: [RecordedObject] = []
        var ids: [ObjectIdentifier: RecordedObject.ID] = [:]
        var entries: [RecordedEntry] = []
        var nextSeq = 1
        var subscriptions: [EventSubscription] = []
        var stopped = false
    }

    private let state = Protected(State())
    private let maximumEntries: Int?
    private let start = DispatchTime.now()
    private let started: String
    private let libvlcVersion = VLCLibrary.version

    init(maximumEntries: Int?) {
        self.maximumEntries = maximumEntries
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        started = formatter.string(from: Date())
    }

    /// The id of the object `key`, and whether it is new.
    func register(
        _ key: ObjectIdentifier, kind: RecordedObject.Kind, name: String?, parent: RecordedObject.ID?
    ) -> (RecordedObject.ID, Bool) {
        state.withLock { state in
            if let id = state.ids[key] { return (id, false) }
            let id = RecordedObject.ID(rawValue: state.objects.count + 1)
            state.ids[key] = id
            state.objects.append(RecordedObject(id: id, kind: kind, name: name, parent: parent))
            return (id, true)
        }
    }

    func kind(of object: RecordedObject.ID) -> RecordedObject.Kind? {
        state.withLock { state in state.objects.first { $0.id == object }?.kind }
    }

    func keep(_ subscription: EventSubscription) {
        let refused = state.withLock { state -> EventSubscription? in
            if state.stopped { return subscription }
            state.subscriptions.append(subscription)
            return nil
        }
        refused?.cancel()
    }

    func append(
        _ kind: RecordedEntry.Kind, name: String, object: RecordedObject.ID?, source: String?,
        playback: PlaybackID? = nil, entry: PlaylistEntryID? = nil, fields: [RecordedField]
    ) {
        state.withLock { state in
            // Read under the lock, so that times never go back along `seq`.
            let nanoseconds = DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds
            let time = Duration.microseconds(Int64((Double(nanoseconds) / 1000).rounded()))
            state.entries.append(
                RecordedEntry(
                    seq: state.nextSeq, time: time, kind: kind, name: name, object: object, source: source,
                    playback: playback, entry: entry, fields: fields))
            state.nextSeq += 1
            // Trimmed in bulk once twice over the bound: O(1) per entry, amortized.
            if let maximumEntries, state.entries.count >= 2 * maximumEntries {
                state.entries.removeFirst(state.entries.count - maximumEntries)
            }
        }
    }

    var recording: Recording {
        let (objects, entries) = state.withLock { ($0.objects, $0.entries) }
        let kept = maximumEntries.map { Array(entries.suffix($0)) } ?? entries
        return Recording(libvlcVersion: libvlcVersion, started: started, objects: objects, entries: kept)
    }

    func stop() {
        let subscriptions = state.withLock { state -> [EventSubscription] in
            state.stopped = true
            defer { state.subscriptions = [] }
            return state.subscriptions
        }
        subscriptions.forEach { $0.cancel() }
    }

    typealias Tags = (playback: PlaybackID, entry: PlaylistEntryID?)

    /// How to write events of `type`, looked up once per attached object.
    static func encoder<Event: VLCEvent>(for type: Event.Type) -> @Sendable (Event) -> ([RecordedField], Tags?) {
        guard let codable = RecordingCodec.codable(type) else {
            return { event in ([RecordedField("description", .string(event.description))], nil) }
        }
        return encoder(codable, for: type)
    }

    private static func encoder<Codable: RecordingCodable, Event: VLCEvent>(
        _: Codable.Type, for _: Event.Type
    ) -> @Sendable (Event) -> ([RecordedField], Tags?) {
        { event in
            // `Event` is `Codable` here: the conformance was found for this very type.
            let codable = event as! Codable
            return (codable.recordedFields, codable.recordedTags)
        }
    }
}

/// A player whose control calls are recorded before they are carried out (see
/// ``EventRecorder/recordingCalls(of:)``): give it to the code under recording instead of the
/// player. Everything else is the player's own: its events, values and playbacks.
public final class CallRecordingPlayer<Base: MediaPlayerControlling>: MediaPlayerControlling {
    /// The player that carries the calls out.
    public let base: Base
    private let recorder: EventRecorder
    private let object: RecordedObject.ID

    init(base: Base, recorder: EventRecorder, object: RecordedObject.ID) {
        self.base = base
        self.recorder = recorder
        self.object = object
    }

    private func record(_ call: String, _ fields: [RecordedField] = []) {
        recorder.recordCall(call, on: object, fields: fields)
    }

    /// The base player's subscribers: observing this player observes the base.
    public var eventHub: EventHub<MediaPlayerEvent> { base.eventHub }
    /// The base player's configuration.
    public var configuration: any EventsConfiguring { base.configuration }

    /// The base player's media; setting it is recorded as `setMedia` with its `mrl`.
    public var media: VLCMedia? {
        get { base.media }
        set {
            record("setMedia", [RecordedField("mrl", .optional(newValue?.mrl))])
            base.media = newValue
        }
    }

    /// Records `play`, then plays.
    public func play() {
        record("play")
        base.play()
    }

    /// Records `pause`, then pauses.
    public func pause() {
        record("pause")
        base.pause()
    }

    /// Records `resume`, then resumes.
    public func resume() {
        record("resume")
        base.resume()
    }

    /// Records `stop`, then stops.
    public func stop() {
        record("stop")
        base.stop()
    }

    /// The base player's `waitForPendingControls()`.
    public func waitForPendingControls() async { await base.waitForPendingControls() }

    /// The base player's state.
    public var state: PlaybackState { base.state }
    /// The base player's `isPlaying`.
    public var isPlaying: Bool { base.isPlaying }

    /// The base player's time; setting it is recorded as `setTime` with `time_ms`.
    public var time: Int64 {
        get { base.time }
        set {
            record("setTime", [RecordedField("time_ms", .integer(newValue))])
            base.time = newValue
        }
    }

    /// The base player's position; setting it is recorded as `setPosition` with `position`.
    public var position: Float {
        get { base.position }
        set {
            record("setPosition", [RecordedField("position", .float(newValue))])
            base.position = newValue
        }
    }

    /// The base player's length.
    public var length: Int64 { base.length }
    /// Whether the base player's media can seek.
    public var isSeekable: Bool { base.isSeekable }
    /// Whether the base player's media can pause.
    public var isPausable: Bool { base.isPausable }
    /// The base player's playbacks.
    public var playbacks: PlaybackEventSource { base.playbacks }
    /// The base player's current playback.
    public var currentPlayback: PlaybackID? { base.currentPlayback }

    /// The base player's `outcome(of:timeout:)`.
    public func outcome(of playback: PlaybackID, timeout: Duration) async throws -> PlaybackSummary {
        try await base.outcome(of: playback, timeout: timeout)
    }
}
