// Event streams against the real libvlc: slow consumers, cancellation, teardown, threads.

import Foundation
@_spi(Benchmarks) @testable import MediaEvents
import TestSupport
import XCTest

final class EventStreamTests: XCTestCase {
    private static let library = Result { try VLCLibrary() }

    private func makeLibrary() throws -> VLCLibrary { try Self.library.get() }

    /// Makes libvlc's audio output take real time (the dummy output plays as fast as the
    /// input decodes, so a short WAV ends in milliseconds and sends no TimeChanged).
    private func paceAudio(of player: VLCMediaPlayer, sampleRate: Int32 = 22050) {
        NativeAudioOutput.install(
            on: player.native.current!,
            play: { _, _, count, _ in
                usleep(useconds_t(UInt64(count) * 1_000_000 / 22050))
            }, format: "S16N", rate: UInt32(sampleRate), channels: 1)
    }

    func testEvents_whenConsumerIsMuchSlowerThanPlayback_seesEveryStateEventInOrderAndTheLatestTime() async throws {
        let library = try makeLibrary()
        let url = try TestMedia.wav(seconds: 1.5)
        let player = VLCMediaPlayer(library: library)
        paceAudio(of: player)
        // Ground truth: every event as the hub publishes it, recorded without delay.
        let truth = Recorder<MediaPlayerEvent>()
        let token = player.observe { truth.record($0) }
        defer { token.cancel() }
        let stream = player.events()
        // Set only once both listen: MediaChanged must reach both or neither.
        player.media = VLCMedia(url: url, library: library)
        player.play()

        let seen = try await withTimeout(40) { () -> [MediaPlayerEvent] in
            var seen: [MediaPlayerEvent] = []
            for await event in stream {
                seen.append(event)
                if event.kind == .endReached { break }
                try await Task.sleep(for: .milliseconds(60))  // far slower than progress events
            }
            return seen
        }
        let truthUpToEnd = Array(truth.values.prefix { $0.kind != .endReached }) + [.endReached]
        let stateTruth = truthUpToEnd.filter { !$0.kind.isProgress }.map(\.description)
        let stateSeen = seen.filter { !$0.kind.isProgress }.map(\.description)
        XCTAssertEqual(stateSeen, stateTruth, "a slow consumer must see every state event, in libvlc's order")
        XCTAssertTrue(stateSeen.contains("MediaPlayerPlaying"))

        let times = truthUpToEnd.compactMap { if case .timeChanged(let ms) = $0 { ms } else { nil } }
        let seenTimes = seen.compactMap { if case .timeChanged(let ms) = $0 { ms } else { nil } }
        XCTAssertGreaterThan(times.count, 3, "paced playback must send TimeChanged events (got \(times))")
        XCTAssertEqual(seenTimes.last, times.last, "the latest time before the end must be delivered")
        XCTAssertEqual(seenTimes, seenTimes.sorted(), "progress values keep libvlc's order")
        let statistics = stream.statistics
        XCTAssertGreaterThan(statistics.coalesced, 0, "a consumer this slow must have had progress coalesced")
        XCTAssertEqual(statistics.delivered, seen.count)
        XCTAssertEqual(statistics.dropped, 0)
        print("slow consumer: \(seen.count) seen of \(truthUpToEnd.count) sent; \(statistics)")
    }

    func testEvents_whenConsumingTaskIsCancelled_endsAndFreesPlayerAndListener() async throws {
        let library = try makeLibrary()
        var player: VLCMediaPlayer? = VLCMediaPlayer(
            media: VLCMedia(url: try TestMedia.wav(seconds: 3), library: library), library: library)
        paceAudio(of: player!)
        weak let weakPlayer = player
        let hub = player!.eventHub
        let stream = player!.events()
        let received = Counter()
        let consumer = Task {
            for await _ in stream { received.increment() }
            return Task.isCancelled
        }
        player!.play()
        try await pollUntil(20, "the consumer got events") { received.count >= 2 }
        XCTAssertEqual(hub.sinkCount, 1)

        consumer.cancel()
        let endedByCancellation = try await withTimeout(10) { await consumer.value }
        XCTAssertTrue(endedByCancellation, "the stream must end because the task was cancelled")
        XCTAssertTrue(stream.isFinished)
        XCTAssertEqual(hub.sinkCount, 0, "the stream must leave the player's subscribers")

        player = nil
        try await pollUntil(20, "the player is freed") { weakPlayer == nil }
        XCTAssertEqual(hub.sinkCount, 0)
    }

