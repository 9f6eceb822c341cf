// Subscriptions/ — the subscribers of one source (EventHub: O(1) subscribe and cancel, one
// publish per event to the sinks whose kinds match), `observe` and its `EventSubscription`
// (linearizable cancel, completion exactly once on the release queue), and `VLCEventSource`,
// the protocol every object conforms to. It runs inside a delivery; it never calls libvlc and
// never queues work itself (completions go through Delivery/'s release queue).

import Synchronization

/// Receives the events of one source: a closure subscription or an event stream.
protocol EventSink<Event>: AnyObject, Sendable {
    associatedtype Event: VLCEvent
    var mask: KindMask { get }
    /// Called for each event whose kind is in `mask`, in libvlc's order, outside every lock.
    func receive(_ event: Event)
    /// Called once when the source is torn down, unless the sink was cancelled first, with
    /// the event a teardown sends (a media's `.freed`), if any. Returns what must run next
    /// outside every lock and off libvlc's threads (user code: the last event's handler and
    /// the completion); the hub runs it on the release queue.
    func finish(lastEvent: Event?) -> (@Sendable () -> Void)?
}

/// The subscribers of one event source.
///
/// All state is one struct behind one lock, and publishing takes none: it reads the snapshot
/// of the live sinks made by the first publish after the last change, and calls them with no
/// lock held, so user code may subscribe or cancel from inside a delivery. A change retires
/// the snapshot; a retired snapshot is freed once no publish is running (a count of running
/// publishes, read after the retirement, is zero), by the change itself or by the last
/// publish to end. The hub holds at most a few retired snapshots (see `currentSnapshot`). It
/// must outlive each publish: its owner's `EventsHandler` lease keeps it alive meanwhile.
///
/// Adding and removing a sink cost O(1) (amortized): the sinks sit in subscription order in
/// an array of slots, a dictionary gives each live sink's slot, and a removed sink leaves an
/// empty slot that publishing skips; the slots are squeezed once the empty ones outnumber
/// the live ones. (Scanning the array on each cancel made cancelling n subscriptions O(n²).)
/// The first publish after a change copies the live sinks into a new snapshot (O(live), no
/// more than that publish's own walk over them); changes between two publishes copy nothing.
public final class EventHub<Event: VLCEvent>: Sendable {
    /// A sink by its concrete class, so that publishing calls it directly: through the
    /// existential, the call landed in the sink's unspecialized generic code, which looks up
    /// generic metadata on every event (for a stream, several lookups per event).
    private enum Slot {
        case closure(ClosureSink<Event>)
        case stream(EventStreamSink<Event>)

        var sink: any EventSink<Event> {
            switch self {
            case .closure(let sink): sink
            case .stream(let sink): sink
            }
        }
    }

    /// A live sink as a snapshot holds it: retained once by the snapshot, so that publishing
    /// reads it without a retain and a release per sink and event.
    private enum HeldSlot {
        case closure(Unmanaged<ClosureSink<Event>>)
        case stream(Unmanaged<EventStreamSink<Event>>)

        init(retaining slot: Slot) {
            switch slot {
            case .closure(let sink): self = .closure(.passRetained(sink))
            case .stream(let sink): self = .stream(.passRetained(sink))
            }
        }

        func release() {
            switch self {
            case .closure(let sink): sink.release()
            case .stream(let sink): sink.release()
            }
        }
    }

    /// The live sinks in subscription order, as publishing reads them without the lock.
    private final class Snapshot: @unchecked Sendable {
        // @unchecked: written once in `init`, then only read until `deinit`.
        let slots: UnsafeMutableBufferPointer<HeldSlot>

        init(_ slots: [Slot?]) {
            let live = slots.compactMap { $0.map(HeldSlot.init(retaining:)) }
            self.slots = .allocate(capacity: live.count)
            _ = self.slots.initialize(from: live)
        }

        deinit {
            for slot in slots { slot.release() }
            slots.deinitialize()
            slots.deallocate()
        }
    }

    private struct State {
        /// In subscription order; `nil` where a sink was removed, until `compact()`.
        var slots: [Slot?] = []
        /// The snapshot `published` points at, if any (this holds it).
        var snapshot: Snapshot?
        /// Snapshots replaced while a publish may still read them.
        var retired: [Snapshot] = []
        /// The slot of each live sink.
        var slotOf: [ObjectIdentifier: Int] = [:]
        var finished = false
        /// The native listeners, attached at creation.
        var table: NativeEventTable?

        mutating func append(_ slot: Slot) {
            slotOf[ObjectIdentifier(slot.sink)] = slots.count
            slots.append(slot)
        }

        mutating func remove(_ sink: any EventSink<Event>) {
            guard let slot = slotOf.removeValue(forKey: ObjectIdentifier(sink)) else { return }
            slots[slot] = nil
            let live = slotOf.count
            if live == 0 {
                slots = []
            } else if slots.count - live > max(32, live) {
                compact()
            }
        }

