import Dispatch
import Glibc

/// SIGTERM, SIGINT, SIGHUP and SIGUSR1, taken by a handler installed synchronously at start
/// that only writes the signal's number to a pipe, read on a queue as ordinary code.
///
/// Not dispatch signal sources: libdispatch registers those asynchronously, and until it has,
/// the signal keeps its previous action; with SIG_IGN, a SIGTERM sent right after start (as
/// soon as READY=1 was seen) was discarded and the daemon never stopped. Here the handler is
/// in place before anything else runs, and a byte written before the read source is ready
/// waits in the pipe.
enum SignalPipe {
    static let handled = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]

    /// Both ends, non-blocking and close-on-exec; made by `install`, before any handler.
    static let fds: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }()

    /// Installs the handler; first thing in main. The signals are blocked meanwhile, so one
    /// sent during the install is delivered to the handler when they are unblocked.
    static func install() {
        var set = sigset_t()
        sigemptyset(&set)
        for number in handled { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let writeEnd = fds.write
        precondition(writeEnd >= 0, "media-daemon: cannot make the signal pipe")
        for number in handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = signalHandler
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// A read source on `queue` that calls `handler` with each signal received, in order.
    static func source(on queue: DispatchQueue, _ handler: @escaping @Sendable (Int32) -> Void)
        -> any DispatchSourceRead
    {
        let readEnd = fds.read
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: queue)
        source.setEventHandler {
            var bytes = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(readEnd, &bytes, bytes.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                for byte in bytes[0..<count] { handler(Int32(byte)) }
            }
        }
        source.resume()
        return source
    }
}

/// Writes the signal's number to the pipe: `write` is async-signal-safe; errno is kept.
private let signalHandler: @convention(c) (Int32) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(SignalPipe.fds.write, &byte, 1)
    errno = saved
}
