import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

final class VLCVLMTests: XCTestCase {
    /// A stream-output chain that Debian's vlc-plugin-base carries out: PCM transcoding, the
    /// WAV muxer and the file access output.
    private static func wavOutput(_ destination: URL) -> String {
        "#transcode{acodec=s16l}:std{access=file,mux=wav,dst=\(destination.path)}"
    }

    private static let instanceKinds: Set<VLMEvent.Kind> = [
        .instanceStarted, .instanceStopped, .instanceStatusInit, .instanceStatusOpening,
        .instanceStatusPlaying, .instanceStatusPause, .instanceStatusEnd, .instanceStatusError,
    ]

    /// Adding a broadcast sends MediaAdded (then MediaChanged) with its name; a second media
    /// of the same name is refused with libvlc's message.
    func testAddBroadcast_whenNameIsNew() async throws {
        let library = try VLCLibrary()
        let vlm = try VLCVLM(library: library)
        let events = Recorder<VLMEvent>()
        let token = vlm.observe { events.record($0) }
        let input = try TestMedia.wav(seconds: 0.3).absoluteString
        try await withTimeout(30) {
            try await vlm.addBroadcastAndWait(name: "first", input: input, output: "#dummy")
        }
        XCTAssertEqual(
            events.values,
            [
                VLMEvent(kind: .mediaAdded, mediaName: "first"),
                VLMEvent(kind: .mediaChanged, mediaName: "first"),
            ])
        XCTAssertEqual(events.values.map(\.name), ["VlmMediaAdded", "VlmMediaChanged"])
        do {
            try await withTimeout(30) {
                try await vlm.addBroadcastAndWait(name: "first", input: input, output: "#dummy")
            }
            XCTFail("a second media named first was added")
        } catch VLCError.operationFailed(let what, let reason) {
            XCTAssertEqual(what, "add broadcast first")
            XCTAssertFalse(reason.isEmpty)
        }
        let description = try await withTimeout(30) { await vlm.describe(name: "first") }
        XCTAssertTrue(description?.contains("first") ?? false, "\(description ?? "nil")")
        token.cancel()
    }

    /// Playing a broadcast of a generated WAV through transcode + std (file, wav muxer): the
    /// instance starts, its input opens, plays and ends, libvlc stops it by itself, and the
    /// output file holds the audio. Each event names the broadcast.
    func testPlay_whenBroadcastOfWAVToFile() async throws {
        let library = try VLCLibrary()
        let vlm = try VLCVLM(library: library)
        let events = Recorder<VLMEvent>()
        let token = vlm.observe { events.record($0) }
        let input = try TestMedia.wav(seconds: 0.5, name: "in.wav")
        let output = input.deletingLastPathComponent().appendingPathComponent("out.wav")
        try await withTimeout(30) {
            try await vlm.addBroadcastAndWait(
                name: "cast", input: input.absoluteString,
                output: Self.wavOutput(output))
            try await vlm.playAndWait(name: "cast")
        }
        XCTAssertTrue(events.wait(timeout: 30) { $0.kind == .instanceStopped }, "\(events.values)")
        let instance = events.values.filter { Self.instanceKinds.contains($0.kind) }
        // Started comes from play's thread, the status events from the input thread: libvlc
        // does not order Started against Opening.
        XCTAssertEqual(
            Set(instance.prefix(2).map(\.kind)), [.instanceStarted, .instanceStatusOpening],
            "\(instance)")
        XCTAssertEqual(
            instance.dropFirst(2).map(\.kind),
            [.instanceStatusPlaying, .instanceStatusEnd, .instanceStopped], "\(instance)")
        XCTAssertTrue(events.values.allSatisfy { $0.mediaName == "cast" }, "\(events.values)")
        XCTAssertTrue(events.values.allSatisfy { $0.instanceName == nil }, "\(events.values)")
        let written = try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int ?? 0
        XCTAssertGreaterThan(written, 44 + 20_000, "a 0.5 s 22 kHz mono s16 WAV")
        // The instance is gone: stopping it again fails.
        do {
            try await withTimeout(30) { try await vlm.stopAndWait(name: "cast") }
            XCTFail("stopped an instance that had ended")
        } catch VLCError.operationFailed {}
        token.cancel()
    }

