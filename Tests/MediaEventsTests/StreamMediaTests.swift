import Foundation
@testable import MediaEvents
import TestSupport
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
    // MARK: A read that waits for data

    /// A stream stalls like a network source (its `read` waits for data that never comes)
    /// while the player plays it. libvlc's stop waits for that read: `stop()` used to block the
    /// player's queue, every later call of the player and its teardown, until the read gave
    /// up. libvlc now tells the stream (its `cancel()`) when it stops reading, the read
    /// returns, and the stop finishes; `close()` comes after `cancel()`. In each configuration.
    /// Workaround: `StreamCancellation` (rule 20 of SendSites.md) — this test fails without it.
    func testStop_whenTheStreamsReadWaitsForData_cancelsTheReadAndStops() async throws {
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make(label: "stream.stall.stop")
            let stall = StallRecord()
            let player = VLCMediaPlayer(
                media: StallingStream.media(stall, configuration: configuration), library: TestLibrary.shared,
                configuration: configuration)
            let log = EventLog<MediaPlayerEvent>()
            let token = player.observe { log.record($0) }
            player.play()
            XCTAssertTrue(
                stall.blocked.wait(forAtLeast: 1, timeout: 20), "\(mode): the read never waited; \(log.names)")
            try await withTimeout(15) { await player.stopAndWait() }
            XCTAssertTrue(log.wait(for: .stopped, timeout: 10), "\(mode): \(log.names)")
            XCTAssertTrue(stall.closes.wait(forAtLeast: 1, timeout: 10), "\(mode): never closed")
            XCTAssertEqual(stall.order.values, ["cancel", "close"], "\(mode)")
            XCTAssertEqual(player.media?.streamFailure, nil, "\(mode): a cancelled read is no failure")
            token.cancel()
        }
    }

    /// The same read, when the player gets another media (libvlc's `set_media` stops the
    /// input first) and when the player is released: each goes on once the read is cancelled.
    func testSetMediaAndRelease_whenTheStreamsReadWaitsForData_cancelTheReadAndGoOn() async throws {
        let stall = StallRecord()
        let player = Box<VLCMediaPlayer>(
            VLCMediaPlayer(media: StallingStream.media(stall), library: TestLibrary.shared))
        player.current!.play()
        XCTAssertTrue(stall.blocked.wait(forAtLeast: 1, timeout: 20), "the read never waited")
        player.current!.media = makeMedia(SharedMedia.shortWAV)
        try await withTimeout(15) { [player] in await player.current!.waitForPendingControls() }
        XCTAssertTrue(stall.closes.wait(forAtLeast: 1, timeout: 10), "not closed after set media")
        XCTAssertEqual(stall.order.values, ["cancel", "close"])

        let released = StallRecord()
        player.current!.media = StallingStream.media(released)
        player.current!.play()
        XCTAssertTrue(released.blocked.wait(forAtLeast: 1, timeout: 20), "the second read never waited")
        player.clear()
        let tornDown = runWithDeadline(20, "teardowns after the release") {
            XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 15), "the release waited for the read")
        }
        XCTAssertTrue(tornDown)
        XCTAssertEqual(released.order.values, ["cancel", "close"])
    }

    /// A list player moves on (`next()`, which sets the next item on its player) while the
    /// current item's read waits: the move goes on and the next item plays.
    func testListPlayerNext_whenTheStreamsReadWaitsForData_cancelsTheReadAndMovesOn() async throws {
        let stall = StallRecord()
        let list = VLCMediaList(
            media: [StallingStream.media(stall), makeMedia(SharedMedia.shortWAV)], library: TestLibrary.shared)
        let listPlayer = VLCMediaListPlayer(library: TestLibrary.shared)
        listPlayer.mediaList = list
        let moves = Recorder<String>()
        let token = listPlayer.observe(.nextItemSet) { event in
            if case .nextItemSet(let media) = event { moves.record(media.mrl) }
        }
        listPlayer.play()
        XCTAssertTrue(stall.blocked.wait(forAtLeast: 1, timeout: 20), "the read never waited")
        listPlayer.next()
        try await withTimeout(15) { await listPlayer.waitForPendingControls() }
        XCTAssertTrue(
            moves.wait(timeout: 10) { $0 == SharedMedia.shortWAV.absoluteString }, "did not move on: \(moves.values)")
        XCTAssertTrue(stall.closes.wait(forAtLeast: 1, timeout: 10), "never closed")
        XCTAssertEqual(stall.order.values, ["cancel", "close"])
        try await withTimeout(15) { await listPlayer.stopAndWait() }
        token.cancel()
    }

    // MARK: Which thread calls what

    /// What holds for one opening's calls (VLCMediaStream's documentation): the `open`
    /// closure, `size` and `close()` on the input's thread (where the player sent `Opening`,
    /// here read by an inline handler); every `read` and `seek` on one other thread; never two
    /// calls at once; `close()` last.
    func testStreamCalls_whenPlayedAndSeeked_comeFromTheInputThreadAndOneReadingThreadOneAtATime() throws {
        let calls = CallRecord()
        let bytes = TestMedia.wavData(seconds: 3)
        // Once the input plays and eight reads of 4 KiB have taken the read-ahead buffer past
        // the seek's target, reads are held, then let through one at a time until the seek
        // reaches the stream: the input cannot reach the end first.
        let gate = ReadGate(after: 8)
        let media = VLCMedia(library: TestLibrary.shared, configuration: EventsDefaultConfiguration()) {
            calls.enter("open")
            defer { calls.leave() }
            return ThreadProbeStream(bytes, calls, gate: gate)
        }
        // A read-ahead buffer smaller than the media, so that the seek reaches the stream.
        media.native.addOption(":prefetch-buffer-size=16")
        media.native.addOption(":prefetch-read-size=4096")
        let player = VLCMediaPlayer(
            media: media, library: TestLibrary.shared, configuration: EventsDefaultConfiguration())
        let inputThreads = Recorder<UInt>()
        let log = EventLog<MediaPlayerEvent>()
        let token = player.observe { event in
            if event.kind == .opening { inputThreads.record(currentThreadID()) }
            if event.kind == .playing { gate.arm() }
            log.record(event)
        }
        player.play()
        XCTAssertTrue(log.wait(for: .playing, timeout: 20), "\(log.names)")
        // Back to the start once the reads have gone past the read-ahead buffer and the
        // demuxer has read past the target. Probing a WAV, libvlc peeks about 96 KB at once
        // (es.c, for DTS or A52 in WAV) and the demuxer reads from that block: a seek ahead of
        // where it reads is served from the block and never reaches the stream (one run in
        // seven on a loaded machine, where `Playing` arrived before the first frame was read).
        // Buffering completes once the demuxer has passed 300 ms of audio, past the target.
        XCTAssertTrue(waitUntil(20) { calls.names.filter { $0 == "read" }.count > 8 }, "\(calls.names)")
        let buffered = waitUntil(20) {
            log.events.contains { event in
                if case .buffering(let percent) = event { return percent >= 100 }
                return false
            }
        }
        XCTAssertTrue(buffered, "\(log.names)")
        player.position = 0.02
        let queued = DispatchSemaphore(value: 0)
        Task {
            await player.waitForPendingControls()
            queued.signal()
        }
        XCTAssertEqual(queued.wait(timeout: .now() + 20), .success, "the seek was not queued")
        // Queued is not taken: the input takes the seek between two reads of its own, and the
        // stream's seek comes from the reading thread once the read it is in returns. Opened at
        // once, a loaded machine read the rest of the media before the input took the seek
        // (49 reads, no seek). One read at a time, the input takes it within a few.
        XCTAssertTrue(
            waitUntil(20) {
                if calls.names.contains("seek") { return true }
                gate.releaseOneIfHolding()
                return false
            }, "no seek: \(calls.names)")
        gate.open()
        XCTAssertNotNil(log.wait(forAnyOf: [.endReached, .encounteredError], timeout: 20), "\(log.names)")
        player.stop()
        XCTAssertTrue(calls.wait(forCall: "close", timeout: 20), "never closed: \(calls.names)")
        token.cancel()
        let input = inputThreads.values.first
        let entries = calls.entries.values
        XCTAssertEqual(
            entries.filter { $0.name == "open" || $0.name == "size" || $0.name == "close" }.map(\.name),
            ["open", "size", "close"])
        for entry in entries where ["open", "size", "close"].contains(entry.name) {
            XCTAssertEqual(entry.thread, input, "\(entry.name) off the input's thread")
        }
        let reading = Set(entries.filter { $0.name == "read" || $0.name == "seek" }.map(\.thread))
        XCTAssertEqual(reading.count, 1, "reads and seeks on \(reading.count) threads")
        XCTAssertFalse(reading.contains(input ?? 0), "read on the input's thread")
        XCTAssertGreaterThan(entries.filter { $0.name == "read" }.count, 1)
        XCTAssertGreaterThan(entries.filter { $0.name == "seek" }.count, 0, "no seek: \(calls.names)")
        XCTAssertEqual(calls.mostAtOnce, 1, "two calls at once")
        XCTAssertEqual(entries.last?.name, "close")
    }

    // MARK: A read that throws

    /// libvlc 3's imem makes a read error the end of the stream: the player sends
    /// `EndReached` as if the media had played to its end. The error is the playback's
    /// failure: the recorder reports the end as `encounteredError` with the error as its
    /// cause, and the media (each wrapper of it) has it as `streamFailure`. A stream that ends
    /// well has neither.
    func testRead_whenItThrows_endsAsAFailureWithTheErrorAsItsCause() throws {
        struct Broke: Error, CustomStringConvertible {
            let round: Int
            var description: String { "broke in round \(round)" }
        }
        let bytes = TestMedia.wavData(seconds: 2)
        for round in 0..<2 {
            let fails = round == 0
            let counts = StreamCounts()
            let media = VLCMedia(library: TestLibrary.shared) {
                CountingStream(bytes, counts, failAfter: fails ? bytes.count / 3 : nil, error: Broke(round: round))
            }
            let player = VLCMediaPlayer(media: media, library: TestLibrary.shared)
            let recorder = FailureCauseRecorder(player: player)
            let ends = Recorder<PlaybackEnd>()
            let payloads = Recorder<VLCStreamFailure?>()
            let token = recorder.observe { ends.record($0) }
            let playerToken = player.observe(.endReached) { _ in payloads.record(player.media?.streamFailure) }
            player.play()
            XCTAssertTrue(ends.wait(forCount: 1, timeout: 20), "round \(round): no end")
            let end = ends.values.first
            if fails {
                XCTAssertEqual(end?.kind, .encounteredError, "round \(round): \(String(describing: end))")
                XCTAssertEqual(end?.cause?.streamFailure?.operation, .read)
                XCTAssertEqual((end?.cause?.streamFailure?.error as? Broke)?.round, round)
                XCTAssertEqual((media.streamFailure?.error as? Broke)?.round, round)
                XCTAssertTrue(payloads.wait(forCount: 1, timeout: 10))
                XCTAssertEqual(payloads.values.first??.operation, .read, "set before EndReached")
                XCTAssertTrue(end?.cause?.description.contains("broke in round 0") == true)
            } else {
                XCTAssertEqual(end?.kind, .endReached)
                XCTAssertNil(end?.cause?.streamFailure)
                XCTAssertNil(media.streamFailure)
            }
            player.stop()
            token.cancel()
            playerToken.cancel()
        }
    }

    /// The same read error ends the playback as `failed`, reason `streamError`, with the error's
    /// words as the cause (libvlc itself reports `EndReached`); a stream that reads to its end
    /// ends as `eof`.
    func testPlaybackOutcome_whenReadThrows_isAStreamErrorWithTheErrorAsItsCause() async throws {
        struct Broke: Error, CustomStringConvertible {
            var description: String { "the disk went away" }
        }
        let bytes = TestMedia.wavData(seconds: 2)
        for fails in [true, false] {
            let counts = StreamCounts()
            let media = VLCMedia(library: TestLibrary.shared) {
                CountingStream(bytes, counts, failAfter: fails ? bytes.count / 3 : nil, error: Broke())
            }
            let player = VLCMediaPlayer(media: media, library: TestLibrary.shared)
            let summary = try await withTimeout(30) { try await player.playToOutcome(timeout: .seconds(20)) }
            if fails {
                XCTAssertEqual(summary.outcome.failure?.reason, .streamError, "\(summary.outcome)")
                XCTAssertTrue(
                    summary.outcome.failure?.cause?.contains("the disk went away") == true, "\(summary.outcome)")
            } else {
                XCTAssertEqual(summary.outcome, .ended)
            }
        }
    }

    /// A throwing `open` fails the playback (`EncounteredError`); the recorder's cause and the
    /// media say what it threw.
    func testOpen_whenItThrows_theFailureCarriesTheError() throws {
        struct Refused: Error {}
        let media = VLCMedia(library: TestLibrary.shared) { () throws -> any VLCMediaStream in throw Refused() }
        let player = VLCMediaPlayer(media: media, library: TestLibrary.shared)
        let recorder = FailureCauseRecorder(player: player)
        let ends = Recorder<PlaybackEnd>()
        let token = recorder.observe { ends.record($0) }
        player.play()
        XCTAssertTrue(ends.wait(forCount: 1, timeout: 20), "no end")
        XCTAssertEqual(ends.values.first?.kind, .encounteredError)
        XCTAssertEqual(ends.values.first?.cause?.streamFailure?.operation, .open)
        XCTAssertTrue(ends.values.first?.cause?.streamFailure?.error is Refused)
        XCTAssertTrue(media.streamFailure?.error is Refused)
        player.stop()
        token.cancel()
    }
}

