// An example of testing an app's event handling with recordings, written the way an app would:
// only MediaEvents' public API (no @testable), the app's controller generic over
// MediaPlayerControlling, and recordings of real libvlc playbacks kept as files beside the test
// (Recordings/, made by RecordingFixtureTests). Nothing is played or opened: the replay answers
// the controller's calls with what libvlc really sent.

import Foundation
import MediaEvents
import TestSupport
import XCTest

/// The app's code under test: plays a queue of media on any player. After a natural end it
/// plays the next; after a failure it tries the same media once more, then moves on; an end of
/// a playback it has already left (a late event, after it changed the media) changes nothing.
final class QueueController<Player: MediaPlayerControlling>: Sendable {
    private struct State {
        var index = -1
        var retried = false
        /// The playback of the current item, once it began.
        var current: PlaybackID?
        var waitingForStart = false
        var isFinished = false
    }

    private let player: Player
    private let items: [VLCMedia]
    /// The bug this controller exists to avoid, for the test that shows a recording catches it.
    private let actsOnLateEnds: Bool
    private let state = Locked(State())
    private let token = Locked<EventSubscription?>(nil)

    init(player: Player, items: [VLCMedia], actsOnLateEnds: Bool = false) {
        self.player = player
        self.items = items
        self.actsOnLateEnds = actsOnLateEnds
        token.withLock { $0 = player.playbacks.observe(.began, .ended) { [weak self] in self?.handle($0) } }
    }

    var isFinished: Bool { state.withLock { $0.isFinished } }

    func start() { load(0) }

    /// The user's "next".
    func skip() { advance() }

    private func load(_ index: Int) {
        state.withLock { state in
            state.index = index
            state.retried = false
            state.current = nil
            state.waitingForStart = true
        }
        player.media = items[index]
        player.play()
    }

    private func advance() {
        let next = state.withLock { state -> Int? in
            guard state.index + 1 < items.count else {
                state.isFinished = true
                return nil
            }
            return state.index + 1
        }
        if let next { load(next) }
    }

    private func handle(_ event: PlaybackEvent) {
        switch event.payload {
        case .began:
            state.withLock { state in
                if state.waitingForStart {
                    state.current = event.playback
                    state.waitingForStart = false
                }
            }
        case .ended(let summary):
            let isCurrent = state.withLock { $0.current == summary.playback }
            guard isCurrent || actsOnLateEnds else { return }
            switch summary.outcome {
            case .ended:
                advance()
            case .failed:
                let retry = state.withLock { state -> Bool in
                    guard !state.retried else { return false }
                    state.retried = true
                    state.current = nil
                    state.waitingForStart = true
                    return true
                }
                if retry { player.play() } else { advance() }
            default:
                break
            }
        default:
            break
        }
    }
}

final class RecordingExampleTests: XCTestCase {
    /// The recordings kept with the tests.
    static func recording(_ name: String) throws -> Recording {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recordings")
        return try Recording(contentsOf: folder.appendingPathComponent("\(name).jsonl"))
    }

    /// A libvlc instance only to make `VLCMedia` values (the queue's items, and the replay's
    /// media payloads); nothing is ever opened.
    static let library: VLCLibrary = {
        do { return try VLCLibrary() } catch { fatalError("\(error)") }
    }()

    static func items(_ count: Int) -> [VLCMedia] {
        (1...count).map { VLCMedia(url: URL(fileURLWithPath: "/media/item-\($0).wav"), library: library) }
    }

    /// A replay that answers each of the controller's calls with what followed the same call
    /// in `recording`, delivered as fast as the handlers allow, on a queue as in the app.
    static func replay(_ recording: Recording) throws -> ReplaySession {
        try ReplaySession(
            recording: recording, mode: .answeringCalls, pace: .stepped,
            configuration: EventsQueueConfiguration(queue: DispatchQueue(label: "app.events"), isAsync: true),
            library: library)
    }

    func testController_whenTheMediaEndsNaturally_playsTheNextAndFinishesAfterTheLast() async throws {
        try await Self.assertNaturalEnd(try Self.recording("natural-end"))
    }

    func testController_whenAPlaybackFails_retriesOnceThenMovesOn() async throws {
        try await Self.assertFailure(try Self.recording("failure"))
    }

    func testController_whenALateEndArrivesAfterTheMediaChanged_ignoresIt() async throws {
        try await Self.assertLateEnd(try Self.recording("late-end-after-media-change"))
    }

