import Dispatch
import Foundation
@testable import MediaEvents
import XCTest

/// The replay's logic on hand-written recordings (no libvlc, no media): order and threads in
/// every configuration, the virtual clock, calls and their answers, outcomes, teardown, and the
/// same sequence every run when handlers call back.
final class ReplaySessionTests: XCTestCase {
    /// A natural end: play, then the player's and the playbacks' events of one playback.
    static let naturalEnd = """
        {"format":"media-events-recording","version":1,"libvlc":null,"objects":[{"object":1,"source":"player","name":"main"},{"object":2,"source":"playbacks","of":1}]}
        {"seq":1,"t":0.000100,"object":1,"source":"player","call":"play"}
        {"seq":2,"t":0.001000,"object":2,"source":"playbacks","event":"PlaybackBegan","playback":1,"mrl":"file:///a.wav"}
        {"seq":3,"t":0.002000,"object":1,"source":"player","event":"MediaPlayerOpening"}
        {"seq":4,"t":0.002000,"object":2,"source":"playbacks","event":"MediaPlayerOpening","playback":1}
        {"seq":5,"t":0.100000,"object":1,"source":"player","event":"MediaPlayerPlaying"}
        {"seq":6,"t":0.100000,"object":2,"source":"playbacks","event":"MediaPlayerPlaying","playback":1}
        {"seq":7,"t":0.500000,"object":1,"source":"player","event":"MediaPlayerTimeChanged","time_ms":400}
        {"seq":8,"t":1.000000,"object":1,"source":"player","event":"MediaPlayerEndReached"}
        {"seq":9,"t":1.000000,"object":2,"source":"playbacks","event":"MediaPlayerEndReached","playback":1}
        {"seq":10,"t":1.000000,"object":2,"source":"playbacks","event":"PlaybackEnded","playback":1,"mrl":"file:///a.wav","outcome":"eof","time_ms":400,"position":0.8,"length_ms":500,"seconds":0.999}
        {"seq":11,"t":1.001000,"object":1,"source":"player","event":"MediaPlayerStopped"}
        """

    private func session(
        _ text: String = naturalEnd, mode: ReplayMode = .timeline, pace: ReplayPace = .fast,
        configuration: any EventsConfiguring = EventsDefaultConfiguration()
    ) throws -> ReplaySession {
        try ReplaySession(
            recording: Recording(jsonLines: text), mode: mode, pace: pace, configuration: configuration,
            library: TestLibrary.shared)
    }

    /// `player:Name` and `playbacks:Name#id` for each event, in delivery order.
    private func observeAll(_ player: ReplayMediaPlayer, into log: Recorder<String>) -> [EventSubscription] {
        [
            player.observe { log.record("player:\($0.name)") },
            player.playbacks.observe { log.record("playbacks:\($0.name)#\($0.playback)") },
        ]
    }

    private static let recordedOrder = [
        "playbacks:PlaybackBegan#1", "player:MediaPlayerOpening", "playbacks:MediaPlayerOpening#1",
        "player:MediaPlayerPlaying", "playbacks:MediaPlayerPlaying#1", "player:MediaPlayerTimeChanged",
        "player:MediaPlayerEndReached", "playbacks:MediaPlayerEndReached#1", "playbacks:PlaybackEnded#1",
        "player:MediaPlayerStopped",
    ]

    func testReplay_whenFastInEveryQueueConfiguration_deliversTheRecordingInOrderOnTheQueue() async throws {
        for mode in DispatchMode.allCases {
            let (configuration, queue) = mode.make(label: "test.replay.\(mode)")
            let session = try session(configuration: configuration)
            let player = try XCTUnwrap(session.player(named: "main"))
            let log = Recorder<String>()
            let offQueue = Counter()
            let tokens = observeAll(player, into: log)
            let check = player.observe { _ in if let queue, !queue.isCurrent { offQueue.increment() } }
            try await withTimeout(10) { await session.run() }
            XCTAssertEqual(log.values, Self.recordedOrder, "\(mode)")
            XCTAssertEqual(offQueue.count, 0, "\(mode): a handler ran off the configuration's queue")
            XCTAssertEqual(session.deliveredCount, 10)
            XCTAssertTrue(session.isFinished)
            XCTAssertEqual(player.state, .stopped)
            withExtendedLifetime((tokens, check)) {}
        }
    }

    func testReplay_whenLegacyConfiguration_deliversOnMainOnceMainIsDrained() throws {
        XCTAssertTrue(Thread.isMainThread, "XCTest runs tests on the main thread")
        let session = try session(configuration: EventsLegacyConfiguration())
        let player = try XCTUnwrap(session.player())
        let log = Recorder<String>()
        let offMain = Counter()
        let tokens = observeAll(player, into: log)
        let check = player.observe { _ in if !Thread.isMainThread { offMain.increment() } }
        session.start()
        let deadline = Date().addingTimeInterval(10)
        while !session.isFinished && Date() < deadline {
            RunLoop.main.run(until: Date().addingTimeInterval(0.005))
        }
        XCTAssertEqual(log.values, Self.recordedOrder)
        XCTAssertEqual(offMain.count, 0)
        withExtendedLifetime((tokens, check)) {}
    }

