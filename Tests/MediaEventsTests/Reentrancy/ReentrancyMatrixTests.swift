import Foundation
import Glibc
@testable import MediaEvents
import TestSupport
import XCTest

/// Every public member of every object, called from inside the handler of every event that
/// real media provoke here, in every configuration, each call watched by a deadline.
///
/// The matrix is generated from two tables: `MatrixMember.all` (what is called) and
/// `MatrixScenario` (what provokes events: playback, a playlist parse, list edits, a list
/// player, a playlist player with its playbacks). A new member or event joins it by one line. In each run, the first event of each
/// kind from each object calls every member once, in order, perturbing ones included (a
/// `stop()` from `Opening` ends that playback early; coverage is what the run reached, and
/// the cells that matter most are required below). A second pass drops every reference of
/// the world from the first event of each kind. A call that does not return within
/// `MatrixWatchdog.limit` ends the process with the cell's name: a hang fails loudly rather
/// than holding CI until its limit.
final class ReentrancyMatrixTests: XCTestCase {
    // One test per configuration, so that `swift test --parallel` runs them side by side: a
    // run mostly waits for libvlc (about a tenth of its time is CPU).
    /// Workaround: `LockedSendDetour` (rule 3 of SendSites.md) — this test fails without it.
    func testEveryMember_whenCalledFromEveryHandlerInline_neitherHangsNorCrashes() throws {
        try runMatrix(.inline)
    }

    func testEveryMember_whenCalledFromEveryHandlerOnASyncQueue_neitherHangsNorCrashes() throws {
        try runMatrix(.syncQueue)
    }

    func testEveryMember_whenCalledFromEveryHandlerOnAnAsyncQueue_neitherHangsNorCrashes() throws {
        try runMatrix(.asyncQueue)
    }

    func testEveryMember_whenCalledFromEveryHandlerOnASyncQueueTargetingAnAsyncOne_neitherHangsNorCrashes() throws {
        try runMatrix(.syncQueueTargetingAsyncQueue)
    }

    func testEveryMember_whenCalledFromEveryHandlerSyncOnMain_neitherHangsNorCrashes() throws {
        try runMatrix(.syncMain)
    }

    func testEveryMember_whenCalledFromEveryHandlerAsyncOnMain_neitherHangsNorCrashes() throws {
        try runMatrix(.asyncMain)
    }

    private func runMatrix(_ configuration: MatrixConfiguration) throws {
        let started = Date()
        var cells = Set<MatrixCell>()
        var droppedFrom = Set<String>()
        for scenario in MatrixScenario.allCases {
            // Members that leave the scenario as it is first, so that every event arrives;
            // then those that change it (control calls, edits), which cut it short.
            var reached = Set<MatrixCell>()
            for members in MatrixMember.calmRuns(scenario) {
                let calm = try MatrixRun(
                    scenario: scenario, configuration: configuration, members: members, dropping: nil)
                reached.formUnion(calm.execute(self))
            }
            cells.formUnion(reached)
            for required in scenario.requiredCells where !reached.contains(required) {
                XCTFail(
                    "\(configuration) \(scenario): required cell not reached: \(required.member) from \(required.event); reached events: \(Set(reached.map(\.event)).sorted())"
                )
            }
            let perturbing = try MatrixRun(
                scenario: scenario, configuration: configuration,
                members: MatrixMember.all.filter(\.perturbs), dropping: nil)
            cells.formUnion(perturbing.execute(self))
            // Dropping every reference from the first event of each kind this scenario sent
            // (an event already dropped from in an earlier scenario of this configuration
            // comes from the same send site: once is enough).
            for event in Set(reached.map(\.event)).subtracting(droppedFrom).sorted() {
                droppedFrom.insert(event)
                let drop = try MatrixRun(
                    scenario: scenario, configuration: configuration, members: [], dropping: event)
                cells.formUnion(drop.execute(self))
            }
        }
        let members = Set(cells.map(\.member)).count
        let events = Set(cells.map(\.event)).count
        XCTAssertEqual(
            Set(cells.map(\.member)).subtracting(["drop all"]), Set(MatrixMember.all.map(\.name)),
            "\(configuration): members never called")
        print(
            "Re-entrancy matrix, \(configuration): \(cells.count) cells (\(members) members × \(events) events reached) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s"
        )
    }
}

/// One call from one handler.
struct MatrixCell: Hashable, Sendable {
    let member: String
    let event: String
}

enum MatrixConfiguration: String, CaseIterable, Sendable, CustomStringConvertible {
    case inline, syncQueue, asyncQueue, syncQueueTargetingAsyncQueue, syncMain, asyncMain

    var description: String { rawValue }

    /// The configuration of the world's player and list player, and of its media and lists.
    /// With a target, the media are delivered asynchronously on the queue the player's
    /// synchronous queue targets: the case where one mark used to shadow another.
    func make() -> (objects: any EventsConfiguring, media: any EventsConfiguring) {
        switch self {
        case .inline:
            return (EventsDefaultConfiguration(), EventsDefaultConfiguration())
        case .syncQueue:
            let queue = EventsQueueConfiguration(queue: DispatchQueue(label: "matrix.sync"), isAsync: false)
            return (queue, queue)
        case .asyncQueue:
            let queue = EventsQueueConfiguration(queue: DispatchQueue(label: "matrix.async"), isAsync: true)
            return (queue, queue)
        case .syncQueueTargetingAsyncQueue:
            let base = DispatchQueue(label: "matrix.base")
            let top = DispatchQueue(label: "matrix.top", target: base)
            return (
                EventsQueueConfiguration(queue: top, isAsync: false),
                EventsQueueConfiguration(queue: base, isAsync: true)
            )
        case .syncMain:
            let main = EventsQueueConfiguration(queue: .main, isAsync: false)
            return (main, main)
        case .asyncMain:
            return (EventsLegacyConfiguration(), EventsLegacyConfiguration())
        }
    }
}

