// Streams/ — events as an `AsyncSequence`: the stream and its state machine (one consumer,
// buffering by policy, exactly-once end), the pending-event storage with O(1) coalescing, and
// the waiting helpers built on streams (`first`, `waitFor`, `playToEnd`). A stream is an
// EventHub sink; it resumes its consumer from a queue hop, never on libvlc's thread.

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
            await consumer.lifetime.sink.next()
        }

        /// The next event, or `nil` once the stream has ended.
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
    /// The waiter is a `CheckedContinuation`. An `UnsafeContinuation` saved the value-witness
    /// copies of a resilient type on libvlc's thread, but ThreadSanitizer reported a race
    /// between its resume (on the stream queue) and the next `withUnsafeContinuation` of the
    /// resumed task, which reuses the same task-allocator slot (CI, 2026-12-01); the checked
    /// one lives in a heap box of its own.
    typealias Machine = EventStreamStateMachine<Event, CheckedContinuation<Event?, Never>>

    let mask: KindMask
    private weak let hub: EventHub<Event>?
    private let machine: Protected<Machine>

    init(mask: KindMask, policy: EventBufferingPolicy, hub: EventHub<Event>) {
        self.mask = mask
        self.hub = hub
        machine = Protected(Machine(policy: policy))
    }

    var statistics: EventStreamStatistics { machine.withLock { $0.statistics } }
    var isFinished: Bool { machine.withLock { $0.isFinished } }

    func receive(_ event: Event) {
        let action = machine.withLock { $0.receive(event) }
        // A discarded event that carries wrappers is released on the release queue (this may
        // be libvlc's thread); moved there whole, so no copy is left here.
        if action.discardsWrappers { return ServiceQueues.releaseLater(consume action) }
        switch action {
        case .none:
            break
        case .resume(let waiter, let event):
            // Resumed from the stream queue, never here: this is usually libvlc's thread, and
            // resuming a task there costs an executor enqueue and a thread wake-up per event.
            // The machine has already let go of the waiter, so the events that arrive until
            // the consumer runs are buffered, and it takes them without suspending: one hop
            // per batch.
            ServiceQueues.streams.async { waiter.resume(returning: event) }
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
            waiter.resume(returning: nil)
        }
    }

    func cancel() {
        switch machine.withLock({ $0.cancel() }) {
        case .none:
            break
        case .end(let waiter, let removeFromHub, let discarded):
            if removeFromHub { hub?.remove(self) }
            waiter?.resume(returning: nil)
            _ = discarded
        }
    }

    func next() async -> Event? {
        if Task.isCancelled {
            cancel()
        }
        switch machine.withLock({ $0.next() }) {
        case .deliver(let event):
            return event
        case .end:
            return nil
        case .suspend:
            break
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Event?, Never>) in
                switch machine.withLock({ $0.suspend(waiter) }) {
                case .none:
                    break
                case .resume(let waiter, let event):
                    waiter.resume(returning: event)
                }
            }
        } onCancel: {
            cancel()
        }
    }
}

extension EventStreamStateMachine.ReceiveAction {
    var discardsWrappers: Bool {
        if case .discard(let event) = self { return event.holdsWrappers }
        return false
    }
}