    func testReplay_whenStepped_deliversOnlyWhatTheVirtualClockReached() async throws {
        let session = try session(pace: .stepped)
        let player = try XCTUnwrap(session.player())
        let log = Recorder<String>()
        let tokens = observeAll(player, into: log)
        session.start()
        XCTAssertEqual(session.deliveredCount, 0, "a stepped replay waits for the clock")
        try await withTimeout(10) { await session.advance(to: .milliseconds(50)) }
        XCTAssertEqual(log.values, Array(Self.recordedOrder.prefix(3)))
        XCTAssertEqual(player.state, .opening)
        XCTAssertEqual(player.currentPlayback, PlaybackID(rawValue: 1))
        XCTAssertEqual(session.clock, .milliseconds(50))
        try await withTimeout(10) { await session.advance(by: .milliseconds(550)) }
        XCTAssertEqual(player.state, .playing)
        XCTAssertEqual(player.time, 400)
        XCTAssertEqual(session.deliveredCount, 6)
        let next = try await withTimeout(10) { await session.step() }
        XCTAssertEqual(next?.name, "MediaPlayerEndReached")
        XCTAssertEqual(player.state, .ended)
        XCTAssertEqual(session.clock, .seconds(1))
        try await withTimeout(10) { await session.runToEnd() }
        XCTAssertEqual(log.values, Self.recordedOrder)
        XCTAssertEqual(player.state, .stopped)
        XCTAssertEqual(player.time, -1, "Stopped forgets the time, as a real player's cache does")
        let none = try await withTimeout(10) { await session.step() }
        XCTAssertNil(none)
        withExtendedLifetime(tokens) {}
    }

    func testCall_whenMadeInAHandlerInEveryConfiguration_isRecordedWithTheEventThatTriggeredIt() async throws {
        for mode in DispatchMode.allCases {
            let session = try session(configuration: mode.make(label: "test.replay.call").configuration)
            let player = try XCTUnwrap(session.player())
            let token = player.observe(.endReached) { [weak player] _ in player?.stop() }
            player.play()
            try await withTimeout(10) { await session.run() }
            let calls = session.calls
            XCTAssertEqual(calls.map(\.name), ["play", "stop"], "\(mode)")
            XCTAssertNil(calls.first?.trigger, "\(mode): play was called outside a handler")
            XCTAssertEqual(calls.last?.trigger?.name, "MediaPlayerEndReached", "\(mode)")
            XCTAssertEqual(calls.last?.trigger?.seq, 8, "\(mode)")
            XCTAssertEqual(calls.last?.time, .seconds(1), "\(mode): the call is at its trigger's time")
            XCTAssertFalse(calls.last?.isAnswered ?? true, "\(mode): a timeline answers no call by itself")
            withExtendedLifetime(token) {}
        }
    }

    func testAnsweringCalls_whenPlayedTwice_answersEachWithTheRecordedSegmentAndNewPlaybackIDs() async throws {
        let session = try session(mode: .answeringCalls, pace: .stepped)
        let player = try XCTUnwrap(session.player())
        let log = Recorder<String>()
        let tokens = observeAll(player, into: log)
        try await withTimeout(10) { await session.runToEnd() }
        XCTAssertEqual(log.values, [], "nothing comes before a call")
        player.play()
        XCTAssertEqual(session.pendingCount, 10)
        try await withTimeout(10) { await session.runToEnd() }
        XCTAssertEqual(log.values, Self.recordedOrder)
        log.removeAll()
        player.play()
        try await withTimeout(10) { await session.runToEnd() }
        XCTAssertEqual(log.values, Self.recordedOrder.map { $0.replacingOccurrences(of: "#1", with: "#2") })
        let summary = try await player.outcome(of: PlaybackID(rawValue: 2), timeout: .seconds(5))
        XCTAssertEqual(summary.playback, PlaybackID(rawValue: 2))
        XCTAssertEqual(summary.outcome, .ended)
        XCTAssertEqual(session.calls.map(\.isAnswered), [true, true])
        XCTAssertEqual(session.clock, .seconds(1) + .microseconds(900) + .seconds(1) + .microseconds(900))
        withExtendedLifetime(tokens) {}
    }

