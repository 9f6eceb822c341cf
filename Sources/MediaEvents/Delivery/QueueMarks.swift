import CDeliveryFrame
import CDeliveryNodes
import Dispatch
import Glibc
import Synchronization

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

        /// How this mark's drains went: counted per drain and per batch, never per event, in
        /// an object of its own so that the counters share no cache line with `head`.
        let statistics = DrainStatistics()

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

        /// Whether a drain lingers after every batch, even one that ran a single delivery.
        /// Otherwise (the delivery queues) see `lingers(delivered:sinceGivenBack:)`. The
        /// stream queue lingers always: it resumes one consumer per batch, so its bursts are
        /// batches of one.
        let lingersAfterEveryBatch: Bool

        /// When the last drain gave the queue back (`monotonicNanoseconds`). Drains of one
        /// mark run one at a time, ordered by `head`'s exchanges.
        let lastGivenBack = Atomic<UInt64>(0)

        init(lingersAfterEveryBatch: Bool) {
            self.lingersAfterEveryBatch = lingersAfterEveryBatch
        }

        /// Whether a delivery queue's drain that has run `delivered` deliveries, and started
        /// `sinceGivenBack` nanoseconds after the previous drain gave the queue back, lingers
        /// after its batch. A lone event, long after the last, is paced: lingering after it
        /// costs the queue's thread CPU time, which on Linux's EEVDF scheduler also costs its
        /// next wake-up (a thread that yielded or spun since it last slept no longer preempts
        /// the thread that wakes it, so the delivery waits for libvlc's thread to block). A
        /// drain that ran more than one delivery, or that started within a linger's span of
        /// the last give-back, serves a burst: where the queue's thread preempts the sender
        /// on one core, each drain runs one event, and without the linger every event would
        /// wake it again.
        static func lingers(delivered: Int, sinceGivenBack: UInt64) -> Bool {
            delivered > 1 || sinceGivenBack < lingerNanoseconds
        }

        /// Queues `node` (made by `QueuedNode.make`; the drain runs and frees it) on `queue`
        /// (the queue this mark belongs to), after every node queued before it through this mark.
        func enqueue(_ node: UnsafeMutableRawPointer, on queue: DispatchQueue) {
            let bits = UInt(bitPattern: node)
            let header = QueuedNode.header(bits)
            var old = head.load(ordering: .relaxed)
            while true {
                header.pointee.older = old & ~Self.drainActive
                // Releasing: the drain that takes the node sees its body and `older`.
                let (exchanged, current) = head.compareExchange(
                    expected: old, desired: bits | Self.drainActive,
                    successOrdering: .releasing, failureOrdering: .relaxed)
                if exchanged { break }
                old = current
            }
            if old & Self.drainActive == 0 {
                statistics.drainsScheduled.add(1, ordering: .relaxed)
                queue.async { self.drain(on: queue) }
                // Still queued (the list is not empty): the queue's thread was woken but did
                // not preempt this one, nor has it started on another core.
                if head.load(ordering: .relaxed) & ~Self.drainActive != 0 { yieldToWokenThread() }
            }
        }

        /// Gives the CPU to the thread this one has just woken for a delivery, if it waits on
        /// this core. The scheduler may put a woken thread on its waker's core even while
        /// another is idle (a virtual machine's wakes an idle virtual CPU only at a cost), and
        /// there it preempts its waker only while it is owed CPU time: otherwise the delivery
        /// waits until libvlc's thread blocks, which for a paced event took about as long
        /// again as the hop itself, and for an input thread that keeps demuxing can take a
        /// whole time slice. One `sched_yield` per wake-up (never per event of a burst, whose
        /// drain is running) lets it run now; where it runs on another core, the yield finds
        /// nothing to switch to and returns.
        func yieldToWokenThread() {
            statistics.handOffYields.add(1, ordering: .relaxed)
            sched_yield()
        }

        /// How long one drain may keep running batches before it gives the queue back.
        static var drainSliceNanoseconds: UInt64 { 1_000_000 }

        /// Runs batches until none is queued (lingering briefly for more after each when it
        /// serves a burst), then returns the queue. Work queued while a drain runs is run by
        /// that same drain, so a block submitted to the queue after an event was sent runs
        /// after the event's delivery, as with one `async` per event. A drain that has run for
        /// `drainSliceNanoseconds` runs what is queued at that moment and gives the queue back,
        /// so a continuous stream cannot starve the queue's other work.
        private func drain(on queue: DispatchQueue) {
            let start = Self.monotonicNanoseconds()
            let sinceGivenBack = start &- lastGivenBack.load(ordering: .relaxed)
            var delivered = 0
            var now = start
            repeat {
                let newest = head.exchange(Self.drainActive, ordering: .acquiring) & ~Self.drainActive
                statistics.batches.add(1, ordering: .relaxed)
                delivered += runOldestFirst(newest)
                if lingersAfterEveryBatch || Self.lingers(delivered: delivered, sinceGivenBack: sinceGivenBack) {
                    lingerForWork()
                }
                now = Self.monotonicNanoseconds()
                // Stored before the exchange that lets the next drain start (here, or after
                // the slice below).
                lastGivenBack.store(now, ordering: .relaxed)
                if head.compareExchange(expected: Self.drainActive, desired: 0, ordering: .acquiringAndReleasing)
                    .exchanged
                {
                    statistics.queueGivenBack.add(1, ordering: .relaxed)
                    return
                }
            } while now - start < Self.drainSliceNanoseconds
            statistics.sliceEnded.add(1, ordering: .relaxed)
            // Slice used up: run what is queued now, then give the queue back. Re-queueing
            // the drain instead would put these deliveries behind blocks submitted after
            // their events; events pushed after this exchange find the bit clear and queue
            // a drain of their own, ahead of any block submitted after them.
            runOldestFirst(head.exchange(0, ordering: .acquiringAndReleasing) & ~Self.drainActive)
        }

        /// Reverses the list (pushed newest first) and runs it in the order it was queued;
        /// returns how many deliveries it ran (counted in `statistics` once all have).
        @discardableResult
        private func runOldestFirst(_ newest: UInt) -> Int {
            var node = newest
            var oldest: UInt = 0
            var count = 0
            defer { statistics.deliveries.add(count, ordering: .relaxed) }
            while node != 0 {
                count += 1
                let header = QueuedNode.header(node)
                let older = header.pointee.older
                header.pointee.older = oldest
                oldest = node
                node = older
            }
            var freed = QueuedNode.FreedChain()
            DeliveryEnding.Run.withCurrentThreadRun { endings in
                while oldest != 0 {
                    let node = oldest
                    let header = QueuedNode.header(node)
                    oldest = header.pointee.older
                    // The body (and the payload it holds) goes first, then the delivery ends.
                    let ending = header.pointee.body.runAndDestroy(QueuedNode.body(node))
                    freed.add(node)
                    if let ending { endings.pointee.add(ending) }
                }
            }
            freed.giveBack()
            return count
        }

        /// Waits, yielding the CPU, until a delivery is queued or `lingerNanoseconds` have
        /// passed. Bounded, so the queue is always given back.
        private func lingerForWork() {
            var deadline: UInt64 = 0
            var yields = 0
            statistics.lingers.add(1, ordering: .relaxed)
            defer { statistics.lingerYields.add(yields, ordering: .relaxed) }
            while head.load(ordering: .relaxed) == Self.drainActive {
                let now = Self.monotonicNanoseconds()
                if deadline == 0 {
                    deadline = now + Self.lingerNanoseconds
                } else if now >= deadline {
                    statistics.lingerExpired.add(1, ordering: .relaxed)
                    return
                }
                sched_yield()
                yields += 1
            }
        }

        static func monotonicNanoseconds() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }
    }

    /// Finds a queue's own mark: `queue.getSpecific(key:)` reads that queue only, never its
    /// targets, so this key is never used to ask about the current queue.
    private static let lookupKey = DispatchSpecificKey<Mark>()
    private static let marking = Protected<Void>(())

    /// The mark of `queue`, set on first use (the first use decides how its drains linger).
    static func mark(_ queue: DispatchQueue, lingersAfterEveryBatch: Bool = false) -> Mark {
        marking.withLock { _ in
            if let existing = queue.getSpecific(key: lookupKey) { return existing }
            let mark = Mark(lingersAfterEveryBatch: lingersAfterEveryBatch)
            queue.setSpecific(key: lookupKey, value: mark)
            queue.setSpecific(key: mark.key, value: mark)
            return mark
        }
    }

    /// Every mark a configuration delivers to; read by waits after a slice of waiting and by
    /// first subscriptions, never per event.
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