    /// A UDP output paces the broadcast in real time (file and `#dummy` outputs run as fast as
    /// they can): `pause` toggles Pause and Playing, `stop` ends the instance (End, then
    /// Stopped), deleting sends MediaRemoved.
    func testPauseAndStop_whenPacedBroadcast() async throws {
        let library = try VLCLibrary()
        let vlm = try VLCVLM(library: library)
        let events = Recorder<VLMEvent.Kind>()
        let token = vlm.observe { events.record($0.kind) }
        let input = try TestMedia.wav(seconds: 10).absoluteString
        try await withTimeout(30) {
            try await vlm.addBroadcastAndWait(
                name: "paced", input: input,
                output: "#std{access=udp,mux=ts,dst=127.0.0.1:9}")
            try await vlm.playAndWait(name: "paced")
        }
        XCTAssertTrue(events.wait(timeout: 30) { $0 == .instanceStatusPlaying }, "\(events.values)")
        events.removeAll()
        try await withTimeout(30) { try await vlm.pauseAndWait(name: "paced") }
        XCTAssertTrue(events.wait(timeout: 30) { $0 == .instanceStatusPause }, "\(events.values)")
        try await withTimeout(30) { try await vlm.pauseAndWait(name: "paced") }
        XCTAssertTrue(events.wait(timeout: 30) { $0 == .instanceStatusPlaying }, "\(events.values)")
        try await withTimeout(30) {
            try await vlm.stopAndWait(name: "paced")
            try await vlm.deleteMediaAndWait(name: "paced")
        }
        XCTAssertEqual(
            events.values,
            [
                .instanceStatusPause, .instanceStatusPlaying, .instanceStatusEnd,
                .instanceStopped, .mediaRemoved,
            ])
        token.cancel()
    }

    /// Deleting a media sends MediaRemoved with its name; deleting or playing a name that
    /// does not exist fails with libvlc's message and sends nothing.
    func testDeleteMedia_whenAddedAndWhenUnknown() async throws {
        let library = try VLCLibrary()
        let vlm = try VLCVLM(library: library)
        let events = Recorder<VLMEvent>()
        let token = vlm.observe { events.record($0) }
        let input = try TestMedia.wav(seconds: 0.3).absoluteString
        try await withTimeout(30) {
            try await vlm.addBroadcastAndWait(name: "gone", input: input, output: "#dummy")
            try await vlm.deleteMediaAndWait(name: "gone")
        }
        XCTAssertEqual(events.values.last, VLMEvent(kind: .mediaRemoved, mediaName: "gone"))
        events.removeAll()
        for call in [
            { try await vlm.deleteMediaAndWait(name: "gone") },
            { try await vlm.playAndWait(name: "never") },
            { try await vlm.setEnabledAndWait(name: "never", false) },
        ] as [@Sendable () async throws -> Void] {
            do {
                try await withTimeout(30) { try await call() }
                XCTFail("a call on an unknown name succeeded")
            } catch VLCError.operationFailed(_, let reason) {
                XCTAssertFalse(reason.isEmpty)
            }
        }
        let missing = try await withTimeout(30) { await vlm.describe(name: "gone") }
        XCTAssertNil(missing)
        XCTAssertEqual(events.values, [])
        token.cancel()
    }

    /// Handlers that make VLM calls from their own events (raw libvlc deadlocks: every VLM
    /// event is sent with the VLM's lock held): play from MediaAdded, set the output from
    /// Playing, delete from Stopped — all carried out, inline and on a synchronous queue.
    func testControls_whenCalledFromOwnHandler() throws {
        let library = try VLCLibrary()
        let input = try TestMedia.wav(seconds: 0.3).absoluteString
        for configuration in [
            EventsDefaultConfiguration() as any EventsConfiguring,
            EventsQueueConfiguration(queue: DispatchQueue(label: "h"), isAsync: false),
        ] {
            let vlm = try VLCVLM(library: library, configuration: configuration)
            let events = Recorder<VLMEvent.Kind>()
            let token = vlm.observe { [weak vlm] event in
                events.record(event.kind)
                guard let vlm else { return }
                switch event.kind {
                case .mediaAdded: vlm.play(name: "self")
                case .instanceStatusPlaying: vlm.setOutput(name: "self", "#dummy")
                case .instanceStopped: vlm.deleteMedia(name: "self")
                default: break
                }
                Task { _ = await vlm.describe(name: "self") }
            }
            vlm.addBroadcast(name: "self", input: input, output: "#dummy")
            XCTAssertTrue(events.wait(timeout: 30) { $0 == .mediaRemoved }, "\(configuration): \(events.values)")
            XCTAssertTrue(
                runWithDeadline(30, "waiting for the VLM control queue") {
                    let done = DispatchSemaphore(value: 0)
                    Task {
                        await vlm.waitForPendingControls(); done.signal()
                    }
                    done.wait()
                })
            XCTAssertEqual(events.values.first, .mediaAdded)
            XCTAssertEqual(events.values.last, .mediaRemoved)
            XCTAssertTrue(events.values.contains(.instanceStatusEnd), "\(events.values)")
            // setOutput from Playing changed the media.
            XCTAssertEqual(events.values.filter { $0 == .mediaChanged }.count, 2, "\(events.values)")
            token.cancel()
        }
    }

