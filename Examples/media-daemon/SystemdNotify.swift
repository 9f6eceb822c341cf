import Dispatch
import ExampleSupport
import Glibc

/// systemd's `Type=notify` protocol, written directly: one datagram per message
/// (`READY=1`, `STATUS=…`, `STOPPING=1`, `WATCHDOG=1`) to the socket named by
/// `$NOTIFY_SOCKET` (a path, or `@name` for an abstract socket). Without the variable,
/// nothing is sent. Sending never waits: a message the socket cannot take now is dropped.
/// The watchdog's pings come from `Watchdog`, only while the daemon is live.
final class SystemdNotifier: Sendable {
    private let path: String
    private let fd: Int32

    /// A notifier for `$NOTIFY_SOCKET`, `nil` when it is unset or unusable.
    init?() {
        guard let value = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !value.isEmpty,
            value.hasPrefix("/") || value.hasPrefix("@")
        else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        path = value
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends `message` (newline-separated `KEY=value` assignments).
    func send(_ message: String) {
        let bytes = Array(message.utf8)
        _ = UnixSocket.withAddress(path) { address, length in
            bytes.withUnsafeBytes { raw in
                sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), address, length)
            }
        }
    }

    /// `STATUS=text`, on one line.
    func status(_ text: String) {
        send("STATUS=" + text.split(whereSeparator: \.isNewline).joined(separator: " "))
    }
}