    func testEvents_whenConsumerStopsIterating_leavesTheSubscribers() async throws {
        let library = try makeLibrary()
        let player = VLCMediaPlayer(library: library)
        let stream = player.events(.mediaChanged)
        player.media = VLCMedia(url: try TestMedia.wav(seconds: 0.2), library: library)
        let first = try await withTimeout(20) { () -> MediaPlayerEvent? in
            for await event in stream { return event }
            return nil
        }
        XCTAssertEqual(first?.kind, .mediaChanged)
        try await pollUntil(10, "the dropped iterator ends the stream") { stream.isFinished }
        XCTAssertEqual(player.eventHub.sinkCount, 0)
        // Iterating again after the end gives nothing.
        let again = try await withTimeout(10) { await stream.first { _ in true } }
        XCTAssertNil(again)
    }

    /// A burst pending when the consumer asks is handed over in one batch (one lock for the
    /// burst); its events still count as pending until returned, and a cancel discards the rest.
    func testEvents_whenConsumerTakesABurst_countsTheBatchAsPendingAndCancelDiscardsTheRest() async throws {
        let library = try makeLibrary()
        let media = VLCMedia(url: try TestMedia.wav(seconds: 0.2), library: library)
        let stream = media.events(.metaChanged)
        // Sent and delivered inline, inside each call: all pending before the first next().
        for n in 0..<100 { media.setMetaOnCallingThread(.title, "title \(n)") }
        XCTAssertEqual(stream.statistics.pending, 100)
        let (afterOne, afterTwo, end) = try await withTimeout(20) {
            () -> (EventStreamStatistics, EventStreamStatistics, MediaEvent?) in
            var iterator = stream.makeAsyncIterator()
            _ = await iterator.next()
            let afterOne = stream.statistics
            _ = await iterator.next()
            let afterTwo = stream.statistics
            stream.cancel()
            return (afterOne, afterTwo, await iterator.next())
        }
        XCTAssertEqual(afterOne.delivered, 1)
        XCTAssertEqual(afterOne.pending, 99, "events in the consumer's batch are pending until returned")
        XCTAssertEqual(afterTwo.delivered, 2)
        XCTAssertEqual(afterTwo.pending, 98)
        XCTAssertNil(end, "a cancelled stream returns nothing more from its batch")
        XCTAssertTrue(stream.isFinished)
        XCTAssertEqual(stream.statistics.delivered, 2)
        XCTAssertEqual(stream.statistics.discarded, 98)
        XCTAssertEqual(stream.statistics.pending, 0)
        XCTAssertEqual(media.eventHub.sinkCount, 0)
    }

    func testEvents_whenStreamIsDroppedWithoutIterating_leavesTheSubscribers() throws {
        let player = VLCMediaPlayer(library: try makeLibrary())
        do {
            let stream = player.events()
            XCTAssertEqual(player.eventHub.sinkCount, 1)
            _ = stream
        }
        XCTAssertEqual(player.eventHub.sinkCount, 0)
    }

