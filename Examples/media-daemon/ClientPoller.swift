import Dispatch
import ExampleSupport
import Foundation
import Glibc

/// The thread that waits for the control clients' requests: one `poll` over their sockets,
/// each readable socket's handler run from that thread inside `queue.sync`, which libdispatch
/// runs on the calling thread when the queue is free. A request is read, answered and its
/// reply sent in one wake of one thread. A dispatch read source per socket woke libdispatch's
/// manager thread (its `epoll_wait`), which woke a worker for the queue, and re-arming the
/// source woke the manager again: about 3.3 context switches per request, where mpv's IPC
/// thread, polling its own sockets, makes 1.8.
final class ClientPoller: Sendable {
    private struct Watch {
        let id: Int
        /// Gives the socket back (its closer) once no `poll` can name it any more.
        let release: @Sendable () -> Void
    }

    private struct State {
        var watches: [Int32: Watch] = [:]
        /// Releases of sockets no longer watched, run by the thread before its next `poll`.
        var released: [@Sendable () -> Void] = []
        /// Run by the thread when its `poll` returns (each one's byte in the wake pipe makes it
        /// return).
        var probes: [@Sendable () -> Void] = []
    }

    private let state = Guarded(State())
    /// A pipe whose read end is in every `poll`: a byte written wakes the thread to see a
    /// change of the watched sockets.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let queue: DispatchQueue
    private let onReadable: @Sendable (Int) -> Void

    /// Starts the thread; `onReadable(id)` runs on `queue` (from the thread) whenever the
    /// socket watched for `id` has something to read, has closed, or has failed.
    init(queue: DispatchQueue, onReadable: @escaping @Sendable (Int) -> Void) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw UnixSocket.Failure("cannot make the control poller's pipe") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        self.queue = queue
        self.onReadable = onReadable
        let thread = Thread { [self] in run() }
        thread.name = "media-daemon.poll"
        thread.start()
    }

    /// Watches `fd` for client `id`; `release` runs once the thread no longer polls it.
    func watch(_ fd: Int32, id: Int, release: @escaping @Sendable () -> Void) {
        state.withLock { $0.watches[fd] = Watch(id: id, release: release) }
        wake()
    }

    /// Stops watching `fd` (nothing when it is not watched); its release runs on the thread,
    /// before its next `poll`, so that the number is not reused under it.
    func unwatch(_ fd: Int32) {
        let removed = state.withLock { state -> Bool in
            guard let watch = state.watches.removeValue(forKey: fd) else { return false }
            state.released.append(watch.release)
            return true
        }
        if removed { wake() }
    }

    /// Runs `answer` on the thread once its `poll` has returned after this call: the thread
    /// waits for the sockets and gets to read them (the liveness probe of the server).
    func probe(_ answer: @escaping @Sendable () -> Void) {
        state.withLock { $0.probes.append(answer) }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up.
        _ = write(wakeWrite, &byte, 1)
    }

    private func run() {
        var drain = [UInt8](repeating: 0, count: 64)
        var failing = false
        while true {
            let (released, watched) = state.withLock { state in
                defer { state.released = [] }
                return (state.released, state.watches.map { (fd: $0.key, id: $0.value.id) })
            }
            for release in released { release() }
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            fds += watched.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                // ENOMEM passes: the thread tries again a tenth of a second later and says so
                // once (its probes, unanswered meanwhile, make the daemon not live).
                if !failing {
                    printError("media-daemon: --control: poll failed: \(String(cString: strerror(code))); retrying")
                }
                failing = true
                usleep(100_000)
                continue
            }
            failing = false
            if fds[0].revents != 0 { while read(wakeRead, &drain, drain.count) > 0 {} }
            // Taken after the pipe is drained: a probe queued from here on leaves its byte in
            // the pipe, so the next `poll` returns for it at once.
            let probes = state.withLock { state in
                defer { state.probes = [] }
                return state.probes
            }
            for probe in probes { probe() }
            for (index, entry) in watched.enumerated() where fds[index + 1].revents != 0 {
                // Read only while still watched: an unwatched socket waits for its release.
                let id = entry.id
                queue.sync {
                    guard state.withLock({ $0.watches[entry.fd]?.id == id }) else { return }
                    onReadable(id)
                }
            }
        }
    }
}