    /// A `VLCVLM` of a library that has none yet, made inside a VLM handler of another library
    /// (inline, and on a synchronous queue) while the new one's VLM queue is busy: opening the
    /// VLM used to wait for that queue from the handler (here it would have waited for the
    /// busy block, which waits for the handler). It returns at once; the VLM is opened on its
    /// queue before the new object's calls, which then work and send their events.
    func testInit_whenMadeInAVLMHandlerWhileTheVLMQueueIsBusy_returnsWithoutWaitingAndWorks() async throws {
        let first = try VLCLibrary()
        let input = try TestMedia.wav(seconds: 0.3).absoluteString
        for (round, configuration) in [
            EventsDefaultConfiguration() as any EventsConfiguring,
            EventsQueueConfiguration(queue: DispatchQueue(label: "vlm.handler"), isAsync: false),
        ].enumerated() {
            let second = try VLCLibrary()
            let handlerReturned = DispatchSemaphore(value: 0)
            let blockSawHandlerReturn = Recorder<Bool>()
            // The busy queue waits until the handler has returned (at most 20 s).
            second.sharedVLM.control.queue.async {
                blockSawHandlerReturn.record(handlerReturned.wait(timeout: .now() + 20) == .success)
            }
            let vlm = try VLCVLM(library: first, configuration: configuration)
            let made = Locked<VLCVLM?>(nil)
            let failures = Recorder<String>()
            let token = vlm.observe(.mediaAdded) { _ in
                guard made.withLock({ $0 }) == nil else { return }
                do {
                    let other = try VLCVLM(library: second, configuration: configuration)
                    made.withLock { $0 = other }
                } catch {
                    failures.record("\(error)")
                }
                handlerReturned.signal()
            }
            // Names of their own: the first library's VLM may outlive the round before.
            vlm.addBroadcast(name: "trigger-\(round)", input: input, output: "#dummy")
            XCTAssertTrue(
                blockSawHandlerReturn.wait(forCount: 1, timeout: 30), "\(configuration): the busy block never ended")
            XCTAssertEqual(blockSawHandlerReturn.values, [true], "\(configuration): the init waited for the VLM queue")
            XCTAssertEqual(failures.values, [], "\(configuration)")
            let other = try XCTUnwrap(made.withLock { $0 }, "\(configuration)")
            let events = Recorder<VLMEvent.Kind>()
            let otherToken = other.observe { events.record($0.kind) }
            try await withTimeout(30) {
                try await other.addBroadcastAndWait(name: "late", input: input, output: "#dummy")
            }
            XCTAssertTrue(events.wait(timeout: 10) { $0 == .mediaAdded }, "\(configuration): \(events.values)")
            otherToken.cancel()
            token.cancel()
        }
    }

    /// Two VLCVLMs of one library share its VLM: both see its events; dropping one leaves the
    /// media in place for the other.
    func testSharedVLM_whenTwoWrappersOfOneLibrary() async throws {
        let library = try VLCLibrary()
        var first: VLCVLM? = try VLCVLM(library: library)
        let second = try VLCVLM(library: library)
        let firstEvents = Recorder<VLMEvent.Kind>()
        let secondEvents = Recorder<VLMEvent.Kind>()
        let firstEnded = Counter()
        let firstToken = first!.observe(onCompletion: { firstEnded.increment() }) { firstEvents.record($0.kind) }
        let secondToken = second.observe { secondEvents.record($0.kind) }
        let input = try TestMedia.wav(seconds: 0.3).absoluteString
        try await withTimeout(30) { [first] in
            try await first!.addBroadcastAndWait(name: "shared", input: input, output: "#dummy")
        }
        XCTAssertEqual(firstEvents.values, [.mediaAdded, .mediaChanged])
        XCTAssertEqual(secondEvents.values, [.mediaAdded, .mediaChanged])
        first = nil
        XCTAssertTrue(firstEnded.wait(forAtLeast: 1, timeout: 30))
        try await withTimeout(30) {
            await second.waitForPendingControls()
            try await second.deleteMediaAndWait(name: "shared")
        }
        XCTAssertEqual(secondEvents.values.last, .mediaRemoved)
        XCTAssertEqual(firstEvents.values, [.mediaAdded, .mediaChanged])
        firstToken.cancel()
        secondToken.cancel()
    }