    func testEvents_whenPlayerIsTornDown_deliversPendingEventsThenEndsOnce() async throws {
        let library = try makeLibrary()
        var player: VLCMediaPlayer? = VLCMediaPlayer(library: library)
        let stream = player!.events(.mediaChanged)
        player!.media = VLCMedia(url: try TestMedia.wav(seconds: 0.2), library: library)
        await player!.waitForPendingControls()
        player = nil
        let seen = try await withTimeout(20) { () -> [MediaPlayerEvent.Kind] in
            var seen: [MediaPlayerEvent.Kind] = []
            for await event in stream { seen.append(event.kind) }
            return seen
        }
        XCTAssertEqual(seen, [.mediaChanged], "an event pending at teardown is still delivered, then the end")
        XCTAssertTrue(stream.isFinished)
        XCTAssertEqual(stream.statistics.discarded, 0)
    }

    func testEvents_whenCreatedAfterTeardown_endsAtOnce() async throws {
        let player = VLCMediaPlayer(library: try makeLibrary())
        // What the player's deinit does first; a stream made later can no longer subscribe.
        player.eventHub.finish()?.detachAll()
        let stream = player.events()
        XCTAssertTrue(stream.isFinished, "a stream made after teardown is finished when it is returned")
        XCTAssertEqual(player.eventHub.sinkCount, 0)
        let next = try await withTimeout(10) { await stream.first { _ in true } }
        XCTAssertNil(next)
    }

    func testEvents_whenManyThreadsCreateConsumeAndCancelWhileEventsFlow_endsEveryStream() throws {
        let library = try makeLibrary()
        let player = VLCMediaPlayer(
            media: VLCMedia(url: try TestMedia.wav(seconds: 30), library: library), library: library)
        paceAudio(of: player)
        player.play()
        let publishers = 2
        let workers = 8
        let iterations = 100
        let finishedWorkers = Counter()
        let unfinished = Counter()
        let delivered = Counter()
        let ok = startThreads(count: publishers + workers, timeout: 120, name: "streams") { index in
            if index < publishers {
                // Extra events from real threads on top of libvlc's, so sinks receive while
                // others are being added, iterated and cancelled.
                var n: Int64 = 0
                while finishedWorkers.count < workers {
                    n += 1
                    player.eventHub.publish(index == 0 ? .timeChanged(milliseconds: n) : .paused)
                    if n.isMultiple(of: 64) { player.volume = Int(n % 100) }
                    if n.isMultiple(of: 16) { usleep(100) }
                }
                return
            }
            var random = SplitMix64(seed: UInt64(index))
            for iteration in 0..<iterations {
                let policy: EventBufferingPolicy =
                    switch random.next() % 4 {
                    case 0: .default
                    case 1: .unbounded
                    case 2: .keepNewest(2)
                    default: .keepOldest(1)
                    }
                let stream = player.events(buffering: policy)
                let done = DispatchSemaphore(value: 0)
                switch (index + iteration) % 4 {
                case 0:
                    let task = Task {
                        var count = 0
                        for await _ in stream { count += 1; delivered.increment() }
                        _ = count
                        done.signal()
                    }
                    usleep(useconds_t(random.next() % 2000))
                    task.cancel()
                case 1:
                    Task {
                        for await _ in stream { delivered.increment(); break }
                        done.signal()
                    }
                case 2:
                    done.signal()  // dropped without iterating
                default:
                    Task {
                        for await _ in stream { delivered.increment() }
                        done.signal()
                    }
                    usleep(useconds_t(random.next() % 2000))
                    stream.cancel()
                }
                if done.wait(timeout: .now() + 30) == .timedOut { unfinished.increment() }
            }
            finishedWorkers.increment()
        }
        XCTAssertTrue(ok)
        XCTAssertEqual(unfinished.count, 0, "every stream must end")
        XCTAssertGreaterThan(delivered.count, 0)
        XCTAssertTrue(
            waitUntil(20) { player.eventHub.sinkCount == 0 },
            "every stream must leave the player's subscribers (left: \(player.eventHub.sinkCount))")
        player.stop()
    }

    private func pollUntil(
        _ seconds: Double, _ what: String, file: StaticString = #filePath, line: UInt = #line,
        _ condition: @Sendable () -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            if ContinuousClock.now > deadline {
                XCTFail("\(what): not within \(seconds) s", file: file, line: line)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
