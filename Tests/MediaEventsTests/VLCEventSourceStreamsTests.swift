// Waiting for one event: nextEvent, waitFor, and the player's play(until:)/playToEnd.

import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// A source that is not libvlc, for what a real object cannot show (a stream of an object
/// that is already torn down).
final class FakeSource: VLCEventSource {
    let eventHub = EventHub<FakeEvent>()
}

final class VLCEventSourceStreamsTests: XCTestCase {
    private static let library = Result { try VLCLibrary() }

    func testWaitFor_whenTriggerStartsPlayback_returnsTheEventItCaused() async throws {
        let library = try Self.library.get()
        let player = VLCMediaPlayer(
            media: VLCMedia(url: try TestMedia.wav(seconds: 0.3), library: library),
            library: library)
        // A 0.3 s WAV on the dummy output ends within milliseconds: subscribing after play()
        // could miss it, waitFor subscribes first.
        let event = try await withTimeout(30) {
            try await player.waitFor(.endReached, .encounteredError, timeout: .seconds(25)) { player.play() }
        }
        XCTAssertEqual(event.kind, .endReached)
    }

    func testNextEvent_whenNothingHappens_throwsTimedOut() async throws {
        let player = VLCMediaPlayer(library: try Self.library.get())
        do {
            _ = try await withTimeout(30) { try await player.nextEvent(.endReached, timeout: .milliseconds(200)) }
            XCTFail("nothing was played: must time out")
        } catch let error as VLCError {
            guard case .timedOut(let what, let seconds) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(what, "MediaPlayerEndReached")
            XCTAssertEqual(seconds, 0.2, accuracy: 1e-9)
        }
        XCTAssertEqual(player.eventHub.sinkCount, 0, "the waiting stream must be gone after the timeout")
    }

    func testNextEvent_whenSourceIsTornDown_throwsSourceEnded() async throws {
        let source = FakeSource()
        let waiter = Task { try await source.nextEvent(.state, timeout: .seconds(25)) }
        let deadline = Date() + 20
        while source.eventHub.sinkCount == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        _ = source.eventHub.finish()
        do {
            _ = try await withTimeout(30) { try await waiter.value }
            XCTFail("the source ended: must throw")
        } catch let error as VLCError {
            XCTAssertEqual(error, .sourceEnded(waitingFor: "UnknownEvent(1792)"))
        }
    }

    func testNextEvent_whenCallerIsCancelled_throwsCancellationAndLeaves() async throws {
        let player = VLCMediaPlayer(library: try Self.library.get())
        let waiter = Task { try await player.nextEvent(.endReached, timeout: .seconds(25)) }
        let deadline = Date() + 20
        while player.eventHub.sinkCount == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        waiter.cancel()
        let result = try await withTimeout(30) { await waiter.result }
        XCTAssertThrowsError(try result.get()) { XCTAssertTrue($0 is CancellationError, "got \($0)") }
        XCTAssertEqual(player.eventHub.sinkCount, 0)
    }

    func testNextEvent_whenEventArrives_returnsOnlyAMatchingKind() async throws {
        let source = FakeSource()
        let waiter = Task { try await source.nextEvent(.state, timeout: .seconds(25)) }
        let deadline = Date() + 20
        while source.eventHub.sinkCount == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        source.eventHub.publish(.time(1))
        source.eventHub.publish(.state(2))
        source.eventHub.publish(.state(3))
        let event = try await withTimeout(30) { try await waiter.value }
        XCTAssertEqual(event, .state(2))
    }

    func testEvents_whenSourceAlreadyTornDown_endsAtOnce() async throws {
        let source = FakeSource()
        _ = source.eventHub.finish()
        let stream = source.events()
        XCTAssertTrue(stream.isFinished)
        let first = try await withTimeout(10) { await stream.first { _ in true } }
        XCTAssertNil(first)
    }

    func testPlayToEnd_whenPlayedTwice_returnsEndReachedOfEachPlayback() async throws {
        let library = try Self.library.get()
        let player = VLCMediaPlayer(
            media: VLCMedia(url: try TestMedia.wav(seconds: 0.3), library: library),
            library: library)
        let first = try await withTimeout(30) { try await player.playToEnd(timeout: .seconds(25)) }
        XCTAssertEqual(first.kind, .endReached)
        // Restarting after the end stops the old input first (Stopped); that belongs to the
        // previous playback and must not be taken for the end of the new one.
        let opened = Counter()
        let token = player.observe(.opening) { _ in opened.increment() }
        let second = try await withTimeout(30) { try await player.playToEnd(timeout: .seconds(25)) }
        XCTAssertEqual(second.kind, .endReached)
        XCTAssertEqual(opened.count, 1, "the second playToEnd must have waited for a new playback")
        token.cancel()
    }

    func testPlayToEnd_whenMediaIsMissing_returnsEncounteredError() async throws {
        let library = try Self.library.get()
        let player = VLCMediaPlayer(media: VLCMedia(url: try TestMedia.missing(), library: library), library: library)
        let end = try await withTimeout(30) { try await player.playToEnd(timeout: .seconds(25)) }
        XCTAssertEqual(end.kind, .encounteredError)
    }

    func testPlayUntil_whenPlayerHasNoMedia_throwsInvalidState() async throws {
        let player = VLCMediaPlayer(library: try Self.library.get())
        do {
            _ = try await withTimeout(30) { try await player.play(until: .playing, timeout: .seconds(5)) }
            XCTFail("no media: must throw")
        } catch let error as VLCError {
            guard case .invalidState = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(player.eventHub.sinkCount, 0)
    }
}
