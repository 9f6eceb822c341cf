// Streams/ — events as an `AsyncSequence`: the stream and its state machine (one consumer,
// buffering by policy, exactly-once end), the pending-event storage with O(1) coalescing, and
// the waiting helpers built on streams (`first`, `waitFor`, `playToEnd`). A stream is an
// EventHub sink; it resumes a consumer that keeps up from the sending thread, and one that
// is behind (a burst) from a queue hop.

import Synchronization

/// The events of one source as an `AsyncSequence`; make one with `events(_:buffering:)`.
///
/// The stream subscribes when it is created, so events sent between `events()` and the first
/// `next()` are buffered (as its `EventBufferingPolicy` says), never missed. It has one
/// consumer: make one stream per consuming task (streams are cheap and any number may be
/// open on one object).
///
/// It ends (`next()` returns `nil`) once, for good, when the first of these happens:
/// - the object is torn down: events still pending are delivered first;
/// - the consuming task is cancelled: pending events are discarded;
/// - the consumer stops iterating (its iterator is deinitialized, for example after `break`)
///   or the stream is dropped without ever being iterated.
/// The stream then leaves the object's subscribers. It never keeps the object alive.
public struct EventStream<Event: VLCEvent>: AsyncSequence, Sendable {
    /// The stream's events.
    public typealias Element = Event
    /// A stream never fails: it ends by returning `nil`.
    public typealias Failure = Never

    private let lifetime: StreamLifetime<Event>

    init(sink: EventStreamSink<Event>) {
        lifetime = StreamLifetime(sink: sink)
    }

    /// What the stream did with the events it received so far.
    public var statistics: EventStreamStatistics { lifetime.sink.statistics }

    /// Whether the stream has ended (`next()` returns `nil`).
    public var isFinished: Bool { lifetime.sink.isFinished }

    /// Ends the stream now, as if the consumer had been cancelled: a waiting `next()` returns
    /// `nil`, pending events are discarded, the stream leaves the object's subscribers.
    public func cancel() { lifetime.sink.cancel() }

    /// The iterator that takes the stream's events.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: StreamConsumer(lifetime: lifetime))
    }

    /// Takes the events of an `EventStream`. Deinitializing the last copy ends the stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// The stream's events.
        public typealias Element = Event
        /// The iterator never fails: it returns `nil` once the stream has ended.
        public typealias Failure = Never

        private let consumer: StreamConsumer<Event>

        fileprivate init(consumer: StreamConsumer<Event>) {
            self.consumer = consumer
        }

        /// The next event, or `nil` once the stream has ended.
        public mutating func next() async -> Event? {
            await next(isolation: nil)
        }

        /// The next event, or `nil` once the stream has ended.
        ///
        /// Specialized for every event type: this is the generic entry a consumer's
        /// `for await` calls from another module, and unspecialized, the stream's code looked
        /// up generic metadata inside the lock that libvlc's thread takes for every event.
        @_specialize(where Event == MediaPlayerEvent)
        @_specialize(where Event == MediaEvent)
        @_specialize(where Event == MediaListEvent)
        @_specialize(where Event == MediaListPlayerEvent)
        @_specialize(where Event == MediaDiscovererEvent)
        @_specialize(where Event == RendererDiscovererEvent)
        @_specialize(where Event == VLMEvent)
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Event? {
            await consumer.lifetime.sink.next()
        }
    }
}

/// Ends the stream when the last copy of an `EventStream` and of its iterators is gone, so a
/// stream made and dropped without being iterated does not stay subscribed.
final class StreamLifetime<Event: VLCEvent>: Sendable {
    let sink: EventStreamSink<Event>

    init(sink: EventStreamSink<Event>) {
        self.sink = sink
    }

    deinit { sink.cancel() }
}

/// Ends the stream when its iterator is gone: the consumer stopped iterating.
final class StreamConsumer<Event: VLCEvent>: Sendable {
    let lifetime: StreamLifetime<Event>

    init(lifetime: StreamLifetime<Event>) {
        self.lifetime = lifetime
    }

    deinit { lifetime.sink.cancel() }
}

/// The subscriber behind an `EventStream`: receives from the hub and hands events to the
/// consumer through a continuation.
///
/// Holds its hub weakly and never the source, so an open stream does not keep the object
/// alive; the object's teardown finishes the sink (`finish()`).
final class EventStreamSink<Event: VLCEvent>: EventSink {
    /// The waiter is a `CheckedContinuation` in a box of ours. An `UnsafeContinuation` saved
    /// the value-witness copies of a resilient type on libvlc's thread, but ThreadSanitizer
    /// reported a race between its resume (on the stream queue) and the next
    /// `withUnsafeContinuation` of the resumed task, which reuses the same task-allocator slot
    /// (CI, 2026-12-01). The checked one is a resilient struct: inside the machine's generic
    /// actions it cost value-witness calls and metadata lookups on libvlc's thread for every
    /// event. The box is one pointer, and it is also the node that resumes it (no allocation
    /// on libvlc's thread).
    typealias Machine = EventStreamStateMachine<Event, StreamWaiter<Event>>