        /// Removes the empty slots: O(live), paid for by the more than `live` removals that
        /// left them.
        private mutating func compact() {
            var kept: [Slot?] = []
            kept.reserveCapacity(slotOf.count)
            for case let slot? in slots {
                slotOf[ObjectIdentifier(slot.sink)] = kept.count
                kept.append(slot)
            }
            slots = kept
        }

        var sinks: [any EventSink<Event>] { slots.compactMap { $0?.sink } }
    }

    private let state = Protected(State())
    /// `state.snapshot`'s address while it is current, 0 once a change retired it.
    private let published = Atomic<UInt>(0)
    /// Publishes running now; each reads `published` after counting itself.
    private let publishing = Atomic<Int>(0)
    /// Whether `state.retired` is not empty: the last publish to end then frees it.
    private let hasRetired = Atomic<Bool>(false)

    init() {}

    /// Changes the state under the lock and retires the published snapshot. What is freed
    /// (snapshots no publish can read, and the sinks only they held) is released after the
    /// lock, since a sink's release may run user code (its closure's captures).
    private func change<Result>(_ body: (inout State) -> Result) -> Result {
        var freed: [Snapshot] = []
        let result = state.withLock { state in
            let result = body(&state)
            if let current = state.snapshot {
                // Sequentially consistent, with the count's read below and a publish's count
                // and read: a publish that counted itself after the count was read loads 0 here.
                published.store(0, ordering: .sequentiallyConsistent)
                state.snapshot = nil
                state.retired.append(current)
            }
            if !state.retired.isEmpty {
                // Flagged before the count is read: a publish that ends after the read sees
                // the flag, and frees them (sequentially consistent on both sides).
                hasRetired.store(true, ordering: .sequentiallyConsistent)
                if publishing.load(ordering: .sequentiallyConsistent) == 0 {
                    swap(&freed, &state.retired)
                    hasRetired.store(false, ordering: .relaxed)
                }
            }
            return result
        }
        _ = consume freed
        return result
    }

    /// How many retired snapshots may wait for a moment with no publish running before
    /// publishes stop sharing new ones.
    static var maximumRetired: Int { 4 }

    /// The current snapshot, made from the state if a change retired the last one. Called
    /// by a counted publish, so that what it returns is not freed before that publish ends.
    ///
    /// Publishes that overlap without a pause (two threads sending at once) keep every
    /// retired snapshot from being freed; were each change to retire another, the hub would
    /// hold more and more copies of its sinks, and the closures of cancelled subscriptions.
    /// Once `maximumRetired` wait, a publish gets a private copy instead (`isPrivate`, +1:
    /// the publish releases it), as publishing did before snapshots, until they are freed.
    @inline(never)
    private func currentSnapshot() -> (bits: UInt, isPrivate: Bool) {
        state.withLock { state in
            if let current = state.snapshot { return (UInt(bitPattern: ObjectIdentifier(current)), false) }
            let made = Snapshot(state.slots)
            if state.retired.count >= Self.maximumRetired {
                return (UInt(bitPattern: Unmanaged.passRetained(made).toOpaque()), true)
            }
            state.snapshot = made
            let bits = UInt(bitPattern: ObjectIdentifier(made))
            published.store(bits, ordering: .sequentiallyConsistent)
            return (bits, false)
        }
    }

    /// Snapshots retired and not yet freed (for tests).
    var retiredCount: Int { state.withLock { $0.retired.count } }

    /// Frees the retired snapshots if no publish is running; called by a publish that ended
    /// as the last one running while some were retired.
    @inline(never)
    private func freeRetired() {
        let freed = state.withLock { state -> [Snapshot] in
            guard publishing.load(ordering: .sequentiallyConsistent) == 0 else { return [] }
            hasRetired.store(false, ordering: .relaxed)
            var freed: [Snapshot] = []
            swap(&freed, &state.retired)
            return freed
        }
        _ = consume freed
    }

    /// Installs the native listeners of the source; called once, in its `init`.
    ///
    /// Objects made by the user attach at creation (`attachNow`): a subscription to them then
    /// never calls libvlc, so `observe` and `events` cannot wait for an event manager lock
    /// that a sending thread holds while it waits for the caller's queue. Wrappers made for
    /// an event (payloads, list items) attach on their first subscription instead: made
    /// inside a callback of the object they wrap (`SubItemTreeAdded` carries its own sender),
    /// a listener attached at once would be called by the same send, make another wrapper,
    /// and so on without end.
    func bind(_ table: NativeEventTable, attachNow: Bool) {
        if attachNow { table.attachIfNeeded() }
        state.withLock { $0.table = table }
    }