/// What a node queued through a `QueueIdentity.Mark` carries: an event's delivery, typed.
/// Sendable: the node is written on the sending thread and run on the queue's.
protocol QueuedBody: Sendable {
    /// Runs the delivery the body at `body` describes, once, on the mark's queue; destroys the
    /// body (its payload, and the wrappers that holds, are let go) and returns what ends the
    /// delivery, which the drain runs after that.
    static func runAndDestroy(_ body: UnsafeMutableRawPointer) -> DeliveryEnding?
}

/// One asynchronous delivery waiting in a `QueueIdentity.Mark`'s list: a header (the link to
/// the node queued before it and the body's type) followed by the typed body, in memory from
/// `CDeliveryNodes`' pool. Queueing an event costs one node, popped from the sending thread's
/// own list of nodes the drains gave back, and no closure; a body too large for a node is
/// allocated on its own.
enum QueuedNode {
    struct Header {
        /// Written by the producer before the releasing compare-exchange that publishes the
        /// node, then only by the one drain that took the list (acquiring).
        var older: UInt
        let body: any QueuedBody.Type
        /// From the pool, or allocated on its own (a body larger than a node).
        let pooled: Bool
    }

    /// Where the body starts: the header, rounded up to 16 bytes.
    static var bodyOffset: Int { (MemoryLayout<Header>.size + 15) & ~15 }

