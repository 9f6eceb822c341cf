// A tiny HTTP/1.0 server on 127.0.0.1 (ephemeral port) for network-media tests: Glibc sockets
// and one `Thread`, no outside packages. Every GET/HEAD for any path gets the same body.
// It stops by itself after `maxConnections` accepted connections or `timeLimit` seconds, and
// on `stop()` (also called from deinit).

import Foundation
import Glibc

public final class LocalHTTPServer: Sendable {
    public enum Mode: Sendable, Equatable {
        /// Serve the whole body (status 200, correct Content-Length).
        case full
        /// Send the headers (announcing the full Content-Length) and the first `afterBytes`
        /// bytes of the body, then close the connection: with `reset: true` by TCP RST
        /// (SO_LINGER 0, "the server died"), otherwise by an ordinary FIN (premature EOF).
        case dieMidStream(afterBytes: Int, reset: Bool = true)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The port the server listens on (127.0.0.1).
    public let port: UInt16
    public let mode: Mode
    private let body: Data
    private let fileName: String
    private let contentType: String
    private let shared: Shared
    private let finished = DispatchSemaphore(value: 0)

    /// http://127.0.0.1:<port>/<file name, percent-encoded>
    public var url: URL {
        let escaped = fileName.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "media"
        return URL(string: "http://127.0.0.1:\(port)/\(escaped)")!
    }

    /// Request lines received so far ("GET /x HTTP/1.1"), in order.
    public var requests: [String] { shared.state.withLock { $0.requests } }
    /// Number of connections accepted so far.
    public var connectionCount: Int { shared.state.withLock { $0.connections } }

    public convenience init(
        serving file: URL, mode: Mode = .full, contentType: String? = nil,
        maxConnections: Int = 16, timeLimit: Double = 30
    ) throws {
        let data = try Data(contentsOf: file)
        try self.init(
            data: data, fileName: file.lastPathComponent, mode: mode,
            contentType: contentType ?? Self.guessContentType(file.pathExtension),
            maxConnections: maxConnections, timeLimit: timeLimit)
    }

    public init(
        data: Data, fileName: String = "media", mode: Mode = .full,
        contentType: String = "application/octet-stream",
        maxConnections: Int = 16, timeLimit: Double = 30
    ) throws {
        self.body = data
        self.fileName = fileName
        self.mode = mode
        self.contentType = contentType
        let (fd, port) = try Self.listenSocket()
        self.port = port
        self.shared = Shared()
        let shared = self.shared, finished = self.finished
        let response = Response(body: data, mode: mode, contentType: contentType)
        let deadline = Date().addingTimeInterval(timeLimit)
        let thread = Thread {
            Self.serve(
                listenFD: fd, response: response, shared: shared,
                maxConnections: maxConnections, deadline: deadline)
            close(fd)
            finished.signal()
        }
        thread.name = "LocalHTTPServer:\(port)"
        thread.start()
    }

    deinit {
        stop()
    }

    /// Stops accepting, waits (up to 5 s) for the server thread to finish. Idempotent.
    public func stop() {
        let first = shared.state.withLock { state -> Bool in
            defer { state.stopRequested = true }
            return !state.stopRequested
        }
        if first {
            _ = finished.wait(timeout: .now() + 5)
            finished.signal()  // let later stop() calls return immediately
        }
    }

    /// A local TCP port with nothing listening on it (bound to get a free number, then closed):
    /// connecting to it is refused.
    public static func closedPort() throws -> UInt16 {
        let (fd, port) = try listenSocket(listen: false)
        close(fd)
        return port
    }

    // MARK: Internals

    private final class Shared: Sendable {
        struct State {
            var stopRequested = false
            var connections = 0
            public var requests: [String] = []
        }
        let state = Locked(State())
    }

    private struct Response: Sendable {
        let body: Data
        let mode: Mode
        let contentType: String
    }

