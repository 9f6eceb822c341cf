import Dispatch
import Synchronization

/// How the asynchronous drains of one queue's mark went, for the benchmark's profile of the
/// async route and for the tests of the drain's rules: counted per drain and per batch (never
/// per event), in an object of their own so the counters share no cache line with the mark's
/// list head.
@_spi(Benchmarks)
public final class DrainStatistics: Sendable {
    /// The counters of the drains on `queue`, an asynchronous delivery queue (its mark is
    /// made on first use, the same one its handlers use).
    public static func of(_ queue: DispatchQueue) -> DrainStatistics { QueueIdentity.mark(queue).statistics }

    /// The counters of the stream queue, whose deliveries are consumers resumed.
    public static var streams: DrainStatistics { ServiceQueues.streamsMark.statistics }

    /// Drains scheduled with `async` by a push that found the queue given back (a wake-up).
    public let drainsScheduled = Atomic<Int>(0)
    /// Lists taken by a drain (each one batch of one or more deliveries).
    public let batches = Atomic<Int>(0)
    /// Deliveries those batches ran (for the stream queue: consumers resumed).
    public let deliveries = Atomic<Int>(0)
    /// Drains that found nothing more and gave the queue back.
    public let queueGivenBack = Atomic<Int>(0)
    /// Lingers begun: waits for more work after a batch.
    public let lingers = Atomic<Int>(0)
    /// Lingers that ended without work.
    public let lingerExpired = Atomic<Int>(0)
    /// `sched_yield` calls made while lingering.
    public let lingerYields = Atomic<Int>(0)
    /// Drains that used up their slice.
    public let sliceEnded = Atomic<Int>(0)
    /// `sched_yield` calls made by the thread that woke the queue's thread (or, for the
    /// stream queue, resumed a consumer directly), to let it run now.
    public let handOffYields = Atomic<Int>(0)

    init() {}

    /// The counters, in the order of `names`, and resets them.
    public func take() -> [Int] {
        [
            drainsScheduled.exchange(0, ordering: .relaxed), batches.exchange(0, ordering: .relaxed),
            deliveries.exchange(0, ordering: .relaxed), queueGivenBack.exchange(0, ordering: .relaxed),
            lingers.exchange(0, ordering: .relaxed), lingerExpired.exchange(0, ordering: .relaxed),
            lingerYields.exchange(0, ordering: .relaxed), sliceEnded.exchange(0, ordering: .relaxed),
            handOffYields.exchange(0, ordering: .relaxed),
        ]
    }

    public static let names = [
        "drains scheduled", "batches", "deliveries", "queue given back", "lingers", "linger expired",
        "linger yields", "slice ended", "hand-off yields",
    ]
}
