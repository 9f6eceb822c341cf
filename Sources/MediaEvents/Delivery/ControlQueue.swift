import Dispatch

/// One object's serial queue for its libvlc calls, the same type for every object (media,
/// lists, players, list players, discoverers, the VLM): stopping joins the thread that sends the
/// object's events, and most calls take a lock libvlc holds while it sends (<doc:SendSites>,
/// rules 4 to 7), so these calls never run on the caller's thread when the caller may be a
/// handler. Calls run in the order they were made; the object's teardown runs after all of them.
struct ControlQueue<Native: NativeObject>: Sendable {
    /// The serial queue the calls run on (another object's control queue may target it).
    let queue: DispatchQueue
    /// The object the calls get; set before any of them runs (see `init(for:creating:)`).
    let native: NativeSlot<Native>
    /// The queue's mark, made at creation for the objects that must know whether a wait would
    /// wait on this very queue (`isCurrent`); `nil` for the others (media, made by the thousand).
    private let mark: QueueIdentity.Mark?

    /// - Parameters:
    ///   - target: a queue to run on; `nil` gives the object a thread of its own whenever it
    ///     has work. Objects made by the thousand (media) share one, so that tearing many down
    ///     at once does not start a thread each.
    ///   - identifiable: whether `isCurrent` will be asked.
    init(for what: String, native: Native, target: DispatchQueue? = nil, identifiable: Bool = false) {
        self.init(for: what, slot: NativeSlot(native), target: target, identifiable: identifiable)
    }

    /// A queue whose object does not exist yet: `create` runs first on the queue and makes
    /// it, before any call. For an object made inside a handler, where creating it at once
    /// could wait for a libvlc callback that waits for that handler (rule 13).
    init(
        for what: String, creating create: @escaping @Sendable () -> Native, target: DispatchQueue? = nil,
        identifiable: Bool = false
    ) {
        self.init(for: what, slot: NativeSlot(nil), target: target, identifiable: identifiable)
        let native = native
        queue.async { native.set(create()) }
    }

    private init(for what: String, slot: NativeSlot<Native>, target: DispatchQueue?, identifiable: Bool) {
        queue =
            target.map { DispatchQueue(label: "MediaEvents.control.\(what)", target: $0) }
            ?? ServiceQueues.control(for: what)
        native = slot
        mark = identifiable ? QueueIdentity.mark(queue) : nil
    }

    /// Whether the calling thread runs a block of this queue (or of a queue targeting it).
    /// Only for a queue made `identifiable`.
    var isCurrent: Bool {
        guard let mark else { preconditionFailure("ControlQueue.isCurrent: not identifiable") }
        return QueueIdentity.isCurrent(mark)
    }

    /// Queues `operation` and returns at once.
    func perform(_ operation: @escaping @Sendable (Native) -> Void) {
        let native = native
        queue.async { operation(native.current.unsafelyUnwrapped) }
    }

    /// Queues `operation` and returns its result once it has run. Whatever must be read on
    /// the control thread (libvlc's error message is per thread) belongs in `operation`.
    func performAndWait<Result: Sendable>(_ operation: @escaping @Sendable (Native) -> Result) async -> Result {
        let native = native
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
            queue.async { continuation.resume(returning: operation(native.current.unsafelyUnwrapped)) }
        }
    }

    /// Queues `call` and returns at once: the `x()` of an `x`/`xAndWait` pair.
    func perform<Result>(_ call: ControlCall<Native, Result>) {
        perform { _ = call.body($0) }
    }

    /// Queues `call` and returns its result once it has run: the `xAndWait()` of the pair.
    func performAndWait<Result>(_ call: ControlCall<Native, Result>) async -> Result {
        await performAndWait(call.body)
    }

    /// Runs `operation` on the queue and waits for it, blocking the calling thread: only where
    /// waiting cannot wait for the caller itself (never in a handler, never on this queue).
    func performBlocking<Result>(_ operation: @Sendable (Native) -> Result) -> Result {
        let native = native
        return queue.sync { operation(native.current.unsafelyUnwrapped) }
    }

    /// Returns once every call made before has run, without blocking a thread.
    func pendingCallsDone() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }

    /// Blocks until every call made before has run; gives up (`false`) when the wait may
    /// deadlock (see `ServiceQueues.wait`).
    func waitForPendingCalls() -> Bool {
        let applied = DispatchSemaphore(value: 0)
        queue.async { applied.signal() }
        return ServiceQueues.wait(until: { applied.wait(timeout: $0) == .success }, timeout: .distantFuture)
    }

    /// Queues the object's teardown after every call made before; counted by
    /// `VLCLibrary.waitForPendingTeardowns`.
    func tearDown(_ teardown: @escaping @Sendable (Native) -> Void) {
        let native = native
        ServiceQueues.pendingTeardowns.async(on: queue) { teardown(native.current.unsafelyUnwrapped) }
    }
}

/// One control call, defined once for its two forms: `ControlQueue.perform` queues it and
/// returns at once (`stop()`), `ControlQueue.performAndWait` returns its result once it ran
/// (`stopAndWait()`). What the call does, and what the workarounds do around it, is written
/// in one place.
struct ControlCall<Native: NativeObject, Result: Sendable>: Sendable {
    let body: @Sendable (Native) -> Result

    init(_ body: @escaping @Sendable (Native) -> Result) { self.body = body }
}