/// What a `StallingStream` went through.
final class StallRecord: Sendable {
    let blocked = Counter()
    let closes = Counter()
    /// "cancel" and "close", in the order they came.
    let order = Recorder<String>()
}

/// Serves the first part of a WAV, then waits in `read` for more, like a stalled network
/// source, until `cancel()` (or, so that no test can hang for ever, 60 s).
final class StallingStream: VLCMediaStream, @unchecked Sendable {
    // @unchecked: `offset` is used by libvlc's reading thread only (one call at a time);
    // `cancelled` is locked and `wake` is a semaphore.
    private let bytes: Data
    private let stallAt: Int
    private let record: StallRecord
    private var offset = 0
    private let cancelled = Locked(false)
    private let wake = DispatchSemaphore(value: 0)

    static let bytes = TestMedia.wavData(seconds: 2)

    static func media(_ record: StallRecord, configuration: (any EventsConfiguring)? = nil) -> VLCMedia {
        VLCMedia(library: TestLibrary.shared, configuration: configuration) {
            StallingStream(bytes, stallAt: bytes.count / 4, record)
        }
    }

    init(_ bytes: Data, stallAt: Int, _ record: StallRecord) {
        self.bytes = bytes
        self.stallAt = stallAt
        self.record = record
    }

    var size: UInt64? { nil }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset >= stallAt {
            record.blocked.increment()
            let deadline = DispatchTime.now() + 60
            while !cancelled.withLock({ $0 }), DispatchTime.now() < deadline {
                _ = wake.wait(timeout: deadline)
            }
            throw CancellationError()
        }
        let count = min(buffer.count, stallAt - offset)
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + count]))
        }
        offset += count
        return count
    }

    func seek(to offset: UInt64) throws {
        self.offset = Int(offset)
    }

    func cancel() {
        record.order.record("cancel")
        cancelled.withLock { $0 = true }
        wake.signal()
    }

    func close() {
        record.order.record("close")
        record.closes.increment()
    }
}

