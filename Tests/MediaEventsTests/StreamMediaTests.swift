import Foundation
@testable import MediaEvents
import XCTest

/// Media whose bytes come from Swift (`libvlc_media_new_callbacks`): played and parsed by the
/// real libvlc, read on its threads, dropped while it reads.
final class StreamMediaTests: XCTestCase {
    func testDataMedia_whenPlayed_reachesEndInEveryConfiguration() throws {
        let bytes = try Data(contentsOf: SharedMedia.shortWAV)
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let media = VLCMedia(data: bytes, library: TestLibrary.shared, configuration: configuration)
            let player = VLCMediaPlayer(media: media, library: TestLibrary.shared, configuration: configuration)
            let log = EventLog<MediaPlayerEvent>()
            let token = player.observe { log.record($0) }
            player.play()
            XCTAssertEqual(
                log.wait(forAnyOf: [.endReached, .encounteredError], timeout: 20), .endReached,
                "\(mode): \(log.names)")
            XCTAssertTrue(log.count(of: .playing) >= 1, "\(mode): \(log.names)")
            XCTAssertEqual(media.mrl, "imem://", "\(mode)")
            token.cancel()
        }
    }

    /// libvlc 3's preparser parses only files, directories and playlists ("imem://" is none of
    /// them): a stream media is skipped whatever the options. Playing it is what reads its
    /// tracks and duration.
    func testDataMedia_whenParsed_isSkippedByLibvlcAndPlayingLearnsItsTracks() async throws {
        let bytes = TestMedia.wavData(seconds: 1.5)
        for options: ParseOptions in [.local, .network] {
            let media = VLCMedia(data: bytes, library: TestLibrary.shared)
            let status = try await withTimeout(20) { try await media.parse(options: options, timeout: .seconds(10)) }
            XCTAssertEqual(status, .skipped, "\(options)")
        }
        let media = VLCMedia(data: bytes, library: TestLibrary.shared)
        let player = VLCMediaPlayer(media: media, library: TestLibrary.shared)
        let ended = try await withTimeout(20) { try await player.playToEnd(timeout: .seconds(15)) }
        XCTAssertEqual(ended.kind, .endReached)
        XCTAssertEqual(Double(media.duration ?? 0), 1500, accuracy: 50)
        XCTAssertEqual(media.tracks.map(\.type), [.audio])
    }

    func testStream_whenPlayedTwice_isOpenedAndClosedOncePerPlaybackOnLibvlcThreads() throws {
        let bytes = try Data(contentsOf: SharedMedia.shortWAV)
        let counts = StreamCounts()
        let media = VLCMedia(library: TestLibrary.shared) { CountingStream(bytes, counts) }
        let player = VLCMediaPlayer(media: media, library: TestLibrary.shared)
        let log = EventLog<MediaPlayerEvent>()
        let token = player.observe { log.record($0) }
        for run in 1...2 {
            player.play()
            XCTAssertTrue(log.wait(for: .endReached, times: run, timeout: 20), "run \(run): \(log.names)")
        }
        runWithDeadline(20, "stopAndWait") {
            let done = DispatchSemaphore(value: 0)
            Task {
                await player.stopAndWait()
                done.signal()
            }
            done.wait()
        }
        XCTAssertTrue(waitUntil(10) { counts.closes.count == counts.opens.count })
        XCTAssertEqual(counts.opens.count, 2, "one opening per playback")
        XCTAssertEqual(counts.closes.count, 2)
        XCTAssertGreaterThan(counts.bytesRead.count, 0)
        XCTAssertFalse(counts.readOnMainThread.value, "libvlc reads on its own threads")
        token.cancel()
    }

    func testStream_whenOpenThrows_playbackFailsAndCloseIsNotCalled() throws {
        struct Refused: Error {}
        let counts = StreamCounts()
        let media = VLCMedia(library: TestLibrary.shared) { () throws -> any VLCMediaStream in
            _ = counts.opens.increment()
            throw Refused()
        }
        let player = VLCMediaPlayer(media: media, library: TestLibrary.shared)
        let log = EventLog<MediaPlayerEvent>()
        let token = player.observe { log.record($0) }
        player.play()
        XCTAssertEqual(
            log.wait(forAnyOf: [.endReached, .encounteredError], timeout: 20), .encounteredError, "\(log.names)")
        XCTAssertEqual(counts.opens.count, 1)
        XCTAssertEqual(counts.closes.count, 0)
        token.cancel()
    }

    func testStream_whenReadThrowsMidway_playbackEndsAndTheStreamIsClosed() {
        let bytes = TestMedia.wavData(seconds: 2)
        let counts = StreamCounts()
        let media = VLCMedia(library: TestLibrary.shared) { CountingStream(bytes, counts, failAfter: bytes.count / 3) }
        let player = VLCMediaPlayer(media: media, library: TestLibrary.shared)
        let log = EventLog<MediaPlayerEvent>()
        let token = player.observe { log.record($0) }
        player.play()
        XCTAssertNotNil(log.wait(forAnyOf: [.endReached, .encounteredError], timeout: 20), "\(log.names)")
        XCTAssertTrue(counts.failedReads.count >= 1)
        player.stop()
        XCTAssertTrue(waitUntil(10) { counts.closes.count == 1 }, "closes: \(counts.closes.count)")
        token.cancel()
    }

    /// The wrapper goes first, the player keeps reading; then the player goes. The stream and
    /// the `open` closure outlive both until libvlc is done, and are released on the release
    /// queue. Many rounds on real threads, dropped at different moments.
    func testStream_whenDroppedWhileLibvlcReads_keepsPlayingAndReleasesOnTheReleaseQueue() throws {
        let bytes = try Data(contentsOf: SharedMedia.shortWAV)
        let rounds = 12
        let counts = StreamCounts()
        let ok = startThreads(count: 3, timeout: 120, name: "stream-drop") { thread in
            for round in 0..<rounds {
                let player = Box<VLCMediaPlayer>(VLCMediaPlayer(library: TestLibrary.shared))
                let log = EventLog<MediaPlayerEvent>()
                let subscription = player.current!.observe { log.record($0) }
                do {
                    // Only the closure owns the probe: its deinit says where the source went.
                    let media = VLCMedia(library: TestLibrary.shared) { [probe = DeinitProbe(counts)] in
                        _ = probe
                        return CountingStream(bytes, counts)
                    }
                    player.current!.media = media
                    player.current!.play()
                }
                // The wrapper is gone (the player holds the native media); drop the player at
                // different points of its playback.
                switch (round + thread) % 3 {
                case 0: _ = log.wait(for: .opening, timeout: 20)
                case 1: _ = log.wait(for: .playing, timeout: 20)
                default: _ = log.wait(for: .endReached, timeout: 20)
                }
                subscription.cancel()
                player.clear()
            }
        }
        XCTAssertTrue(ok, "threads did not finish")
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 30))
        XCTAssertTrue(
            waitUntil(20) { counts.sourcesReleased.count == 3 * rounds },
            "sources released: \(counts.sourcesReleased.count) of \(3 * rounds)")
        XCTAssertEqual(counts.closes.count, counts.opens.count, "every opening closed")
        XCTAssertEqual(
            counts.streamsReleasedOffReleaseQueue.count + counts.sourcesReleasedOffReleaseQueue.count, 0,
            "a stream or source was released on libvlc's thread")
    }
}