/// The objects one run plays with, reachable from every handler; each can be dropped.
final class MatrixWorld: Sendable {
    let library: VLCLibrary
    let spare: URL
    let objects: any EventsConfiguring
    let mediaConfiguration: any EventsConfiguring
    let player: Box<VLCMediaPlayer>
    let media: Box<VLCMedia>
    let list: Box<VLCMediaList>
    let listPlayer: Box<VLCMediaListPlayer>
    /// The playlist owned in Swift; its `player` is also the world's `player`.
    let playlist: Box<VLCPlaylistPlayer>
    /// The media the player's last `MediaChanged` carried: a second wrapper of `media` (or of
    /// a list item), made by MediaEvents for the event.
    let payload: Box<VLCMedia>
    /// Another wrapper of `media`, subscribed before the scenario starts (its listeners are on
    /// the same event manager).
    let second: Box<VLCMedia>
    /// What the scenario's stalling stream did (a stream media whose read waits for data).
    let stall = StallRecord()
    /// Subscriptions made by members, and tasks they started, settled at the end of the run.
    let tokens = Locked<[EventSubscription]>([])
    let tasks = Locked<[(String, Task<Void, Never>)]>([])
    /// Completions and `.freed` deliveries: whether each ran on the release queue.
    let completionsOffReleaseQueue = Locked<[String]>([])

    init(library: VLCLibrary, spare: URL, configuration: MatrixConfiguration) {
        self.library = library
        self.spare = spare
        (objects, mediaConfiguration) = configuration.make()
        player = Box(nil)
        media = Box(nil)
        list = Box(nil)
        listPlayer = Box(nil)
        playlist = Box(nil)
        payload = Box(nil)
        second = Box(nil)
    }

    /// Where snapshots taken from handlers go.
    static let snapshots: URL = {
        do { return try TestMedia.directory(name: "matrix-snapshots") } catch { fatalError("\(error)") }
    }()
    /// A WAV in memory, for stream media.
    static let bytes = TestMedia.wavData(seconds: 0.3)

    func makeMedia(_ url: URL) -> VLCMedia {
        VLCMedia(url: url, library: library, configuration: mediaConfiguration)
    }

    /// Starts `body` as a task; the run waits for it (with a deadline) before it ends.
    func start(_ name: String, _ body: @escaping @Sendable () async -> Void) {
        tasks.withLock { $0.append((name, Task { await body() })) }
    }

    func dropAll() {
        player.current?.media = nil
        listPlayer.clear()
        playlist.clear()
        player.clear()
        list.clear()
        media.clear()
        payload.clear()
        second.clear()
    }
}

/// What a matrix run calls from its handlers, with what the run needs to know of it.
struct MatrixMember: Sendable {
    /// What calling a member does besides the call.
    struct Traits: OptionSet, Sendable {
        let rawValue: Int

        /// It changes what the scenario does next (a control call, an edit): it runs after the
        /// calm members have seen every event.
        static let perturbs = Traits(rawValue: 1)
        /// It makes a native player (`libvlc_media_player_new`, also inside
        /// `libvlc_media_list_player_new`), which waits for a running `snapshot-file` callback:
        /// the calm run calls it together with snapshots.
        static let makesPlayer = Traits(rawValue: 2)
    }

    let name: String
    let traits: Traits
    let call: @Sendable (MatrixWorld) -> Void

    init(_ name: String, _ traits: Traits = [], _ call: @escaping @Sendable (MatrixWorld) -> Void) {
        self.name = name
        self.traits = traits
        self.call = call
    }

    /// Whether calling it changes what the scenario does next (a control call, an edit).
    var perturbs: Bool { traits.contains(.perturbs) }

    static let all: [MatrixMember] =
        player + playerMediaCalls + media + secondWrappers + list + listPlayer + playlist + playbacks + library

    /// The runs of members that leave the scenario as it is: one. Members that make players run
    /// together with snapshots: made in a handler, the native player is created on its control
    /// queue, never while the library's `snapshot-file` callback waits for that handler's event
    /// lock.
    static func calmRuns(_ scenario: MatrixScenario) -> [[MatrixMember]] {
        let calm = all.filter { !$0.perturbs }
        precondition(
            calm.contains { $0.traits.contains(.makesPlayer) } && calm.contains { $0.name == "player.takeSnapshot" },
            "the calm run makes players while snapshots are taken")
        return [calm]
    }

    /// Starts `call` on the world's player as a task the run waits for.
    private static func task(
        _ name: String, _ traits: Traits = [], _ call: @escaping @Sendable (VLCMediaPlayer) async -> Void
    ) -> MatrixMember {
        .init(name, traits) { world in
            guard let player = world.player.current else { return }
            world.start(name) { await call(player) }
        }
    }