    let mask: KindMask
    private weak let hub: EventHub<Event>?
    private let machine: Protected<Machine>

    /// The consumer's batch: events the machine handed over at once (`takeRun`), returned by
    /// the next calls of `next()` without the machine's lock, so that in a burst libvlc's
    /// thread and the consumer do not take turns at one lock for every event (measured: 2 µs
    /// per event on libvlc's thread when the consumer kept up one event at a time).
    ///
    /// `batch` and `batchStart` belong to whoever holds `consumingBit` in `batchWord`: the one
    /// `next()` running. Above the two flag bits, `batchWord` counts the batch's events not
    /// returned yet; `cancel()` sets `cancelledBit`, after which none is returned and the
    /// holder empties the batch.
    private let batchWord = Atomic<Int>(0)
    nonisolated(unsafe) private var batch = ContiguousArray<Event>()
    nonisolated(unsafe) private var batchStart = 0
    private static var consumingBit: Int { 1 }
    private static var cancelledBit: Int { 2 }
    private static var oneEvent: Int { 4 }

    init(mask: KindMask, policy: EventBufferingPolicy, hub: EventHub<Event>) {
        self.mask = mask
        self.hub = hub
        machine = Protected(Machine(policy: policy))
    }

    deinit {
        // Acquiring: pairs with the releasing store that ended the last `next()`, after its
        // last write of the batch (the reference count orders them too, but ThreadSanitizer
        // does not see it).
        _ = batchWord.load(ordering: .acquiring)
        // A batch left by a consumer that stopped after a cancel from elsewhere; the last
        // reference to a stream may go on any thread, libvlc's included.
        Self.releaseOffThread(batch)
    }

    /// Drops `events` on the release queue if any carries wrappers, whose last reference must
    /// not go on a libvlc thread; here otherwise.
    private static func releaseOffThread<Events: Collection<Event>>(_ events: Events) {
        if events.contains(where: \.holdsWrappers) { ServiceQueues.releaseLater(events) }
    }

    /// Events in the consumer's batch not returned yet (0 once cancelled).
    private var batchRemaining: Int {
        let word = batchWord.load(ordering: .relaxed)
        return word & Self.cancelledBit != 0 ? 0 : word / Self.oneEvent
    }

    var statistics: EventStreamStatistics {
        machine.withLock { machine in
            var statistics = machine.statistics
            let remaining = batchRemaining
            statistics.delivered -= remaining
            statistics.pending += remaining
            return statistics
        }
    }

    var isFinished: Bool { machine.withLock { $0.isFinished } && batchRemaining == 0 }

    func receive(_ event: Event) {
        let action = machine.withLock { $0.receive(event) }
        // A discarded event that carries wrappers is released on the release queue (this may
        // be libvlc's thread); moved there whole, so no copy is left here.
        if action.discardsWrappers { return ServiceQueues.releaseLater(consume action) }
        switch action {
        case .none:
            break
        case .resume(let waiter, let event, let direct):
            // A consumer that keeps up (its last wake-up found nothing more pending: events
            // come further apart than it takes to wake it) is resumed here, which saves the
            // stream queue's wake-up on the way to it: its code still runs on its own
            // executor, never on this thread.
            if direct {
                waiter.resumeNow(event)
                // The resume woke an executor thread: let it run the consumer now.
                ServiceQueues.streamsMark.yieldToWokenThread()
                return
            }
            // In a burst, from the stream queue: this is usually libvlc's thread, and resuming
            // a task here costs an executor enqueue and a thread wake-up per event. The
            // machine has already let go of the waiter, so the events that arrive until the
            // consumer runs are buffered, and it takes them without suspending (in one batch,
            // see `batchWord`). The waiter's box is the node: no allocation here.
            waiter.event = event
            ServiceQueues.streamsMark.enqueue(QueuedNode.make(WaiterNode(waiter: waiter)), on: ServiceQueues.streams)
        case .discard:
            break
        }
    }

    func finish(lastEvent: Event?) -> (@Sendable () -> Void)? {
        if let lastEvent, mask.contains(lastEvent.kind) { receive(lastEvent) }
        finishNow()
        return nil
    }