/// Each call of the streams of one media, with its thread, and how many ran at once.
final class CallRecord: Sendable {
    struct Entry: Sendable {
        let name: String
        let thread: UInt
    }

    let entries = Recorder<Entry>()
    private let running = Locked((now: 0, most: 0))

    func enter(_ name: String) {
        entries.record(Entry(name: name, thread: currentThreadID()))
        running.withLock { value in
            value.now += 1
            value.most = max(value.most, value.now)
        }
    }

    func leave() { running.withLock { $0.now -= 1 } }

    var mostAtOnce: Int { running.withLock { $0.most } }
    var names: [String] { entries.values.map(\.name) }

    func wait(forCall name: String, timeout: Double) -> Bool {
        entries.wait(timeout: timeout) { $0.name == name }
    }
}

/// Once armed, holds every read after the first `after` (at most 20 s each) until `open()`;
/// `releaseOneIfHolding()` lets the held read through.
final class ReadGate: Sendable {
    private let after: Int
    private let reads = Counter()
    private let state = Locked((armed: false, open: false, holding: false))
    private let permits = DispatchSemaphore(value: 0)

    init(after: Int) { self.after = after }

    func arm() { state.withLock { $0.armed = true } }

    func pass() {
        guard reads.increment() > after,
            state.withLock({ state -> Bool in
                if !state.armed || state.open { return false }
                state.holding = true
                return true
            })
        else { return }
        _ = permits.wait(timeout: .now() + 20)
        state.withLock { $0.holding = false }
    }