    /// Tracks, chapters, titles, rate, snapshots and audio output (the calls media tools use).
    static let playerMediaCalls: [MatrixMember] = [
        task("player.tracks(of:)") { _ = await $0.tracks(of: .audio) },
        task("player.selectedTrack") { _ = await $0.selectedTrack(of: .text) },
        .init("player.selectTrack", .perturbs) { $0.player.current?.selectTrack(nil, of: .text) },
        task("player.selectTrackAndWait", .perturbs) { _ = await $0.selectTrackAndWait(2, of: .audio) },
        task("player.titles") { _ = await $0.titles() },
        task("player.chapters") { _ = await $0.chapters() },
        task("player.titleCount") { _ = await $0.titleCount() },
        task("player.chapterCount") { _ = await $0.chapterCount() },
        .init("player.title") { _ = $0.player.current?.title },
        .init("player.chapter") { _ = $0.player.current?.chapter },
        .init("player.setChapter", .perturbs) { $0.player.current?.setChapter(1) },
        .init("player.nextChapter", .perturbs) { $0.player.current?.nextChapter() },
        .init("player.previousChapter", .perturbs) { $0.player.current?.previousChapter() },
        .init("player.setTitle", .perturbs) { $0.player.current?.setTitle(0) },
        .init("player.rate") { _ = $0.player.current?.rate },
        .init("player.rate = 1", .perturbs) { $0.player.current?.rate = 1 },
        task("player.setRateAndWait", .perturbs) { _ = await $0.setRateAndWait(1) },
        task("player.takeSnapshot") { player in
            _ = try? await player.takeSnapshot(
                to: MatrixWorld.snapshots.appendingPathComponent("\(UUID()).png").path,
                width: 32, timeout: .seconds(3))
        },
        task("player.audioOutputDevices") { _ = await $0.audioOutputDevices() },
        task("player.audioOutputDevice") { _ = await $0.audioOutputDevice() },
        .init("player.setAudioOutputDevice", .perturbs) { $0.player.current?.setAudioOutputDevice("null") },
        task("player.setVolumeAndWait", .perturbs) { _ = await $0.setVolumeAndWait(90) },
        task("player.setMutedAndWait", .perturbs) { _ = await $0.setMutedAndWait(false) },
        .init("new VLCMedia(data:) + drop") { world in
            _ = VLCMedia(data: MatrixWorld.bytes, library: world.library, configuration: world.mediaConfiguration)
        },
    ]

    static let player: [MatrixMember] = [
        .init("player.media") { _ = $0.player.current?.media },
        .init("player.state") { _ = $0.player.current?.state },
        .init("player.isPlaying") { _ = $0.player.current?.isPlaying },
        .init("player.isSeekable") { _ = $0.player.current?.isSeekable },
        .init("player.isPausable") { _ = $0.player.current?.isPausable },
        .init("player.time") { _ = $0.player.current?.time },
        .init("player.position") { _ = $0.player.current?.position },
        .init("player.length") { _ = $0.player.current?.length },
        .init("player.volume") { _ = $0.player.current?.volume },
        .init("player.isMuted") { _ = $0.player.current?.isMuted },
        .init("player.observe+cancel") { $0.player.current?.observe { _ in }.cancel() },
        .init("player.events+cancel") { $0.player.current?.events().cancel() },
        .init("player.observe kept") { world in
            if let token = world.player.current?.observe(
                onCompletion: {
                    if !ServiceQueues.isOnReleaseQueue {
                        world.completionsOffReleaseQueue.withLock { $0.append("player") }
                    }
                }, handler: { _ in })
            {
                world.tokens.withLock { $0.append(token) }
            }
        },
        .init("player.time = 0", .perturbs) { $0.player.current?.time = 0 },
        .init("player.position = 0.1", .perturbs) { $0.player.current?.position = 0.1 },
        .init("player.volume = 80", .perturbs) { $0.player.current?.volume = 80 },
        .init("player.isMuted = false", .perturbs) { $0.player.current?.isMuted = false },
        .init("player.pause", .perturbs) { $0.player.current?.pause() },
        .init("player.resume", .perturbs) { $0.player.current?.resume() },
        .init("player.waitForPendingControls") { world in
            guard let player = world.player.current else { return }
            world.start("waitForPendingControls") { await player.waitForPendingControls() }
        },
        .init("player.stop", .perturbs) { $0.player.current?.stop() },
        .init("player.play", .perturbs) { $0.player.current?.play() },
        .init("player.media = spare", .perturbs) { world in world.player.current?.media = world.makeMedia(world.spare)
        },
        .init("player.playAndWait", .perturbs) { world in
            guard let player = world.player.current else { return }
            world.start("playAndWait") { await player.playAndWait() }
        },
        .init("player.stopAndWait", .perturbs) { world in
            guard let player = world.player.current else { return }
            world.start("stopAndWait") { await player.stopAndWait() }
        },
    ]

    static let media: [MatrixMember] = [
        .init("media.mrl") { _ = $0.media.current?.mrl },
        .init("media.duration") { _ = $0.media.current?.duration },
        .init("media.state") { _ = $0.media.current?.state },
        .init("media.parsedStatus") { _ = $0.media.current?.parsedStatus },
        .init("media.meta") { _ = $0.media.current?.meta(.title) },
        .init("media.setMeta") { $0.media.current?.setMeta(.description, "matrix") },
        .init("media.tracks") { _ = $0.media.current?.tracks },
        .init("media.subItems") { _ = $0.media.current?.subItems },
        .init("media.subItemList.count") { _ = $0.media.current?.subItemList.count },
        .init("media.observe+cancel") { $0.media.current?.observe { _ in }.cancel() },
        .init("media.events+cancel") { $0.media.current?.events().cancel() },
        .init("media.observe kept") { world in
            if let token = world.media.current?.observe(
                .freed,
                onCompletion: {
                    if !ServiceQueues.isOnReleaseQueue {
                        world.completionsOffReleaseQueue.withLock { $0.append("media") }
                    }
                },
                handler: { _ in
                    if !ServiceQueues.isOnReleaseQueue {
                        world.completionsOffReleaseQueue.withLock { $0.append("media .freed") }
                    }
                })
            {
                world.tokens.withLock { $0.append(token) }
            }
        },
        .init("media.stopParsing", .perturbs) { $0.media.current?.stopParsing() },
        .init("media.parse", .perturbs) { world in
            guard let media = world.media.current else { return }
            world.start("media.parse") { _ = try? await media.parse(timeout: .seconds(5)) }
        },
    ]

