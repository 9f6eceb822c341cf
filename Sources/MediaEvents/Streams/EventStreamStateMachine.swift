/// The state of one event stream: what is pending, who is waiting, and how it ends.
///
/// Written in swift-nio's style: the owner keeps it behind one lock, each entry point mutates
/// it under the lock and returns an action, and the owner carries the action out after
/// unlocking (resuming a continuation, removing the sink from its hub, releasing events whose
/// `deinit` may run user code). The end is one transition into `.finished`, so it happens
/// exactly once whichever of teardown, cancellation or the consumer's stop comes first.
///
/// Generic over the waiter so that tests can drive it with plain values.
struct EventStreamStateMachine<Event: VLCEvent, Waiter> {
    private enum Phase {
        /// Events are accepted. A waiter exists only while nothing is pending.
        case streaming(waiter: Waiter?)
        /// The source was torn down while events were pending: they are still handed out,
        /// then the stream ends.
        case draining
        /// Terminal: `next()` returns `nil`.
        case finished
    }

    private var phase: Phase = .streaming(waiter: nil)
    /// Whether the consumer took an event from the pending ones since it was last resumed.
    /// A waiter stored while this is false keeps up (its wake-up found nothing but its own
    /// event), and the next event resumes it directly (`ReceiveAction.resume`'s `direct`); in
    /// a burst every wake-up finds more events pending. Nothing changes it while a waiter is
    /// stored (`next()` and `suspend` cannot run then), so it still says so at `receive`.
    private var tookPendingSinceResume = false
    private var pending = PendingEvents<Event>()
    private var counts = EventStreamStatistics()
    let policy: EventBufferingPolicy

    init(policy: EventBufferingPolicy) {
        self.policy = policy
    }

    var statistics: EventStreamStatistics {
        var statistics = counts
        statistics.pending = pending.count
        return statistics
    }

    /// Slots the pending queue holds, live or empty (for tests of its memory bound).
    var storageCount: Int { pending.storageCount }

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    // MARK: Entry points

    enum ReceiveAction {
        case none
        /// Hand the event to the waiting consumer; `direct`: the consumer keeps up, resume it
        /// from this thread rather than through a queue.
        case resume(Waiter, Event, direct: Bool)
        /// Release this event (coalesced or dropped) after unlocking.
        case discard(Event)
    }

    /// An event from the source.
    mutating func receive(_ event: Event) -> ReceiveAction {
        switch phase {
        case .streaming(let waiter?):
            phase = .streaming(waiter: nil)
            counts.delivered += 1
            defer { tookPendingSinceResume = false }
            return .resume(waiter, event, direct: !tookPendingSinceResume)
        case .streaming(nil):
            return buffer(event)
        case .draining, .finished:
            // After the end nothing is kept; the event is released outside the lock.
            return .discard(event)
        }
    }

    enum NextAction {
        /// Return this event without suspending.
        case deliver(Event)
        /// Return `nil`: the stream has ended.
        case end
        /// Nothing is pending: suspend and call `suspend(_:)` with a waiter.
        case suspend
    }

    /// The consumer asks for the next event.
    mutating func next() -> NextAction {
        switch phase {
        case .streaming(let waiter):
            precondition(
                waiter == nil, "EventStream: next() called while another next() is waiting; a stream has one consumer")
            if let event = pending.popFirst() {
                counts.delivered += 1
                tookPendingSinceResume = true
                return .deliver(event)
            }
            return .suspend
        case .draining:
            if let event = pending.popFirst() {
                counts.delivered += 1
                return .deliver(event)
            }
            phase = .finished
            return .end
        case .finished:
            return .end
        }
    }

