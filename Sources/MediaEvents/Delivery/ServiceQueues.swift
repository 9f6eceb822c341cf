import Dispatch
import Glibc
import Synchronization

/// The queues MediaEvents runs its own work on.
///
/// Quality of service: work on these queues holds libvlc locks that libvlc's own
/// high-priority threads then wait for. A teardown's `libvlc_event_detach` takes the event
/// manager lock the input thread needs to send its next event; `libvlc_media_player_stop`
/// holds the player's input lock that every getter takes. If these queues ran at utility or
/// background QoS, a user-interactive caller or libvlc's input thread could wait behind
/// low-priority work that the scheduler keeps postponing (priority inversion). They run at
/// `.userInitiated`: above any background work, without competing with a UI thread.
enum ServiceQueues {
    static let qos: DispatchQoS = .userInitiated

    /// The serial queue on which the strong references taken for deliveries are dropped, so
    /// that a wrapper's `deinit` never runs on a libvlc thread.
    static let release = DispatchQueue(label: "MediaEvents.release", qos: qos)

    private static let releaseMark = QueueIdentity.mark(release)

    /// Whether the current thread runs a block of the release queue: lets tests prove that a
    /// wrapper's `deinit` triggered by a delivery runs there and not on libvlc's thread.
    static var isOnReleaseQueue: Bool { QueueIdentity.isCurrent(releaseMark) }

    /// The serial queue that detaches and releases objects that have no control queue of
    /// their own (media, lists), away from libvlc threads and their locks.
    static let teardown = DispatchQueue(label: "MediaEvents.teardown", qos: qos)

    /// The serial queue that resumes event streams' waiting consumers, so that libvlc's
    /// thread never resumes a task (see `EventStreamSink.receive`).
    static let streams = DispatchQueue(label: "MediaEvents.streams", qos: qos)

    /// Every queued release pass, lease, completion and teardown (detach and native
    /// release) that has not finished yet; `VLCLibrary.waitForPendingTeardowns` waits for it.
    static let pendingTeardowns = PendingWork()

    /// A new serial queue that carries out one object's blocking libvlc calls in order.
    static func control(for what: String) -> DispatchQueue {
        DispatchQueue(label: "MediaEvents.control.\(what)", qos: qos)
    }

    /// Drops `value` on the release queue: for wrappers (event payloads, a replaced cache
    /// entry) whose last reference would otherwise go on a libvlc thread. The value is moved
    /// into a parcel first, so no copy of it is left to be released here.
    static func releaseLater<Value>(_ value: consuming Value) {
        let parcel = Parcel(value)
        pendingTeardowns.async(on: release) { parcel.empty() }
    }

    /// Gives a blocking wait a bounded slice at a time and tells it to give up when waiting
    /// may deadlock: when it is made from a delivery or from a queue MediaEvents delivers to
    /// while a synchronous delivery is waiting to enter its queue. That delivery's thread
    /// holds libvlc's locks, which what is awaited may need, and its queue may be this one,
    /// or one that targets it (which libdispatch does not let us ask about).
    static func wait(until done: (DispatchTime) -> Bool, timeout: DispatchTime) -> Bool {
        while true {
            let slice = min(timeout, .now() + .milliseconds(5))
            if done(slice) { return true }
            if DispatchTime.now() >= timeout || QueueIdentity.waitMayDeadlock { return false }
        }
    }
}

/// Holds one value until the release queue empties it.
private final class Parcel<Value>: @unchecked Sendable {
    // @unchecked: written once at creation and once by the one block that empties it.
    private var value: Value?

    init(_ value: consuming Value) { self.value = consume value }

    func empty() { value = nil }
}

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

/// Identifies the queue the current thread is running on, so that a synchronous delivery
/// onto that very queue runs inline instead of trapping in `DispatchQueue.sync`.
///
/// Each queue used for synchronous delivery is marked once with a unique token under a
/// private key; `DispatchQueue.getSpecific(key:)` then answers for the current queue and the
/// queues it targets, which are exactly the cases where `sync` would deadlock or trap.
enum QueueIdentity {
    /// One per queue used for delivery: identifies the queue, and batches the asynchronous
    /// deliveries of every object that targets it into one list, so that events of different
    /// objects (a player and its media) keep libvlc's order on a shared queue, and a burst
    /// costs one `async` per batch rather than one per event.
    ///
    /// The list is lock-free: libvlc's thread pushes a delivery with one compare-exchange
    /// on `head`, and the drain takes the whole list with one exchange.
    final class Mark: Sendable {
        /// This mark's own key. One key shared by every mark would be shadowed: `getSpecific`
        /// answers with the nearest queue in the target hierarchy that has a value for the key,
        /// so a block on a marked queue R that targets a marked queue Q would see R's mark and
        /// miss that it owns Q (then `Q.sync` traps). With a key per mark the question "does
        /// this thread run a block of Q, directly or through a queue targeting Q" is exact.
        let key = DispatchSpecificKey<Mark>()