    /// Installs and attaches the native listeners of a source whose native object was created
    /// after its `init`, on the queue that created it (a player made in a handler, a VLM opened
    /// without waiting for its queue); subscriptions made before wait for nothing and receive
    /// the events sent from then on. Returns `false`, attaching nothing, when the source was
    /// torn down meanwhile: its teardown (queued after this on the same queue) then finds no
    /// listeners to detach.
    func bindLate(_ table: NativeEventTable) -> Bool {
        let bound = state.withLock { state -> Bool in
            if state.finished { return false }
            state.table = table
            return true
        }
        // Outside the lock: libvlc may wait for a running callback, which publishes here.
        if bound { table.attachIfNeeded() }
        return bound
    }

    /// Adds `sink`; returns `false` (and does not add it) once the source has been torn down.
    func add(_ sink: ClosureSink<Event>) -> Bool { add(.closure(sink)) }

    /// Adds `sink`; returns `false` (and does not add it) once the source has been torn down.
    func add(_ sink: EventStreamSink<Event>) -> Bool { add(.stream(sink)) }

    private func add(_ slot: Slot) -> Bool {
        listen()
        return change { state in
            if state.finished { return false }
            state.append(slot)
            return true
        }
    }

    /// Attaches the native listeners if they are not yet: for a first subscription, and for
    /// a call whose outcome the source's hook watches (a parse's end).
    ///
    /// Attached outside the lock (a no-op once attached): libvlc may wait for a running
    /// callback, and a callback publishing to this hub takes the lock. A wrapper made for an
    /// event, first listened to inside a handler or on a queue a synchronous delivery may be
    /// waiting for, attaches on the teardown queue instead: the thread that waits for this
    /// one may hold that object's event lock. It then receives the events sent once that is
    /// done.
    func listen() {
        guard let table = state.withLock({ $0.table }), !table.isAttached else { return }
        if DeliveryContext.isInDelivery || QueueIdentity.isOnSyncDeliveryQueue {
            ServiceQueues.pendingTeardowns.async(on: ServiceQueues.teardown) { table.attachIfNeeded() }
        } else {
            table.attachIfNeeded()
        }
    }

    func remove(_ sink: any EventSink<Event>) {
        change { $0.remove(sink) }
    }

    var sinkCount: Int { state.withLock { $0.slotOf.count } }

    func publish(_ event: Event) {
        publishing.add(1, ordering: .sequentiallyConsistent)
        var bits = published.load(ordering: .sequentiallyConsistent)
        var isPrivate = false
        if bits == 0 { (bits, isPrivate) = currentSnapshot() }
        // Borrowed: a change retires it, and it is freed only once no publish runs.
        let snapshot = Unmanaged<Snapshot>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
        snapshot._withUnsafeGuaranteedRef { snapshot in
            // The snapshot holds each sink until it is freed, after this publish.
            for slot in snapshot.slots {
                switch slot {
                case .closure(let sink):
                    sink._withUnsafeGuaranteedRef { if $0.mask.contains(event.kind) { $0.receive(event) } }
                case .stream(let sink):
                    sink._withUnsafeGuaranteedRef { if $0.mask.contains(event.kind) { $0.receive(event) } }
                }
            }
        }
        if isPrivate { snapshot.release() }
        if publishing.subtract(1, ordering: .sequentiallyConsistent).newValue == 0,
            hasRetired.load(ordering: .sequentiallyConsistent)
        {
            freeRetired()
        }
    }

    /// Ends every sink exactly once; called from the source's `deinit`. A sink that takes
    /// `lastEvent`'s kind receives it first (a media's `.freed`). Returns the native
    /// listeners, which the source detaches on one of its queues.
    func finish(lastEvent: Event? = nil) -> NativeEventTable? {
        let (sinks, table) = change { state in
            state.finished = true
            defer {
                state.slots = []
                state.slotOf = [:]
                state.table = nil
            }
            return (state.sinks, state.table)
        }
        let work = sinks.compactMap { $0.finish(lastEvent: lastEvent) }
        // A wrapper's deinit may run on any thread, a libvlc one included: user code that the
        // teardown owes its subscribers runs on the release queue instead.
        if !work.isEmpty {
            ServiceQueues.pendingTeardowns.async(on: ServiceQueues.release) { work.forEach { $0() } }
        }
        return table
    }
}

/// A closure subscription: the state machine is one atomic byte, so "cancelled" and
/// "finished" are exclusive transitions and the completion can run at most once.
final class ClosureSink<Event: VLCEvent>: EventSink {
    private static var active: UInt8 { 0 }
    private static var cancelled: UInt8 { 1 }
    private static var finished: UInt8 { 2 }

    let mask: KindMask
    private let handler: @Sendable (Event) -> Void
    private let completion: (@Sendable () -> Void)?
    private let state = Atomic<UInt8>(0)