    /// A handler that plays again after each end, three times: the answers interleave with the
    /// handlers the same way in every run and every configuration (the driver waits for each
    /// entry's handlers), though the queue runs them on another thread.
    func testAnsweringCalls_whenHandlersCallBackOnRealThreads_giveTheSameSequenceEveryRun() async throws {
        var sequences: Set<[String]> = []
        for run in 0..<20 {
            for mode in DispatchMode.allCases {
                let session = try session(
                    mode: .answeringCalls, configuration: mode.make(label: "test.replay.\(run)").configuration)
                let player = try XCTUnwrap(session.player())
                let log = Recorder<String>()
                let plays = Counter()
                let tokens = observeAll(player, into: log)
                let again = player.playbacks.observe(.ended) { [weak player] _ in
                    if plays.increment() < 3 { player?.play() }
                }
                player.play()
                try await withTimeout(10) { await session.run() }
                sequences.insert(log.values + session.calls.map { "\($0)" })
                withExtendedLifetime((tokens, again)) {}
            }
        }
        XCTAssertEqual(sequences.count, 1, "\(sequences)")
        let only = try XCTUnwrap(sequences.first)
        XCTAssertEqual(only.filter { $0.hasPrefix("playbacks:PlaybackEnded") }.count, 3)
        XCTAssertEqual(only.suffix(3), ["play", "play in PlaybackEnded #10", "play in PlaybackEnded #10"])
    }

    func testCalls_whenMadeFromManyThreadsDuringAReplay_areAllRecorded() async throws {
        let session = try session()
        let player = try XCTUnwrap(session.player())
        session.start()
        startThreads(count: 4, name: "replay-calls") { _ in
            for _ in 0..<500 { player.pause() }
        }
        try await withTimeout(10) { await session.finished() }
        XCTAssertEqual(session.calls.count, 2000)
        XCTAssertEqual(Set(session.calls.map(\.name)), ["pause"])
    }

    func testRecordedPace_whenStarted_deliversNoEntryBeforeItsRecordedTime() async throws {
        let session = try session(pace: .recorded)
        let player = try XCTUnwrap(session.player())
        let started = DispatchTime.now()
        let late = Recorder<Bool>()
        let token = player.observe { event in
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            let recorded = ["MediaPlayerPlaying": 0.1, "MediaPlayerTimeChanged": 0.5, "MediaPlayerEndReached": 1.0]
            if let time = recorded[event.name] { late.record(elapsed >= time) }
        }
        session.start()
        try await withTimeout(20) { await session.finished() }
        XCTAssertEqual(late.values, [true, true, true], "an entry came before its recorded time")
        withExtendedLifetime(token) {}
    }

    func testWaitFor_whenTheCallIsAnswered_returnsTheAnsweringEvent() async throws {
        let session = try session(mode: .answeringCalls)
        let player = try XCTUnwrap(session.player())
        session.start()
        let end = try await withTimeout(10) {
            try await player.waitFor(.endReached, timeout: .seconds(5)) { player.play() }
        }
        XCTAssertEqual(end.kind, .endReached)
        let call = try await session.waitForCall("play", timeout: .seconds(1))
        XCTAssertEqual(call.name, "play")
        do {
            _ = try await session.waitForCall("stop", timeout: .milliseconds(50))
            XCTFail("no stop was called")
        } catch VLCError.timedOut {}
    }

    func testOutcome_whenTheEndIsNotDeliveredYet_waitsForItAndTimesOutOtherwise() async throws {
        let session = try session(pace: .stepped)
        let player = try XCTUnwrap(session.player())
        do {
            _ = try await player.outcome(of: PlaybackID(rawValue: 1), timeout: .milliseconds(50))
            XCTFail("the end was not delivered yet")
        } catch VLCError.timedOut {}
        async let summary = player.outcome(of: PlaybackID(rawValue: 1), timeout: .seconds(10))
        try await withTimeout(10) { await session.runToEnd() }
        let ended = try await summary
        XCTAssertEqual(ended.outcome, .ended)
        XCTAssertEqual(ended.mrl, "file:///a.wav")
        XCTAssertEqual(ended.position, 0.8)
        XCTAssertEqual(player.currentPlayback, PlaybackID(rawValue: 1), "a natural end stays current")
    }

