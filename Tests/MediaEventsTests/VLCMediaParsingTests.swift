import Foundation
import Glibc
import MediaEvents
import TestSupport
import XCTest

final class VLCMediaParsingTests: XCTestCase {
    /// Runs an async body with a deadline and fails (instead of hanging) past it.
    private func parse(
        _ media: VLCMedia, options: ParseOptions = .local, timeout: Duration? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> ParsedStatus {
        try await withTimeout(30) { try await media.parse(options: options, timeout: timeout) }
    }

    func testParse_whenWAV() async throws {
        let library = try VLCLibrary()
        let media = VLCMedia(url: try TestMedia.wav(seconds: 0.5, sampleRate: 22050, channels: 2), library: library)
        let events = Recorder<MediaEvent>()
        let token = media.observe { events.record($0) }
        let status = try await parse(media)
        XCTAssertEqual(status, .done)
        XCTAssertEqual(media.parsedStatus, .done)
        XCTAssertEqual(media.duration, 500)
        let tracks = media.tracks
        XCTAssertEqual(tracks.count, 1)
        XCTAssertEqual(tracks.first?.type, .audio)
        XCTAssertEqual(tracks.first?.audioChannels, 2)
        XCTAssertEqual(tracks.first?.audioRate, 22050)
        XCTAssertFalse(tracks.first?.codecDescription.isEmpty ?? true)
        XCTAssertNotNil(media.meta(.title))
        XCTAssertTrue(events.wait(timeout: 10) { if case .parsedChanged(.done) = $0 { true } else { false } })
        XCTAssertTrue(
            events.values.contains { if case .durationChanged(500) = $0 { true } else { false } },
            "\(events.values)")
        XCTAssertTrue(events.values.contains { $0.kind == .metaChanged }, "\(events.values)")
        XCTAssertEqual(events.values.filter { $0.kind == .parsedChanged }.map(\.name), ["MediaParsedChanged"])
        // Parsed before: returns the same result at once, without a second event.
        let again = try await parse(media)
        XCTAssertEqual(again, .done)
        token.cancel()
    }

    /// A parse given a timeout keeps a deadline for an end libvlc never reports; once the
    /// parse has ended in time, that deadline must not hold the wrapper: dropped, it goes (and
    /// its media's share of the libvlc instance with it) long before the deadline fires.
    func testParse_withALongTimeout_whenItEndsInTime_doesNotKeepTheWrapperAlive() async throws {
        let library = try VLCLibrary()
        var media: VLCMedia? = VLCMedia(url: try TestMedia.wav(seconds: 0.2), library: library)
        weak let weakMedia = media
        let status = try await parse(try XCTUnwrap(media), timeout: .seconds(60))
        XCTAssertEqual(status, .done)
        media = nil
        // The deadline fires 62 s after the start; the wrapper's lease goes within milliseconds.
        XCTAssertTrue(waitUntil(20) { weakMedia == nil }, "something still holds the parsed media")
        withExtendedLifetime(library) {}
    }

    /// The frame rate as the fraction the file declares: NTSC's 30000/1001 stays a fraction
    /// (its Double is only 29.97002…), a whole rate reduces to n/1.
    func testParse_whenVideo_givesTheFrameRateAsAFraction() async throws {
        let library = try VLCLibrary()
        for (rate, numerator, denominator) in [("30000/1001", 30000, 1001), ("25", 25, 1)] {
            let media = VLCMedia(url: try TestMedia.h264(rate: rate, name: "rate.mp4"), library: library)
            let status = try await parse(media)
            XCTAssertEqual(status, .done, rate)
            let video = try XCTUnwrap(media.tracks.first { $0.type == .video }, rate)
            let fraction = try XCTUnwrap(video.frameRateFraction, rate)
            XCTAssertEqual(fraction.reduced, FrameRate(numerator: numerator, denominator: denominator), rate)
            XCTAssertEqual(video.frameRate, Double(fraction.numerator) / Double(fraction.denominator), rate)
        }
    }

    /// A generated .m3u expands into its entries: SubItemAdded for each, in order, then
    /// SubItemTreeAdded; `subItems` and the sub-item list show them.
    func testParse_whenM3UPlaylist() async throws {
        let library = try VLCLibrary()
        let entries = try (0..<3).map { try TestMedia.wav(seconds: 0.2, name: "entry\($0).wav") }
        let media = VLCMedia(url: try TestMedia.m3u(entries: entries), library: library)
        let added = Recorder<String>()
        let trees = Counter()
        let listEvents = Recorder<MediaListEvent.Kind>()
        let subList = media.subItemList
        XCTAssertTrue(subList.isReadOnly)
        let listToken = subList.observe { event in
            listEvents.record(event.kind)
            if event.kind == .endReached { return }
            // Read inside the list's own event (libvlc holds the list's lock here).
            XCTAssertEqual(subList.count, (event.itemIndex ?? 0) + (event.kind == .itemAdded ? 1 : 0))
        }
        let token = media.observe { event in
            switch event {
            case .subItemAdded(let item): added.record(URL(string: item.mrl)!.lastPathComponent)
            case .subItemTreeAdded: trees.increment()
            default: break
            }
        }
        let status = try await parse(media)
        XCTAssertEqual(status, .done)
        XCTAssertEqual(added.values, entries.map(\.lastPathComponent))
        XCTAssertTrue(trees.wait(forAtLeast: 1, timeout: 10))
        XCTAssertEqual(media.subItems.map { URL(string: $0.mrl)!.lastPathComponent }, entries.map(\.lastPathComponent))
        XCTAssertTrue(listEvents.wait(forCount: 7, timeout: 10))
        XCTAssertEqual(
            listEvents.values,
            Array(repeating: [.willAddItem, .itemAdded], count: 3).flatMap { $0 } + [.endReached])
        // The sub-items parse like any media.
        let firstStatus = try await parse(media.subItems[0])
        XCTAssertEqual(firstStatus, .done)
        token.cancel()
        listToken.cancel()
    }

    /// Broken inputs end cleanly with a status, never hang.
    func testParse_whenMissingEmptyOrCorrupt() async throws {
        let library = try VLCLibrary()
        let wav = try TestMedia.wav(seconds: 0.5)
        let inputs: [(String, URL)] = [
            ("missing", try TestMedia.missing()),
            ("empty", try TestMedia.empty()),
            ("random bytes", try TestMedia.randomBytes(count: 4096, name: "random.wav")),
            ("truncated header", try TestMedia.truncated(from: wav, keepingBytes: 20)),
        ]
        for (label, url) in inputs {
            let media = VLCMedia(url: url, library: library)
            let status = try await parse(media, timeout: .seconds(5))
            print("parse \(label): \(status), tracks \(media.tracks)")
            XCTAssertNotEqual(status, .none, label)
            if label == "missing" || label == "empty" {
                XCTAssertTrue([.failed, .timeout].contains(status), "\(label): \(status)")
            } else {
                // libvlc 3.0.24 opens these and reports done, with nothing decodable in them.
                XCTAssertTrue([.failed, .timeout].contains(status) || media.tracks.isEmpty, "\(label): \(status)")
            }
        }
    }

    /// A network media whose server never answers times out; a refused connection fails.
    func testParse_whenNetworkTimesOutOrFails() async throws {
        let library = try VLCLibrary()
        let silent = try StalledServer()
        defer { withExtendedLifetime(silent) {} }
        let stalled = VLCMedia(url: URL(string: "http://127.0.0.1:\(silent.port)/a.wav")!, library: library)
        let stalledStatus = try await parse(stalled, options: .network, timeout: .milliseconds(500))
        XCTAssertEqual(stalledStatus, .timeout)
        let refused = VLCMedia(
            url: URL(string: "http://127.0.0.1:\(try LocalHTTPServer.closedPort())/a.wav")!,
            library: library)
        let refusedStatus = try await parse(refused, options: .network, timeout: .seconds(10))
        XCTAssertEqual(refusedStatus, .failed)
        let local = VLCMedia(url: URL(string: "http://127.0.0.1:\(silent.port)/b.wav")!, library: library)
        let localStatus = try await parse(local, options: .local)
        XCTAssertEqual(localStatus, .skipped)
    }

    /// Cancelling the awaiting task ends the wait with CancellationError.
    func testParse_whenCancelled() async throws {
        let library = try VLCLibrary()
        let silent = try StalledServer()
        defer { withExtendedLifetime(silent) {} }
        let media = VLCMedia(url: URL(string: "http://127.0.0.1:\(silent.port)/c.wav")!, library: library)
        let task = Task { try await media.parse(options: .network, timeout: .seconds(20)) }
        XCTAssertTrue(silent.waitForConnection(timeout: 10), "the parse never connected")
        task.cancel()
        do {
            let status = try await withTimeout(10) { try await task.value }
            XCTFail("expected cancellation, got \(status)")
        } catch is CancellationError {
        }
        // The wait returned at once; the parse is pending work until libvlc has ended it.
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 15))
        XCTAssertNotEqual(media.parsedStatus, .none, "pending work ended before the parse")
    }

    /// A parse started without waiting is pending work until libvlc ends it: a program that
    /// waits for pending work before exiting does not exit while the preparser runs.
    func testStartParsing_isPendingWorkUntilLibvlcEndsIt() throws {
        let library = try VLCLibrary()
        let silent = try StalledServer()
        defer { withExtendedLifetime(silent) {} }
        let media = VLCMedia(url: URL(string: "http://127.0.0.1:\(silent.port)/d.wav")!, library: library)
        try media.startParsing(options: .network, timeout: .milliseconds(800))
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 15))
        XCTAssertEqual(media.parsedStatus, .timeout, "pending work ended before the parse")
    }

    /// Dropping a media stops its parse, which then stops being pending work long before
    /// the parse's own timeout.
    func testStartParsing_whenTheMediaIsDropped_stopsTheParse() throws {
        let library = try VLCLibrary()
        let silent = try StalledServer()
        defer { withExtendedLifetime(silent) {} }
        var media: VLCMedia? = VLCMedia(
            url: URL(string: "http://127.0.0.1:\(silent.port)/e.wav")!, library: library)
        try media?.startParsing(options: .network, timeout: .seconds(60))
        XCTAssertTrue(silent.waitForConnection(timeout: 10), "the parse never connected")
        media = nil
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 15), "the dropped media's parse went on")
    }

    /// A handler that waits for pending work does not wait for a parse: it may run on the
    /// preparser's own thread (an inline media's MetaChanged), whose parse cannot end
    /// before the handler returns.
    func testWaitForPendingTeardowns_fromAParseHandler_doesNotWaitForTheParse() async throws {
        let library = try VLCLibrary()
        let media = VLCMedia(
            url: try TestMedia.wav(seconds: 0.5, sampleRate: 22050, channels: 2), library: library,
            configuration: EventsDefaultConfiguration())
        let waits = Recorder<Bool>()
        let token = media.observe(.metaChanged) { _ in
            if waits.values.isEmpty { waits.record(VLCLibrary.waitForPendingTeardowns(timeout: 5)) }
        }
        defer { token.cancel() }
        let status = try await parse(media)
        XCTAssertEqual(status, .done)
        XCTAssertTrue(waits.wait(forCount: 1, timeout: 10), "no MetaChanged")
        XCTAssertEqual(waits.values, [true])
    }

    /// A task cancelled before it calls `parse` gets `CancellationError` whatever the source,
    /// including those libvlc would answer at once (a remote media with `.local` is skipped,
    /// a parsed one has a result).
    func testParse_whenTaskAlreadyCancelled_throwsCancellationErrorForEverySource() async throws {
        let library = try VLCLibrary()
        let parsed = VLCMedia(url: SharedMedia.shortWAV, library: library)
        _ = try await parse(parsed)
        let sources: [(String, VLCMedia)] = [
            ("remote, default options", VLCMedia(url: URL(string: "http://127.0.0.1:9/x.wav")!, library: library)),
            ("local file", VLCMedia(url: SharedMedia.shortWAV, library: library)),
            ("already parsed", parsed),
        ]
        for (what, media) in sources {
            let task = Task { () async throws -> ParsedStatus in
                withUnsafeCurrentTask { $0?.cancel() }
                return try await media.parse()
            }
            do {
                let status = try await withTimeout(10) { try await task.value }
                XCTFail("\(what): expected CancellationError, got \(status)")
            } catch is CancellationError {
            }
        }
    }

    /// Media dropped while their parse events are in flight (handlers still queued): no
    /// crash, every subscription completes once.
    func testTeardown_whenParseEventsInFlight() throws {
        let library = try VLCLibrary()
        let url = try TestMedia.m3u(entries: try (0..<3).map { try TestMedia.wav(seconds: 0.1, name: "e\($0).wav") })
        let queue = DispatchQueue(label: "slow media handlers")
        let completions = Counter()
        let iterations = 20
        var tokens: [EventSubscription] = []
        var media: [VLCMedia] = []
        let delivered = Counter()
        for _ in 0..<iterations {
            let item = VLCMedia(
                url: url, library: library,
                configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
            tokens.append(
                item.observe(onCompletion: { completions.increment() }) { _ in
                    delivered.increment()
                    usleep(2000)
                })
            try item.startParsing()
            media.append(item)
        }
        // Dropped once deliveries have begun, while later ones are still queued.
        XCTAssertTrue(delivered.wait(forAtLeast: 1, timeout: 20))
        media.removeAll()
        XCTAssertTrue(completions.wait(forAtLeast: iterations, timeout: 30), "\(completions.count)")
        XCTAssertEqual(completions.count, iterations)
        _ = tokens
    }
}
