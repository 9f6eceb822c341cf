// Test media generated on the fly: every file lives under one temp root per test process
// (`TestMedia.root`), each call in a fresh subdirectory, so tests never share or clobber files.
// The root is removed at process exit (and by `TestMedia.cleanUp()`); roots left behind by
// crashed runs are removed on the next run once their process is gone.
//
// Encoded formats (ogg, flac, mp3) are made with `sox`:
//     apt-get install sox libsox-fmt-all
// (`libsox-fmt-all` pulls in `libsox-fmt-mp3`, which is what lets Debian 12's sox write mp3.)
//
// What libvlc 3.0.24 does with the broken inputs (see SupportTests.testBrokenInputsTerminate):
// `empty()`, `missing()` and a closed port give Opening, EncounteredError; `randomBytes`,
// `truncated`, `directory()` and a server dying mid-stream are played "successfully" to
// EndReached. Use the former when a test needs an error.

import Foundation
import Glibc
import XCTest

public enum TestMedia {
    public enum Format: String, Sendable, CaseIterable {
        case ogg, flac, mp3
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    /// One root per test process, e.g. /tmp/MediaEventsTests-1234-5F3A.../
    public static let root: URL = {
        removeStaleRoots()
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(rootPrefix)\(getpid())-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        TeardownObserver.register()
        atexit {
            TeardownObserver.beforeCleanUp()
            TestMedia.cleanUp()
        }
        return dir
    }()

    private static let rootPrefix = "MediaEventsTests-"

    /// Removes the whole temp root (all generated media). Safe to call more than once; later
    /// calls to the generators recreate the directory.
    public static func cleanUp() {
        try? FileManager.default.removeItem(at: root)
    }

    /// A fresh, empty directory under the root (also usable as "a directory" media input).
    public static func directory(name: String = "dir") throws -> URL {
        let dir = try freshDirectory().appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A URL to a file that does not exist (its parent directory does).
    public static func missing(name: String = "does-not-exist.wav") throws -> URL {
        try freshDirectory().appendingPathComponent(name)
    }

    // MARK: WAV

    /// A real 16-bit PCM WAV with a sine tone.
    public static func wav(
        seconds: Double, sampleRate: Int = 22050, channels: Int = 1,
        frequency: Double = 440, name: String = "tone.wav"
    ) throws -> URL {
        let url = try freshDirectory().appendingPathComponent(name)
        try write(
            wavData(
                seconds: seconds, sampleRate: sampleRate, channels: channels,
                frequency: frequency), to: url)
        return url
    }

    /// The bytes of a 16-bit PCM WAV with a sine tone (44-byte header + samples).
    public static func wavData(
        seconds: Double, sampleRate: Int = 22050, channels: Int = 1,
        frequency: Double = 440
    ) -> Data {
        precondition(seconds >= 0 && sampleRate > 0 && channels > 0)
        let frames = Int((seconds * Double(sampleRate)).rounded())
        let bytesPerSample = 2
        let dataSize = frames * channels * bytesPerSample
        var out = [UInt8]()
        out.reserveCapacity(44 + dataSize)
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { out.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { out.append(contentsOf: $0) } }
        out.append(contentsOf: Array("RIFF".utf8)); u32(36 + dataSize)
        out.append(contentsOf: Array("WAVE".utf8))
        out.append(contentsOf: Array("fmt ".utf8)); u32(16)
        u16(1)  // PCM
        u16(channels)
        u32(sampleRate)
        u32(sampleRate * channels * bytesPerSample)  // byte rate
        u16(channels * bytesPerSample)  // block align
        u16(8 * bytesPerSample)  // bits per sample
        out.append(contentsOf: Array("data".utf8)); u32(dataSize)
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        for i in 0..<frames {
            let sample = Int16((sin(step * Double(i)) * 0.5 * Double(Int16.max)).rounded())
            for _ in 0..<channels {
                withUnsafeBytes(of: sample.littleEndian) { out.append(contentsOf: $0) }
            }
        }
        return Data(out)
    }

    /// A short WAV at a path with spaces and non-ASCII characters:
    /// ".../dir with spaces ü/my tëst ♫.wav".
    public static func unicodePathWAV(seconds: Double = 0.5) throws -> URL {
        let dir = try freshDirectory().appendingPathComponent("dir with spaces ü", isDirectory: true)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent("my tëst ♫.wav")
        try write(wavData(seconds: seconds), to: url)
        return url
    }

    // MARK: Encoded (sox)

    /// Whether a usable `sox` is on the PATH.
    public static var soxPath: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") + ["/usr/bin", "/usr/local/bin"] {
            let candidate = "\(dir)/sox"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// A sine tone encoded as ogg (Vorbis), flac or mp3 by converting a generated WAV with sox.
    /// Throws (with install instructions) if sox or its format handler is missing.
    public static func encoded(
        _ format: Format, seconds: Double, sampleRate: Int = 22050,
        name: String? = nil
    ) throws -> URL {
        guard let sox = soxPath else {
            throw Failure(
                description: "sox not found: install it with `apt-get install sox libsox-fmt-all`"
                    + " (needed to make \(format.rawValue) test media)")
        }
        let wavURL = try wav(seconds: seconds, sampleRate: sampleRate, name: "source.wav")
        let out = wavURL.deletingLastPathComponent()
            .appendingPathComponent(name ?? "tone.\(format.rawValue)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sox)
        // -t forces the output type, so a custom file name/extension still works.
        process.arguments = ["-q", wavURL.path, "-t", format.rawValue, out.path]
        let errPipe = Pipe()
        process.standardError = errPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let errData = errPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: wavURL)
        let size = (try? FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) ?? 0
        guard process.terminationStatus == 0, size > 0 else {
            let err = String(decoding: errData, as: UTF8.self)
            var hint = "install `sox libsox-fmt-all`"
            if format == .mp3 { hint += " (on Debian 12 mp3 output comes from `libsox-fmt-mp3`)" }
            throw Failure(
                description: "sox could not write \(format.rawValue) (exit \(process.terminationStatus)): "
                    + "\(err.trimmingCharacters(in: .whitespacesAndNewlines)) — \(hint)")
        }
        return out
    }

    // MARK: Video (ffmpeg)

    /// A file `ffmpeg` writes from `arguments` (its inputs and codecs, e.g. `-f lavfi -i
    /// testsrc=…`), named `name` in a fresh directory: video test media.
    ///     apt-get install ffmpeg
    public static func ffmpeg(_ arguments: [String], name: String) throws -> URL {
        let url = try freshDirectory().appendingPathComponent(name)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-loglevel", "error", "-nostdin"] + arguments + [url.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw Failure(description: "ffmpeg not found (\(error)): install it with Scripts/install-deps.sh")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description:
                    "ffmpeg could not write \(name) (exit \(process.terminationStatus)); Scripts/install-deps.sh installs it"
            )
        }
        return url
    }