    func testTearDown_whenSubscribed_endsStreamsAndRunsCompletionsOnce() async throws {
        let session = try session(pace: .stepped)
        let player = try XCTUnwrap(session.player())
        let completions = Counter()
        let token = player.observe(onCompletion: { completions.increment() }) { _ in }
        let stream = player.playbacks.events()
        let counting = Task {
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        try await withTimeout(10) { await session.advance(to: .milliseconds(200)) }
        session.tearDown()
        let seen = try await withTimeout(10) { await counting.value }
        XCTAssertEqual(seen, 3, "began, opening and playing, then the end")
        XCTAssertTrue(waitUntil(5) { completions.count == 1 })
        XCTAssertEqual(session.pendingCount, 0)
        // Nothing is left to wait for: every wait returns at once.
        try await withTimeout(10) {
            await session.finished()
            await session.advance(by: .seconds(5))
            await session.runToEnd()
        }
        let none = try await withTimeout(10) { await session.step() }
        XCTAssertNil(none)
        token.cancel()
    }

    func testAnswer_whenGivenASegmentOfAnotherRecording_deliversItToTheCalledPlayer() async throws {
        let other = try Recording(
            jsonLines: Self.naturalEnd.replacingOccurrences(of: #""object":1"#, with: #""object":7"#)
                .replacingOccurrences(of: #""object":2"#, with: #""object":8"#)
                .replacingOccurrences(of: #""of":1"#, with: #""of":7"#))
        let segment = try XCTUnwrap(other.segment(from: "MediaPlayerOpening", through: "MediaPlayerPlaying"))
        XCTAssertEqual(segment.entries.map(\.seq), [3, 4, 5])
        let session = try session(mode: .answeringCalls, pace: .stepped)
        let player = try XCTUnwrap(session.player())
        try session.answer("pause", on: player.recordedObject.id, with: segment)
        let log = Recorder<String>()
        let tokens = observeAll(player, into: log)
        player.pause()
        try await withTimeout(10) { await session.runToEnd() }
        XCTAssertEqual(
            log.values, ["player:MediaPlayerOpening", "playbacks:MediaPlayerOpening#1", "player:MediaPlayerPlaying"])
        XCTAssertEqual(session.clock, .milliseconds(98), "the segment keeps its own spacing")
        withExtendedLifetime(tokens) {}
    }

    func testReplay_whenPlaylistListsAndMarks_deliversEachToItsObjectWithItsValues() async throws {
        let text = """
            {"format":"media-events-recording","version":1,"libvlc":null,"objects":[{"object":1,"source":"playlist"},{"object":2,"source":"player","of":1},{"object":3,"source":"playbacks","of":2},{"object":4,"source":"list","name":"queue"}]}
            {"seq":1,"t":0.1,"object":1,"source":"playlist","event":"PlaylistEntriesAdded","index":0,"entries":[{"id":1,"mrl":"file:///1.wav"},{"id":2,"mrl":"file:///2.wav"}]}
            {"seq":2,"t":0.2,"object":1,"source":"playlist","event":"PlaylistCurrentEntryChanged","current":{"id":1,"mrl":"file:///1.wav"}}
            {"seq":3,"t":0.3,"object":3,"source":"playbacks","event":"PlaybackBegan","playback":1,"entry":1,"mrl":"file:///1.wav"}
            {"seq":4,"t":0.4,"mark":"UserPressedNext","source":"ui","button":"next"}
            {"seq":5,"t":0.5,"object":4,"source":"list","event":"MediaListItemAdded","index":0,"mrl":"file:///x y.wav"}
            """
        let session = try session(text)
        let playlist = try XCTUnwrap(session.playlistPlayer())
        let list = try XCTUnwrap(session.source(of: MediaListEvent.self, named: "queue"))
        let log = Recorder<String>()
        let tokens = [
            playlist.observe { log.record("playlist:\($0.name)") },
            playlist.player.playbacks.observe { log.record("playbacks:\($0.name) entry \($0.entry?.rawValue ?? 0)") },
            session.marks.observe { log.record("mark:\($0.name) \($0.source ?? "") \($0.fields)") },
            list.observe { log.record("list:\($0.description)") },
        ]
        XCTAssertFalse(playlist.next(), "no entries yet")
        try await withTimeout(10) { await session.run() }
        XCTAssertEqual(
            log.values,
            [
                "playlist:PlaylistEntriesAdded", "playlist:PlaylistCurrentEntryChanged",
                "playbacks:PlaybackBegan entry 1", #"mark:UserPressedNext ui [button="next"]"#,
                "list:MediaListItemAdded index=0 item=file:///x y.wav",
            ])
        XCTAssertEqual(playlist.entries.map(\.id.rawValue), [1, 2])
        XCTAssertEqual(playlist.currentEntry?.id.rawValue, 1)
        XCTAssertTrue(playlist.isActive)
        XCTAssertTrue(playlist.next(), "entry 2 follows entry 1")
        XCTAssertFalse(playlist.previous(), "nothing before entry 1 without a loop")
        XCTAssertEqual(session.calls.map(\.name), ["next", "next", "previous"])
        withExtendedLifetime(tokens) {}
    }

    func testSession_whenAPayloadIsWrong_throwsSayingWhichEntry() throws {
        let broken = Self.naturalEnd.replacingOccurrences(of: #""time_ms":400}"#, with: #""time_ms":"soon"}"#)
        XCTAssertThrowsError(try session(broken)) { error in
            XCTAssertTrue("\(error)".contains("MediaPlayerTimeChanged (seq 7) needs an integer time_ms"), "\(error)")
        }
    }
}