    /// VLCVLMs dropped while their looping broadcasts send events: every subscription
    /// completes once; once the drops are carried out the VLM is released (its media are
    /// gone), and the next VLCVLM of the library gets a new VLM whose events arrive.
    func testTeardown_whenEventsInFlight() async throws {
        let library = try VLCLibrary()
        let input = try TestMedia.wav(seconds: 0.2).absoluteString
        let completions = Counter()
        let rounds = 8
        var tokens: [EventSubscription] = []
        for round in 0..<rounds {
            let vlm = try VLCVLM(library: library)
            let seen = Counter()
            tokens.append(vlm.observe(onCompletion: { completions.increment() }) { _ in seen.increment() })
            vlm.addBroadcast(name: "b\(round)", input: input, output: "#dummy", loop: true)
            vlm.play(name: "b\(round)")
            if round % 2 == 1 { XCTAssertTrue(seen.wait(forAtLeast: 6, timeout: 30)) }
        }
        XCTAssertTrue(completions.wait(forAtLeast: rounds, timeout: 30), "\(completions.count)")
        XCTAssertEqual(completions.count, rounds)
        // The VLM is released on the control queue after the last wrapper; a wrapper opened
        // before that shares it (the last round's looping broadcast still exists). Probe until
        // a fresh VLM answers. Not b0: a round's wrapper may have been the last one for a
        // moment, so the last VLM may have been made after b0's.
        let last = "b\(rounds - 1)"
        let released = try await withTimeout(30) { () -> Bool in
            while true {
                let probe = try VLCVLM(library: library)
                if await probe.describe(name: last) == nil { return true }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
        }
        XCTAssertTrue(released)
        // The new VLM's event manager is live (the old release did not free it under us).
        let vlm = try VLCVLM(library: library)
        let events = Recorder<VLMEvent>()
        let token = vlm.observe { events.record($0) }
        try await withTimeout(30) {
            try await vlm.addBroadcastAndWait(name: "b0", input: input, output: "#dummy")
            try await vlm.playAndWait(name: "b0")
        }
        XCTAssertEqual(events.values.first, VLMEvent(kind: .mediaAdded, mediaName: "b0"))
        XCTAssertTrue(events.wait(timeout: 30) { $0.kind == .instanceStopped }, "\(events.values)")
        token.cancel()
        _ = tokens
    }

    /// Many threads open and drop VLCVLMs of one library at once while one plays a looping
    /// broadcast: the shared VLM is never released under a live wrapper (its broadcast keeps
    /// sending events) and every subscription completes once.
    func testOpenAndDrop_whenManyThreads() throws {
        let library = try VLCLibrary()
        let input = try TestMedia.wav(seconds: 0.2).absoluteString
        let keeper = try VLCVLM(library: library)
        let kept = Counter()
        let keeperToken = keeper.observe(.instanceStarted) { _ in kept.increment() }
        keeper.addBroadcast(name: "keep", input: input, output: "#dummy", loop: true)
        keeper.play(name: "keep")
        XCTAssertTrue(kept.wait(forAtLeast: 1, timeout: 30))
        let completions = Counter()
        let failures = Counter()
        let perThread = 5
        let tokens = Locked<[EventSubscription]>([])
        XCTAssertTrue(
            startThreads(count: 8, timeout: 60) { _ in
                for _ in 0..<perThread {
                    guard let vlm = try? VLCVLM(library: library) else {
                        failures.increment()
                        continue
                    }
                    let token = vlm.observe(onCompletion: { completions.increment() }) { _ in }
                    tokens.withLock { $0.append(token) }
                }
            })
        XCTAssertEqual(failures.count, 0)
        XCTAssertTrue(completions.wait(forAtLeast: 8 * perThread, timeout: 30), "\(completions.count)")
        XCTAssertEqual(completions.count, 8 * perThread)
        let before = kept.count
        XCTAssertTrue(kept.wait(forAtLeast: before + 2, timeout: 30), "the kept broadcast stopped looping")
        keeperToken.cancel()
    }
}