    /// Other wrappers of the scenario's media: the one a `MediaChanged` carries, and one
    /// subscribed before the scenario (their listeners share the media's event manager, their
    /// sub-items the media's one list).
    static let secondWrappers: [MatrixMember] = [
        .init("payload.mrl") { _ = $0.payload.current?.mrl },
        .init("payload.meta") { _ = $0.payload.current?.meta(.title) },
        .init("payload.subItems") { _ = $0.payload.current?.subItems },
        .init("payload.subItemList.count") { _ = $0.payload.current?.subItemList.count },
        .init("payload.streamFailure") { _ = $0.payload.current?.streamFailure },
        .init("payload.observe+cancel") { $0.payload.current?.observe { _ in }.cancel() },
        .init("second.subItems") { _ = $0.second.current?.subItems },
        .init("second.state") { _ = $0.second.current?.state },
        // From a handler of the media's own events that libvlc sends with its event lock held
        // (the second wrapper's detach needs that lock): the case that made the wait run out.
        .init("second.drop + waitForPendingTeardowns") { world in
            guard let second = world.second.current, DeliveryContext.isDelivering(from: second.native.address) else {
                return
            }
            world.second.clear()
            _ = VLCLibrary.waitForPendingTeardowns(timeout: 0.2)
        },
    ]

    static let list: [MatrixMember] = [
        .init("list.count") { _ = $0.list.current?.count },
        .init("list.items") { _ = $0.list.current?.items },
        .init("list.media(at:)") { _ = $0.list.current?.media(at: 0) },
        .init("list.index(of:)") { world in
            if let media = world.media.current { _ = world.list.current?.index(of: media) }
        },
        .init("list.observe+cancel") { $0.list.current?.observe { _ in }.cancel() },
        .init("list.events+cancel") { $0.list.current?.events().cancel() },
        .init("list.waitForPendingEdits") { _ = $0.list.current?.waitForPendingEdits() },
        .init("list.pendingEditsApplied") { world in
            guard let list = world.list.current else { return }
            world.start("pendingEditsApplied") { await list.pendingEditsApplied() }
        },
        .init("list.append", .perturbs) { world in world.list.current?.append(world.makeMedia(world.spare)) },
        .init("list.insert", .perturbs) { world in world.list.current?.insert(world.makeMedia(world.spare), at: 0) },
        .init("list.remove", .perturbs) { $0.list.current?.remove(at: 0) },
    ]

    static let listPlayer: [MatrixMember] = [
        .init("listPlayer.state") { _ = $0.listPlayer.current?.state },
        .init("listPlayer.isPlaying") { _ = $0.listPlayer.current?.isPlaying },
        .init("listPlayer.mediaList") { _ = $0.listPlayer.current?.mediaList },
        .init("listPlayer.playbackMode") { _ = $0.listPlayer.current?.playbackMode },
        .init("listPlayer.mediaPlayer.media") { _ = $0.listPlayer.current?.mediaPlayer.media },
        .init("listPlayer.observe+cancel") { $0.listPlayer.current?.observe { _ in }.cancel() },
        .init("listPlayer.playbackMode = default", .perturbs) { $0.listPlayer.current?.playbackMode = .default },
        .init("listPlayer.pause", .perturbs) { $0.listPlayer.current?.pause() },
        .init("listPlayer.resume", .perturbs) { $0.listPlayer.current?.resume() },
        .init("listPlayer.next", .perturbs) { $0.listPlayer.current?.next() },
        .init("listPlayer.previous", .perturbs) { $0.listPlayer.current?.previous() },
        .init("listPlayer.play(at:)", .perturbs) { $0.listPlayer.current?.play(at: 0) },
        .init("listPlayer.stop", .perturbs) { $0.listPlayer.current?.stop() },
        .init("listPlayer.waitForPendingControls") { world in
            guard let listPlayer = world.listPlayer.current else { return }
            world.start("listPlayer.waitForPendingControls") { await listPlayer.waitForPendingControls() }
        },
        .init("listPlayer.init(mediaPlayer:)", [.perturbs, .makesPlayer]) { world in
            if let player = world.player.current {
                _ = VLCMediaListPlayer(mediaPlayer: player, configuration: world.objects)
            }
        },
    ]

    /// Starts `call` on the world's playlist as a task the run waits for.
    private static func playlistTask(
        _ name: String, _ traits: Traits = [], _ call: @escaping @Sendable (VLCPlaylistPlayer) async -> Void
    ) -> MatrixMember {
        .init(name, traits) { world in
            guard let playlist = world.playlist.current else { return }
            world.start(name) { await call(playlist) }
        }
    }

