// Delivery/ — how an event gets from libvlc's callback to a handler, and the guarantees of
// that trip: the receiver of a source's listeners and its typed hook (SourceListener), the
// weakly held object and its lease (EventsHandler), where handlers run (EventsConfiguring), the
// queue marks, their lock-free drain list and its nodes, recycled through CDeliveryNodes' pool
// (QueueMarks), the per-thread delivery frames that waits consult (DeliveryContext),
// MediaEvents' own release, teardown and control queues (ServiceQueues, ControlQueue,
// PendingWork), and its lock types (Protected, Waitable). This is the folder that keeps the
// release-queue guarantee: no wrapper's last reference, no completion and no teardown runs on a
// libvlc thread. It never calls libvlc (Native/ does) and knows nothing of players or media
// (Objects/ does).

import Dispatch
import Synchronization

/// Delivers libvlc events to one object without ever letting that object be freed on a
/// libvlc thread.
///
/// libvlc is given a handler, never the object, as a listener's user data. The handler holds
/// the object weakly; each delivery holds a strong reference for its whole duration (an
/// asynchronous one until it has ended: run, and its payload dropped), and that reference is
/// always dropped on a private release queue. So when a delivery holds the last reference, the
/// object's `deinit` runs on the release queue, not on the libvlc thread that is inside
/// `libvlc_event_send` with the event manager's lock held (where a `deinit` that detaches or
/// stops would deadlock).
///
/// The strong reference is amortized as a lease: the first delivery of a burst takes one
/// strong reference and schedules its expiry a short while later (`leaseDuration`); every
/// delivery until then borrows it (counted in `leaseWord`, without a lock), and the expiry
/// drops it on the release queue once no delivery is using it. A burst therefore costs one weak load, one
/// retain, one release and one hop to the release queue rather than one of each per event,
/// and libvlc's thread and the release queue do not fight over one reference count. An
/// object may therefore outlive its last outside reference by up to `leaseDuration`.
///
/// Asynchronous deliveries are batched per target queue (see `QueueIdentity.Mark`), which
/// keeps libvlc's order across every object sharing the queue.
public final class EventsHandler<Object: AnyObject & Sendable>: Sendable {
    /// The object events are delivered to; `nil` once it has been freed.
    public weak let object: Object?
    /// How deliveries are dispatched; read once, at creation.
    public let configuration: any EventsConfiguring

    /// A payload-free enum with the queue and its mark in `let`s beside it: switching over
    /// an enum with class payloads copied them, a retain and release of each per event.
    private enum Route: Sendable {
        case inline, sync, async
    }

    /// Serializes taking a lease and dropping it; borrowing a held lease needs no lock.
    private struct State: Sendable {
        var expiryScheduled = false
    }

    /// How long a lease outlives the delivery that took it: long enough that a burst shares
    /// one, short enough that dropping the last reference still frees the object promptly.
    /// Each expiry wakes libdispatch's timer thread and a thread of the release queue beside
    /// the delivery queue's: with 1 ms, about one event in a hundred of a stream paced every
    /// 100 µs met an expiry and reached its handler three to five times later than the median.
    static var leaseDuration: DispatchTimeInterval { .milliseconds(10) }

    private let route: Route
    /// The delivery queue and its mark; `nil` on the inline route.
    private let queue: DispatchQueue?
    private let mark: QueueIdentity.Mark?
    private let state = Protected(State())
    /// Bit 0: a lease is held (in `leasePointer`). Above it, twice the deliveries (running,
    /// or queued on an asynchronous route) using it. A delivery borrows by adding 2 with a
    /// compare-exchange that requires bit 0, and gives back by subtracting 2; the expiry
    /// drops the lease only by exchanging exactly 1 (held, unused) for 0. So the word is 0
    /// whenever no lease is held, and only the state lock's holder sets it from 0.
    private let leaseWord = Atomic<Int>(0)
    /// The lease's `Unmanaged` bits; written under the state lock while `leaseWord` is 0,
    /// before the store that sets bit 0 publishes it.
    private let leasePointer = Atomic<UInt>(0)

    /// Creates a handler for `object` that dispatches as `configuration` says.
    public init(object: Object, configuration: any EventsConfiguring) {
        self.object = object
        self.configuration = configuration
        queue = configuration.dispatchQueue
        mark = queue.map { QueueIdentity.mark($0) }
        route = queue == nil ? .inline : configuration.isAsync ? .async : .sync
        if let mark {
            QueueIdentity.registerForDelivery(mark)
            if route == .sync { mark.syncHandlers.add(1, ordering: .relaxed) }
        }
    }