    /// One second of ffmpeg's test pattern as H.264 in Matroska (`name`'s extension chooses
    /// the container): `size` pixels at `rate` frames per second (`25`, `30000/1001`).
    public static func h264(size: String = "160x120", rate: String = "25", name: String = "testsrc.mkv") throws -> URL {
        try ffmpeg(
            [
                "-f", "lavfi", "-i", "testsrc=size=\(size):rate=\(rate)", "-t", "1",
                "-c:v", "libx264", "-pix_fmt", "yuv420p",
            ], name: name)
    }

    /// A movie as media tools meet them: H.264 video (160×120, 25 fps), two Vorbis audio
    /// tracks (`eng` "English" at 440 Hz, `fra` "Français" at 880 Hz), an SRT subtitle track
    /// (`eng`), and `chapters` equal chapters named "Chapter 1", "Chapter 2", … over `seconds`,
    /// in Matroska (`name`'s extension chooses the container).
    public static func movie(seconds: Double = 6, chapters: Int = 3, name: String = "movie.mkv") throws -> URL {
        let directory = try freshDirectory()
        let milliseconds = Int(seconds * 1000)
        var metadata = ";FFMETADATA1\ntitle=Test movie\n"
        for index in 0..<chapters {
            metadata += "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(milliseconds * index / chapters)\n"
            metadata += "END=\(milliseconds * (index + 1) / chapters)\ntitle=Chapter \(index + 1)\n"
        }
        let metadataURL = directory.appendingPathComponent("chapters.txt")
        try write(Data(metadata.utf8), to: metadataURL)
        var subtitles = ""
        for second in 0..<max(1, Int(seconds)) {
            subtitles +=
                "\(second + 1)\n00:00:\(String(format: "%02d", second)),000 --> 00:00:\(String(format: "%02d", second)),900\nLine \(second + 1)\n\n"
        }
        let subtitlesURL = directory.appendingPathComponent("subtitles.srt")
        try write(Data(subtitles.utf8), to: subtitlesURL)
        return try ffmpeg(
            [
                "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050",
                "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=22050",
                "-i", subtitlesURL.path, "-i", metadataURL.path,
                "-map", "0:v", "-map", "1:a", "-map", "2:a", "-map", "3:s", "-map_metadata", "4", "-map_chapters", "4",
                "-t", "\(seconds)", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "libvorbis", "-c:s", "srt",
                "-metadata:s:a:0", "language=eng", "-metadata:s:a:0", "title=English",
                "-metadata:s:a:1", "language=fra", "-metadata:s:a:1", "title=Français",
                "-metadata:s:s:0", "language=eng",
            ], name: name)
    }