    private static func guessContentType(_ ext: String) -> String {
        switch ext.lowercased() {
        case "wav": return "audio/wav"
        case "ogg": return "audio/ogg"
        case "flac": return "audio/flac"
        case "mp3": return "audio/mpeg"
        case "m3u": return "audio/x-mpegurl"
        default: return "application/octet-stream"
        }
    }

    /// A TCP socket bound to a free port of 127.0.0.1, listening unless `doListen` is false,
    /// and its port.
    static func listenSocket(listen doListen: Bool = true) throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let message = String(cString: strerror(errno)); close(fd)
            throw Failure(description: "bind: \(message)")
        }
        if doListen {
            guard listen(fd, 16) == 0 else {
                let message = String(cString: strerror(errno)); close(fd)
                throw Failure(description: "listen: \(message)")
            }
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard named == 0 else {
            let message = String(cString: strerror(errno)); close(fd)
            throw Failure(description: "getsockname: \(message)")
        }
        return (fd, UInt16(bigEndian: addr.sin_port))
    }

    private static func serve(
        listenFD: Int32, response: Response, shared: Shared,
        maxConnections: Int, deadline: Date
    ) {
        var accepted = 0
        while accepted < maxConnections, Date() < deadline {
            if shared.state.withLock({ $0.stopRequested }) { return }
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, 50)
            if ready <= 0 { continue }
            let client = accept(listenFD, nil, nil)
            if client < 0 { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            accepted += 1
            shared.state.withLock { $0.connections += 1 }
            handle(client: client, response: response, shared: shared, deadline: deadline)
        }
    }

    private static func handle(client: Int32, response: Response, shared: Shared, deadline: Date) {
        var closeByReset = false
        defer {
            if closeByReset {
                var lin = linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &lin, socklen_t(MemoryLayout<linger>.size))
            }
            close(client)
        }
        // Bounded waits so a silent client cannot hold the thread.
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))

        // Read the request head (up to the blank line, at most 16 KiB).
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while head.count < 16384 {
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            head.append(contentsOf: buffer[0..<n])
            if head.count >= 4, head.lastIndex(of: terminator) != nil { break }
        }
        let text = String(decoding: head, as: UTF8.self)
        let requestLine = text.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        shared.state.withLock { $0.requests.append(requestLine) }
        let isHead = requestLine.hasPrefix("HEAD ")
        guard requestLine.hasPrefix("GET ") || isHead else {
            _ = sendAll(client, Array("HTTP/1.0 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n".utf8), deadline)
            return
        }

        let headers =
            "HTTP/1.0 200 OK\r\n"
            + "Content-Type: \(response.contentType)\r\n"
            + "Content-Length: \(response.body.count)\r\n"
            + "Connection: close\r\n\r\n"
        guard sendAll(client, Array(headers.utf8), deadline), !isHead else { return }

        switch response.mode {
        case .full:
            _ = sendAll(client, [UInt8](response.body), deadline)
        case let .dieMidStream(afterBytes, reset):
            _ = sendAll(client, [UInt8](response.body.prefix(max(0, afterBytes))), deadline)
            if reset {
                // Give the client a moment to read what was sent: an RST can discard data still
                // unread in its receive buffer.
                usleep(100_000)
                closeByReset = true
            }
        }
    }

    /// Sends everything (MSG_NOSIGNAL: a vanished client must not SIGPIPE the test process).
    private static func sendAll(_ fd: Int32, _ bytes: [UInt8], _ deadline: Date) -> Bool {
        var offset = 0
        while offset < bytes.count {
            if Date() >= deadline { return false }
            let n = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}

private extension Array where Element == UInt8 {
    func lastIndex(of pattern: [UInt8]) -> Int? {
        guard count >= pattern.count else { return nil }
        var i = count - pattern.count
        while i >= 0 {
            if Array(self[i..<(i + pattern.count)]) == pattern { return i }
            i -= 1
        }
        return nil
    }
}