    /// The same recording catches the bug: a controller that acts on every end takes the late
    /// end of the first item for the end of the second, and skips it.
    func testController_whenItActsOnLateEnds_isCaughtSkippingTheSecondItem() async throws {
        let session = try Self.replay(try Self.recording("late-end-after-media-change"))
        let items = Self.items(3)
        let controller = QueueController(player: try XCTUnwrap(session.player()), items: items, actsOnLateEnds: true)
        controller.start()
        await session.runToEnd()
        controller.skip()
        await session.runToEnd()
        let third = try XCTUnwrap(session.calls.first { $0.name == "setMedia" && $0.fields == Self.mrl(items[2]) })
        XCTAssertEqual(third.trigger?.name, "PlaybackEnded")
        XCTAssertEqual(
            third.trigger?.playback, PlaybackID(rawValue: 1),
            "it moved on when the first item's late end came, before the second item had played")
    }

    static func mrl(_ media: VLCMedia) -> [RecordedField] { [RecordedField("mrl", .string(media.mrl))] }

    // MARK: The scenarios, also run on fresh recordings by RecordingFixtureTests

    static func assertNaturalEnd(_ recording: Recording, file: StaticString = #filePath, line: UInt = #line)
        async throws
    {
        let session = try replay(recording)
        let items = items(2)
        let controller = QueueController(player: try XCTUnwrap(session.player()), items: items)
        controller.start()
        await session.runToEnd()
        let calls = session.calls
        XCTAssertEqual(calls.map(\.name), ["setMedia", "play", "setMedia", "play"], "\(calls)", file: file, line: line)
        XCTAssertEqual(calls.map(\.fields).filter { !$0.isEmpty }, items.map(mrl), file: file, line: line)
        // After the end of the first playback, the app loaded the second item.
        XCTAssertEqual(calls[2].trigger?.name, "PlaybackEnded", file: file, line: line)
        XCTAssertEqual(calls[2].trigger?[field: "outcome"], .string("eof"), file: file, line: line)
        XCTAssertEqual(calls[2].trigger?.playback, PlaybackID(rawValue: 1), file: file, line: line)
        XCTAssertTrue(controller.isFinished, file: file, line: line)
        let second = try await session.player()!.outcome(of: PlaybackID(rawValue: 2), timeout: .seconds(5))
        XCTAssertEqual(second.outcome, .ended, file: file, line: line)
    }

    static func assertFailure(_ recording: Recording, file: StaticString = #filePath, line: UInt = #line)
        async throws
    {
        let session = try replay(recording)
        let controller = QueueController(player: try XCTUnwrap(session.player()), items: items(2))
        controller.start()
        await session.runToEnd()
        let calls = session.calls
        XCTAssertEqual(
            calls.map(\.name), ["setMedia", "play", "play", "setMedia", "play", "play"], "\(calls)", file: file,
            line: line)
        // Each retry and each move on was made when a playback ended as failed.
        for call in calls.dropFirst(2) {
            XCTAssertEqual(call.trigger?.name, "PlaybackEnded", "\(call)", file: file, line: line)
            XCTAssertEqual(call.trigger?[field: "outcome"], .string("failed"), "\(call)", file: file, line: line)
        }
        XCTAssertEqual(calls[2].trigger?.playback, PlaybackID(rawValue: 1), file: file, line: line)
        XCTAssertEqual(calls[3].trigger?.playback, PlaybackID(rawValue: 2), file: file, line: line)
        XCTAssertTrue(controller.isFinished, file: file, line: line)
    }

    static func assertLateEnd(_ recording: Recording, file: StaticString = #filePath, line: UInt = #line)
        async throws
    {
        // The recording: the first item plays; then, after libvlc had sent its end but before
        // it was delivered, the user pressed next: its end arrives after the new media was set.
        let userNext = try XCTUnwrap(recording.calls.dropFirst(2).first, file: file, line: line)
        XCTAssertEqual(userNext.name, "setMedia", file: file, line: line)
        XCTAssertTrue(
            recording.entries.contains {
                $0.seq > userNext.seq && $0.name == "PlaybackEnded" && $0.playback?.rawValue == 1
            },
            "the recording has no late end of playback 1", file: file, line: line)

        let session = try replay(recording)
        let items = items(3)
        let controller = QueueController(player: try XCTUnwrap(session.player()), items: items)
        controller.start()
        await session.runToEnd()
        XCTAssertEqual(session.calls.map(\.name), ["setMedia", "play"], file: file, line: line)
        controller.skip()
        await session.runToEnd()
        let calls = session.calls
        XCTAssertEqual(
            calls.map(\.name), ["setMedia", "play", "setMedia", "play", "setMedia", "play"], "\(calls)", file: file,
            line: line)
        XCTAssertEqual(calls.map(\.fields).filter { !$0.isEmpty }, items.map(mrl), file: file, line: line)
        // The third item was loaded when the second one's playback ended, not at the late end.
        XCTAssertEqual(calls[4].trigger?.name, "PlaybackEnded", file: file, line: line)
        XCTAssertEqual(calls[4].trigger?.playback, PlaybackID(rawValue: 2), "\(calls[4])", file: file, line: line)
        XCTAssertTrue(controller.isFinished, file: file, line: line)
    }
}