    // MARK: Playlists and broken files

    /// An extended M3U playlist listing `entries` (as absolute URLs, percent-encoded, so paths with
    /// spaces or non-ASCII characters survive; http URLs are written as they are).
    public static func m3u(entries: [URL], name: String = "list.m3u") throws -> URL {
        var text = "#EXTM3U\n"
        for entry in entries {
            text += "#EXTINF:-1,\(entry.lastPathComponent)\n"
            text += entry.absoluteString + "\n"
        }
        let url = try freshDirectory().appendingPathComponent(name)
        try write(Data(text.utf8), to: url)
        return url
    }

    /// A zero-byte file.
    public static func empty(name: String = "empty.wav") throws -> URL {
        let url = try freshDirectory().appendingPathComponent(name)
        try write(Data(), to: url)
        return url
    }

    /// `count` bytes of random garbage (deterministic with a given seed).
    public static func randomBytes(count: Int, seed: UInt64 = 0x5EED, name: String = "random.bin") throws -> URL {
        var state = seed | 1
        var bytes = [UInt8](repeating: 0, count: count)
        for i in 0..<count {  // xorshift64: no dependency on the system RNG
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            bytes[i] = UInt8(truncatingIfNeeded: state)
        }
        let url = try freshDirectory().appendingPathComponent(name)
        try write(Data(bytes), to: url)
        return url
    }

    /// A copy of `source` cut after `keepingBytes` bytes (same file name, fresh directory).
    public static func truncated(from source: URL, keepingBytes: Int, name: String? = nil) throws -> URL {
        let data = try Data(contentsOf: source)
        let url = try freshDirectory().appendingPathComponent(name ?? source.lastPathComponent)
        try write(data.prefix(max(0, keepingBytes)), to: url)
        return url
    }

    // MARK: Internals

    private static func freshDirectory() throws -> URL {
        let dir = root.appendingPathComponent(UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    private static func write(_ data: Data, to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: data) else {
            throw Failure(description: "could not write \(url.path)")
        }
    }

    /// Removes roots of earlier test processes that no longer exist.
    private static func removeStaleRoots() {
        let tmp = FileManager.default.temporaryDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: tmp.path) else { return }
        for name in names where name.hasPrefix(rootPrefix) {
            let rest = name.dropFirst(rootPrefix.count)
            guard let pidText = rest.split(separator: "-").first, let pid = pid_t(pidText) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: tmp.appendingPathComponent(name))
            }
        }
    }
}

/// A test target whose tests leave work running after they end (MediaEventsTests: libvlc's
/// teardowns, which must finish before the process exits) makes `XCTestCase` conform. Once a
/// test has made media, TestMedia waits through it after every test, and at exit before it
/// removes the media.
public protocol TestMediaTeardownWaiting: XCTestCase {
    /// After each test, and after the last one (`what` names it).
    static func waitForTeardowns(after what: String)
    /// At process exit, before the generated media are removed.
    static func waitBeforeMediaCleanUp()
}

/// Registered when a test first makes media: asks the test target, through the test case that
/// ended, to wait for what its tests left running (see `TestMediaTeardownWaiting`).
private enum TeardownObserver {
    private final class Observer: NSObject, XCTestObservation {
        func testCaseDidFinish(_ testCase: XCTestCase) {
            // Through `Any.Type`: whether `XCTestCase` conforms is the test target's choice.
            let testType: Any.Type = type(of: testCase)
            guard let waiting = testType as? any TestMediaTeardownWaiting.Type else { return }
            seen.withLock { $0 = waiting }
            waiting.waitForTeardowns(after: testCase.name)
        }

        func testBundleDidFinish(_ testBundle: Bundle) {
            seen.withLock { $0 }?.waitForTeardowns(after: "the last test")
        }
    }

    /// The test target's waiting, once a test case of it has ended.
    private static let seen = Locked<(any TestMediaTeardownWaiting.Type)?>(nil)

    private static let registration: Void = {
        XCTestObservationCenter.shared.addTestObserver(Observer())
    }()

    static func register() {
        _ = registration
    }

    static func beforeCleanUp() {
        seen.withLock { $0 }?.waitBeforeMediaCleanUp()
    }
}
