import Glibc

/// A TCP server on 127.0.0.1 that accepts connections and never answers: the kernel
/// completes each handshake into the listen backlog and nothing ever reads or writes.
public final class StalledServer {
    public let fd: Int32
    public let port: UInt16

    public init() throws {
        (fd, port) = try LocalHTTPServer.listenSocket()
    }

    /// An http URL on this server.
    public var url: String { "http://127.0.0.1:\(port)/stalled.wav" }

    /// Waits until a client has connected (a connection waits in the listen backlog) or
    /// `timeout` seconds have passed; returns whether one has.
    public func waitForConnection(timeout: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, Int32(timeout * 1000)) == 1
    }

    deinit { close(fd) }
}