    /// The playlist owned in Swift: reads, edits by id, and the moves that decide at once under
    /// its lock and queue the libvlc calls.
    static let playlist: [MatrixMember] = [
        .init("playlist.entries") { _ = $0.playlist.current?.entries },
        .init("playlist.currentEntry") { _ = $0.playlist.current?.currentEntry },
        .init("playlist.isActive") { _ = $0.playlist.current?.isActive },
        .init("playlist.loop") { _ = $0.playlist.current?.loop },
        .init("playlist.observe+cancel") { $0.playlist.current?.observe { _ in }.cancel() },
        .init("playlist.events+cancel") { $0.playlist.current?.events().cancel() },
        playlistTask("playlist.waitForPendingControls") { await $0.waitForPendingControls() },
        .init("playlist.loop = off", .perturbs) { $0.playlist.current?.loop = .off },
        .init("playlist.append", .perturbs) { world in
            _ = world.playlist.current?.append([world.makeMedia(world.spare)])
        },
        .init("playlist.insert", .perturbs) { world in
            _ = world.playlist.current?.insert([world.makeMedia(world.spare)], at: 0)
        },
        .init("playlist.move", .perturbs) { world in
            guard let playlist = world.playlist.current, let last = playlist.entries.last else { return }
            _ = playlist.move(last.id, to: 0)
        },
        .init("playlist.remove", .perturbs) { world in
            guard let playlist = world.playlist.current, let first = playlist.entries.first else { return }
            _ = playlist.remove(first.id)
        },
        .init("playlist.play(id)", .perturbs) { world in
            guard let playlist = world.playlist.current, let last = playlist.entries.last else { return }
            _ = playlist.play(last.id)
        },
        .init("playlist.next", .perturbs) { _ = $0.playlist.current?.next() },
        .init("playlist.previous", .perturbs) { _ = $0.playlist.current?.previous() },
        .init("playlist.play", .perturbs) { $0.playlist.current?.play() },
        .init("playlist.pause", .perturbs) { $0.playlist.current?.pause() },
        .init("playlist.resume", .perturbs) { $0.playlist.current?.resume() },
        .init("playlist.stop", .perturbs) { $0.playlist.current?.stop() },
        .init("playlist.clear", .perturbs) { $0.playlist.current?.clear() },
        .init("new VLCPlaylistPlayer + drop", .makesPlayer) { world in
            _ = VLCPlaylistPlayer(library: world.library, configuration: world.objects)
        },
    ]

    /// Any player's playbacks: the current one, its outcome, its tagged events.
    static let playbacks: [MatrixMember] = [
        .init("player.currentPlayback") { _ = $0.player.current?.currentPlayback },
        .init("player.stallTimeout") { _ = $0.player.current?.stallTimeout },
        .init("player.playbacks.observe+cancel") { $0.player.current?.playbacks.observe { _ in }.cancel() },
        .init("player.playbacks.events+cancel") { $0.player.current?.playbacks.events().cancel() },
        task("player.outcome(of:)") { player in
            guard let playback = player.currentPlayback else { return }
            _ = try? await player.outcome(of: playback, timeout: .milliseconds(200))
        },
        task("player.startPlayback", .perturbs) { _ = await $0.startPlayback() },
    ]

    static let library: [MatrixMember] = [
        .init("VLCLibrary.version") { _ in _ = VLCLibrary.version },
        .init("VLCLibrary.mediaReferenceCountIsAtomic") { _ in _ = VLCLibrary.mediaReferenceCountIsAtomic },
        .init("VLCLibrary.sharedEventsConfiguration") { _ in _ = VLCLibrary.sharedEventsConfiguration },
        .init("VLCLibrary.waitForPendingTeardowns") { _ in _ = VLCLibrary.waitForPendingTeardowns(timeout: 0.2) },
        .init("library.logs.observe+cancel") { $0.library.logs.observe(minimumLevel: .debug) { _ in }.cancel() },
        .init("library.logs.events+cancel") { $0.library.logs.events(minimumLevel: .debug).cancel() },
        .init("FailureCauseRecorder + drop") { world in
            if let player = world.player.current { _ = FailureCauseRecorder(player: player) }
        },
        .init("new VLCMedia + drop") { world in _ = world.makeMedia(world.spare) },
        .init("new VLCMediaPlayer + drop", .makesPlayer) { world in
            _ = VLCMediaPlayer(library: world.library, configuration: world.objects)
        },
    ]
}