    /// Lets the read held now through; nothing when none is.
    func releaseOneIfHolding() {
        let release = state.withLock { state -> Bool in
            guard state.holding else { return false }
            state.holding = false
            return true
        }
        if release { permits.signal() }
    }

    func open() {
        let release = state.withLock { state -> Bool in
            state.open = true
            defer { state.holding = false }
            return state.holding
        }
        if release { permits.signal() }
    }
}

/// A stream over bytes that records every call (see `CallRecord`).
final class ThreadProbeStream: VLCMediaStream {
    private let memory: VLCMemoryStream
    private let calls: CallRecord
    private let count: Int
    private let gate: ReadGate?

    init(_ data: Data, _ calls: CallRecord, gate: ReadGate? = nil) {
        memory = VLCMemoryStream(data)
        count = data.count
        self.calls = calls
        self.gate = gate
    }

    var size: UInt64? {
        calls.enter("size")
        defer { calls.leave() }
        return UInt64(count)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        calls.enter("read")
        defer { calls.leave() }
        gate?.pass()
        return memory.read(into: buffer)
    }

    func seek(to offset: UInt64) throws {
        calls.enter("seek")
        defer { calls.leave() }
        try memory.seek(to: offset)
    }

    func close() {
        calls.enter("close")
        calls.leave()
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
    private let error: any Error
    private var read = 0

    init(
        _ data: Data, _ counts: StreamCounts, failAfter: Int? = nil,
        error: any Error = VLCError.invalidState("test read failure")
    ) {
        memory = VLCMemoryStream(data)
        self.counts = counts
        self.failAfter = failAfter
        self.error = error
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
            throw error
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
