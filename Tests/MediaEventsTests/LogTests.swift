// libvlc's log as a source (VLCLogSource), on the real libvlc: messages and their fields,
// streams and buffering, re-entrancy in the three dispatch configurations, exactly one
// libvlc_log_set / libvlc_log_unset per instance, and no formatting when nobody listens.

import CLibVLCLog
import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

final class LogTests: XCTestCase {
    /// A library of its own, so that the counts of its C logger belong to this test.
    private func makeLibrary(_ mode: DispatchMode = .inline) throws -> (VLCLibrary, MarkedQueue?) {
        let (configuration, queue) = mode.make(label: "test.logs")
        return (try VLCLibrary(logsConfiguration: configuration), queue)
    }

    /// Plays `url` to its end or error on `library` and waits for it.
    private func play(_ url: URL, on library: VLCLibrary, timeout: Double = 20) {
        let player = VLCMediaPlayer(media: VLCMedia(url: url, library: library), library: library)
        let ended = DispatchSemaphore(value: 0)
        let subscription = player.observe(.endReached, .encounteredError) { _ in ended.signal() }
        player.play()
        XCTAssertEqual(ended.wait(timeout: .now() + timeout), .success, "\(url) did not end")
        subscription.cancel()
    }

    // MARK: Messages

    func testObserve_whenAFileIsMissing_deliversTheErrorWithItsContext() throws {
        let (library, _) = try makeLibrary()
        let missing = try TestMedia.missing()
        let messages = Recorder<LogMessage>()
        let subscription = library.logs.observe(minimumLevel: .error) { messages.record($0) }
        play(missing, on: library)
        XCTAssertTrue(messages.wait(timeout: 10) { $0.text.contains("cannot open file") })
        let error = try XCTUnwrap(messages.values.first { $0.text.contains("cannot open file") })
        XCTAssertEqual(error.level, .error)
        XCTAssertEqual(error.text, "cannot open file \(missing.path) (No such file or directory)")
        XCTAssertEqual(error.module, "filesystem")
        XCTAssertEqual(error.objectType, "stream")
        XCTAssertNotEqual(error.objectID, 0)
        XCTAssertEqual(error.file, "access/file.c")
        XCTAssertNotNil(error.line)
        XCTAssertNotEqual(error.threadID, 0)
        XCTAssertTrue(
            messages.values.allSatisfy { $0.level == .error }, "minimumLevel .error delivered \(messages.values)")
        subscription.cancel()
    }

    func testObserve_withMinimumLevelDebug_deliversEveryLevelLibvlcSends() throws {
        let (library, _) = try makeLibrary()
        let messages = Recorder<LogMessage>()
        let subscription = library.logs.observe(minimumLevel: .debug) { messages.record($0) }
        play(try TestMedia.empty(), on: library)
        let levels = Set(messages.values.map(\.level))
        XCTAssertTrue(levels.isSuperset(of: [.debug, .warning, .error]), "levels seen: \(levels)")
        XCTAssertTrue(messages.values.contains { $0.module == "main" && $0.objectType == "input" })
        subscription.cancel()
    }

    func testEvents_whenTheConsumerIsBehind_keepsEveryErrorAndCoalescesDebug() async throws {
        let (library, _) = try makeLibrary()
        let errors = Recorder<LogMessage>()
        let reference = library.logs.observe(minimumLevel: .error) { errors.record($0) }
        let stream = library.logs.events(minimumLevel: .debug)
        play(try TestMedia.empty(), on: library)
        XCTAssertTrue(errors.wait(timeout: 10) { $0.text.contains("unable to open the MRL") })
        reference.cancel()
        let statistics = stream.statistics
        XCTAssertGreaterThan(statistics.coalesced, 0, "debug messages should have been coalesced: \(statistics)")
        var streamed: [LogMessage] = []
        for await message in stream {
            streamed.append(message)
            if stream.statistics.pending == 0 { break }
        }
        let streamedErrors = streamed.filter { $0.level == .error }.map(\.text)
        XCTAssertEqual(
            Array(streamedErrors.prefix(errors.count)), errors.values.map(\.text),
            "errors are lossless and in order")
    }