    /// Ends the stream after the events still pending; no user code runs here (a waiting
    /// consumer is only resumed).
    func finishNow() {
        switch machine.withLock({ $0.sourceFinished() }) {
        case .none:
            break
        case .resumeWithEnd(let waiter):
            waiter.resumeNow(nil)
        }
    }

    func cancel() {
        let action = machine.withLock { machine -> Machine.CancelAction in
            let action = machine.cancel()
            if case .end = action {
                // Under the machine's lock, like `takeRun`: the batch's count is exact here.
                let word = batchWord.bitwiseOr(Self.cancelledBit, ordering: .relaxed).oldValue
                machine.discardBatch(word / Self.oneEvent)
            }
            return action
        }
        switch action {
        case .none:
            break
        case .end(let waiter, let removeFromHub, let discarded):
            if removeFromHub { hub?.remove(self) }
            waiter?.resumeNow(nil)
            // `cancel()` may be called on libvlc's thread (a stream dropped in a handler).
            Self.releaseOffThread(discarded)
        }
    }

    func next() async -> Event? {
        let previous = batchWord.bitwiseOr(Self.consumingBit, ordering: .acquiring).oldValue
        precondition(
            previous & Self.consumingBit == 0,
            "EventStream: next() called while another next() runs; a stream has one consumer")
        defer { leaveConsumer() }
        if Task.isCancelled {
            cancel()
        }
        if let event = takeFromBatch() { return event }
        let action = machine.withLock { machine -> Machine.NextAction in
            let action = machine.next()
            if case .deliver = action {
                batch.removeAll(keepingCapacity: true)
                batchStart = 0
                let moved = machine.takeRun(into: &batch)
                if moved > 0 { batchWord.add(moved * Self.oneEvent, ordering: .relaxed) }
            }
            return action
        }
        switch action {
        case .deliver(let event):
            return event
        case .end:
            return nil
        case .suspend:
            break
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
                switch machine.withLock({ $0.suspend(StreamWaiter(continuation)) }) {
                case .none:
                    break
                case .resume(let waiter, let event):
                    waiter.resumeNow(event)
                }
            }
        } onCancel: {
            cancel()
        }
    }
}

extension EventStreamSink {
    /// The next event of the consumer's batch, unless it is used up or the stream was
    /// cancelled.
    @inline(__always)
    private func takeFromBatch() -> Event? {
        var word = batchWord.load(ordering: .relaxed)
        while word & Self.cancelledBit == 0, word >= Self.oneEvent {
            let (exchanged, current) = batchWord.compareExchange(
                expected: word, desired: word - Self.oneEvent, ordering: .relaxed)
            if exchanged {
                let event = batch[batchStart]
                batchStart += 1
                return event
            }
            word = current
        }
        return nil
    }

    /// Gives the batch up; a cancelled stream's batch is emptied first, by its owner.
    private func leaveConsumer() {
        if batchWord.load(ordering: .relaxed) & Self.cancelledBit != 0, !batch.isEmpty {
            batch = []
            batchStart = 0
        }
        batchWord.bitwiseAnd(~Self.consumingBit, ordering: .releasing)
    }
}

extension EventStreamStateMachine.ReceiveAction {
    var discardsWrappers: Bool {
        if case .discard(let event) = self { return event.holdsWrappers }
        return false
    }
}

/// A consumer waiting in `next()`.
///
/// Resumed from the stream queue through its mark (`WaiterNode`), so a burst's resumptions
/// are run by one lingering drain: libvlc's thread pays a node and one compare-exchange per
/// resumption instead of an `async` that wakes the queue's thread.
final class StreamWaiter<Event: VLCEvent>: @unchecked Sendable {
    // @unchecked: `event` is written once, by the thread that took the waiter from the
    // machine (under its lock, so by exactly one thread), before the releasing push that
    // publishes the node to the drain, which reads it after its acquiring exchange.
    private let continuation: CheckedContinuation<Event?, Never>
    var event: Event?

    init(_ continuation: CheckedContinuation<Event?, Never>) {
        self.continuation = continuation
    }

    /// Resumes the consumer on this thread: for the end of the stream, and from the consumer's
    /// own `next()` (never libvlc's thread).
    func resumeNow(_ value: Event?) { continuation.resume(returning: value) }

    /// Resumes the consumer with the event set before it was queued.
    func run() {
        let value = event
        event = nil
        continuation.resume(returning: value)
    }
}

/// The node that resumes a waiting consumer from the stream queue.
private struct WaiterNode<Event: VLCEvent>: QueuedBody {
    let waiter: StreamWaiter<Event>

    static func runAndDestroy(_ node: UnsafeMutableRawPointer) -> DeliveryEnding? {
        node.assumingMemoryBound(to: Self.self).move().waiter.run()
        return nil
    }
}