    deinit {
        if route == .sync { mark.unsafelyUnwrapped.syncHandlers.subtract(1, ordering: .relaxed) }
    }

    /// This handler's identity in delivery frames and in the pending-work count.
    fileprivate var identity: UInt { UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }

    /// Runs `body` with the object, as the configuration says, if the object still exists.
    ///
    /// The object stays alive until `body` has returned, even when it is queued; the
    /// reference is then dropped on the release queue. A synchronous configuration whose
    /// queue is the one the caller runs on runs `body` inline.
    public func handleEvent(_ body: @escaping @Sendable (Object) -> Void) {
        // Calls `body` itself rather than through `handle` with a closure wrapping it: a new
        // closure made here, in a generic context, is allocated (it captures the generic
        // environment even when it captures no value), one allocation and free per event on
        // libvlc's thread.
        dispatch(
            sender: 0, { body($0) },
            queued: { handler, lease, armsLease in
                QueuedNode.make(PendingCall(handler: handler, lease: lease, armsLease: armsLease, body: body))
            })
    }

    /// Runs `body` with the object and `payload`, as `handleEvent(_:)` does.
    ///
    /// For a handler that needs what the event says: a `body` that captures nothing and
    /// takes the event's values as `payload` costs no allocation on the inline and sync
    /// routes, where a closure capturing them is allocated for every event.
    ///
    /// ```swift
    /// let type = event.pointee.type
    /// handler.handleEvent(type) { object, type in object.handle(type) }
    /// ```
    public func handleEvent<Payload: Sendable>(
        _ payload: Payload, _ body: @escaping @Sendable (Object, Payload) -> Void
    ) {
        handle(payload, sender: 0, body)
    }

    /// Delivers `payload`, sent by the native object `sender` (0 when unknown);
    /// allocation-free on the inline and sync routes.
    @inline(__always)
    func handle<Payload: Sendable>(
        _ payload: Payload, sender: UInt, _ deliver: @escaping @Sendable (Object, Payload) -> Void
    ) {
        dispatch(
            sender: sender, { deliver($0, payload) },
            queued: { handler, lease, armsLease in
                QueuedNode.make(
                    PendingDelivery(
                        handler: handler, lease: lease, armsLease: armsLease, payload: payload, deliver: deliver))
            })
    }

    /// The routes: `run` calls the handler now (inline or sync), `queued` makes the node an
    /// asynchronous route queues. Both are non-escaping, so neither allocates a context.
    @inline(__always)
    private func dispatch(
        sender: UInt, _ run: (Object) -> Void,
        queued: (Unmanaged<EventsHandler<Object>>, Unmanaged<Object>, _ armsLease: Bool) -> UnsafeMutableRawPointer
    ) {
        guard let (ref, tookLease) = borrowObject() else { return }
        let identity = identity
        switch route {
        // The lease holds the object, so it is used without a retain/release pair of its
        // own (its reference count lives in the weak side table, where each costs an atomic
        // read-modify-write).
        case .inline:
            DeliveryContext.with(sender: sender, handler: identity, isBlocking: true) {
                ref._withUnsafeGuaranteedRef { run($0) }
            }
            returnLease()
        case .sync:
            let mark = mark.unsafelyUnwrapped
            let ranHere: Void? = SyncOntoCurrentQueue().around(mark) {
                DeliveryContext.with(sender: sender, handler: identity, isBlocking: true) {
                    ref._withUnsafeGuaranteedRef { run($0) }
                }
            }
            if ranHere == nil {
                mark.syncWaiters.add(1, ordering: .releasing)
                queue.unsafelyUnwrapped.sync {
                    mark.syncWaiters.subtract(1, ordering: .releasing)
                    // Pushed again here: the block may run on another thread (`.main`).
                    DeliveryContext.with(sender: sender, handler: identity, isBlocking: true) {
                        ref._withUnsafeGuaranteedRef { run($0) }
                    }
                }
            }
            returnLease()
        case .async:
            // A queued delivery stays a user of the lease until it has ended (see
            // `DeliveryEnding`).
            // The delivery that took the lease arms its expiry once its handler has run.
            let node = queued(Unmanaged.passUnretained(self), ref, tookLease)
            // Borrowed: the handler holds both for as long as this call runs. Loaded as
            // strong references, each cost a retain and a release per event.
            let queue = Unmanaged.passUnretained(queue.unsafelyUnwrapped)
            Unmanaged.passUnretained(mark.unsafelyUnwrapped)._withUnsafeGuaranteedRef { mark in
                queue._withUnsafeGuaranteedRef { mark.enqueue(node, on: $0) }
            }
            return
        }
        // Armed only now, once the delivery has run: arming a timer wakes libdispatch's timer
        // thread, which, armed first, took the core the delivery was about to run on.
        if tookLease { armLeaseExpiry() }
    }

