import Dispatch
import Synchronization

/// Delivers libvlc events to one object without ever letting that object be freed on a
/// libvlc thread.
///
/// libvlc is given a handler, never the object, as a listener's user data. The handler holds
/// the object weakly; for each delivery it loads a strong reference, keeps it for the whole
/// delivery (an asynchronous one included) and afterwards hands it to a private release
/// queue. So when a delivery holds the last reference, the object's `deinit` runs on the
/// release queue, not on the libvlc thread that is inside `libvlc_event_send` with the event
/// manager's lock held (where a `deinit` that detaches or stops would deadlock).
///
/// Releases are amortized: a handler keeps a count of the references it still has to drop
/// and schedules at most one release pass at a time, so a burst of events costs one hop to
/// the release queue rather than one per event.
public final class EventsHandler<Object: AnyObject & Sendable>: Sendable {
    /// The object events are delivered to; `nil` once it has been freed.
    public weak let object: Object?
    /// How deliveries are dispatched; read once, at creation.
    public let configuration: any EventsConfiguring

    private enum Route: Sendable {
        case inline
        case sync(DispatchQueue, QueueIdentity.Mark)
        case async(DispatchQueue)
    }

    private struct State: Sendable {
        /// The strong references taken for finished deliveries, waiting for the release queue.
        var releaseRef: Unmanaged<Object>?
        var releaseCount = 0
        var releaseScheduled = false
        /// Asynchronous deliveries queued but not yet run, in libvlc's order; each holds one
        /// strong reference to the object.
        var pending: [@Sendable (Object) -> Void] = []
        var pendingRef: Unmanaged<Object>?
        var drainScheduled = false
    }

    private let route: Route
    private let state = Mutex(State())

    /// Creates a handler for `object` that dispatches as `configuration` says.
    public init(object: Object, configuration: any EventsConfiguring) {
        self.object = object
        self.configuration = configuration
        if let queue = configuration.dispatchQueue {
            route = configuration.isAsync ? .async(queue) : .sync(queue, QueueIdentity.mark(queue))
        } else {
            route = .inline
        }
    }

    /// Runs `body` with the object, as the configuration says, if the object still exists.
    ///
    /// The object stays alive until `body` has returned, even when it is queued; the
    /// reference is then dropped on the release queue. A synchronous configuration whose
    /// queue is the one the caller runs on runs `body` inline.
    public func handleEvent(_ body: @escaping @Sendable (Object) -> Void) {
        if case .async(let queue) = route {
            enqueue(body, on: queue)
        } else {
            deliverNow { body($0) }
        }
    }

    /// The allocation-free path for the inline and sync routes; async falls back to a closure.
    @inline(__always)
    func handle<Payload: Sendable>(
        _ payload: Payload, _ deliver: @escaping @Sendable (Object, Payload) -> Void
    ) {
        if case .async(let queue) = route {
            enqueue({ deliver($0, payload) }, on: queue)
        } else {
            deliverNow { deliver($0, payload) }
        }
    }

    private func deliverNow(_ body: (Object) -> Void) {
        guard let ref = retainObject() else { return }
        switch route {
        case .inline, .async:
            body(ref.takeUnretainedValue())
        case .sync(let queue, let mark):
            if QueueIdentity.isCurrent(mark) {
                body(ref.takeUnretainedValue())
            } else {
                queue.sync { body(ref.takeUnretainedValue()) }
            }
        }
        releaseLater(ref, count: 1)
    }

    private func enqueue(_ body: @escaping @Sendable (Object) -> Void, on queue: DispatchQueue) {
        guard let ref = retainObject() else { return }
        let schedule = state.withLock { state -> Bool in
            state.pending.append(body)
            state.pendingRef = ref
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
        if schedule {
            queue.async { self.drainPending(on: queue) }
        }
    }

    /// Runs one batch of queued deliveries; yields the queue between batches so that a
    /// continuous stream of events cannot starve the queue's other work.
    private func drainPending(on queue: DispatchQueue) {
        let (batch, ref) = state.withLock { state in
            let batch = state.pending
            state.pending = []
            let ref = state.pendingRef
            state.pendingRef = nil
            return (batch, ref)
        }
        if let ref {
            Self.run(batch, with: ref)
            releaseLater(ref, count: batch.count)
        }
        let more = state.withLock { state -> Bool in
            if state.pending.isEmpty {
                state.drainScheduled = false
                return false
            }
            return true
        }
        if more {
            queue.async { self.drainPending(on: queue) }
        }
    }

    // Kept out of line so that the strong local holding the object ends here, before the
    // caller hands `ref` to the release queue: a local still alive after that (debug builds
    // keep locals to the end of their scope) would be the last reference when the release
    // queue wins the race, and the object's deinit would run on the delivery queue.
    @inline(never)
    private static func run(_ batch: [@Sendable (Object) -> Void], with ref: Unmanaged<Object>) {
        let object = ref.takeUnretainedValue()
        for body in batch { body(object) }
    }

    // Kept out of line so that the strong local created by loading the weak reference ends
    // here, while the +1 returned to the caller still holds the object.
    @inline(never)
    private func retainObject() -> Unmanaged<Object>? {
        guard let object else { return nil }
        return Unmanaged.passRetained(object)
    }

    private func releaseLater(_ ref: Unmanaged<Object>, count: Int) {
        let schedule = state.withLock { state -> Bool in
            state.releaseRef = ref
            state.releaseCount += count
            if state.releaseScheduled { return false }
            state.releaseScheduled = true
            return true
        }
        if schedule {
            ServiceQueues.release.async { self.drainReleases() }
        }
    }

    private func drainReleases() {
        let (ref, count) = state.withLock { state in
            defer {
                state.releaseRef = nil
                state.releaseCount = 0
                state.releaseScheduled = false
            }
            return (state.releaseRef, state.releaseCount)
        }
        guard let ref else { return }
        for _ in 0..<count { ref.release() }
    }
}
