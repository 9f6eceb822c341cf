import Dispatch
import Glibc

/// SIGINT and SIGTERM for `media-events log`: the run ends at once, as it would without a
/// handler, but with its last line and its summary written first.
///
/// The C handler only writes the signal's number to a pipe (`write` is async-signal-safe);
/// a read source calls the program's handler as ordinary code, which writes and then ends
/// the process with `_exit`: libvlc's threads are still running, and `exit` would run static
/// destructors under them (see `Output`). libvlc blocks these signals in its own threads, so
/// they reach the program's.
enum InterruptSignals {
    /// A signal received.
    struct Signal: Sendable {
        let number: Int32
        /// `SIGINT` or `SIGTERM`.
        var name: String { number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal \(number)" }
    }

    /// The pipe's ends, non-blocking and close-on-exec, made once.
    private static let fds: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }()

    /// Catches SIGINT and SIGTERM until the returned source is cancelled; `handler` runs for
    /// the first one and returns the exit status.
    static func watch(_ handler: @escaping @Sendable (Signal) -> Int32) -> any DispatchSourceRead {
        let (readEnd, writeEnd) = fds
        precondition(readEnd >= 0 && writeEnd >= 0, "media-events: cannot make the signal pipe")
        let source = DispatchSource.makeReadSource(
            fileDescriptor: readEnd, queue: DispatchQueue(label: "media-events.signals"))
        source.setEventHandler {
            var byte: UInt8 = 0
            guard read(readEnd, &byte, 1) == 1 else { return }
            _exit(handler(Signal(number: Int32(byte))))
        }
        source.resume()
        for number in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = signalHandler
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
        return source
    }
}

/// Writes the signal's number to the pipe; errno is kept.
private let signalHandler: @convention(c) (Int32) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(InterruptSignals.writeEnd, &byte, 1)
    errno = saved
}

extension InterruptSignals {
    /// The pipe's write end, for the C handler.
    fileprivate static var writeEnd: Int32 { fds.write }
}
