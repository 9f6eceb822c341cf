import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// The playlist player under storms of calls on real threads, while entries end by themselves:
/// it never wedges, every playback ends exactly once, and no event is tagged with a playback
/// that did not send it.
final class PlaylistStressTests: XCTestCase {
    /// Checks the playback events of one run: ids never go back in delivery order, each
    /// playback begins once before its other events, has at most one `Opening` and exactly one
    /// `ended`. Returns the failures, empty when all hold.
    static func violations(in events: [PlaybackEvent]) -> [String] {
        var failures: [String] = []
        var began: Set<PlaybackID> = []
        var ended: [PlaybackID: Int] = [:]
        var openings: [PlaybackID: Int] = [:]
        var last = PlaybackID(rawValue: 0)
        for (index, event) in events.enumerated() {
            let id = event.playback
            if id < last { failures.append("#\(index): \(event) after an event of playback \(last)") }
            last = max(last, id)
            switch event.kind {
            case .began:
                if !began.insert(id).inserted { failures.append("#\(index): playback \(id) began twice") }
            case .ended:
                ended[id, default: 0] += 1
            case .player(.opening):
                openings[id, default: 0] += 1
            default:
                break
            }
            if event.kind != .began, !began.contains(id) {
                failures.append("#\(index): \(event) before playback \(id) began")
            }
        }
        for id in began where ended[id] != 1 {
            failures.append("playback \(id) ended \(ended[id] ?? 0) times")
        }
        for (id, count) in openings where count > 1 { failures.append("playback \(id) opened \(count) times") }
        return failures
    }