        /// Synchronous deliveries waiting to enter this queue (their threads hold libvlc's
        /// locks meanwhile): a wait made from a block of this queue must give up instead of
        /// waiting for work that may need those locks.
        let syncWaiters = Atomic<Int>(0)
        /// Live handlers whose synchronous configuration delivers to this queue.
        let syncHandlers = Atomic<Int>(0)
        fileprivate let isRegistered = Atomic<Bool>(false)

        /// The newest queued delivery's `Unmanaged` bits (each links to the one queued before
        /// it), or'ed with `drainActive`. A push that finds the bit clear sets it and
        /// schedules the drain; the drain clears it only by exchanging exactly `drainActive`
        /// (nothing queued) for 0.
        private let head = Atomic<UInt>(0)
        private static var drainActive: UInt { 1 }

        /// How long a drain that ran out of work waits for more before it gives the queue
        /// back. While it waits, the producer adds to its batch without `async`, which would
        /// wake the queue's thread (a system call on libvlc's thread) for every event of a
        /// burst that the queue drains faster than libvlc sends.
        static var lingerNanoseconds: UInt64 { 20_000 }

        /// Queues `delivery` (retained; the drain releases it) on `queue` (the queue this mark
        /// belongs to), after every delivery queued before it through this mark.
        func enqueue(_ delivery: Unmanaged<QueuedDelivery>, on queue: DispatchQueue) {
            let node = UInt(bitPattern: delivery.toOpaque())
            var old = head.load(ordering: .relaxed)
            while true {
                delivery._withUnsafeGuaranteedRef { $0.older = old & ~Self.drainActive }
                // Releasing: the drain that takes the node sees its fields and `older`.
                let (exchanged, current) = head.compareExchange(
                    expected: old, desired: node | Self.drainActive,
                    successOrdering: .releasing, failureOrdering: .relaxed)
                if exchanged { break }
                old = current
            }
            if old & Self.drainActive == 0 {
                DrainStatistics.shared.drainsScheduled.add(1, ordering: .relaxed)
                queue.async { self.drain(on: queue) }
            }
        }

        /// How long one drain may keep running batches before it gives the queue back.
        static var drainSliceNanoseconds: UInt64 { 1_000_000 }

        /// Runs batches until none is queued (lingering briefly for more after each), then
        /// returns the queue. Work queued while a drain runs is run by that same drain, so a
        /// block submitted to the queue after an event was sent runs after the event's delivery,
        /// as with one `async` per event. A drain that has run for `drainSliceNanoseconds` runs
        /// what is queued at that moment and gives the queue back, so a continuous stream
        /// cannot starve the queue's other work.
        private func drain(on queue: DispatchQueue) {
            let start = Self.monotonicNanoseconds()
            let statistics = DrainStatistics.shared
            repeat {
                let newest = head.exchange(Self.drainActive, ordering: .acquiring) & ~Self.drainActive
                statistics.batches.add(1, ordering: .relaxed)
                Self.runOldestFirst(newest)
                lingerForWork()
                if head.compareExchange(expected: Self.drainActive, desired: 0, ordering: .acquiringAndReleasing)
                    .exchanged {
                    statistics.queueGivenBack.add(1, ordering: .relaxed)
                    return
                }
            } while Self.monotonicNanoseconds() - start < Self.drainSliceNanoseconds
            statistics.sliceEnded.add(1, ordering: .relaxed)
            // Slice used up: run what is queued now, then give the queue back. Re-queueing
            // the drain instead would put these deliveries behind blocks submitted after
            // their events; events pushed after this exchange find the bit clear and queue
            // a drain of their own, ahead of any block submitted after them.
            Self.runOldestFirst(head.exchange(0, ordering: .acquiringAndReleasing) & ~Self.drainActive)
        }

        /// Reverses the list (pushed newest first) and runs it in the order it was queued.
        private static func runOldestFirst(_ newest: UInt) {
            var node = newest
            var oldest: UInt = 0
            while node != 0 {
                let delivery = Unmanaged<QueuedDelivery>.fromOpaque(UnsafeRawPointer(bitPattern: node)!)
                    .takeUnretainedValue()
                let older = delivery.older
                delivery.older = oldest
                oldest = node
                node = older
            }
            while oldest != 0 {
                let delivery = Unmanaged<QueuedDelivery>.fromOpaque(UnsafeRawPointer(bitPattern: oldest)!)
                    .takeRetainedValue()
                oldest = delivery.older
                delivery.run()
            }
        }

