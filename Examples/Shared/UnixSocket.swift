import Dispatch
import Glibc

/// Unix-domain socket helpers shared by the daemon's control socket, its systemd
/// notifications and `media-events ctl`.
public enum UnixSocket {
    /// The longest path a `sockaddr_un` holds (108 bytes with its NUL).
    public static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A socket-level failure, with the call and errno's text.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public let code: Int32

        public init(_ what: String, code: Int32 = errno) {
            self.code = code
            description = "\(what) (\(String(cString: strerror(code))))"
        }
    }

    /// Calls `body` with the address of `path`; a path starting with `@` is an abstract
    /// socket (Linux; systemd's `NOTIFY_SOCKET` may be one).
    public static func withAddress<Result>(
        _ path: String,
        _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result? {
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        guard !bytes.isEmpty, bytes.count <= maximumPathBytes else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        // An abstract name is exactly its bytes; a path is NUL-terminated (zeroed above).
        let length = socklen_t(offset + bytes.count + (abstract ? 0 : 1))
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// A new stream socket, close-on-exec, blocking or not.
    public static func stream(nonBlocking: Bool) throws -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw Failure("socket") }
        return fd
    }

    /// Connects a new blocking stream socket to `path`, giving up after `timeout` seconds (a
    /// listener whose backlog stays full, as a daemon that no longer accepts, fails with
    /// EAGAIN instead of blocking forever).
    public static func connect(to path: String, timeout: Double = 10) throws -> Int32 {
        let fd = try stream(nonBlocking: true)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
        while true {
            var code: Int32 = 0
            let connected = withAddress(path) { address, length in
                let result = Glibc.connect(fd, address, length)
                code = errno
                return result == 0
            }
            guard let connected else {
                close(fd)
                throw Failure(
                    "\(path): not a socket path (empty or longer than \(maximumPathBytes) bytes)",
                    code: ENAMETOOLONG)
            }
            if connected { break }
            if code == EINTR { continue }
            // EAGAIN: the backlog is full for now; EINPROGRESS is not used by Unix sockets.
            guard code == EAGAIN, DispatchTime.now().uptimeNanoseconds < deadline else {
                close(fd)
                throw Failure("\(path): cannot connect", code: code)
            }
            usleep(10_000)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Sends all of `bytes` on a blocking socket, never raising SIGPIPE; the errno of a
    /// failure, `nil` when all was sent.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += sent
        }
        return nil
    }
}

/// Splits a byte stream into lines, with a maximum line length.
public struct LineSplitter {
    /// A complete line, or a line that grew past the limit (its bytes dropped up to its end).
    public enum Piece {
        case line([UInt8])
        case tooLong
    }

    public let maximumBytes: Int
    private var partial: [UInt8] = []
    private var skipping = false

    public init(maximumBytes: Int) { self.maximumBytes = maximumBytes }

    /// The pieces completed by `bytes`, in order; a line longer than `maximumBytes` is
    /// reported once, as soon as it is known to be too long, and its rest skipped.
    public mutating func add(_ bytes: UnsafeRawBufferPointer) -> [Piece] {
        var pieces: [Piece] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                if !skipping {
                    partial.append(contentsOf: bytes[start...])
                    if partial.count > maximumBytes {
                        pieces.append(.tooLong)
                        partial = []
                        skipping = true
                    }
                }
                break
            }
            if skipping {
                skipping = false
            } else {
                partial.append(contentsOf: bytes[start..<newline])
                if partial.count > maximumBytes {
                    pieces.append(.tooLong)
                } else {
                    pieces.append(.line(partial))
                }
                partial = []
            }
            start = newline + 1
        }
        return pieces
    }
}
