// A client of media-daemon's --control socket, written against POSIX sockets as any client
// would be; every wait has a deadline.

import Foundation
import Glibc
import TestSupport

/// A short socket path for a test: under /tmp (a sockaddr_un holds 107 bytes; the media
/// root's paths may be longer), removed at exit with the media by `TestMedia.cleanUp`'s
/// caller removing the directory. Made in a fresh directory of its own.
func testSocketPath(_ name: String = "control.sock") throws -> String {
    var template = Array("/tmp/mdctl-XXXXXX".utf8CString)
    guard let directory = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw ProgramFailure(description: "mkdtemp: \(String(cString: strerror(errno)))")
    }
    let path = String(cString: directory)
    ControlClient.madeDirectories.withLock { $0.append(path) }
    return path + "/" + name
}

/// `sockaddr_un` for `path`, passed to `body`.
func withUnixAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
}

final class ControlClient {
    static let madeDirectories = Locked<[String]>([])

    let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// Event lines (no `request_id`) read so far, in order.
    private(set) var events: [String] = []
    /// How many of `events` `waitForEvent` has looked at.
    private var examined = 0
    private(set) var sawEOF = false

    /// Connects to `path`, retrying while the daemon starts (until `timeout`).
    init(path: String, timeout: Double = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw ProgramFailure(description: "socket: \(String(cString: strerror(errno)))") }
            if withUnixAddress(path, { connect(fd, $0, $1) }) == 0 {
                self.fd = fd
                return
            }
            let code = errno
            close(fd)
            guard Date() < deadline else {
                throw ProgramFailure(description: "cannot connect to \(path): \(String(cString: strerror(code)))")
            }
            usleep(50_000)
        }
    }

    deinit { close(fd) }

    /// Sends `bytes` completely (blocking).
    func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw ProgramFailure(description: "send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    func sendRaw(_ text: String) throws { try sendRaw(Array(text.utf8)) }

    /// Sends what the socket takes without waiting; returns the bytes sent.
    func sendWithoutWaiting(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if sent <= 0 { break }
            offset += sent
        }
        return offset
    }

    /// Bytes of the lines `nextLine` returned so far, newlines included: a line's offset in
    /// what the server sent is this before the call that returns it.
    private(set) var consumedBytes = 0
    /// Where each read ended, as offsets in what the server sent: the bytes between two of
    /// them came in one `recv`.
    private(set) var readEnds: [Int] = []

    /// The next line, `nil` at EOF or after `timeout` seconds.
    func nextLine(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                consumedBytes += newline + 1
                return line
            }
            if sawEOF { return nil }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 60) * 1000) + 1)
            if ready <= 0 { continue }
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                sawEOF = true
                continue
            }
            buffer += chunk[0..<count]
            readEnds.append((readEnds.last ?? 0) + count)
        }
    }

    /// Sends `{"command": command, "request_id": id, ...arguments}` and returns the reply with
    /// that id; event lines before it are kept in `events`.
    @discardableResult
    func request(_ command: String, _ arguments: [String: Any] = [:], timeout: Double = 30) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var object = arguments
        object["command"] = command
        object["request_id"] = id
        try sendRaw(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self) + "\n")
        return try reply(to: id, timeout: timeout)
    }

    /// The reply with `request_id` `id` (a number), collecting events before it.
    func reply(to id: Int, timeout: Double = 30) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while let line = nextLine(timeout: deadline.timeIntervalSinceNow) {
            // Event lines start with the log's "seq" (or are the daemon's last "event" line);
            // only replies are parsed here, which keeps a busy client cheap.
            if !line.hasPrefix(#"{"request_id":"#) { events.append(line); continue }
            let object = try parseJSONObject(line)
            if object["request_id"] as? Int == id { return object }
        }
        throw ProgramFailure(
            description: "no reply to request \(id) within \(timeout) s (EOF: \(sawEOF)); "
                + "last event: \(events.last ?? "none")")
    }

    /// Reads events until one satisfies `predicate`; returns it parsed, `nil` at EOF or timeout.
    /// Events read while waiting for replies count, each looked at once.
    func waitForEvent(timeout: Double, _ predicate: ([String: Any]) -> Bool) -> [String: Any]? {
        while examined < events.count {
            examined += 1
            if let object = try? parseJSONObject(events[examined - 1]), predicate(object) { return object }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while let line = nextLine(timeout: deadline.timeIntervalSinceNow) {
            guard let object = try? parseJSONObject(line) else { continue }
            if object["request_id"] != nil { continue }
            events.append(line)
            examined = events.count
            if predicate(object) { return object }
        }
        return nil
    }

    /// Every line until EOF; `nil` when the connection is still open after `timeout`.
    func readToEnd(timeout: Double) -> [String]? {
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        while let line = nextLine(timeout: deadline.timeIntervalSinceNow) { lines.append(line) }
        return sawEOF ? lines : nil
    }
}

/// The `event` of a JSON line.
func eventName(_ object: [String: Any]?) -> String? { object?["event"] as? String }
