import CDeliveryFrame

/// What the current thread is doing for a delivery: the facts a public member needs to know
/// so that it never waits for something that is waiting for it.
///
/// libvlc calls a listener with its own locks held (see `SendSites.md`). While a handler runs
/// inline on that thread, or on a queue the thread waits for (`sync`), three things follow:
/// - a wait for any MediaEvents queue may never end (that queue may be the one that called
///   into libvlc, or may need a lock the sending thread holds), so waits do not block there;
/// - the object that sent the event holds its own locks: a media list's item events come
///   with the list's non-recursive lock held, so reading that list must not lock it again;
/// - the lease of the handler that is delivering cannot be dropped before the handler
///   returns, so `waitForPendingTeardowns` must not wait for it.
///
/// Each delivery pushes one frame onto a per-thread chain for the duration of the handler;
/// the frame lives on the delivering thread's stack (no allocation per event). A synchronous
/// delivery that runs on another thread (a `sync` onto `.main`) pushes a copy there.
enum DeliveryContext {
    struct Frame {
        /// The native object that sent the event (`libvlc_event_t.p_obj`), when known.
        var sender: UInt
        /// The `EventsHandler` whose lease this delivery borrows.
        var handler: UInt
        /// Whether a libvlc thread waits for this delivery to return (inline and sync routes).
        var isBlocking: Bool
        fileprivate var previous: UnsafeMutableRawPointer?
        /// Work to queue once this delivery has returned (see `afterDelivery(from:_:)`).
        fileprivate var deferred: Unmanaged<DeferredWork>?
    }

    /// What `afterDelivery(from:_:)` kept for one delivery; touched only by its thread.
    fileprivate final class DeferredWork {
        var work: [@Sendable () -> Void] = []
    }

    /// Runs `body` with `frame` on top of the current thread's chain.
    @inline(__always)
    static func with<Result>(sender: UInt, handler: UInt, isBlocking: Bool, _ body: () -> Result) -> Result {
        var frame = Frame(
            sender: sender, handler: handler, isBlocking: isBlocking,
            previous: mediaevents_delivery_frame_get(), deferred: nil)
        return withUnsafeMutablePointer(to: &frame) { pointer in
            mediaevents_delivery_frame_set(pointer)
            defer {
                mediaevents_delivery_frame_set(pointer.pointee.previous)
                if let deferred = pointer.pointee.deferred {
                    deferred.takeRetainedValue().work.forEach { $0() }
                }
            }
            return body()
        }
    }

    /// Keeps `work` until the innermost delivery on this thread of an event that the object at `bits`
    /// sent, with its locks held, has returned; returns `false` (and keeps nothing) when this
    /// thread delivers no such event.
    ///
    /// For the teardown of another wrapper of the sender dropped in its handler: detaching
    /// from the sender's event manager waits for the lock the sending thread holds until the
    /// handler returns, so queued at once it would hold up its queue, and every wait for
    /// teardowns made in the handler, until then.
    static func afterDelivery(from bits: UInt, _ work: @escaping @Sendable () -> Void) -> Bool {
        var next = mediaevents_delivery_frame_get()
        while let raw = next {
            let frame = raw.assumingMemoryBound(to: Frame.self)
            if frame.pointee.sender == bits && frame.pointee.isBlocking {
                let deferred: DeferredWork
                if let kept = frame.pointee.deferred {
                    deferred = kept.takeUnretainedValue()
                } else {
                    deferred = DeferredWork()
                    frame.pointee.deferred = Unmanaged.passRetained(deferred)
                }
                deferred.work.append(work)
                return true
            }
            next = frame.pointee.previous
        }
        return false
    }

    /// Visits the current thread's frames, innermost first, until `visit` returns `true`.
    private static func first(where visit: (Frame) -> Bool) -> Bool {
        var next = mediaevents_delivery_frame_get()
        while let raw = next {
            let frame = raw.assumingMemoryBound(to: Frame.self).pointee
            if visit(frame) { return true }
            next = frame.previous
        }
        return false
    }

    /// Whether a handler runs on this thread (of any route).
    static var isInDelivery: Bool { mediaevents_delivery_frame_get() != nil }

    /// Whether a libvlc thread is waiting for a handler that runs on this thread: then a
    /// wait must not block.
    static var isInBlockingDelivery: Bool {
        first { $0.isBlocking }
    }

    /// Whether this thread runs a handler of an event that the object at `bits` sent, with the locks
    /// libvlc holds while it sends it.
    static func isDelivering(from bits: UInt) -> Bool {
        first { $0.sender == bits && $0.isBlocking }
    }

    /// The handlers whose deliveries run on this thread (their leases are in use until they
    /// return).
    static var deliveringHandlers: [UInt] {
        var handlers: [UInt] = []
        _ = first { frame in
            handlers.append(frame.handler)
            return false
        }
        return handlers
    }
}
