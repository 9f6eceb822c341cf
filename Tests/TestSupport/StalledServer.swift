import Glibc

/// A TCP server on 127.0.0.1 that accepts connections and never answers: the kernel
/// completes each handshake into the listen backlog and nothing ever reads or writes.
public final class StalledServer {
    public let fd: Int32
    public let port: UInt16

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestMedia.Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && listen(fd, 16) == 0
                    && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestMedia.Failure(description: "bind/listen: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// An http URL on this server.
    public var url: String { "http://127.0.0.1:\(port)/stalled.wav" }

    deinit { close(fd) }
}
