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

    /// Every queued release pass and teardown (detach and native release) that has not
    /// finished yet; `VLCLibrary.waitForPendingTeardowns` waits for it.
    static let pendingTeardowns = DispatchGroup()

    /// A new serial queue that carries out one object's blocking libvlc calls in order.
    static func control(for what: String) -> DispatchQueue {
        DispatchQueue(label: "MediaEvents.control.\(what)", qos: qos)
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
                queue.async { self.drain(on: queue) }
            }
        }

        /// How long one drain may keep running batches before it gives the queue back.
        static var drainSliceNanoseconds: UInt64 { 1_000_000 }

        /// Runs batches until none is queued (lingering briefly for more after each), then
        /// returns the queue. Work queued while a drain runs is run by that same drain, so a
        /// block submitted to the queue after an event was sent runs after the event's delivery,
        /// as with one `async` per event. Only a drain that has run for `drainSliceNanoseconds`
        /// yields to the queue's other work first, so a continuous stream cannot starve it.
        private func drain(on queue: DispatchQueue) {
            let start = Self.monotonicNanoseconds()
            repeat {
                let newest = head.exchange(Self.drainActive, ordering: .acquiring) & ~Self.drainActive
                Self.runOldestFirst(newest)
                lingerForWork()
                if head.compareExchange(expected: Self.drainActive, desired: 0, ordering: .acquiringAndReleasing)
                    .exchanged {
                    return
                }
            } while Self.monotonicNanoseconds() - start < Self.drainSliceNanoseconds
            queue.async { self.drain(on: queue) }
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
            while head.load(ordering: .relaxed) == Self.drainActive {
                let now = Self.monotonicNanoseconds()
                if deadline == 0 {
                    deadline = now + Self.lingerNanoseconds
                } else if now >= deadline {
                    return
                }
                sched_yield()
            }
        }

        private static func monotonicNanoseconds() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
    }

    private static let key = DispatchSpecificKey<Mark>()
    private static let marking = Protected<Void>(())

    /// The mark of `queue`, set on first use.
    static func mark(_ queue: DispatchQueue) -> Mark {
        marking.withLock { _ in
            if let existing = queue.getSpecific(key: key) { return existing }
            let mark = Mark()
            queue.setSpecific(key: key, value: mark)
            return mark
        }
    }

    /// Whether the current thread runs a block of the queue that carries `mark`.
    static func isCurrent(_ mark: Mark) -> Bool {
        DispatchQueue.getSpecific(key: key) === mark
    }
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
