// FailureCauseRecorder on the real libvlc: each broken input gets its own cause (the error
// messages logged on its input thread), none confused with another when eight players fail at
// once, and `nil` where nothing can be associated.

import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

final class FailureCauseTests: XCTestCase {
    /// The inputs, each made with a marker unique to one player in its path or URL.
    enum Input: String, CaseIterable, Sendable {
        case missing, empty, directory, closedPort, unsupportedScheme, corrupt, valid

        func make(marker: String) throws -> URL {
            switch self {
            case .missing: return try TestMedia.missing(name: "\(marker).wav")
            case .empty: return try TestMedia.empty(name: "\(marker).wav")
            case .directory: return try TestMedia.directory(name: marker)
            case .closedPort:
                return URL(string: "http://127.0.0.1:\(try LocalHTTPServer.closedPort())/\(marker).wav")!
            case .unsupportedScheme: return URL(string: "foo://\(marker)/x.wav")!
            case .corrupt:
                let url = try TestMedia.directory(name: "corrupt").appendingPathComponent("\(marker).wav")
                try FailureCauseTests.brokenHeaderWAV().write(to: url)
                return url
            case .valid: return try TestMedia.wav(seconds: 0.2, name: "\(marker).wav")
            }
        }

        var expectedEnd: PlaybackEnd.Kind {
            switch self {
            case .missing, .empty, .closedPort, .unsupportedScheme: .encounteredError
            // libvlc 3.0.24 plays these "to the end" after logging why it could not.
            case .directory, .corrupt, .valid: .endReached
            }
        }

        /// What this input's cause must say (measured on libvlc 3.0.24, one player at a time).
        func check(_ cause: FailureCause?, url: URL, marker: String) -> String? {
            let texts = cause?.errors.map(\.text) ?? []
            func has(_ part: String) -> Bool { texts.contains { $0.contains(part) } }
            let mrl = "VLC is unable to open the MRL '\(url.absoluteString)'"
            switch self {
            case .valid:
                return cause == nil ? nil : "a valid file got a cause: \(texts)"
            case .missing:
                return has("cannot open file \(url.path) (No such file or directory)") && has(mrl) ? nil : "\(texts)"
            case .empty:
                return has("cannot peek") && has(mrl) && !has("cannot open file") ? nil : "\(texts)"
            case .directory:
                let dvd = cause?.errors.allSatisfy { $0.module == "dvdnav" } ?? false
                return dvd && has("VIDEO_TS.IFO") ? nil : "\(texts)"
            case .closedPort:
                let port = url.port.map(String.init) ?? "?"
                return has("cannot connect to 127.0.0.1:\(port)") && has("Connection refused") && has(mrl)
                    ? nil : "\(texts)"
            case .unsupportedScheme:
                return has(mrl) && !has("cannot open file") && !has("cannot connect") ? nil : "\(texts)"
            case .corrupt:
                return has("An error occurred during wav demuxing") && has("Could not open \(url.path)")
                    ? nil : "\(texts)"
            }
        }
    }

    /// A WAV whose format chunk says 0 channels at 0 Hz: the wav demuxer refuses it.
    static func brokenHeaderWAV() -> Data {
        var bytes = [UInt8]()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        bytes += Array("RIFF".utf8); u32(36 + 100); bytes += Array("WAVE".utf8)
        bytes += Array("fmt ".utf8); u32(16); u16(1); u16(0); u32(0); u32(0); u16(0); u16(16)
        bytes += Array("data".utf8); u32(100); bytes += [UInt8](repeating: 0, count: 100)
        return Data(bytes)
    }

    struct Outcome: Sendable {
        let input: Input
        let url: URL
        let marker: String
        let end: PlaybackEnd?
    }

    /// Plays `input` on a player of its own with a recorder and returns how it ended.
    static func run(
        _ input: Input, marker: String, library: VLCLibrary,
        configuration: (any EventsConfiguring)? = nil
    ) throws -> Outcome {
        let url = try input.make(marker: marker)
        let player = VLCMediaPlayer(
            media: VLCMedia(url: url, library: library), library: library,
            configuration: configuration)
        let recorder = FailureCauseRecorder(player: player)
        let ends = Recorder<PlaybackEnd>()
        let subscription = recorder.observe { ends.record($0) }
        player.play()
        _ = ends.wait(forCount: 1, timeout: 30)
        subscription.cancel()
        player.stop()
        return Outcome(input: input, url: url, marker: marker, end: ends.values.first)
    }