    /// The storm that wedged libvlc's list player in the daemon: 120 entries of 0.1 to 0.3 s,
    /// looping, `next()` 40 times a second from one thread (with a pause every 20th call) and at
    /// random from two more, while another reads the playlist and the player's state, and
    /// entries end by themselves.
    /// Afterwards a new playback begins within 5 s of a `next()`, and every playback began has
    /// exactly one end. `MEDIAEVENTS_STORM_SECONDS` sets the length (15 s by default).
    func testNextStorm_whileEntriesEnd_neverWedgesAndEveryPlaybackEndsOnce() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["MEDIAEVENTS_STORM_SECONDS"] ?? "") ?? 15
        let wavs = try (0..<120).map { index in
            try TestMedia.wav(seconds: 0.1 + Double(index % 3) * 0.1, name: "storm-\(index).wav")
        }
        let playlist = VLCPlaylistPlayer(library: TestLibrary.shared)
        let events = Recorder<PlaybackEvent>()
        let token = playlist.player.playbacks.observe { events.record($0) }
        playlist.append(wavs.map { VLCMedia(url: $0, library: TestLibrary.shared) })
        playlist.loop = .list
        playlist.play()
        let stop = Locked(false)
        let nexts = Counter()
        let reads = Counter()
        let longest = Locked(0.0)
        let finished = startThreads(count: 5, timeout: seconds + 60, name: "storm") { thread in
            var generator = SystemRandomNumberGenerator()
            if thread == 4 {
                // The longest stretch without a new playback, sampled while the storm runs.
                var lastBegan = Date()
                var seenBegins = 0
                let end = Date() + seconds
                // Past its length until an entry has also ended by itself (30 s more at most).
                let endedNaturally = {
                    events.values.contains { if case .ended(let s) = $0.payload { s.outcome == .ended } else { false } }
                }
                while Date() < end || (Date() < end + 30 && !endedNaturally()) {
                    Thread.sleep(forTimeInterval: 0.05)
                    let begins = events.values.lazy.filter { $0.kind == .began }.count
                    if begins > seenBegins {
                        seenBegins = begins
                        lastBegan = Date()
                    }
                    let stretch = Date().timeIntervalSince(lastBegan)
                    longest.withLock { $0 = max($0, stretch) }
                }
                stop.withLock { $0 = true }
                return
            }
            var calls = 0
            while !stop.withLock({ $0 }) {
                switch thread {
                case 0:
                    playlist.next()
                    nexts.increment()
                    calls += 1
                    // At 40 a second no entry reaches its end: every 20th call a pause longer
                    // than the longest entry lets some end by themselves while the others go on.
                    Thread.sleep(forTimeInterval: calls % 20 == 0 ? 0.5 : 0.025)
                case 3:
                    _ = (playlist.currentEntry, playlist.entries.count, playlist.player.state, playlist.player.time)
                    reads.increment()
                    Thread.sleep(forTimeInterval: 0.005)
                default:
                    if Int.random(in: 0..<4, using: &generator) == 0 {
                        playlist.next()
                        nexts.increment()
                    }
                    Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.06, using: &generator))
                }
            }
        }
        XCTAssertTrue(finished, "the storm's threads did not finish: a call blocked")
        // Still alive: one more next() starts a new playback.
        let before = events.values.filter { $0.kind == .began }.count
        XCTAssertTrue(playlist.next())
        XCTAssertTrue(waitUntil(5) { events.values.filter { $0.kind == .began }.count > before }, "wedged")
        playlist.stop()
        // The stop has run, and before it every start queued: one start's delivery carries the
        // end of the playback it skips and then its own `began` (inline, here on the control
        // queue), and a check made between the two would pass before the last began.
        playlist.player.control.queue.sync {}
        XCTAssertTrue(
            waitUntil(10) { Self.violations(in: events.values).allSatisfy { !$0.contains("ended 0 times") } },
            "the last playback did not end")
        let failures = Self.violations(in: events.values)
        XCTAssertEqual(failures, [], "\(failures.prefix(10))")
        let ended = events.values.compactMap { if case .ended(let s) = $0.payload { s } else { nil } }
        let natural = ended.filter { $0.outcome == .ended }.count
        let longestStretch = longest.withLock { $0 }
        print(
            "next storm: \(seconds) s, \(nexts.count) next() calls, \(reads.count) reads, \(ended.count) playbacks "
                + "(\(natural) to their end), longest stretch without a new playback \(String(format: "%.2f", longestStretch)) s"
        )
        XCTAssertLessThan(longestStretch, 5, "a stretch of \(longestStretch) s without a new playback")
        XCTAssertGreaterThan(natural, 0, "entries also ended by themselves")
        token.cancel()
    }

    /// Rapid skips of paced entries in every configuration: no event of playback N arrives
    /// tagged N + 1 (or later), each playback begins once and ends once.
    func testRapidSkips_inEveryConfiguration_tagEveryEventWithThePlaybackThatSentIt() throws {
        let wavs = try (0..<4).map { try TestMedia.wav(seconds: 3, name: "skip-\($0).wav") }
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let playlist = VLCPlaylistPlayer(
                library: TestLibrary.shared, configuration: configuration,
                options: PlayerOptions(audio: .discardInRealTime))
            let events = Recorder<PlaybackEvent>()
            let token = playlist.player.playbacks.observe { events.record($0) }
            playlist.append(wavs.map { VLCMedia(url: $0, library: TestLibrary.shared) })
            playlist.loop = .list
            playlist.play()
            for round in 0..<40 {
                Thread.sleep(forTimeInterval: Double(round % 5) * 0.02)
                if round % 7 == 3 { playlist.previous() } else { playlist.next() }
            }
            playlist.stop()
            // Until the stop's own end has come: one start's delivery carries the end of the
            // playback it skips and then its own `began`, so between the two every playback
            // seen so far has ended, and a check made then passed before the last began.
            XCTAssertTrue(
                waitUntil(20) {
                    let values = events.values
                    let began = Set(values.filter { $0.kind == .began }.map(\.playback))
                    let ended = Set(values.filter { $0.kind == .ended }.map(\.playback))
                    let stopped = values.contains {
                        if case .ended(let s) = $0.payload { s.outcome == .stopped } else { false }
                    }
                    return stopped && began == ended
                }, "\(mode): not every playback ended")
            let failures = Self.violations(in: events.values)
            XCTAssertEqual(failures, [], "\(mode): \(failures.prefix(10))")
            token.cancel()
        }
    }

    /// `stop()`, `play()` and `next()` from threads racing entries that end by themselves:
    /// every playback gets exactly one outcome, the same in its event and in `outcome(of:)`.
    func testOutcomes_whenStopNextAndNaturalEndsRace_eachPlaybackEndsExactlyOnce() async throws {
        let wavs = try (0..<6).map { try TestMedia.wav(seconds: 0.15, name: "race-\($0).wav") }
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let playlist = VLCPlaylistPlayer(library: TestLibrary.shared, configuration: configuration)
            let events = Recorder<PlaybackEvent>()
            let token = playlist.player.playbacks.observe { events.record($0) }
            playlist.append(wavs.map { VLCMedia(url: $0, library: TestLibrary.shared) })
            playlist.loop = .list
            playlist.play()
            // Thirty rounds a thread at least, and on until six playbacks have ended (30 s at
            // most): the race spans several playbacks however long libvlc takes to start one.
            let deadline = Date() + 30
            let finished = startThreads(count: 3, timeout: 60, name: "race") { thread in
                var round = 0
                while round < 30 || (Date() < deadline && events.values.filter { $0.kind == .ended }.count < 6) {
                    switch (thread + round) % 3 {
                    case 0: playlist.next()
                    case 1: playlist.stop()
                    default: playlist.play()
                    }
                    Thread.sleep(forTimeInterval: 0.01 * Double(round % 4))
                    round += 1
                }
            }
            XCTAssertTrue(finished, "\(mode): a call blocked")
            playlist.stop()
            await playlist.waitForPendingControls()
            XCTAssertTrue(
                waitUntil(20) { Self.violations(in: events.values).isEmpty },
                "\(mode): \(Self.violations(in: events.values).prefix(5))")
            let summaries = events.values.compactMap { if case .ended(let s) = $0.payload { s } else { nil } }
            for summary in summaries.suffix(10) {
                let answer = try await playlist.player.outcome(of: summary.playback, timeout: .seconds(1))
                XCTAssertEqual(answer, summary, "\(mode)")
            }
            XCTAssertGreaterThan(summaries.count, 3, "\(mode)")
            token.cancel()
        }
    }
}
