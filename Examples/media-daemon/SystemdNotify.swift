import Dispatch
import ExampleSupport
import Glibc

/// systemd's `Type=notify` protocol, written directly: one datagram per message
/// (`READY=1`, `STATUS=…`, `STOPPING=1`, `WATCHDOG=1`) to the socket named by
/// `$NOTIFY_SOCKET` (a path, or `@name` for an abstract socket). Without the variable,
/// nothing is sent. Sending never waits: a message the socket cannot take now is dropped.
final class SystemdNotifier: Sendable {
    private let path: String
    private let fd: Int32
    private let watchdog: Guarded<(any DispatchSourceTimer)?> = Guarded(nil)

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

    /// Sends `WATCHDOG=1` every half `$WATCHDOG_USEC` from a timer on `queue` (the control
    /// queue): when that queue is stuck, the pings stop and systemd restarts the daemon.
    /// Nothing when the variable is unset, or `$WATCHDOG_PID` names another process.
    func startWatchdog(on queue: DispatchQueue) {
        guard let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }),
            let usec = UInt64(text), usec > 0
        else { return }
        if let pid = getenv("WATCHDOG_PID").map({ String(cString: $0) }), !pid.isEmpty, pid != String(getpid()) {
            return
        }
        let interval = DispatchTimeInterval.microseconds(Int(min(usec / 2, UInt64(Int32.max))))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: interval)
        timer.setEventHandler { [weak self] in self?.send("WATCHDOG=1") }
        watchdog.withLock { $0 = timer }
        timer.resume()
    }
}