    /// Returns the borrows of `count` deliveries.
    @inline(__always)
    fileprivate func returnLease(_ count: Int = 1) {
        leaseWord.subtract(2 * count, ordering: .releasing)
    }

    /// The end of `count` queued deliveries, after their handlers ran and their payloads were
    /// dropped: arms the lease's expiry if the (one) delivery that took the lease is among them,
    /// then returns their borrows. Last: once the borrows are returned the handler may be freed.
    func endQueuedDeliveries(_ count: Int, armingLease: Bool) {
        if armingLease { armLeaseExpiry() }
        returnLease(count)
    }

    /// The lease for one delivery, taken if none is held, and whether this delivery took it
    /// (its caller then arms the expiry); `nil` once the object is gone.
    @inline(__always)
    private func borrowObject() -> (Unmanaged<Object>, tookLease: Bool)? {
        if let lease = borrowHeldLease() { return (lease, false) }
        return takeLease()
    }

    /// The held lease, borrowed without a lock; `nil` when none is held.
    @inline(__always)
    private func borrowHeldLease() -> Unmanaged<Object>? {
        var word = leaseWord.load(ordering: .relaxed)
        while word & 1 != 0 {
            let (exchanged, original) = leaseWord.compareExchange(
                expected: word, desired: word + 2, successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged {
                // The acquire above pairs with the release that set bit 0 after the pointer
                // was written; the pointer cannot change while this borrow keeps bit 0 set.
                let bits = leasePointer.load(ordering: .relaxed)
                return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
            }
            word = original
        }
        return nil
    }

    /// Takes a new lease (or borrows one another delivery took meanwhile). A lease taken here
    /// is pending work from now on; its expiry is armed by the caller (`armLeaseExpiry`).
    @inline(never)
    private func takeLease() -> (Unmanaged<Object>, tookLease: Bool)? {
        let (ref, tookLease) = state.withLock { state -> (Unmanaged<Object>?, Bool) in
            if let lease = borrowHeldLease() { return (lease, false) }
            // The strong local made by loading the weak reference is not the last one (the
            // lease was retained first), so releasing it here under the lock runs no deinit.
            guard let ref = retainObject() else { return (nil, false) }
            leasePointer.store(UInt(bitPattern: ref.toOpaque()), ordering: .relaxed)
            leaseWord.store(1 + 2, ordering: .releasing)
            if state.expiryScheduled { return (ref, false) }
            state.expiryScheduled = true
            return (ref, true)
        }
        guard let ref else { return nil }
        if tookLease { ServiceQueues.pendingTeardowns.enter(lease: identity, holder: self) }
        return (ref, tookLease)
    }

    // Kept out of line so that the strong local created by loading the weak reference ends
    // here, while the +1 returned to the caller still holds the object.
    @inline(never)
    private func retainObject() -> Unmanaged<Object>? {
        guard let object else { return nil }
        return Unmanaged.passRetained(object)
    }

    /// Drops the lease `leaseDuration` from now; the lease is already counted as pending.
    /// Called after the delivery that took the lease has run: on an asynchronous route, by
    /// that delivery on its queue, not on libvlc's thread after queueing it, where the timer
    /// thread's wake-up competed with the delivery queue's for the cores (an event that took
    /// a lease reached its handler several microseconds later than one that borrowed it).
    fileprivate func armLeaseExpiry() {
        let identity = identity
        ServiceQueues.release.asyncAfter(deadline: .now() + Self.leaseDuration) {
            self.expireLease()
            ServiceQueues.pendingTeardowns.leave(lease: identity)
        }
    }

    /// Drops the lease on the release queue, where the object's `deinit` may safely run; a
    /// lease still in use is looked at again later.
    private func expireLease() {
        let (expired, again) = state.withLock { state -> (Unmanaged<Object>?, Bool) in
            let word = leaseWord.load(ordering: .relaxed)
            if word == 0 {
                state.expiryScheduled = false
                return (nil, false)
            }
            let bits = leasePointer.load(ordering: .relaxed)
            // Acquire: every delivery that used the lease has finished before it is dropped.
            guard leaseWord.compareExchange(expected: 1, desired: 0, ordering: .acquiringAndReleasing).exchanged
            else { return (nil, true) }
            state.expiryScheduled = false
            return (Unmanaged<Object>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!), false)
        }
        if again {
            ServiceQueues.pendingTeardowns.enter(lease: identity, holder: self)
            armLeaseExpiry()
        }
        expired?.release()
    }
}