    /// A node holding `body`, with no older node.
    @inline(__always)
    static func make<Body: QueuedBody>(_ body: consuming Body) -> UnsafeMutableRawPointer {
        let size = bodyOffset + MemoryLayout<Body>.size
        let pooled = size <= Int(MEDIAEVENTS_NODE_SIZE) && MemoryLayout<Body>.alignment <= 16
        let node =
            pooled
            ? mediaevents_node_allocate()!
            : UnsafeMutableRawPointer.allocate(byteCount: size, alignment: max(16, MemoryLayout<Body>.alignment))
        node.initializeMemory(as: Header.self, to: Header(older: 0, body: Body.self, pooled: pooled))
        (node + bodyOffset).initializeMemory(as: Body.self, to: body)
        return node
    }

    @inline(__always)
    static func header(_ node: UInt) -> UnsafeMutablePointer<Header> {
        UnsafeMutableRawPointer(bitPattern: node).unsafelyUnwrapped.assumingMemoryBound(to: Header.self)
    }

    @inline(__always)
    static func body(_ node: UInt) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: node).unsafelyUnwrapped + bodyOffset
    }

    /// The nodes a drain has run, given back to the pool as one chain, linked through their
    /// first word (`older`, no longer read): the pool's lock taken once per chain of up to 64.
    struct FreedChain {
        private var first: UnsafeMutableRawPointer?
        private var last: UnsafeMutableRawPointer?
        private var count = 0

        mutating func add(_ node: UInt) {
            let header = QueuedNode.header(node)
            guard header.pointee.pooled else {
                return UnsafeMutableRawPointer(header).deallocate()
            }
            header.pointee.older = UInt(bitPattern: first)
            first = UnsafeMutableRawPointer(header)
            if last == nil { last = first }
            count += 1
            if count == 64 { giveBack() }
        }

        mutating func giveBack() {
            guard count > 0 else { return }
            mediaevents_nodes_free(first, last, count)
            self = FreedChain()
        }
    }
}

/// The end of one queued delivery, run by the drain after the node was released.
struct DeliveryEnding: @unchecked Sendable {
    // @unchecked: `owner` is an unowned(unsafe) reference to a handler, kept alive by the borrow
    // the delivery holds until `end()` returns it; `end()` touches only its atomic lease word
    // and its lock-protected state.
    /// Kept alive by the borrow the delivery holds until `end()` returns it.
    unowned(unsafe) let owner: any DeliveryOwner
    let armsLease: Bool

    /// The end of a delivery that borrowed from `owner`, made without retaining it.
    init<Owner: DeliveryOwner>(_ owner: Unmanaged<Owner>, armsLease: Bool) {
        self.owner = owner._withUnsafeGuaranteedRef { $0 }
        self.armsLease = armsLease
    }

    /// The owner's identity in delivery frames (its address).
    var ownerIdentity: UInt { UInt(bitPattern: ObjectIdentifier(owner)) }

    func end() { owner.endQueuedDeliveries(1, armingLease: armsLease) }

    /// Consecutive endings of one owner, ended together: one update of the owner's lease word
    /// for the run rather than one per delivery, so that the line libvlc's thread borrows on
    /// stays on its core while a burst drains. An ending that arms the lease ends the run.
    ///
    /// A drain keeps its run where its thread's `endCurrentThreadRun()` finds it: a handler of
    /// the batch that waits for teardowns returns the borrows of the deliveries that ran before
    /// it first, so the wait sees what it saw when each delivery returned its own.
    struct Run {
        /// The run's first ending; its owner is the run's (no reference counted).
        private var first: DeliveryEnding?
        private var count = 0

        @inline(__always)
        mutating func add(_ ending: DeliveryEnding) {
            if let first, first.owner !== ending.owner { end() }
            if ending.armsLease {
                end()
                ending.end()
                return
            }
            if first == nil { first = ending }
            count += 1
        }

        mutating func end() {
            if let first { first.owner.endQueuedDeliveries(count, armingLease: false) }
            first = nil
            count = 0
        }

        /// Runs `body` with a run this thread's `endCurrentThreadRun()` ends; ends it after.
        static func withCurrentThreadRun(_ body: (UnsafeMutablePointer<Run>) -> Void) {
            var run = Run()
            withUnsafeMutablePointer(to: &run) { pointer in
                let previous = mediaevents_drain_run_get()
                mediaevents_drain_run_set(pointer)
                body(pointer)
                mediaevents_drain_run_set(previous)
                pointer.pointee.end()
            }
        }

        /// Returns the borrows of the run of the drain running on this thread, if any.
        static func endCurrentThreadRun() {
            mediaevents_drain_run_get()?.assumingMemoryBound(to: Run.self).pointee.end()
        }
    }
}

/// What a queued delivery borrowed from: its end returns the borrow.
protocol DeliveryOwner: AnyObject {
    func endQueuedDeliveries(_ count: Int, armingLease: Bool)
}