/// What provokes the events of a run.
enum MatrixScenario: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `stalledStream`: a stream media whose `read` waits for data that never comes, once it
    /// has served the start of a WAV; the run ends once the read waits, and its `stop` (and
    /// every member that stops, sets the media or drops the player) must cancel that read.
    case playback, videoPlayback, streamPlayback, stalledStream, playlistParse, listEdits, listPlayer, playlistPlayer

    var description: String { rawValue }

    /// The events after which the scenario has nothing more to send.
    var endEvents: Set<String> {
        switch self {
        case .playback, .videoPlayback, .streamPlayback:
            ["player MediaPlayerEndReached", "player MediaPlayerEncounteredError"]
        // Never ends by itself: the run ends when the read waits (see `MatrixRun.execute`).
        case .stalledStream: []
        case .playlistParse: ["media MediaParsedChanged"]
        case .listEdits: ["list MediaListItemDeleted"]
        case .listPlayer: ["listPlayer MediaListPlayerPlayed", "listPlayer MediaListPlayerStopped"]
        case .playlistPlayer: ["playlist PlaylistEndReached"]
        }
    }

    /// Cells that each configuration must reach: the send sites where libvlc holds a lock
    /// that a naive member would take again.
    var requiredCells: [MatrixCell] {
        switch self {
        case .playback:
            // play() sends the media's MetaChanged(NowPlaying) with the player's locks held.
            [
                MatrixCell(member: "player.state", event: "media MediaMetaChanged"),
                MatrixCell(member: "player.media", event: "media MediaMetaChanged"),
                MatrixCell(member: "player.isPlaying", event: "media MediaMetaChanged"),
                MatrixCell(member: "media.setMeta", event: "media MediaMetaChanged"),
                MatrixCell(member: "player.media", event: "player MediaPlayerMediaChanged"),
                MatrixCell(member: "second.drop + waitForPendingTeardowns", event: "media MediaMetaChanged"),
                MatrixCell(member: "payload.subItems", event: "player MediaPlayerMediaChanged"),
            ]
        case .videoPlayback:
            // Video, tracks, chapters, and an audio output with a volume (ALSA null).
            [
                MatrixCell(member: "player.chapter", event: "player MediaPlayerChapterChanged"),
                MatrixCell(member: "player.title", event: "player MediaPlayerTitleChanged"),
                MatrixCell(member: "player.tracks(of:)", event: "player MediaPlayerESSelected"),
                MatrixCell(member: "player.takeSnapshot", event: "player MediaPlayerVout"),
                MatrixCell(member: "player.volume", event: "player MediaPlayerVout"),
            ]
        case .streamPlayback:
            [MatrixCell(member: "player.media", event: "player MediaPlayerPlaying")]
        case .stalledStream:
            [
                MatrixCell(member: "payload.streamFailure", event: "player MediaPlayerMediaChanged"),
                // The read waits while libvlc still probes the stream.
                MatrixCell(member: "player.state", event: "player MediaPlayerOpening"),
            ]
        case .playlistParse:
            // The sub-item list's ItemAdded comes with that list's lock held.
            [
                MatrixCell(member: "media.subItems", event: "subitems MediaListItemAdded"),
                MatrixCell(member: "media.subItemList.count", event: "media MediaSubItemAdded"),
                MatrixCell(member: "second.subItems", event: "subitems MediaListItemAdded"),
            ]
        case .listEdits:
            [
                MatrixCell(member: "list.waitForPendingEdits", event: "list MediaListItemAdded"),
                MatrixCell(member: "list.count", event: "list MediaListWillAddItem"),
                MatrixCell(member: "list.items", event: "list MediaListItemDeleted"),
            ]
        case .listPlayer:
            [MatrixCell(member: "listPlayer.state", event: "listPlayer MediaListPlayerNextItemSet")]
        case .playlistPlayer:
            // The playlist decides the next entry inside the end's delivery, under its lock.
            [
                MatrixCell(member: "playlist.entries", event: "playbacks PlaybackEnded"),
                MatrixCell(member: "playlist.currentEntry", event: "playlist PlaylistCurrentEntryChanged"),
                MatrixCell(member: "player.currentPlayback", event: "playbacks PlaybackBegan"),
                MatrixCell(member: "playlist.isActive", event: "playlist PlaylistEndReached"),
                MatrixCell(member: "new VLCPlaylistPlayer + drop", event: "player MediaPlayerEndReached"),
            ]
        }
    }
}

/// Ends the process when a member call does not return in time, naming the cell.
final class MatrixWatchdog: Sendable {
    static let shared = MatrixWatchdog()
    static let limit: Double = 20

    private let calls = Locked<[Int: (String, Date)]>([:])
    private let nextID = Locked(0)

    private init() {
        let calls = calls
        let thread = Thread {
            while true {
                Thread.sleep(forTimeInterval: 0.5)
                let now = Date()
                if let (cell, _) = calls.withLock({ $0.values.first { now.timeIntervalSince($0.1) > Self.limit } }) {
                    let message = "REENTRANCY MATRIX: \(cell) did not return within \(Self.limit) s (deadlock)\n"
                    _ = message.withCString { write(2, $0, strlen($0)) }
                    _exit(70)
                }
            }
        }
        thread.name = "MatrixWatchdog"
        thread.start()
    }

    func watch(_ cell: String, _ body: () -> Void) {
        let id = nextID.withLock { id -> Int in
            id += 1
            return id
        }
        calls.withLock { $0[id] = (cell, Date()) }
        body()
        calls.withLock { $0[id] = nil }
    }
}

/// One run: a world, its subscriptions, the scenario, and what was reached.
final class MatrixRun: Sendable {
    let scenario: MatrixScenario
    let configuration: MatrixConfiguration
    let dropping: String?
    let members: [MatrixMember]
    let world: MatrixWorld
    private let reached = Locked<Set<MatrixCell>>([])
    private let firsts = Locked<Set<String>>([])
    /// Events received so far: `settle` compares it before and after.
    private let eventCount = Locked(0)
    /// Handlers running now: the run has settled only when none is.
    private let busy = Locked(0)
    /// Whether the event that ends the scenario (`MatrixScenario.endEvents`) arrived.
    private let ended = Locked(false)
    private let inputs: [URL]

    init(
        scenario: MatrixScenario, configuration: MatrixConfiguration, members: [MatrixMember],
        dropping: String?
    ) throws {
        self.scenario = scenario
        self.configuration = configuration
        self.members = members
        self.dropping = dropping
        let library = scenario == .videoPlayback ? TestLibrary.withMixer : TestLibrary.shared
        world = MatrixWorld(library: library, spare: SharedMedia.shortWAV, configuration: configuration)
        switch scenario {
        case .videoPlayback:
            inputs = [SharedMedia.shortMovie]
        case .playlistParse:
            inputs = [try TestMedia.m3u(entries: [SharedMedia.shortWAV, SharedMedia.shortWAV, SharedMedia.shortWAV])]
        default:
            inputs = [SharedMedia.shortWAV]
        }
    }

