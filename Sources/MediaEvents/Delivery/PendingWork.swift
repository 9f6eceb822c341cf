import Dispatch
import Glibc
import Synchronization

/// What a lease in the pending work can tell about itself: whether deliveries queued on the
/// queue the calling thread runs keep it in use (they run only after that thread returns).
protocol LeaseHolder: AnyObject, Sendable {
    var leaseWaitsForCurrentQueue: Bool { get }
}

/// A count of work that must finish before a program may exit, with the leases among it by
/// handler, so that a wait inside a delivery can leave out the leases that delivery keeps
/// in use (they cannot be dropped before it returns), and those that deliveries queued behind
/// it on its own queue keep in use.
final class PendingWork: @unchecked Sendable {
    // @unchecked: `count` and `leases` are touched only with `mutex` locked.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var count = 0
    private var leases: [UInt: (count: Int, holder: any LeaseHolder)] = [:]
    /// The work other than leases, by where it runs (indexed by `Kind.rawValue`).
    private var byKind = [Int](repeating: 0, count: Kind.allCases.count)

    /// Where a piece of pending work runs: for the description of what is pending.
    enum Kind: Int, CaseIterable, Sendable {
        case release, teardown, streams, otherQueue, parse

        fileprivate init(_ queue: DispatchQueue) {
            if queue === ServiceQueues.release {
                self = .release
            } else if queue === ServiceQueues.teardown {
                self = .teardown
            } else if queue === ServiceQueues.streams {
                self = .streams
            } else {
                self = .otherQueue
            }
        }

        var name: String {
            switch self {
            case .release: "on the release queue"
            case .teardown: "on the teardown queue"
            case .streams: "on the streams queue"
            case .otherQueue: "on control or delivery queues"
            case .parse: "parses"
            }
        }
    }

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// The work pending now, how much of it is leases, and where the rest runs (such as
    /// "3 on the release queue, 1 parses"): for a test's failure message.
    var pending: (count: Int, leases: Int, kinds: String) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let kinds = Kind.allCases.filter { byKind[$0.rawValue] != 0 }.map { "\(byKind[$0.rawValue]) \($0.name)" }
        let leaseCount = leases.values.reduce(0) { $0 + $1.count }
        return (count, leaseCount, kinds.isEmpty ? "no other" : kinds.joined(separator: ", "))
    }

    /// One more piece of work, of `kind`.
    func enter(_ kind: Kind) {
        pthread_mutex_lock(mutex)
        count += 1
        byKind[kind.rawValue] += 1
        pthread_mutex_unlock(mutex)
    }

    func leave(_ kind: Kind) {
        pthread_mutex_lock(mutex)
        count -= 1
        byKind[kind.rawValue] -= 1
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body`, a wrapper's `deinit`, counted as pending work: from before it ends the
    /// wrapper's subscriptions, whose completions may run at once on the release queue, until
    /// it has queued the teardown, which counts on its own. A program woken by a completion
    /// then finds the teardown pending. (A teardown deferred until a handler of the sender
    /// returns, `TeardownAfterSenderHandler`, counts as a lease of that handler's thread until
    /// then.)
    func countingDeinit(_ body: () -> Void) {
        enter(.otherQueue)
        defer { leave(.otherQueue) }
        body()
    }

    /// One more piece of work: the lease of `holder`, known as `lease`.
    func enter(lease: UInt, holder: any LeaseHolder) {
        pthread_mutex_lock(mutex)
        count += 1
        leases[lease, default: (0, holder)].count += 1
        pthread_mutex_unlock(mutex)
    }

    func leave(lease: UInt) {
        pthread_mutex_lock(mutex)
        count -= 1
        if let entry = leases[lease] {
            leases[lease] = entry.count == 1 ? nil : (entry.count - 1, entry.holder)
        }
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `work` on `queue`, counted until it has returned and what it captured is
    /// released: a teardown's closure may hold the last reference to a wrapper (a VLM's holds
    /// its library), whose `deinit` then releases libvlc's object, unloading plugins. Were the
    /// closure released after the count fell, a program could exit while that runs.
    func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let kind = Kind(queue)
        let parcel = Parcel(work)
        enter(kind)
        queue.async {
            parcel.take()?()
            self.leave(kind)
        }
    }

    /// Waits until nothing is pending but the leases of `excluded` handlers and the leases
    /// that deliveries queued behind the calling thread's queue keep (and, with
    /// `ignoringParses`, the parses), or until `slice`.
    func waitForIdle(excluding excluded: [UInt], ignoringParses: Bool = false, until slice: DispatchTime) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let now = DispatchTime.now()
        let remaining = slice > now ? slice.uptimeNanoseconds - now.uptimeNanoseconds : 0
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = UInt64(deadline.tv_sec) * 1_000_000_000 + UInt64(deadline.tv_nsec) + remaining
        deadline = timespec(tv_sec: Int(end / 1_000_000_000), tv_nsec: Int(end % 1_000_000_000))
        while true {
            let ignored = kept(excluding: excluded) + (ignoringParses ? byKind[Kind.parse.rawValue] : 0)
            if count - ignored == 0 { return true }
            if pthread_cond_timedwait(changed, mutex, &deadline) == ETIMEDOUT {
                return count - kept(excluding: excluded) - (ignoringParses ? byKind[Kind.parse.rawValue] : 0) == 0
            }
        }
    }

    /// The leases that cannot be dropped before the caller returns. Asks each holder without
    /// a lock of its own (atomic loads and a queue-specific lookup).
    private func kept(excluding excluded: [UInt]) -> Int {
        leases.reduce(0) { sum, lease in
            excluded.contains(lease.key) || lease.value.holder.leaseWaitsForCurrentQueue ? sum + lease.value.count : sum
        }
    }
}