extension EventsHandler: DeliveryOwner {}

extension EventsHandler: LeaseHolder {
    /// Whether deliveries queued on the queue the calling thread runs keep the lease in use:
    /// a wait made from a block of that queue would wait for them, and they cannot run before
    /// it returns (a handler that drops another subscribed object of its queue, then waits for
    /// teardowns).
    var leaseWaitsForCurrentQueue: Bool {
        guard route == .async, let mark, QueueIdentity.isCurrent(mark) else { return false }
        return leaseWord.load(ordering: .relaxed) > 1
    }
}

/// A `handleEvent(_:)` queued for an asynchronous route: the lease it borrowed and the body,
/// destroyed with the node before the drain ends the delivery.
private struct PendingCall<Object: AnyObject & Sendable>: QueuedBody {
    let lease: Unmanaged<Object>
    let body: @Sendable (Object) -> Void
    let ending: DeliveryEnding

    init(
        handler: Unmanaged<EventsHandler<Object>>, lease: Unmanaged<Object>, armsLease: Bool,
        body: @escaping @Sendable (Object) -> Void
    ) {
        self.lease = lease
        self.body = body
        ending = DeliveryEnding(handler, armsLease: armsLease)
    }

    static func runAndDestroy(_ node: UnsafeMutableRawPointer) -> DeliveryEnding? {
        // Moved out: the memory is free once the drain has this back, and the body is
        // destroyed when this returns.
        let call = node.assumingMemoryBound(to: Self.self).move()
        DeliveryContext.with(sender: 0, handler: call.ending.ownerIdentity, isBlocking: false) {
            call.lease._withUnsafeGuaranteedRef { call.body($0) }
        }
        return call.ending
    }
}

/// An event queued for an asynchronous route: the lease it borrowed, the payload and what to
/// do with them.
private struct PendingDelivery<Object: AnyObject & Sendable, Payload: Sendable>: QueuedBody {
    // The lease and the handler (the ending's owner) are kept alive by the borrow this
    // delivery holds until it has ended (the object, which cannot be freed while its lease is
    // borrowed, is torn down before the native event table releases the handler).
    let lease: Unmanaged<Object>
    /// Destroyed with the node, before the drain ends the delivery and so returns the borrow:
    /// the wrappers a payload holds (a `MediaChanged` media) must be let go while the lease
    /// still counts as pending work, or a program that waited for pending teardowns could
    /// exit while their teardown releases the last libvlc instance (seen: `libvlc_release`
    /// unloading plugins during `exit`).
    let payload: Payload
    let deliver: @Sendable (Object, Payload) -> Void
    let ending: DeliveryEnding

    init(
        handler: Unmanaged<EventsHandler<Object>>, lease: Unmanaged<Object>, armsLease: Bool, payload: Payload,
        deliver: @escaping @Sendable (Object, Payload) -> Void
    ) {
        self.lease = lease
        self.payload = payload
        self.deliver = deliver
        ending = DeliveryEnding(handler, armsLease: armsLease)
    }

    static func runAndDestroy(_ node: UnsafeMutableRawPointer) -> DeliveryEnding? {
        let delivery = node.assumingMemoryBound(to: Self.self).move()
        DeliveryContext.with(sender: 0, handler: delivery.ending.ownerIdentity, isBlocking: false) {
            delivery.lease._withUnsafeGuaranteedRef { delivery.deliver($0, delivery.payload) }
        }
        return delivery.ending
    }
}