    init(
        mask: KindMask, handler: @escaping @Sendable (Event) -> Void,
        completion: (@Sendable () -> Void)?
    ) {
        self.mask = mask
        self.handler = handler
        self.completion = completion
    }

    var isActive: Bool { state.load(ordering: .acquiring) == Self.active }

    func receive(_ event: Event) {
        if isActive { handler(event) }
    }

    func finish(lastEvent: Event?) -> (@Sendable () -> Void)? {
        guard
            state.compareExchange(
                expected: Self.active, desired: Self.finished,
                ordering: .acquiringAndReleasing
            ).exchanged
        else { return nil }
        let last = lastEvent.flatMap { mask.contains($0.kind) ? $0 : nil }
        if last == nil && completion == nil { return nil }
        let handler = handler
        let completion = completion
        return {
            if let last { handler(last) }
            completion?()
        }
    }

    /// Returns `true` for the one call that moved the sink from active to cancelled.
    func cancel() -> Bool {
        state.compareExchange(
            expected: Self.active, desired: Self.cancelled,
            ordering: .acquiringAndReleasing
        ).exchanged
    }
}

/// A token for a subscription made with `observe`. Keep it for as long as you want events:
/// the subscription is cancelled when the token is deinitialized.
public final class EventSubscription: Sendable {
    private let cancellation: @Sendable () -> Void
    private let activeCheck: @Sendable () -> Bool

    /// `cancel` must be idempotent and take effect before it returns, for every caller: it is
    /// called by each `cancel()`, not only by the first.
    init(cancel: @escaping @Sendable () -> Void, isActive: @escaping @Sendable () -> Bool) {
        cancellation = cancel
        activeCheck = isActive
    }

    /// Whether events are still delivered: `false` after `cancel()` or once the source was
    /// torn down.
    public var isActive: Bool { activeCheck() }

    /// Stops deliveries. Thread-safe and idempotent; callable from inside the handler.
    ///
    /// Once `cancel()` has returned — to any of several threads calling it at once — no new
    /// delivery to the handler begins; one that already began on another thread may still
    /// finish. Cancel and teardown are exclusive: when the cancel takes effect the completion
    /// is never called; when the object was torn down first, its completion is scheduled (it
    /// runs on MediaEvents' release queue) and `cancel()` changes nothing.
    public func cancel() {
        cancellation()
    }

    deinit { cancel() }
}

extension EventHub {
    func subscribe(
        _ kinds: [Event.Kind],
        onCompletion: (@Sendable () -> Void)?,
        handler: @escaping @Sendable (Event) -> Void
    ) -> EventSubscription {
        let sink = ClosureSink(mask: KindMask(kinds), handler: handler, completion: onCompletion)
        if !add(sink), let work = sink.finish(lastEvent: nil) {
            ServiceQueues.pendingTeardowns.async(on: ServiceQueues.release, work)
        }
        return EventSubscription(
            cancel: { [weak self] in
                if sink.cancel() { self?.remove(sink) }
            },
            isActive: { sink.isActive }
        )
    }
}

/// An object that sends libvlc events: a player, a media, a media list …
public protocol VLCEventSource: AnyObject, Sendable {
    /// The events this object sends (`MediaPlayerEvent` for a `VLCMediaPlayer` …).
    associatedtype Event: VLCEvent
    /// The subscribers of this object (an implementation detail of `observe` and `events`).
    var eventHub: EventHub<Event> { get }
}

extension VLCEventSource {
    /// Calls `handler` for each event of the given kinds (all kinds when none are given),
    /// as the object's `EventsConfiguring` says, until the returned token is cancelled or
    /// deinitialized.
    ///
    /// - Parameters:
    ///   - kinds: the kinds to deliver; none means every kind.
    ///   - onCompletion: called exactly once when the object is torn down, unless the
    ///     subscription was cancelled first; it runs on MediaEvents' release queue, never on
    ///     a libvlc thread, shortly after the teardown.
    ///   - handler: runs outside every MediaEvents lock. It may call any method of the
    ///     object (control calls are queued), subscribe, cancel, or drop the last reference.
    ///     Capture the object weakly: the object keeps its subscriptions alive.
    public func observe(
        _ kinds: Event.Kind...,
        onCompletion: (@Sendable () -> Void)? = nil,
        handler: @escaping @Sendable (Event) -> Void
    ) -> EventSubscription {
        eventHub.subscribe(kinds, onCompletion: onCompletion, handler: handler)
    }

    /// The same as `observe(_:onCompletion:handler:)` with the kinds as an array.
    public func observe(
        kinds: [Event.Kind],
        onCompletion: (@Sendable () -> Void)? = nil,
        handler: @escaping @Sendable (Event) -> Void
    ) -> EventSubscription {
        eventHub.subscribe(kinds, onCompletion: onCompletion, handler: handler)
    }
}