    /// Right after `next()` returned `.deliver`: moves the pending events that follow it and
    /// that this policy can never coalesce or drop into `batch`, the consumer's own, so that it
    /// takes a burst with one lock instead of one per event. Only an unbounded policy moves
    /// any (a limit counts the pending events, and taking them early would make room), and a
    /// coalescing one stops at the first progress event (a newer value must still be able to
    /// replace it). What the consumer is given and in which order is therefore unchanged.
    /// The moved events count as delivered; the owner subtracts those it has not returned.
    mutating func takeRun(into batch: inout ContiguousArray<Event>) -> Int {
        guard case .unbounded = policy.limit else { return 0 }
        let coalesces = policy.coalescesProgress
        let moved = pending.moveLeading(into: &batch) { !coalesces || !$0.kind.isProgress }
        counts.delivered += moved
        return moved
    }

    /// The consumer's batch was given up with `count` events it had not returned.
    mutating func discardBatch(_ count: Int) {
        counts.delivered -= count
        counts.discarded += count
    }

    enum SuspendAction {
        case none
        /// Resume the waiter at once: with an event, or `nil` when the stream has ended.
        case resume(Waiter, Event?)
    }

    /// The consumer is suspended; `waiter` resumes it. Something may have happened since
    /// `next()` returned `.suspend`: an event, the end, or cancellation.
    mutating func suspend(_ waiter: Waiter) -> SuspendAction {
        switch phase {
        case .streaming(let existing):
            precondition(existing == nil, "EventStream: two consumers are waiting on one stream")
            if let event = pending.popFirst() {
                counts.delivered += 1
                tookPendingSinceResume = true
                return .resume(waiter, event)
            }
            phase = .streaming(waiter: waiter)
            return .none
        case .draining:
            if let event = pending.popFirst() {
                counts.delivered += 1
                return .resume(waiter, event)
            }
            phase = .finished
            return .resume(waiter, nil)
        case .finished:
            return .resume(waiter, nil)
        }
    }

    enum CancelAction {
        case none
        /// The stream ended now: resume the waiter (if any) with `nil`, remove the sink from
        /// the hub if the source is still live, release the discarded events.
        case end(waiter: Waiter?, removeFromHub: Bool, discarded: [Event])
    }

    /// The consumer is gone: its task was cancelled, it stopped iterating or dropped the
    /// stream. Pending events are discarded.
    mutating func cancel() -> CancelAction {
        switch phase {
        case .streaming(let waiter):
            phase = .finished
            let discarded = pending.removeAll()
            counts.discarded += discarded.count
            return .end(waiter: waiter, removeFromHub: true, discarded: discarded)
        case .draining:
            // The hub already let go of the sink when the source was torn down.
            phase = .finished
            let discarded = pending.removeAll()
            counts.discarded += discarded.count
            return .end(waiter: nil, removeFromHub: false, discarded: discarded)
        case .finished:
            return .none
        }
    }

    enum SourceFinishedAction {
        case none
        /// Resume the waiting consumer with `nil`: the stream has ended.
        case resumeWithEnd(Waiter)
    }

    /// The source was torn down (its hub finished). Pending events are still delivered.
    mutating func sourceFinished() -> SourceFinishedAction {
        switch phase {
        case .streaming(let waiter):
            if !pending.isEmpty {
                phase = .draining
                return .none
            }
            phase = .finished
            if let waiter { return .resumeWithEnd(waiter) }
            return .none
        case .draining, .finished:
            return .none
        }
    }

    // MARK: Buffering

    private mutating func buffer(_ event: Event) -> ReceiveAction {
        if case .oldest(let limit) = policy.limit, pending.count >= limit {
            counts.dropped += 1
            return .discard(event)
        }
        if let replaced = pending.append(event, replacesProgress: policy.coalescesProgress) {
            // Replacing keeps the count, so no limit can be exceeded.
            counts.coalesced += 1
            return .discard(replaced)
        }
        if case .newest(let limit) = policy.limit, pending.count > limit, let oldest = pending.popFirst() {
            counts.dropped += 1
            return .discard(oldest)
        }
        return .none
    }
}