    func testNextMessage_whenNothingIsLogged_timesOut() async throws {
        let (library, _) = try makeLibrary()
        do {
            _ = try await library.logs.nextMessage(minimumLevel: .error, timeout: .milliseconds(50))
            XCTFail("no error was logged")
        } catch let error as VLCError {
            guard case .timedOut = error else { return XCTFail("\(error)") }
        }
    }

    // MARK: Formatting only when someone listens

    func testCallback_whenNobodyListens_formatsNothing() throws {
        let (library, _) = try makeLibrary()
        let logger = library.logs.native.logger.raw
        // Installs the callback, then nobody listens.
        library.logs.observe(minimumLevel: .debug) { _ in }.cancel()
        XCTAssertEqual(library.logs.formattedLevels, [])
        let formattedBefore = mel_logger_formatted_count(logger)
        let receivedBefore = mel_logger_received_count(logger)
        play(try TestMedia.missing(), on: library)
        XCTAssertGreaterThan(mel_logger_received_count(logger), receivedBefore, "libvlc logged nothing?")
        XCTAssertEqual(mel_logger_formatted_count(logger), formattedBefore)

        // Listening at .error formats errors only.
        let errors = Counter()
        let subscription = library.logs.observe(minimumLevel: .error) { _ in errors.increment() }
        XCTAssertEqual(library.logs.formattedLevels, [.error])
        let received = mel_logger_received_count(logger)
        play(try TestMedia.missing(), on: library)
        XCTAssertTrue(errors.wait(forAtLeast: 3, timeout: 10))
        let formatted = mel_logger_formatted_count(logger) - formattedBefore
        XCTAssertEqual(Int(formatted), errors.count, "only the error messages are formatted")
        XCTAssertGreaterThan(mel_logger_received_count(logger) - received, formatted)
        subscription.cancel()
        XCTAssertEqual(library.logs.formattedLevels, [])
    }

    func testCallback_whenAStreamEnds_stopsFormattingAtTheNextMessage() async throws {
        let (library, _) = try makeLibrary()
        let logger = library.logs.native.logger.raw
        let stream = library.logs.events(minimumLevel: .debug, buffering: .unbounded)
        XCTAssertEqual(library.logs.formattedLevels, Set(LogLevel.allCases))
        play(try TestMedia.missing(), on: library)
        stream.cancel()
        play(try TestMedia.missing(), on: library)
        XCTAssertEqual(library.logs.formattedLevels, [])
        let formatted = mel_logger_formatted_count(logger)
        play(try TestMedia.missing(), on: library)
        XCTAssertEqual(mel_logger_formatted_count(logger), formatted)
    }

    func testCallback_withATextLongerThanTheStackBuffer_formatsItWhole() throws {
        let (library, _) = try makeLibrary()
        let messages = Recorder<LogMessage>()
        let subscription = library.logs.observe(minimumLevel: .debug) { messages.record($0) }
        let logger = library.logs.native.logger.raw
        let long = String(repeating: "x", count: 3 * mel_logger_stack_buffer_size()) + "end"
        let heapBefore = mel_logger_heap_formatted_count(logger)
        long.withCString { mel_logger_log_text_for_testing(logger, 4, $0) }
        XCTAssertTrue(messages.wait(timeout: 5) { $0.text == long })
        // At least ours: libvlc may log a long message (its build configuration) meanwhile.
        XCTAssertGreaterThanOrEqual(mel_logger_heap_formatted_count(logger) - heapBefore, 1)
        let message = try XCTUnwrap(messages.values.first { $0.text == long })
        XCTAssertEqual(message.level, .error)
        XCTAssertNil(message.module)
        XCTAssertEqual(message.objectType, "generic")
        subscription.cancel()
    }

    // MARK: Exactly one set and one unset per instance

