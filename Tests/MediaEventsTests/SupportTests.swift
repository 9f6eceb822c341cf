// Tests for the test support itself (media generation, HTTP server, deadlines, threads, the raw
// C recorder against a real libvlc player).

import CLibVLC
import Foundation
import Glibc
@testable import MediaEvents
import TestSupport
import XCTest

final class SupportTests: XCTestCase {

    // MARK: Media files

    func testWAVHasValidHeaderAndExpectedLength() throws {
        let url = try TestMedia.wav(seconds: 1.5, sampleRate: 22050)
        let data = try Data(contentsOf: url)
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let frames = 33075  // 1.5 s * 22050
        XCTAssertEqual(bytes.count, 44 + frames * 2)
        XCTAssertEqual(String(decoding: bytes[0..<4], as: UTF8.self), "RIFF")
        XCTAssertEqual(u32(4), bytes.count - 8)
        XCTAssertEqual(String(decoding: bytes[8..<12], as: UTF8.self), "WAVE")
        XCTAssertEqual(String(decoding: bytes[12..<16], as: UTF8.self), "fmt ")
        XCTAssertEqual(u32(16), 16)
        XCTAssertEqual(u16(20), 1)  // PCM
        XCTAssertEqual(u16(22), 1)  // mono
        XCTAssertEqual(u32(24), 22050)
        XCTAssertEqual(u32(28), 44100)  // byte rate
        XCTAssertEqual(u16(32), 2)  // block align
        XCTAssertEqual(u16(34), 16)
        XCTAssertEqual(String(decoding: bytes[36..<40], as: UTF8.self), "data")
        XCTAssertEqual(u32(40), frames * 2)
        // Not silence.
        XCTAssertTrue(bytes[44...].contains { $0 != 0 })
    }

    func testEncodedFormatsHaveTheRightMagic() throws {
        try XCTSkipIf(TestMedia.soxPath == nil, "sox missing: apt-get install sox libsox-fmt-all")
        for format in TestMedia.Format.allCases {
            let url = try TestMedia.encoded(format, seconds: 0.5)
            let bytes = [UInt8](try Data(contentsOf: url))
            XCTAssertGreaterThan(bytes.count, 100, "\(format)")
            let head = Array(bytes.prefix(4))
            switch format {
            case .ogg: XCTAssertEqual(head, Array("OggS".utf8))
            case .flac: XCTAssertEqual(head, Array("fLaC".utf8))
            case .mp3:
                // Either an ID3v2 tag or an MPEG audio frame sync (0xFFFB for MPEG-1 at 44.1 kHz;
                // lame writes MPEG-2, 0xFFF3, at 22.05 kHz).
                let id3 = head.prefix(3) == ArraySlice("ID3".utf8)
                let sync = head[0] == 0xFF && head[1] & 0xE0 == 0xE0
                XCTAssertTrue(id3 || sync, "mp3 starts with \(head)")
            }
        }
    }

    func testOtherMediaHelpers() throws {
        let fm = FileManager.default
        let empty = try TestMedia.empty()
        XCTAssertEqual(try Data(contentsOf: empty).count, 0)

        let random = try TestMedia.randomBytes(count: 4096)
        XCTAssertEqual(try Data(contentsOf: random).count, 4096)

        let wav = try TestMedia.wav(seconds: 1)
        let cut = try TestMedia.truncated(from: wav, keepingBytes: 1000)
        XCTAssertEqual(try Data(contentsOf: cut), try Data(contentsOf: wav).prefix(1000))
        XCTAssertNotEqual(cut.deletingLastPathComponent(), wav.deletingLastPathComponent())

        let unicode = try TestMedia.unicodePathWAV()
        XCTAssertTrue(unicode.path.contains("my tëst ♫.wav"))
        XCTAssertTrue(fm.fileExists(atPath: unicode.path))

        let dir = try TestMedia.directory()
        var isDir: ObjCBool = false
        XCTAssertTrue(fm.fileExists(atPath: dir.path, isDirectory: &isDir) && isDir.boolValue)

        XCTAssertFalse(fm.fileExists(atPath: try TestMedia.missing().path))

        let list = try TestMedia.m3u(entries: [wav, unicode])
        let text = try String(contentsOf: list, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("#EXTM3U\n"))
        XCTAssertTrue(text.contains(wav.absoluteString))
        XCTAssertTrue(text.contains(unicode.absoluteString))

        for url in [empty, random, wav, cut, unicode, dir, list] {
            XCTAssertTrue(url.path.hasPrefix(TestMedia.root.path), url.path)
        }
    }

    // MARK: HTTP server