    /// Called by every handler of the run.
    private func handle(_ source: String, _ name: String) {
        busy.withLock { $0 += 1 }
        eventCount.withLock { $0 += 1 }
        defer { busy.withLock { $0 -= 1 } }
        let event = "\(source) \(name)"
        if scenario.endEvents.contains(event) { ended.withLock { $0 = true } }
        guard firsts.withLock({ $0.insert(event).inserted }) else { return }
        let cell = "\(configuration) \(scenario): \(event)"
        if let dropping {
            guard dropping == event else { return }
            MatrixWatchdog.shared.watch("drop all from \(cell)") { world.dropAll() }
            ended.withLock { $0 = true }
            reached.withLock { _ = $0.insert(MatrixCell(member: "drop all", event: event)) }
            return
        }
        for member in members {
            MatrixWatchdog.shared.watch("\(member.name) from \(cell)") { member.call(world) }
            reached.withLock { _ = $0.insert(MatrixCell(member: member.name, event: event)) }
        }
    }

    private func subscribe<Source: VLCEventSource>(_ source: Source, as name: String) -> EventSubscription {
        source.observe { [weak self] event in self?.handle(name, event.name) }
    }

    /// Keeps the media of each `MediaChanged` as the world's `payload`; subscribed before the
    /// run's own handler, so that members called from that event find it.
    private func keepPayloads(of player: VLCMediaPlayer) -> EventSubscription {
        let world = world
        return player.observe(.mediaChanged) { event in
            if case .mediaChanged(let media?) = event { world.payload.set(media) }
        }
    }

    /// Another wrapper of `media`, subscribed now, outside any handler (so it is attached).
    private func subscribeSecondWrapper(of media: VLCMedia) -> [EventSubscription] {
        let second = VLCMedia(retaining: media.native, configuration: world.mediaConfiguration)
        world.second.set(second)
        return [second.observe { _ in }]
    }

    /// Whether nothing more will happen by itself: the players are stopped, paused, ended or
    /// failed (or gone), so only a new control call could send more events.
    private var isAtRest: Bool {
        let resting: Set<PlaybackState> = [.paused, .stopped, .ended, .error]
        if let player = world.player.current, !resting.contains(player.state) { return false }
        if let listPlayer = world.listPlayer.current, !resting.contains(listPlayer.state) { return false }
        // Between two entries the player rests while the playlist starts the next one.
        if let playlist = world.playlist.current, playlist.isActive, playlist.player.state != .paused {
            return false
        }
        return true
    }

    /// Waits until every control call and edit queued so far has been carried out, every task
    /// members started so far has finished, every event those sent has been delivered and no
    /// handler runs; returns whether no event arrived meanwhile (then the world has settled).
    /// Runs the main queue while it waits.
    private func settle(until deadline: Date) -> Bool {
        let eventsBefore = eventCount.withLock { $0 }
        let done = Locked(false)
        let world = world
        let player = world.player.current
        let listPlayer = world.listPlayer.current
        let list = world.list.current
        let tasks = world.tasks.withLock { $0.map(\.1) }
        Task {
            await player?.waitForPendingControls()
            await listPlayer?.waitForPendingControls()
            await list?.pendingEditsApplied()
            for task in tasks { await task.value }
            done.withLock { $0 = true }
        }
        while Date() < deadline, !done.withLock({ $0 }) {
            RunLoop.main.run(until: Date() + 0.01)
        }
        // A block queued on a delivery queue after an event was sent runs after its delivery.
        let queues = [world.objects.dispatchQueue, world.mediaConfiguration.dispatchQueue].compactMap { $0 }
        let flushed = Locked(0)
        for queue in queues { queue.async { flushed.withLock { $0 += 1 } } }
        while Date() < deadline, flushed.withLock({ $0 }) < queues.count || busy.withLock({ $0 }) > 0 {
            RunLoop.main.run(until: Date() + 0.01)
        }
        return eventCount.withLock { $0 } == eventsBefore
    }