    func testSetAndUnset_whenEightThreadsSubscribeAtOnce_happenOnceEach() throws {
        var library: VLCLibrary? = try makeLibrary().0
        var logs: VLCLogSource? = library?.logs
        let id = try XCTUnwrap(logs).native.id
        subscribeAndCancel(on: try XCTUnwrap(logs))
        XCTAssertEqual(logs.map { mel_logger_set_count($0.native.logger.raw) }, 1)
        XCTAssertEqual(logs.map { mel_logger_unset_count($0.native.logger.raw) }, 0, "cancelling never unsets")
        library = nil
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 10))
        XCTAssertNil(NativeLogger.finishedCounts.withLock { $0[id] }, "the log outlives the library while referenced")
        logs = nil
        XCTAssertTrue(waitUntil(10) { NativeLogger.finishedCounts.withLock { $0[id] } != nil })
        XCTAssertEqual(NativeLogger.finishedCounts.withLock { $0[id]?.sets }, 1)
        XCTAssertEqual(NativeLogger.finishedCounts.withLock { $0[id]?.unsets }, 1)
    }

    private func subscribeAndCancel(on logs: VLCLogSource) {
        startThreads(count: 8, name: "log subscribe") { index in
            for round in 0..<20 {
                if (index + round).isMultiple(of: 2) {
                    logs.observe(minimumLevel: .debug) { _ in }.cancel()
                } else {
                    logs.events(minimumLevel: .warning).cancel()
                }
            }
        }
    }

    func testSetAndUnset_whenNobodySubscribes_neverHappen() throws {
        var library: VLCLibrary? = try VLCLibrary()
        let id = try XCTUnwrap(library?.logs.native.id)
        library = nil
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 10))
        XCTAssertEqual(NativeLogger.finishedCounts.withLock { $0[id]?.sets }, 0)
        XCTAssertEqual(NativeLogger.finishedCounts.withLock { $0[id]?.unsets }, 0)
    }

    // MARK: Re-entrancy

    func testHandler_whenItCallsEveryLibraryMemberAndCancelsItself_neitherDeadlocksNorUnsets() throws {
        for mode in DispatchMode.allCases {
            try reenter(in: mode)
        }
    }

    private func reenter(in mode: DispatchMode) throws {
        let (library, _) = try makeLibrary(mode)
        let box = Box<VLCLibrary>(library)
        let own = Box<EventSubscription>(nil)
        let calls = Counter()
        let completions = Counter()
        let finished = DispatchSemaphore(value: 0)
        let subscription = library.logs.observe(minimumLevel: .debug, onCompletion: { completions.increment() }) { _ in
            guard let library = box.current else { return }
            let round = calls.increment()
            _ = library.arguments
            _ = library.logs.configuration
            _ = library.logs.formattedLevels
            _ = VLCLibrary.version
            _ = VLCLibrary.headlessArguments
            let shared = VLCLibrary.sharedEventsConfiguration
            VLCLibrary.sharedEventsConfiguration = shared
            _ = VLCLibrary.waitForPendingTeardowns(timeout: 0.001)
            library.logs.observe(minimumLevel: .error) { _ in }.cancel()
            _ = library.logs.events(minimumLevel: .debug)
            library.logs.events(minimumLevel: .warning).cancel()
            if round == 1 {
                // A media made and dropped inside a log callback: its teardown is queued.
                _ = VLCMedia(path: "/nonexistent-\(round)", library: library)
            }
            if round == 5 {
                own.current?.cancel()
                finished.signal()
            }
        }
        own.set(subscription)
        runWithDeadline(30, "log handler re-entering the library (\(mode))") {
            let player = VLCMediaPlayer(
                media: VLCMedia(path: "/nonexistent-\(mode)", library: library), library: library)
            player.play()
            XCTAssertEqual(finished.wait(timeout: .now() + 20), .success, "\(mode): handler ran \(calls.count) times")
        }
        XCTAssertFalse(subscription.isActive)
        let after = calls.count
        usleep(200_000)
        XCTAssertLessThanOrEqual(calls.count, after + 2, "\(mode): deliveries after cancel")
        XCTAssertEqual(mel_logger_unset_count(library.logs.native.logger.raw), 0, "\(mode): cancel unset the callback")
        XCTAssertEqual(completions.count, 0)
        box.clear()
        own.clear()
        _ = library
    }

    /// A player that outlives the library's last wrapper is released on its control queue
    /// after the library's log source is gone, and libvlc logs while it releases (its audio
    /// output module is unloaded): the object the C callback delivers to must live until the
    /// unset. AddressSanitizer (a CI step) reports the use after free when it does not.
    func testLog_whenAPlayerIsReleasedAfterTheLibrarysLastWrapper_deliversSafelyUntilTheUnset() throws {
        for round in 0..<5 {
            var library: VLCLibrary? = try VLCLibrary()
            let logged = Locked(0)
            let subscription = try XCTUnwrap(library).logs.observe(minimumLevel: .debug) { _ in
                logged.withLock { $0 += 1 }
            }
            var player: VLCMediaPlayer? = VLCMediaPlayer(
                media: VLCMedia(url: SharedMedia.twoSecondWAV, library: try XCTUnwrap(library)),
                library: try XCTUnwrap(library))
            let playing = DispatchSemaphore(value: 0)
            let started = try XCTUnwrap(player).observe(.playing) { _ in playing.signal() }
            try XCTUnwrap(player).play()
            XCTAssertEqual(playing.wait(timeout: .now() + 20), .success, "round \(round): never played")
            // The player holds the last wrapper: its deinit frees the library wrapper and its
            // log source, then queues the native player's release, which logs. The logger's
            // unset waits on the teardown queue until that release has run.
            let control = try XCTUnwrap(player).control
            weak let released = player
            let gate = DispatchSemaphore(value: 0)
            ServiceQueues.teardown.async { gate.wait() }
            library = nil
            player = nil
            XCTAssertTrue(waitUntil(20) { released == nil }, "round \(round): the player was not freed")
            XCTAssertTrue(control.waitForPendingCalls(), "round \(round)")
            gate.signal()
            XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 20), "round \(round)")
            XCTAssertGreaterThan(logged.withLock { $0 }, 0, "round \(round): nothing logged")
            started.cancel()
            subscription.cancel()
        }
    }

    func testHandler_whenItDropsTheLastLibraryReference_unsetsOnAQueueWithoutDeadlock() throws {
        for mode in DispatchMode.allCases {
            let armed = Locked(false)
            let (id, completed, media, token) = try armLastReferenceDrop(in: mode, armed: armed)
            // From now on the test holds no reference: the first message from a libvlc thread
            // (the preparser) drops the last one from inside the log callback.
            armed.withLock { $0 = true }
            try media.current?.startParsing()
            // Released later on a queue: the test keeps no reference to anything of the library.
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { media.clear() }
            runWithDeadline(30, "last library reference dropped in a log handler (\(mode))") {
                XCTAssertEqual(completed.wait(timeout: .now() + 20), .success, "\(mode): the log was not torn down")
                XCTAssertTrue(waitUntil(20) { NativeLogger.finishedCounts.withLock { $0[id] } != nil })
            }
            token.clear()
            XCTAssertEqual(NativeLogger.finishedCounts.withLock { $0[id]?.sets }, 1, "\(mode)")
            XCTAssertEqual(NativeLogger.finishedCounts.withLock { $0[id]?.unsets }, 1, "\(mode)")
        }
    }

    /// A library held only by a box that its own log handler clears, and a media (which does
    /// not hold the library wrapper) being parsed so that libvlc logs from its threads.
    private func armLastReferenceDrop(in mode: DispatchMode, armed: Locked<Bool>) throws
        -> (id: Int, completed: DispatchSemaphore, media: Box<VLCMedia>, token: Box<EventSubscription>)
    {
        let (configuration, _) = mode.make(label: "test.logs.drop")
        let box = Box<VLCLibrary>(try VLCLibrary(logsConfiguration: configuration))
        let library = try XCTUnwrap(box.current)
        let testThread = currentThreadID()
        let completed = DispatchSemaphore(value: 0)
        let media = Box<VLCMedia>(VLCMedia(path: "/nonexistent-drop-\(mode)", library: library))
        let token = Box<EventSubscription>(
            library.logs.observe(
                minimumLevel: .debug,
                onCompletion: {
                    completed.signal()
                }
            ) { _ in
                guard armed.withLock({ $0 }), currentThreadID() != testThread else { return }
                box.clear()
            })
        return (library.logs.native.id, completed, media, token)
    }
}
