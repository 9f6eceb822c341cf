// What the media-daemon tests share: systemd's notify socket faked by a datagram listener, a
// standard output whose reading the test pauses, and the daemon's log read back by playback.
// Every wait has a deadline.

import Foundation
import Glibc
import TestSupport
import XCTest

/// Waits until `condition` holds, checking every 20 ms; returns whether it did within
/// `timeout` seconds.
func waitUntil(_ timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

/// A stand-in for systemd's `$NOTIFY_SOCKET`: a datagram socket whose messages (`READY=1`,
/// `WATCHDOG=1`, `STATUS=…`) are recorded with the time each arrived.
final class NotifyListener: @unchecked Sendable {
    // @unchecked: `messages` and `closed` are behind locks; the rest is set once in init.
    let path: String
    private let fd: Int32
    private let messages = Locked<[(time: Date, text: String)]>([])
    private let closed = Locked(false)
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        path = try testSocketPath("notify.sock")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, withUnixAddress(path, { bind(fd, $0, $1) }) == 0 else {
            throw ProgramFailure(description: "notify socket \(path): \(String(cString: strerror(errno)))")
        }
        let thread = Thread { [fd, messages, closed, done] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !closed.withLock({ $0 }) {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = recv(fd, &buffer, buffer.count, 0)
                if count > 0 {
                    let text = String(decoding: buffer[0..<count], as: UTF8.self)
                    messages.withLock { $0.append((Date(), text)) }
                }
            }
            done.signal()
        }
        thread.start()
    }

    /// The environment that points the daemon here, with its watchdog at `watchdogSeconds`.
    func environment(watchdogSeconds: Double) -> [String: String] {
        ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": String(Int(watchdogSeconds * 1_000_000))]
    }

    var all: [(time: Date, text: String)] { messages.withLock { $0 } }

    /// When each `WATCHDOG=1` arrived.
    var pings: [Date] { all.filter { $0.text == "WATCHDOG=1" }.map(\.time) }

    /// Waits until the messages satisfy `predicate`.
    func waitFor(timeout: Double, _ predicate: ([(time: Date, text: String)]) -> Bool) -> Bool {
        waitUntil(timeout) { predicate(all) }
    }

    deinit {
        closed.withLock { $0 = true }
        _ = done.wait(timeout: .now() + 5)
        close(fd)
    }
}

/// A program's standard output through a pipe of one page (4 KiB) that the test reads, or
/// stops reading: while it does not read, the program's writes block once the pipe is full,
/// as they would with a consumer (journald, a pipeline) that stopped taking them.
final class GatedOutput: @unchecked Sendable {
    // @unchecked: the mutable state is in `state` (a lock); the rest is set once in init.
    private struct State {
        var data = Data()
        var paused = false
        var eof = false
    }

    /// The end to give the program as its standard output; close it once the program runs.
    let writeEnd: FileHandle
    private let readFD: Int32
    private let state = Locked(State())
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw ProgramFailure(description: "pipe: \(String(cString: strerror(errno)))") }
        // F_SETPIPE_SZ (Linux): the smallest pipe, so that a few lines fill it.
        _ = fcntl(ends[1], 1031, Int32(4096))
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        readFD = ends[0]
        writeEnd = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        let thread = Thread { [readFD, state, done] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                if state.withLock({ $0.paused }) {
                    usleep(10_000)
                    continue
                }
                var poller = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = read(readFD, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                state.withLock { $0.data.append(contentsOf: buffer[0..<count]) }
            }
            state.withLock { $0.eof = true }
            done.signal()
        }
        thread.start()
    }

    /// Stops reading: the program's output fills the pipe, then its writes block.
    func pause() { state.withLock { $0.paused = true } }

    /// Reads again.
    func resume() { state.withLock { $0.paused = false } }

    /// Bytes written and not read yet.
    var pendingBytes: Int { unreadBytes(readFD) }

    /// The complete lines read so far.
    var lines: [String] {
        let text = String(decoding: state.withLock { $0.data }, as: UTF8.self)
        let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
        return complete.split(separator: "\n").map(String.init)
    }

    /// The first complete line that satisfies `predicate`, read within `timeout` seconds.
    func waitForLine(timeout: Double, _ predicate: ([String: Any]) -> Bool) -> [String: Any]? {
        var found: [String: Any]?
        _ = waitUntil(timeout) {
            found = lines.lazy.compactMap { try? parseJSONObject($0) }.first(where: predicate)
            return found != nil
        }
        return found
    }

    /// Waits for the program to close its end (it exited).
    func waitForEOF(timeout: Double) -> Bool {
        resume()
        return done.wait(timeout: .now() + timeout) == .success
    }

    deinit {
        resume()
        close(readFD)
    }
}

/// A media-daemon log read back: its lines parsed, by playback.
struct DaemonLog {
    let lines: [[String: Any]]

    init(_ lines: [[String: Any]]) { self.lines = lines }

    init(text: String) throws {
        lines = try text.split(separator: "\n").map { try parseJSONObject(String($0)) }
    }

    /// The lines of event `name`.
    func events(_ name: String) -> [[String: Any]] { lines.filter { eventName($0) == name } }

    /// The playback's lines of event `name`, by playback id.
    func byPlayback(_ name: String) -> [Int: [[String: Any]]] {
        Dictionary(grouping: events(name).filter { $0["playback"] is Int }, by: { $0["playback"] as! Int })
    }

    /// The times (`t`) of the lines of event `name`.
    func times(_ name: String) -> [Double] { events(name).compactMap { $0["t"] as? Double } }

    /// Checks the playbacks: every `PlaybackBegan` has exactly one `PlaybackEnded` and the
    /// other way round, ids go 1, 2, 3 … in the order they began, and every line of a playback
    /// comes after its `PlaybackBegan` and before the next one's, with its entry. Returns the
    /// failures, empty when all hold.
    func playbackViolations() -> [String] {
        var failures: [String] = []
        var entryOf: [Int: Int] = [:]
        var endings: [Int: Int] = [:]
        var latest = 0
        for line in lines {
            guard let playback = line["playback"] as? Int else { continue }
            let seq = line["seq"] as? Int ?? -1
            switch eventName(line) {
            case "PlaybackBegan":
                if playback != latest + 1 { failures.append("seq \(seq): playback \(playback) began after \(latest)") }
                latest = max(latest, playback)
                entryOf[playback] = line["entry_id"] as? Int
            case "PlaybackEnded":
                endings[playback, default: 0] += 1
            default:
                break
            }
            if playback != latest {
                failures.append("seq \(seq): a line of playback \(playback) while \(latest) is the latest: \(line)")
            }
            if entryOf[playback] == nil || line["entry_id"] as? Int != entryOf[playback] {
                failures.append("seq \(seq): entry \(line["entry_id"] ?? "none") for playback \(playback)")
            }
        }
        for playback in 1..<(latest + 1) where endings[playback] != 1 {
            failures.append("playback \(playback) ended \(endings[playback] ?? 0) times")
        }
        for playback in endings.keys where playback > latest {
            failures.append("playback \(playback) ended without beginning")
        }
        return failures
    }

    /// The longest time (s) between consecutive lines of event `name` from `start` to `end`
    /// (the log's `t`), those ends included as if they were such lines.
    func longestStretch(_ name: String, from start: Double, to end: Double) -> Double {
        let times = [start] + self.times(name).filter { $0 > start && $0 < end } + [end]
        return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
    }
}

/// The value at `fraction` (0 to 1) of `values` sorted.
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}