/// What the streams of a test did, from libvlc's threads.
final class StreamCounts: Sendable {
    let opens = Counter()
    let closes = Counter()
    let bytesRead = Counter()
    let failedReads = Counter()
    let readOnMainThread = Locked(false)
    let sourcesReleased = Counter()
    let sourcesReleasedOffReleaseQueue = Counter()
    let streamsReleasedOffReleaseQueue = Counter()
}

extension Locked where Value == Bool {
    var value: Bool { withLock { $0 } }
}

/// A stream over bytes that counts what libvlc does with it.
final class CountingStream: VLCMediaStream {
    private let memory: VLCMemoryStream
    private let counts: StreamCounts
    private let failAfter: Int?
    private var read = 0

    init(_ data: Data, _ counts: StreamCounts, failAfter: Int? = nil) {
        memory = VLCMemoryStream(data)
        self.counts = counts
        self.failAfter = failAfter
        _ = counts.opens.increment()
    }

    deinit {
        if !ServiceQueues.isOnReleaseQueue { _ = counts.streamsReleasedOffReleaseQueue.increment() }
    }

    var size: UInt64? { memory.size }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if Thread.isMainThread { counts.readOnMainThread.withLock { $0 = true } }
        if let failAfter, read >= failAfter {
            _ = counts.failedReads.increment()
            throw VLCError.invalidState("test read failure")
        }
        let count = memory.read(into: buffer)
        read += count
        _ = counts.bytesRead.increment(by: count)
        return count
    }

    func seek(to offset: UInt64) throws {
        try memory.seek(to: offset)
        read = Int(offset)
    }

    func close() { _ = counts.closes.increment() }
}

/// Records where it was released.
final class DeinitProbe: Sendable {
    private let counts: StreamCounts

    init(_ counts: StreamCounts) { self.counts = counts }

    deinit {
        if !ServiceQueues.isOnReleaseQueue { _ = counts.sourcesReleasedOffReleaseQueue.increment() }
        _ = counts.sourcesReleased.increment()  // last: the test waits for it, then reads both
    }
}
