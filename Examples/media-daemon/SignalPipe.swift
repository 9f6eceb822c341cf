import Dispatch
import Glibc

/// SIGTERM, SIGINT, SIGHUP and SIGUSR1, blocked in every thread from the start of main and
/// taken with `sigwait` by the main thread once the daemon runs (`waitForever`), which writes
/// each signal's number to a pipe read on a queue as ordinary code.
///
/// Not dispatch signal sources: libdispatch registers those asynchronously, and until it has,
/// the signal keeps its previous action; with SIG_IGN, a SIGTERM sent right after start (as
/// soon as READY=1 was seen) was discarded and the daemon never stopped. Here the signals are
/// blocked before anything else runs: one sent before the main thread waits stays pending,
/// and a byte written before the read source is ready waits in the pipe.
///
/// Not a signal handler and `dispatchMain()` either: `dispatchMain()` parks the main thread in
/// `sigsuspend` with every signal unblocked, so a handler was needed, and it ran on that
/// thread's stack below the frame of main, which never returns: AddressSanitizer reported the
/// handler's writes there as a stack overflow. The daemon never uses the main queue.
enum SignalPipe {
    static let handled = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]

    /// Both ends, non-blocking and close-on-exec; made by `install`.
    static let fds: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }()

    private static var signals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in handled { sigaddset(&set, number) }
        return set
    }

    /// Blocks the signals on the main thread, first thing in main: every thread made from
    /// here on (libvlc's, libdispatch's) inherits the mask, so they stay pending for
    /// `waitForever`.
    static func install() {
        var set = signals
        pthread_sigmask(SIG_BLOCK, &set, nil)
        precondition(fds.write >= 0, "media-daemon: cannot make the signal pipe")
    }

    /// Takes the signals on the calling thread (main, once everything runs) and writes each
    /// one's number to the pipe; never returns.
    static func waitForever() -> Never {
        var set = signals
        let writeEnd = fds.write
        while true {
            var number: Int32 = 0
            guard sigwait(&set, &number) == 0 else { continue }
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(writeEnd, &byte, 1)
        }
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