    private func verify(_ outcomes: [Outcome], file: StaticString = #filePath, line: UInt = #line) {
        let markers = outcomes.map(\.marker)
        for outcome in outcomes {
            guard let end = outcome.end else {
                XCTFail("\(outcome.input) (\(outcome.marker)): no end within 30 s", file: file, line: line)
                continue
            }
            XCTAssertEqual(end.kind, outcome.input.expectedEnd, "\(outcome.input)", file: file, line: line)
            if let problem = outcome.input.check(end.cause, url: outcome.url, marker: outcome.marker) {
                XCTFail("\(outcome.input) (\(outcome.marker)): wrong cause: \(problem)", file: file, line: line)
            }
            for message in end.cause?.errors ?? [] {
                for other in markers where other != outcome.marker && message.text.contains(other) {
                    XCTFail("\(outcome.input) got \(other)'s message: \(message.text)", file: file, line: line)
                }
                XCTAssertEqual(message.level, .error, file: file, line: line)
                XCTAssertEqual(message.threadID, end.cause?.threadID, file: file, line: line)
            }
        }
    }

    func testCause_ofEachBrokenInput_isItsOwnMessage() throws {
        let library = try VLCLibrary()
        var outcomes: [Outcome] = []
        for (index, input) in Input.allCases.enumerated() {
            outcomes.append(try Self.run(input, marker: "solo\(index)m", library: library))
        }
        verify(outcomes)
        // The number of errors of each input alone: concurrent runs must find the same.
        for outcome in outcomes {
            print("cause of \(outcome.input): \(outcome.end?.cause?.errors.map(\.description) ?? [])")
        }
    }

    func testCause_whenEightPlayersFailAtOnce_isNeverConfused() throws {
        let library = try VLCLibrary()
        var solo: [Input: Int] = [:]
        for input in Input.allCases {
            solo[input] =
                try Self.run(input, marker: "alone\(input.rawValue)m", library: library).end?.cause?.errors.count ?? 0
        }
        let soloCounts = solo
        for round in 0..<12 {
            let outcomes = Recorder<Outcome>()
            let failures = Recorder<String>()
            startThreads(count: 8, timeout: 60, name: "failing players") { index in
                let input = Input.allCases[(round + index) % Input.allCases.count]
                do {
                    outcomes.record(try Self.run(input, marker: "r\(round)t\(index)m", library: library))
                } catch {
                    failures.record("\(input): \(error)")
                }
            }
            XCTAssertEqual(failures.values, [])
            XCTAssertEqual(outcomes.count, 8)
            verify(outcomes.values)
            for outcome in outcomes.values {
                XCTAssertEqual(
                    outcome.end?.cause?.errors.count ?? 0, soloCounts[outcome.input],
                    "round \(round) \(outcome.input): \(outcome.end?.cause?.errors.map(\.text) ?? [])")
            }
        }
    }

    func testCause_withAQueueConfiguration_isDeliveredOnThatQueue() throws {
        let library = try VLCLibrary()
        for mode in [DispatchMode.queueSync, .queueAsync] {
            let (configuration, queue) = mode.make(label: "test.causes")
            let url = try TestMedia.missing(name: "queued-\(mode).wav")
            let player = VLCMediaPlayer(
                media: VLCMedia(url: url, library: library), library: library,
                configuration: configuration)
            let recorder = FailureCauseRecorder(player: player)
            let onQueue = Recorder<Bool>()
            let ends = Recorder<PlaybackEnd>()
            let subscription = recorder.observe(.encounteredError) { end in
                onQueue.record(queue?.isCurrent ?? false)
                ends.record(end)
            }
            player.play()
            XCTAssertTrue(ends.wait(forCount: 1, timeout: 20), "\(mode)")
            XCTAssertEqual(onQueue.values, [true], "\(mode)")
            XCTAssertNil(Input.missing.check(ends.values.first?.cause, url: url, marker: ""), "\(mode)")
            subscription.cancel()
        }
    }

    func testWaitFor_whenAFileIsMissing_returnsTheEndWithItsCause() async throws {
        let library = try VLCLibrary()
        let url = try TestMedia.missing(name: "waited.wav")
        let player = VLCMediaPlayer(media: VLCMedia(url: url, library: library), library: library)
        let recorder = FailureCauseRecorder(player: player)
        let end = try await recorder.waitFor(.encounteredError, .endReached, timeout: .seconds(20)) { player.play() }
        XCTAssertEqual(end.kind, .encounteredError)
        XCTAssertNil(Input.missing.check(end.cause, url: url, marker: ""))
        XCTAssertEqual(end.cause?.errors.first?.module, "filesystem")
    }

    /// Why a parse failure has no cause: the preparser's input logs nothing (libvlc 3 makes it quiet).
    func testParse_whenItFails_logsNoErrorOrWarning() async throws {
        let library = try VLCLibrary()
        let messages = Recorder<LogMessage>()
        let subscription = library.logs.observe(minimumLevel: .warning) { messages.record($0) }
        for url in [try TestMedia.missing(), try TestMedia.empty()] {
            let status = try await VLCMedia(url: url, library: library).parse(timeout: .seconds(10))
            XCTAssertEqual(status, .failed, "\(url.lastPathComponent)")
        }
        usleep(100_000)
        XCTAssertEqual(messages.values.map(\.description), [])
        subscription.cancel()
    }
}
