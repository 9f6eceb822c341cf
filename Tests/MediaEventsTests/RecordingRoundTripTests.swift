import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// Record on real libvlc, write the recording out, read it back, replay it: a subscriber of
/// the replay sees what a subscriber of the real objects saw, event for event and payload for
/// payload (compared with `Mirror`, not with the codec), in every configuration.
final class RecordingRoundTripTests: XCTestCase {
    /// What the subscribers of each object saw: every event's whole structure, by object name.
    final class Sightings: Sendable {
        private let seen = Locked<[String: [String]]>([:])

        func watch<Source: VLCEventSource>(_ source: Source, as name: String) -> EventSubscription {
            source.observe { event in self.seen.withLock { $0[name, default: []].append(structure(of: event)) } }
        }

        var all: [String: [String]] { seen.withLock { $0 } }

        func count(_ name: String, containing text: String) -> Int {
            seen.withLock { $0[name, default: []].filter { $0.contains(text) }.count }
        }

        func count(_ name: String) -> Int { seen.withLock { $0[name, default: []].count } }
    }

    /// Every configuration the guarantees hold in, the main queue included (drained here).
    private enum Configuration: String, CaseIterable {
        case inline, queueSync, queueAsync, legacy

        /// What a round trip compares: the events in their order, or inline only the events.
        /// Inline, each subscriber is called on the thread libvlc sent from: two events sent on
        /// two threads at once (the media's Paused state or a parse's ParsedChanged from one,
        /// the player's Buffering or ES events from another) may reach the recorder and the
        /// test's subscriber in either order, and the replay gives the recorder's. Delivered on
        /// a queue, every subscriber of an object sees the queue's one order.
        func comparable(_ got: [String], _ want: [String]) -> (got: [String], want: [String]) {
            self == .inline ? (got.sorted(), want.sorted()) : (got, want)
        }

        /// A new configuration of this kind (a queue of its own for the queue kinds).
        func make() -> any EventsConfiguring {
            switch self {
            case .inline: DispatchMode.inline.make().configuration
            case .queueSync: DispatchMode.queueSync.make(label: "test.roundtrip").configuration
            case .queueAsync: DispatchMode.queueAsync.make(label: "test.roundtrip").configuration
            case .legacy: EventsLegacyConfiguration()
            }
        }
    }