    /// Runs the scenario until it has ended or settled, then tears the world down; returns the
    /// cells reached.
    func execute(_ test: XCTestCase) -> Set<MatrixCell> {
        var tokens: [EventSubscription] = []
        let world = world
        switch scenario {
        case .playback, .videoPlayback, .streamPlayback, .stalledStream:
            let player = VLCMediaPlayer(library: world.library, configuration: world.objects)
            let media: VLCMedia
            switch scenario {
            case .streamPlayback:
                media = VLCMedia(
                    data: MatrixWorld.bytes, library: world.library, configuration: world.mediaConfiguration)
            case .stalledStream:
                media = StallingStream.media(world.stall, configuration: world.mediaConfiguration)
            default:
                media = world.makeMedia(inputs[0])
            }
            world.player.set(player)
            world.media.set(media)
            tokens += [keepPayloads(of: player), subscribe(player, as: "player"), subscribe(media, as: "media")]
            tokens += subscribeSecondWrapper(of: media)
            player.media = media
            player.play()
        case .playlistParse:
            let media = world.makeMedia(inputs[0])
            world.media.set(media)
            tokens += [subscribe(media, as: "media"), subscribe(media.subItemList, as: "subitems")]
            tokens += subscribeSecondWrapper(of: media)
            world.start("scenario parse") { _ = try? await media.parse(timeout: .seconds(5)) }
        case .listEdits:
            let list = VLCMediaList(library: world.library, configuration: world.mediaConfiguration)
            let media = world.makeMedia(inputs[0])
            world.list.set(list)
            world.media.set(media)
            tokens += [subscribe(list, as: "list"), subscribe(media, as: "media")]
            tokens += subscribeSecondWrapper(of: media)
            list.append(media)
            list.append(world.makeMedia(world.spare))
            list.remove(at: 1)
        case .listPlayer:
            let list = VLCMediaList(
                media: [world.makeMedia(inputs[0]), world.makeMedia(world.spare)],
                library: world.library, configuration: world.mediaConfiguration)
            let listPlayer = VLCMediaListPlayer(library: world.library, configuration: world.objects)
            world.list.set(list)
            world.listPlayer.set(listPlayer)
            world.player.set(listPlayer.mediaPlayer)
            tokens += [
                subscribe(listPlayer, as: "listPlayer"), keepPayloads(of: listPlayer.mediaPlayer),
                subscribe(listPlayer.mediaPlayer, as: "player"), subscribe(list, as: "list"),
            ]
            listPlayer.mediaList = list
            listPlayer.play()
        case .playlistPlayer:
            let playlist = VLCPlaylistPlayer(library: world.library, configuration: world.objects)
            let media = world.makeMedia(inputs[0])
            world.playlist.set(playlist)
            world.player.set(playlist.player)
            world.media.set(media)
            tokens += [
                subscribe(playlist, as: "playlist"), subscribe(playlist.player.playbacks, as: "playbacks"),
                keepPayloads(of: playlist.player), subscribe(playlist.player, as: "player"),
                subscribe(media, as: "media"),
            ]
            tokens += subscribeSecondWrapper(of: media)
            playlist.append([media, world.makeMedia(world.spare)])
            playlist.play()
        }
        // Until the scenario's end event has come, or, when a perturbing member prevented it,
        // until the world has settled (see `settle`); 20 s at most. The main queue is drained
        // meanwhile (the main configurations deliver on it, and this test runs on the main
        // thread).
        let start = Date()
        let perturbs = members.contains { $0.perturbs }
        while Date() < start + 20 {
            RunLoop.main.run(until: Date() + 0.01)
            if scenario == .stalledStream, world.stall.blocked.count > 0 { ended.withLock { $0 = true } }
            if busy.withLock({ $0 }) == 0, ended.withLock({ $0 }) { break }
            if perturbs, settle(until: start + 20), isAtRest { break }
        }
        // The stops send events (a list player's first Stopped) whose handlers call members
        // and start tasks too: they are let in before the tasks are awaited.
        world.playlist.current?.stop()
        world.player.current?.stop()
        world.listPlayer.current?.stop()
        _ = settle(until: Date() + 20)
        // Every task members started is awaited, also those started while awaiting: in rounds
        // until one finds none new, before the tokens are cancelled and again after (for the
        // deliveries still running then).
        let settled = Locked<[String]>([])
        var started: [String] = []
        let taskDeadline = Date() + 20
        func awaitNewTasks() {
            while Date() < taskDeadline {
                let new = world.tasks.withLock { $0[started.count...] }
                if new.isEmpty { return }
                for (name, task) in new {
                    started.append(name)
                    Task {
                        await task.value
                        settled.withLock { $0.append(name) }
                    }
                }
                while Date() < taskDeadline, settled.withLock({ $0.count }) < started.count {
                    RunLoop.main.run(until: Date() + 0.01)
                }
            }
        }
        awaitNewTasks()
        tokens.forEach { $0.cancel() }
        world.tokens.withLock { $0 = [] }
        awaitNewTasks()
        var unfinished = started
        for name in settled.withLock({ $0 }) { unfinished.remove(at: unfinished.firstIndex(of: name)!) }
        XCTAssertEqual(unfinished, [], "\(configuration) \(scenario): tasks started by members did not finish in 20 s")
        world.dropAll()
        // Teardowns finish (completions run on the release queue; the main queue is drained
        // so that the main configurations' queued deliveries can release their leases). A run
        // leaves dozens of players made and dropped in handlers, each released on its control
        // queue: the wait fails when the pending work stops shrinking for 20 s, a hang, not
        // when it is slow, and then prints every thread's stack.
        var tornDown = false
        var fewest = ServiceQueues.pendingTeardowns.pending.count
        var progressed = Date()
        while Date() < progressed + 20, !tornDown {
            RunLoop.main.run(until: Date() + 0.01)
            tornDown = VLCLibrary.waitForPendingTeardowns(timeout: 0.05)
            let count = ServiceQueues.pendingTeardowns.pending.count
            if count < fewest {
                fewest = count
                progressed = Date()
            }
        }
        if !tornDown {
            let pending = ServiceQueues.pendingTeardowns.pending
            XCTFail(
                "\(configuration) \(scenario) dropping \(dropping ?? "-"): teardowns made no progress in 20 s (\(pending.count) pending, \(pending.leases) of them leases: \(pending.kinds)); every thread:\n\(threadDump())"
            )
        }
        XCTAssertEqual(
            world.completionsOffReleaseQueue.withLock { $0 }, [],
            "\(configuration) \(scenario): completions or .freed ran off the release queue")
        return reached.withLock { $0 }
    }
}
