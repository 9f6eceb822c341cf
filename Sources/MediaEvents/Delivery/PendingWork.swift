import Dispatch
import Glibc
import Synchronization

/// A count of work that must finish before a program may exit, with the leases among it by
/// handler, so that a wait inside a delivery can leave out the leases that delivery keeps
/// in use (they cannot be dropped before it returns).
final class PendingWork: @unchecked Sendable {
    // @unchecked: `count` and `leases` are touched only with `mutex` locked.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var count = 0
    private var leases: [UInt: Int] = [:]

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// One more piece of work; `lease` is the handler whose lease it keeps, or 0.
    func enter(lease: UInt = 0) {
        pthread_mutex_lock(mutex)
        count += 1
        if lease != 0 { leases[lease, default: 0] += 1 }
        pthread_mutex_unlock(mutex)
    }

    func leave(lease: UInt = 0) {
        pthread_mutex_lock(mutex)
        count -= 1
        if lease != 0 {
            let left = leases[lease, default: 1] - 1
            leases[lease] = left == 0 ? nil : left
        }
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `work` on `queue`, counted until it has returned.
    func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        enter()
        queue.async {
            work()
            self.leave()
        }
    }

    /// Waits until nothing is pending but the leases of `excluded` handlers, or until `slice`.
    func waitForIdle(excluding excluded: [UInt], until slice: DispatchTime) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let now = DispatchTime.now()
        let remaining = slice > now ? slice.uptimeNanoseconds - now.uptimeNanoseconds : 0
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = UInt64(deadline.tv_sec) * 1_000_000_000 + UInt64(deadline.tv_nsec) + remaining
        deadline = timespec(tv_sec: Int(end / 1_000_000_000), tv_nsec: Int(end % 1_000_000_000))
        while true {
            let kept = excluded.reduce(0) { $0 + (leases[$1] ?? 0) }
            if count - kept == 0 { return true }
            if pthread_cond_timedwait(changed, mutex, &deadline) == ETIMEDOUT {
                let kept = excluded.reduce(0) { $0 + (leases[$1] ?? 0) }
                return count - kept == 0
            }
        }
    }

}