    /// Runs the main run loop in slices (the legacy configuration delivers there) until
    /// `condition` holds or `seconds` have passed.
    private func drainMain(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            RunLoop.main.run(until: Date().addingTimeInterval(0.005))
        }
        return true
    }

    /// Waits until every control call made on `player` has been carried out and every event
    /// sent so far has been delivered (a block queued behind them on the configuration's queue).
    private func settle(_ player: VLCMediaPlayer) -> Bool {
        let done = Locked(false)
        Task {
            await player.waitForPendingControls()
            if let queue = player.configuration.dispatchQueue {
                queue.async { done.withLock { $0 = true } }
            } else {
                done.withLock { $0 = true }
            }
        }
        return drainMain(30) { done.withLock { $0 } }
    }

    /// Waits until the recorder has an event for every one the test's subscriber saw, and as
    /// many, for each named object: both subscribers have received all there was.
    private func waitForTheSame(_ real: Sightings, _ recorder: EventRecorder, _ names: [String: String]) -> Bool {
        drainMain(30) {
            let recording = recorder.recording
            return names.allSatisfy { object, watched in
                let id = recording.objects.first { $0.name == object }?.id
                let recorded = recording.entries.filter { $0.kind == .event && $0.object == id }.count
                return recorded == real.count(watched)
            }
        }
    }

    /// The player's values, read where a handler reads them.
    private static func values(_ player: some MediaPlayerControlling) -> String {
        "state \(player.state) time \(player.time) length \(player.length) seekable \(player.isSeekable) "
            + "pausable \(player.isPausable) playback \(player.currentPlayback.map(String.init(describing:)) ?? "none")"
    }

    func testRoundTrip_whenTheMovieIsPlayedWithCallsInEveryConfiguration_theReplaySubscriberSeesTheSameEvents() throws {
        XCTAssertTrue(Thread.isMainThread)
        for configuration in Configuration.allCases {
            let name = configuration.rawValue
            let real = Sightings()
            let recorder = EventRecorder()
            let realAtEnd = Locked<String?>(nil)
            let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration.make())
            let media = makeMedia(SharedMedia.movie, configuration: player.configuration)
            let tokens = [
                real.watch(player, as: "player"), real.watch(player.playbacks, as: "playbacks"),
                real.watch(media, as: "media"),
                player.observe(.endReached) { [weak player] _ in
                    if let player { realAtEnd.withLock { $0 = Self.values(player) } }
                },
            ]
            recorder.attach(player, name: "player")
            recorder.attach(media, name: "media")
            let controls = recorder.recordingCalls(of: player)
            controls.media = media
            controls.play()
            XCTAssertTrue(drainMain(30) { real.count("player", containing: "MediaPlayerPlaying") == 1 }, name)
            controls.pause()
            XCTAssertTrue(drainMain(30) { real.count("player", containing: "MediaPlayerPaused") == 1 }, name)
            controls.resume()
            XCTAssertTrue(drainMain(30) { real.count("player", containing: "MediaPlayerPlaying") == 2 }, name)
            controls.time = 4500
            XCTAssertTrue(drainMain(30) { real.count("playbacks", containing: "PlaybackEnded") == 1 }, name)
            // libvlc's own Stopped after the end, then the one of stop() if the player had not
            // stopped yet (1 or 2 in all, see LIBVLC3.md): wait for the call, not for a count.
            XCTAssertTrue(drainMain(30) { real.count("player", containing: "MediaPlayerStopped") >= 1 }, name)
            controls.stop()
            XCTAssertTrue(settle(player), "\(name): stop() and its events did not settle")
            XCTAssertTrue(
                waitForTheSame(real, recorder, ["player": "player", "media": "media"]),
                "\(name): the recorder did not see what the subscriber saw")
            tokens.forEach { $0.cancel() }
            recorder.stop()
            let text = recorder.recording.jsonLines

            let recording = try Recording(jsonLines: text)
            XCTAssertEqual(recording.calls.map(\.name), ["setMedia", "play", "pause", "resume", "setTime", "stop"])
            let session = try ReplaySession(
                recording: recording, configuration: configuration.make(), library: TestLibrary.shared)
            let replayed = Sightings()
            let replayPlayer = try XCTUnwrap(session.player(named: "player"))
            let replayMedia = try XCTUnwrap(session.source(of: MediaEvent.self, named: "media"))
            let replayAtEnd = Locked<String?>(nil)
            let replayTokens = [
                replayed.watch(replayPlayer, as: "player"), replayed.watch(replayPlayer.playbacks, as: "playbacks"),
                replayed.watch(replayMedia, as: "media"),
                replayPlayer.observe(.endReached) { [weak replayPlayer] _ in
                    if let replayPlayer { replayAtEnd.withLock { $0 = Self.values(replayPlayer) } }
                },
            ]
            session.start()
            XCTAssertTrue(drainMain(30) { session.isFinished }, "\(name): the replay did not finish")
            let expected = real.all
            XCTAssertEqual(expected.keys.sorted(), ["media", "playbacks", "player"])
            for object in expected.keys.sorted() {
                let want = expected[object] ?? []
                let got = replayed.all[object] ?? []
                XCTAssertEqual(
                    got.count, want.count, "\(name) \(object): \(got.count) events replayed, \(want.count) seen")
                let (gotInOrder, wantInOrder) = configuration.comparable(got, want)
                for (index, (event, seen)) in zip(gotInOrder, wantInOrder).enumerated() where event != seen {
                    XCTFail("\(name) \(object) #\(index): replayed\n\(event)\nseen\n\(seen)")
                    break
                }
            }
            XCTAssertGreaterThan(real.count("player", containing: "MediaPlayerTimeChanged"), 10, name)
            XCTAssertEqual(real.count("player", containing: "VLCMedia(file://"), 1, "\(name): MediaChanged's media")
            // The caches a handler reads: where libvlc's thread waits for the handler, the real
            // player had the values the replay has; queued, the real one may be further on.
            let replayValues = replayAtEnd.withLock { $0 }
            XCTAssertTrue(replayValues?.hasPrefix("state ended time ") == true, "\(name): \(replayValues ?? "none")")
            XCTAssertTrue(replayValues?.hasSuffix(" playback 1") == true, "\(name): \(replayValues ?? "none")")
            if configuration == .inline || configuration == .queueSync {
                XCTAssertEqual(replayValues, realAtEnd.withLock { $0 }, name)
            }
            XCTAssertEqual(Self.values(replayPlayer), Self.values(player), "\(name): the values after the replay")
            replayTokens.forEach { $0.cancel() }
        }
    }

    /// A media list edited, a playlist player that plays two entries and fails a missing one,
    /// and a list player: every configuration.
    func testRoundTrip_whenListsAndPlaylistsInEveryConfiguration_theReplaySubscriberSeesTheSameEvents() throws {
        let wavs = try (0..<2).map { try TestMedia.wav(seconds: 0.2, name: "entry-\($0).wav") }
        let missing = try TestMedia.missing()
        for configuration in Configuration.allCases {
            let name = configuration.rawValue
            let real = Sightings()
            let recorder = EventRecorder()
            let made = configuration.make()
            let list = VLCMediaList(library: TestLibrary.shared, configuration: made)
            let playlist = VLCPlaylistPlayer(library: TestLibrary.shared, configuration: made)
            let listPlayer = VLCMediaListPlayer(library: TestLibrary.shared, configuration: made)
            let played = VLCMediaList(library: TestLibrary.shared, configuration: made)
            played.append(VLCMedia(url: wavs[0], library: TestLibrary.shared))
            XCTAssertTrue(played.waitForPendingEdits())
            let tokens = [
                real.watch(list, as: "list"), real.watch(playlist, as: "playlist"),
                real.watch(playlist.player, as: "player"), real.watch(playlist.player.playbacks, as: "playbacks"),
                real.watch(listPlayer, as: "listPlayer"),
            ]
            recorder.attach(list, name: "list")
            recorder.attach(playlist, name: "playlist")
            recorder.attach(listPlayer, name: "listPlayer")
            list.append(contentsOf: wavs.map { VLCMedia(url: $0, library: TestLibrary.shared) })
            list.remove(at: 0)
            playlist.append((wavs + [missing]).map { VLCMedia(url: $0, library: TestLibrary.shared) })
            playlist.play()
            listPlayer.mediaList = played
            listPlayer.play()
            XCTAssertTrue(drainMain(30) { real.count("playlist", containing: "PlaylistEndReached") == 1 }, name)
            XCTAssertTrue(drainMain(30) { real.count("listPlayer", containing: "MediaListPlayerPlayed") == 1 }, name)
            XCTAssertTrue(drainMain(30) { real.count("list") == 6 }, "\(name): \(real.all["list"] ?? [])")
            // The stop the playlist queues at its end sends a Stopped of the failed playback.
            XCTAssertTrue(settle(playlist.player), name)
            let playbacksID = recorder.recording.objects.first { $0.kind == .playbacks }?.id
            XCTAssertTrue(
                waitForTheSame(real, recorder, ["list": "list", "playlist": "playlist", "listPlayer": "listPlayer"]),
                name)
            XCTAssertTrue(
                drainMain(30) {
                    recorder.recording.entries.filter { $0.object == playbacksID }.count == real.count("playbacks")
                }, name)
            tokens.forEach { $0.cancel() }
            recorder.stop()

            let recording = try Recording(jsonLines: recorder.recording.jsonLines)
            let session = try ReplaySession(
                recording: recording, configuration: configuration.make(), library: TestLibrary.shared)
            let replayed = Sightings()
            let replayPlaylist = try XCTUnwrap(session.playlistPlayer(named: "playlist"))
            let replayTokens = [
                replayed.watch(try XCTUnwrap(session.source(of: MediaListEvent.self, named: "list")), as: "list"),
                replayed.watch(replayPlaylist, as: "playlist"), replayed.watch(replayPlaylist.player, as: "player"),
                replayed.watch(replayPlaylist.player.playbacks, as: "playbacks"),
                replayed.watch(
                    try XCTUnwrap(session.source(of: MediaListPlayerEvent.self, named: "listPlayer")), as: "listPlayer"),
            ]
            session.start()
            XCTAssertTrue(drainMain(30) { session.isFinished }, name)
            for object in real.all.keys.sorted() {
                let (got, want) = configuration.comparable(replayed.all[object] ?? [], real.all[object] ?? [])
                XCTAssertEqual(got, want, "\(name) \(object)")
            }
            let outcomes = (real.all["playbacks"] ?? []).filter { $0.hasPrefix("PlaybackEvent<PlaybackEnded") }
            XCTAssertEqual(outcomes.count, 3, "\(name): \(outcomes)")
            XCTAssertEqual(replayPlaylist.entries, playlist.entries, name)
            XCTAssertEqual(replayPlaylist.currentEntry, playlist.currentEntry, name)
            XCTAssertEqual(replayPlaylist.isActive, playlist.isActive, name)
            replayTokens.forEach { $0.cancel() }
            listPlayer.stop()
        }
    }

    /// The VLM and a media discoverer, whose events come from libvlc's own calls.
    func testRoundTrip_whenVLMAndMediaDiscoverer_theReplaySubscriberSeesTheSameEvents() async throws {
        let library = try VLCLibrary()
        let real = Sightings()
        let recorder = EventRecorder()
        let vlm = try VLCVLM(library: library)
        let discoverer = try VLCMediaDiscoverer(name: "audio_dir", library: library)
        let tokens = [real.watch(vlm, as: "vlm"), real.watch(discoverer, as: "discoverer")]
        recorder.attach(vlm, name: "vlm")
        recorder.attach(discoverer, name: "discoverer")
        let input = try TestMedia.wav(seconds: 0.3).absoluteString
        try await withTimeout(30) {
            try await vlm.addBroadcastAndWait(name: "recorded", input: input, output: "#dummy")
            try await vlm.deleteMediaAndWait(name: "recorded")
            try await discoverer.start()
            await discoverer.stopAndWait()
        }
        XCTAssertTrue(waitUntil(10) { real.count("discoverer") == 2 && real.count("vlm") == 3 }, "\(real.all)")
        tokens.forEach { $0.cancel() }
        recorder.stop()
        let session = try ReplaySession(
            recording: Recording(jsonLines: recorder.recording.jsonLines), configuration: EventsDefaultConfiguration())
        let replayed = Sightings()
        let replayTokens = [
            replayed.watch(try XCTUnwrap(session.source(of: VLMEvent.self)), as: "vlm"),
            replayed.watch(try XCTUnwrap(session.source(of: MediaDiscovererEvent.self)), as: "discoverer"),
        ]
        try await withTimeout(30) { await session.run() }
        XCTAssertEqual(replayed.all, real.all)
        replayTokens.forEach { $0.cancel() }
    }
}
