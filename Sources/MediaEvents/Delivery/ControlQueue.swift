import Dispatch

/// One object's serial queue for the libvlc calls that can block: stopping joins the thread
/// that sends the object's events, so these calls must never run on the caller's thread
/// when the caller may be a handler. Calls run in the order they were made; the object's
/// teardown runs after all of them.
struct ControlQueue: Sendable {
    /// The serial queue the calls run on (another object's control queue may target it).
    let queue: DispatchQueue
    /// The object the calls get; set before any of them runs (see `creating`).
    let native: NativeSlot

    /// - Parameter target: a queue to run on; `nil` gives the object a thread of its own
    ///   whenever it has work. Objects made by the thousand (media) share one, so that
    ///   tearing many down at once does not start a thread each.
    init(for what: String, native: OpaquePointer, target: DispatchQueue? = nil) {
        self.init(for: what, slot: NativeSlot(native), target: target)
    }

    /// A queue whose object does not exist yet: `create` runs first on the queue and makes
    /// it, before any call. For an object made inside a handler, where creating it at once
    /// could wait for a libvlc callback that waits for that handler.
    init(for what: String, creating create: @escaping @Sendable () -> OpaquePointer, target: DispatchQueue? = nil) {
        self.init(for: what, slot: NativeSlot(nil), target: target)
        let native = native
        queue.async { native.set(create()) }
    }

    private init(for what: String, slot: NativeSlot, target: DispatchQueue?) {
        queue =
            target.map { DispatchQueue(label: "MediaEvents.control.\(what)", target: $0) }
            ?? ServiceQueues.control(for: what)
        native = slot
    }

    /// Queues `operation` and returns at once.
    func perform(_ operation: @escaping @Sendable (OpaquePointer) -> Void) {
        let native = native
        queue.async { operation(native.raw.unsafelyUnwrapped) }
    }

    /// Queues `operation` and returns its result once it has run. Whatever must be read on
    /// the control thread (libvlc's error message is per thread) belongs in `operation`.
    func performAndWait<Result: Sendable>(
        _ operation: @escaping @Sendable (OpaquePointer) -> Result
    ) async -> Result {
        let native = native
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
            queue.async { continuation.resume(returning: operation(native.raw.unsafelyUnwrapped)) }
        }
    }

    /// Queues the object's teardown after every call made before; counted by
    /// `VLCLibrary.waitForPendingTeardowns`.
    func tearDown(_ teardown: @escaping @Sendable (OpaquePointer) -> Void) {
        let native = native
        ServiceQueues.pendingTeardowns.async(on: queue) { teardown(native.raw.unsafelyUnwrapped) }
    }
}