    func testHTTPServerServesFile() throws {
        let wav = try TestMedia.wav(seconds: 0.5)
        let expected = try Data(contentsOf: wav)
        let server = try LocalHTTPServer(serving: wav)
        defer { server.stop() }
        let (head, body) = try Self.httpGet(port: server.port, path: server.url.path)
        XCTAssertTrue(head.hasPrefix("HTTP/1.0 200"), head)
        XCTAssertTrue(head.contains("Content-Length: \(expected.count)"), head)
        XCTAssertEqual(body, expected)
        XCTAssertEqual(server.connectionCount, 1)
        XCTAssertEqual(server.requests.first, "GET \(server.url.path) HTTP/1.0")
    }

    func testHTTPServerDiesMidStream() throws {
        let wav = try TestMedia.wav(seconds: 1)
        let full = try Data(contentsOf: wav)
        for reset in [false, true] {
            let server = try LocalHTTPServer(serving: wav, mode: .dieMidStream(afterBytes: 5000, reset: reset))
            defer { server.stop() }
            let (head, body) = try Self.httpGet(port: server.port, path: "/x")
            XCTAssertTrue(head.contains("Content-Length: \(full.count)"), head)
            XCTAssertLessThanOrEqual(body.count, 5000, "reset: \(reset)")
            XCTAssertLessThan(body.count, full.count)
            if !reset { XCTAssertEqual(body, full.prefix(5000)) }
        }
    }

    func testHTTPServerStopsByItself() throws {
        let server = try LocalHTTPServer(data: Data("hi".utf8), maxConnections: 1, timeLimit: 10)
        _ = try Self.httpGet(port: server.port, path: "/")
        // The single allowed connection is used up: further connections are not served.
        XCTAssertTrue(waitUntil(5) { (try? Self.httpGet(port: server.port, path: "/")) == nil })
        server.stop()
        server.stop()  // idempotent
    }

    func testClosedPortRefusesConnections() throws {
        let port = try LocalHTTPServer.closedPort()
        XCTAssertGreaterThan(port, 0)
        XCTAssertThrowsError(try Self.httpGet(port: port, path: "/"))
    }

    // MARK: Deadlines and threads