        /// Waits, yielding the CPU, until a delivery is queued or `lingerNanoseconds` have
        /// passed. Bounded, so the queue is always given back.
        private func lingerForWork() {
            var deadline: UInt64 = 0
            var yields = 0
            defer { DrainStatistics.shared.lingerYields.add(yields, ordering: .relaxed) }
            while head.load(ordering: .relaxed) == Self.drainActive {
                let now = Self.monotonicNanoseconds()
                if deadline == 0 {
                    deadline = now + Self.lingerNanoseconds
                } else if now >= deadline {
                    DrainStatistics.shared.lingerExpired.add(1, ordering: .relaxed)
                    return
                }
                sched_yield()
                yields += 1
            }
        }

        private static func monotonicNanoseconds() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
    }

    /// Finds a queue's own mark: `queue.getSpecific(key:)` reads that queue only, never its
    /// targets, so this key is never used to ask about the current queue.
    private static let lookupKey = DispatchSpecificKey<Mark>()
    private static let marking = Protected<Void>(())

    /// The mark of `queue`, set on first use.
    static func mark(_ queue: DispatchQueue) -> Mark {
        marking.withLock { _ in
            if let existing = queue.getSpecific(key: lookupKey) { return existing }
            let mark = Mark()
            queue.setSpecific(key: lookupKey, value: mark)
            queue.setSpecific(key: mark.key, value: mark)
            return mark
        }
    }

    /// Every mark a configuration delivers to; read by waits after a slice of waiting and by
    /// `setMeta`, never per event.
    private static let deliveryMarks = Protected<[Mark]>([])

    /// Notes that deliveries go to `mark`'s queue; once per mark.
    static func registerForDelivery(_ mark: Mark) {
        if mark.isRegistered.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            deliveryMarks.withLock { $0.append(mark) }
        }
    }

    /// Whether a wait made now may wait for its own caller: it runs in a delivery or on a
    /// delivery queue while some synchronous delivery waits to enter its queue.
    static var waitMayDeadlock: Bool {
        let marks = deliveryMarks.withLock { $0 }
        guard marks.contains(where: { $0.syncWaiters.load(ordering: .acquiring) > 0 }) else { return false }
        return DeliveryContext.isInDelivery || marks.contains { isCurrent($0) }
    }

    /// Whether this thread runs a block of a queue (or of one targeting it) that a
    /// synchronous configuration of a live object delivers to: a libvlc thread holding locks
    /// may be about to wait for it.
    static var isOnSyncDeliveryQueue: Bool {
        deliveryMarks.withLock { $0 }.contains { $0.syncHandlers.load(ordering: .relaxed) > 0 && isCurrent($0) }
    }

    /// Whether the current thread runs a block of the queue that carries `mark`, or of a
    /// queue that targets it.
    static func isCurrent(_ mark: Mark) -> Bool {
        DispatchQueue.getSpecific(key: mark.key) != nil
    }
}

/// How the asynchronous drains of every mark went, for the benchmark's profile of the async
/// route: counted per drain and per batch (never per event), in an object of their own so
/// the counters share no cache line with a mark's list head.
@_spi(Benchmarks)
public final class DrainStatistics: Sendable {
    public static let shared = DrainStatistics()

    /// Drains scheduled with `async` by a push that found the queue given back (a wake-up).
    public let drainsScheduled = Atomic<Int>(0)
    /// Lists taken by a drain (each one batch of one or more deliveries).
    public let batches = Atomic<Int>(0)
    /// Drains that found nothing after lingering and gave the queue back.
    public let queueGivenBack = Atomic<Int>(0)
    /// Lingers that ended without work.
    public let lingerExpired = Atomic<Int>(0)
    /// `sched_yield` calls made while lingering.
    public let lingerYields = Atomic<Int>(0)
    /// Drains that used up their slice.
    public let sliceEnded = Atomic<Int>(0)

    /// The counters, in the order of `names`, and resets them.
    public func take() -> [Int] {
        [drainsScheduled.exchange(0, ordering: .relaxed), batches.exchange(0, ordering: .relaxed),
         queueGivenBack.exchange(0, ordering: .relaxed), lingerExpired.exchange(0, ordering: .relaxed),
         lingerYields.exchange(0, ordering: .relaxed), sliceEnded.exchange(0, ordering: .relaxed)]
    }

    public static let names = ["drains scheduled", "batches", "queue given back", "linger expired",
                               "linger yields", "slice ended"]
}

/// One asynchronous delivery waiting in a `QueueIdentity.Mark`'s list; subclasses carry the
/// typed payload, so queueing an event costs one allocation (this node) and no closure.
class QueuedDelivery: @unchecked Sendable {
    // @unchecked: `older` is written by the producer before the releasing compare-exchange
    // that publishes the node, then only by the one drain that took the list (acquiring).
    fileprivate var older: UInt = 0

    /// Delivers; called once, on the mark's queue.
    func run() {}
}
