import Dispatch

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
/// the release queue rather than one per event. Asynchronous deliveries are batched per
/// target queue (see `QueueIdentity.Mark`), which keeps libvlc's order across all objects
/// that share the queue.
public final class EventsHandler<Object: AnyObject & Sendable>: Sendable {
    /// The object events are delivered to; `nil` once it has been freed.
    public weak let object: Object?
    /// How deliveries are dispatched; read once, at creation.
    public let configuration: any EventsConfiguring

    private enum Route: Sendable {
        case inline
        case sync(DispatchQueue, QueueIdentity.Mark)
        case async(DispatchQueue, QueueIdentity.Mark)
    }

    private struct State: Sendable {
        /// The strong references taken for finished deliveries, waiting for the release queue.
        var releaseRef: Unmanaged<Object>?
        var releaseCount = 0
        var releaseScheduled = false
    }

    private let route: Route
    private let state = Protected(State())
    /// Something the native callback updates on libvlc's thread before any dispatch (the
    /// player's cache of time and position), reachable without touching the object.
    let companion: (any AnyObject & Sendable)?

    /// Creates a handler for `object` that dispatches as `configuration` says.
    public convenience init(object: Object, configuration: any EventsConfiguring) {
        self.init(object: object, configuration: configuration, companion: nil)
    }

    init(object: Object, configuration: any EventsConfiguring, companion: (any AnyObject & Sendable)?) {
        self.object = object
        self.configuration = configuration
        self.companion = companion
        if let queue = configuration.dispatchQueue {
            let mark = QueueIdentity.mark(queue)
            route = configuration.isAsync ? .async(queue, mark) : .sync(queue, mark)
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
        if case .async(let queue, let mark) = route {
            enqueue(body, on: queue, mark)
        } else {
            deliverNow { body($0) }
        }
    }

    /// The allocation-free path for the inline and sync routes; async falls back to a closure.
    @inline(__always)
    func handle<Payload: Sendable>(
        _ payload: Payload, _ deliver: @escaping @Sendable (Object, Payload) -> Void
    ) {
        if case .async(let queue, let mark) = route {
            guard let ref = retainObject() else { return }
            mark.enqueue({
                deliver(ref.takeUnretainedValue(), payload)
                self.releaseLater(ref, count: 1)
            }, on: queue)
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

    private func enqueue(_ body: @escaping @Sendable (Object) -> Void, on queue: DispatchQueue,
                         _ mark: QueueIdentity.Mark) {
        guard let ref = retainObject() else { return }
        mark.enqueue({
            body(ref.takeUnretainedValue())
            self.releaseLater(ref, count: 1)
        }, on: queue)
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
            ServiceQueues.release.async(group: ServiceQueues.pendingTeardowns) { self.drainReleases() }
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