    func testWaitUntilAndWithTimeout() async throws {
        let counter = Counter()
        XCTAssertTrue(waitUntil(1) { counter.increment() >= 3 })
        XCTAssertFalse(waitUntil(0.05) { false })

        let value = try await withTimeout(5) { 42 }
        XCTAssertEqual(value, 42)

        let start = Date()
        do {
            // An operation that ignores cancellation and never finishes must not hang the test.
            _ = try await withTimeout(0.2) { () async -> Int in
                await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
                    Thread {
                        sleep(2); continuation.resume(returning: 0)
                    }.start()
                }
            }
            XCTFail("expected TimeoutError")
        } catch is TimeoutError {
            XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        }
    }

    func testRunWithDeadlineFinishes() {
        let counter = Counter()
        XCTAssertTrue(runWithDeadline(5, "a quick body") { counter.increment() })
        XCTAssertEqual(counter.count, 1)
    }

    func testRunWithDeadlineReportsHang() {
        let gate = DispatchSemaphore(value: 0)
        let recorded = Recorder<String>()
        failureCapture = recorded
        let finished = runWithDeadline(0.2, "a stuck body") { gate.wait() }
        failureCapture = nil
        gate.signal()  // release the abandoned thread
        XCTAssertFalse(finished)
        XCTAssertEqual(recorded.values.count, 1)
        XCTAssertTrue(
            recorded.values.first?.contains("a stuck body did not finish within 0.2 s (deadlock?)") ?? false,
            "\(recorded.values)")
    }

    func testStartThreadsRunsConcurrently() {
        let inside = Counter()
        let overlap = Recorder<Int>()  // how many threads were inside when each arrived
        let seen = Recorder<Int>()
        XCTAssertTrue(
            startThreads(count: 4, timeout: 10) { index in
                overlap.record(inside.increment())
                usleep(50_000)
                inside.increment(by: -1)
                seen.record(index)
            })
        XCTAssertEqual(seen.values.sorted(), [0, 1, 2, 3])
        XCTAssertGreaterThan(overlap.values.max() ?? 0, 1, "threads did not overlap")
    }

    // MARK: Raw C recorder against a real player

    func testRawRecorderSeesOpeningPlayingEndReachedInOrder() throws {
        guard let instance = makeTestVLCInstance() else {
            return XCTFail("libvlc_new failed (is vlc-plugin-base installed?)")
        }
        defer { instance.release() }
        let wav = try TestMedia.wav(seconds: 0.5)
        guard let media = NativeMedia.new(path: wav.path, in: instance) else { return XCTFail("media_new_path") }
        guard let player = NativeMediaPlayer.new(playing: media) else {
            media.release()
            return XCTFail("media_player_new_from_media")
        }

        let recorder = RawEventRecorder()
        XCTAssertTrue(recorder.attach(player.eventManager, tag: 1, types: RawEventRecorder.playerEventTypes))
        XCTAssertTrue(recorder.attach(media.eventManager, tag: 2, types: RawEventRecorder.mediaEventTypes))

        XCTAssertEqual(player.play(), 0)
        XCTAssertTrue(
            recorder.wait(for: libvlc_MediaPlayerEndReached, timeout: 15),
            "no EndReached; saw \(recorder.names)")

        // Never stop/release from a callback thread: this is the test's own thread.
        let objects = UncheckedSendable((player: player, media: media))
        runWithDeadline(10, "stop + release") {
            objects.value.player.stop()
            recorder.detachAll()
            objects.value.player.release()
            objects.value.media.release()
        }

        let events = recorder.events
        if ProcessInfo.processInfo.environment["RAWREC_DUMP"] != nil {
            print(events.map(\.description).joined(separator: "\n"))
        }
        let player1 = events.filter { $0.sourceTag == 1 }.map(\.type)
        func index(_ t: libvlc_event_e) -> Int? { player1.firstIndex(of: Int32(bitPattern: t.rawValue)) }
        let opening = index(libvlc_MediaPlayerOpening)
        let playing = index(libvlc_MediaPlayerPlaying)
        let end = index(libvlc_MediaPlayerEndReached)
        XCTAssertNotNil(opening, "\(events)")
        XCTAssertNotNil(playing, "\(events)")
        XCTAssertNotNil(end, "\(events)")
        if let opening, let playing, let end {
            XCTAssertLessThan(opening, playing)
            XCTAssertLessThan(playing, end)
        }
        XCTAssertEqual(events.map(\.seq), Array(0..<events.count))
        XCTAssertFalse(events.contains { $0.type == Int32(bitPattern: libvlc_MediaPlayerEncounteredError.rawValue) })
        // Payloads: a 0.5 s file has length ~500 ms; the media reported a parsed status.
        if let length = events.first(where: { $0.type == Int32(bitPattern: libvlc_MediaPlayerLengthChanged.rawValue) })
        {
            XCTAssertEqual(Double(length.i1), 500, accuracy: 100)
        }
        XCTAssertTrue(events.contains { $0.sourceTag == 2 }, "no media events: \(events)")
        XCTAssertTrue(events.contains { $0.name == "MediaPlayerStopped" }, "\(events)")

        recorder.clear()
        XCTAssertEqual(recorder.count, 0)
    }

    func testRawRecorderMediaListPayloads() throws {
        guard let instance = makeTestVLCInstance() else { return XCTFail("libvlc_new failed") }
        defer { instance.release() }
        guard let list = NativeMediaList.new(in: instance) else { return XCTFail("media_list_new") }
        let recorder = RawEventRecorder()
        XCTAssertTrue(recorder.attach(list.eventManager, tag: 7, types: RawEventRecorder.mediaListEventTypes))
        let wav = try TestMedia.wav(seconds: 0.1)
        for _ in 0..<3 {
            guard let media = NativeMedia.new(path: wav.path, in: instance) else { return XCTFail("media") }
            list.lock()
            XCTAssertEqual(list.add(media), 0)
            list.unlock()
            media.release()
        }
        recorder.detachAll()
        recorder.detachAll()  // idempotent: must not double-detach (that would abort)
        list.release()

        let events = recorder.events
        XCTAssertEqual(
            events.map(\.name),
            Array(repeating: ["MediaListWillAddItem", "MediaListItemAdded"], count: 3).flatMap { $0 })
        XCTAssertEqual(events.map(\.i2), [0, 0, 1, 1, 2, 2])
        XCTAssertTrue(events.allSatisfy { $0.i1 == 1 && $0.sourceTag == 7 })
    }

    // MARK: The generated media behave as expected in libvlc

    func testGeneratedMediaPlayOrFailInLibVLC() throws {
        guard let instance = makeTestVLCInstance() else { return XCTFail("libvlc_new failed") }
        defer { instance.release() }
        let wav = try TestMedia.wav(seconds: 0.3)
        let server = try LocalHTTPServer(serving: wav)
        defer { server.stop() }
        var good: [(String, URL)] = [
            ("wav", wav),
            ("unicode path", try TestMedia.unicodePathWAV(seconds: 0.3)),
            ("http", server.url),
        ]
        if TestMedia.soxPath != nil {
            for format in TestMedia.Format.allCases {
                good.append((format.rawValue, try TestMedia.encoded(format, seconds: 0.3)))
            }
        }
        for (label, url) in good {
            let names = Self.play(url, instance: instance)
            XCTAssertTrue(names.contains("MediaPlayerEndReached"), "\(label): \(names)")
            XCTAssertFalse(names.contains("MediaPlayerEncounteredError"), "\(label): \(names)")
        }
        for (label, url) in [("empty", try TestMedia.empty()), ("missing", try TestMedia.missing())] {
            let names = Self.play(url, instance: instance)
            XCTAssertTrue(names.contains("MediaPlayerEncounteredError"), "\(label): \(names)")
        }
    }

    /// Broken inputs all terminate. Measured with libvlc 3.0.24: only the empty file, the
    /// missing path and the closed port give EncounteredError; random bytes, truncated WAVs,
    /// a directory and a server dying mid-stream end with EndReached (libvlc is lenient).
    func testBrokenInputsTerminate() throws {
        guard let instance = makeTestVLCInstance() else { return XCTFail("libvlc_new failed") }
        defer { instance.release() }
        let wav = try TestMedia.wav(seconds: 1)
        let dying = try LocalHTTPServer(serving: wav, mode: .dieMidStream(afterBytes: 8000))
        defer { dying.stop() }
        let port = try LocalHTTPServer.closedPort()
        let closed = Self.play(URL(string: "http://127.0.0.1:\(port)/x.wav")!, instance: instance)
        XCTAssertTrue(closed.contains("MediaPlayerEncounteredError"), "closed port: \(closed)")
        let cases: [(String, URL)] = [
            ("m3u", try TestMedia.m3u(entries: [wav, try TestMedia.unicodePathWAV(seconds: 0.2)])),
            ("random", try TestMedia.randomBytes(count: 10000)),
            ("truncated", try TestMedia.truncated(from: wav, keepingBytes: 1000)),
            ("truncated header", try TestMedia.truncated(from: wav, keepingBytes: 20)),
            ("directory", try TestMedia.directory()),
            ("dying server", dying.url),
        ]
        for (label, url) in cases {
            let names = Self.play(url, instance: instance)
            XCTAssertTrue(
                names.contains("MediaPlayerEndReached") || names.contains("MediaPlayerEncounteredError"),
                "\(label): \(names)")
        }
    }

    /// Plays `url` to its end or error (10 s limit) and returns the player event names seen.
    static func play(_ url: URL, instance: NativeLibrary) -> [String] {
        let media =
            url.isFileURL
            ? NativeMedia.new(path: url.path, in: instance)
            : NativeMedia.new(location: url.absoluteString, in: instance)
        guard let media, let player = NativeMediaPlayer.new(playing: media) else { return ["<no player>"] }
        let recorder = RawEventRecorder()
        recorder.attach(player.eventManager, types: RawEventRecorder.playerEventTypes)
        player.play()
        _ = waitUntil(10) {
            let names = recorder.names
            return names.contains("MediaPlayerEndReached") || names.contains("MediaPlayerEncounteredError")
        }
        player.stop()
        recorder.detachAll()
        player.release()
        media.release()
        return recorder.names
    }

    // MARK: Helpers

    /// A blocking HTTP/1.0 GET over a raw socket: (header block, body). Throws if the connection
    /// fails or returns no header.
    static func httpGet(port: UInt16, path: String) throws -> (String, Data) {
        struct Failure: Error { let what: String }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(what: "socket") }
        defer { close(fd) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw Failure(what: "connect: \(String(cString: strerror(errno)))") }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var all = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }  // EOF, reset or timeout
            all.append(contentsOf: buffer[0..<n])
        }
        let separator = Array("\r\n\r\n".utf8)
        guard
            let split = (0...(max(0, all.count - 4))).first(where: {
                all.count >= 4 && Array(all[$0..<($0 + 4)]) == separator
            })
        else {
            throw Failure(what: "no header in \(all.count) bytes")
        }
        return (String(decoding: all[0..<split], as: UTF8.self), Data(all[(split + 4)...]))
    }

    // MARK: Failure capture (to test that runWithDeadline fails a hung test)

    private var failureCapture: Recorder<String>?

    override func recordFailure(
        withDescription description: String, inFile filePath: String,
        atLine lineNumber: Int, expected: Bool
    ) {
        if let failureCapture {
            failureCapture.record(description)
            return
        }
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }
}
