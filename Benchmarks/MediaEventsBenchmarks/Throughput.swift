import CRawBaseline
import Dispatch
import Foundation
@_spi(Benchmarks) import MediaEvents
import Synchronization

/// Counts deliveries and signals once the expected number has arrived.
final class DeliveryCounter: Sendable {
    private let count = Atomic<Int>(0)
    private let target = Atomic<Int>(0)
    let done = DispatchSemaphore(value: 0)

    func reset(target: Int) {
        count.store(0, ordering: .relaxed)
        self.target.store(target, ordering: .relaxed)
    }

    @inline(__always)
    func hit() {
        let reached = count.wrappingAdd(1, ordering: .relaxed).newValue
        if reached == target.load(ordering: .relaxed) { done.signal() }
    }

    var value: Int { count.load(ordering: .relaxed) }
}

/// What a user's own wrapper hands to `EventsHandler`: an object whose method the handler
/// calls, as VLCKit's design has it.
final class UserWrapper: Sendable {
    let counter = DeliveryCounter()

    @inline(never)
    func received() { counter.hit() }

    @inline(never)
    func received(_ type: Int32) { if type >= 0 { counter.hit() } }
}

/// A user's own C callback, written in Swift: it borrows the `EventsHandler` that libvlc's
/// user data points at and calls its public `handleEvent`.
private let userCallback: crb_callback_t = { _, userData in
    Unmanaged<EventsHandler<UserWrapper>>.fromOpaque(userData!).takeUnretainedValue()
        .handleEvent { $0.received() }
}

/// The same, with a handler that uses the event: the closure captures its type.
private let userCallbackCapturing: crb_callback_t = { event, userData in
    let type = event!.load(as: Int32.self)
    Unmanaged<EventsHandler<UserWrapper>>.fromOpaque(userData!).takeUnretainedValue()
        .handleEvent { $0.received(type) }
}

/// The same, with the event type handed over as the payload of `handleEvent(_:_:)`.
private let userCallbackPayload: crb_callback_t = { event, userData in
    Unmanaged<EventsHandler<UserWrapper>>.fromOpaque(userData!).takeUnretainedValue()
        .handleEvent(event!.load(as: Int32.self)) { $0.received($1) }
}

/// One measured run: the time on the producing thread (the `setMeta` loop, where libvlc
/// sends the events) and the time until the last event was handled.
struct Sample {
    var produceNanoseconds: Double
    var totalNanoseconds: Double
    /// CPU time the producing thread used in its loop, where measured ((c) and (d)): where the
    /// scheduler keeps the queue's thread on the producer's core, the wall time includes the
    /// drain's and this does not.
    var produceCPUNanoseconds: Double? = nil
}

/// The calling thread's CPU time.
private func threadCPUNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// A variant's medians and the runs they come from (in the order the rounds ran).
struct VariantResult {
    let variant: Variant
    /// Median ns per event on the producing thread, and until the last was handled.
    let produce: Double
    let total: Double
    let samples: [Sample]
}

/// Making many subscriptions on one object, then cancelling them in random order.
struct ManySubscriptions {
    let subscribeSeconds: Double
    let cancelSeconds: Double
}

/// A way of delivering the same burst of `MediaMetaChanged` events.
struct Variant {
    let label: String
    let name: String
    /// Counts against the targets (false for libvlc's own cost without a listener).
    let isAsync: Bool
    let run: (Int) -> Sample
}

/// The throughput variants: every one sets the same title on a media `n` times, and libvlc
/// sends `MediaMetaChanged` synchronously from inside each call.
final class ThroughputBench {
    static let title = "MediaEvents"
    static var mediaPath: String { BenchmarkMedia.path }

    let raw: OpaquePointer
    let library: VLCLibrary
    private let inlineMedia: VLCMedia
    private let queuedMedia: VLCMedia
    /// (c)'s delivery queue.
    private let queuedQueue = DispatchQueue(label: "benchmark.c")
    private let streamedMedia: VLCMedia
    private let inlineCounter = DeliveryCounter()
    private let userWrapper = UserWrapper()
    private let userHandler: EventsHandler<UserWrapper>
    private let queuedCounter = DeliveryCounter()
    private var subscriptions: [EventSubscription] = []

    init() throws {
        guard let raw = crb_bench_new(Self.mediaPath) else {
            throw VLCError.libraryInitializationFailed(arguments: [], reason: "crb_bench_new failed")
        }
        self.raw = raw
        library = try VLCLibrary()
        let url = URL(fileURLWithPath: Self.mediaPath)
        inlineMedia = VLCMedia(url: url, library: library, configuration: EventsDefaultConfiguration())
        queuedMedia = VLCMedia(
            url: url, library: library,
            configuration: EventsQueueConfiguration(queue: queuedQueue, isAsync: true))
        // Inline: the stream itself is the hop to the consumer, so no queue in between.
        streamedMedia = VLCMedia(url: url, library: library, configuration: EventsDefaultConfiguration())
        userHandler = EventsHandler(object: userWrapper, configuration: EventsDefaultConfiguration())
        let inlineCounter = inlineCounter
        let queuedCounter = queuedCounter
        subscriptions = [
            inlineMedia.observe(.metaChanged) { _ in inlineCounter.hit() },
            queuedMedia.observe(.metaChanged) { _ in queuedCounter.hit() },
        ]
    }

    deinit {
        subscriptions.forEach { $0.cancel() }
        crb_bench_free(raw)
    }

    var variants: [Variant] {
        [
            Variant(label: "(a0)", name: "libvlc set_meta, no listener", isAsync: false) { n in
                Self.sample(crb_run_no_listener(self.raw, n, Self.title))
            },
            Variant(label: "(a)", name: "raw C callback", isAsync: false) { n in
                Self.sample(crb_run_raw(self.raw, n, Self.title), expect: n)
            },
            Variant(label: "(b)", name: "MediaEvents, EventsDefaultConfiguration (inline)", isAsync: false) { n in
                self.burst(self.inlineMedia, self.inlineCounter, n)
            },
            Variant(
                label: "(p)", name: "user's C callback calling public EventsHandler.handleEvent (inline)",
                isAsync: false
            ) { n in
                self.userBurst(self.userHandler, userCallback, self.userWrapper.counter, n)
            },
            Variant(
                label: "(p2)", name: "the same, closure capturing the event type (inline)",
                isAsync: false
            ) { n in
                self.userBurst(self.userHandler, userCallbackCapturing, self.userWrapper.counter, n)
            },
            Variant(
                label: "(p3)", name: "the same, event type as handleEvent's payload (inline)",
                isAsync: false
            ) { n in
                self.userBurst(self.userHandler, userCallbackPayload, self.userWrapper.counter, n)
            },
            Variant(label: "(c)", name: "MediaEvents, async EventsQueueConfiguration", isAsync: true) { n in
                Self.withDrainStatistics("(c)", .of(self.queuedQueue), n) {
                    self.burst(self.queuedMedia, self.queuedCounter, n)
                }
            },
            Variant(label: "(d)", name: "MediaEvents AsyncSequence consumer", isAsync: true) { n in
                Self.withDrainStatistics("(d)", .streams, n) { self.streamBurst(n) }
            },
            Variant(label: "(e)", name: "C: dispatch_async per event + heap copy", isAsync: true) { n in
                Self.sample(crb_run_dispatch(self.raw, n, Self.title), expect: n)
            },
        ]
    }

    private func burst(_ media: VLCMedia, _ counter: DeliveryCounter, _ n: Int) -> Sample {
        counter.reset(target: n)
        let start = crb_now_ns()
        let startCPU = threadCPUNanoseconds()
        Self.setMetaLoop(media, n)
        let producedCPU = threadCPUNanoseconds()
        let produced = crb_now_ns()
        counter.done.wait()
        let end = crb_now_ns()
        precondition(counter.value == n, "delivered \(counter.value) of \(n)")
        return Sample(
            produceNanoseconds: Double(produced - start), totalNanoseconds: Double(end - start),
            produceCPUNanoseconds: producedCPU - startCPU)
    }

    /// A burst delivered through a user's own C callback attached in place of the C counter.
    private func userBurst(
        _ handler: EventsHandler<UserWrapper>, _ callback: crb_callback_t,
        _ counter: DeliveryCounter, _ n: Int
    ) -> Sample {
        counter.reset(target: n)
        let userData = Unmanaged.passUnretained(handler).toOpaque()
        let result = withExtendedLifetime(handler) { crb_run_callback(raw, n, Self.title, callback, userData) }
        precondition(counter.value == n, "delivered \(counter.value) of \(n)")
        return Self.sample(result)
    }

    /// (d): a task iterates `events(.metaChanged)` until it has counted `n`. The default
    /// buffering is lossless here: it coalesces progress kinds only, and `MetaChanged` is a
    /// state event.
    private func streamBurst(_ n: Int) -> Sample {
        let stream = streamedMedia.events(.metaChanged)
        let done = DispatchSemaphore(value: 0)
        let received = Atomic<Int>(0)
        let consumer = Task.detached {
            var count = 0
            for await _ in stream {
                count += 1
                if count == n { break }
            }
            received.store(count, ordering: .relaxed)
            done.signal()
        }
        let start = crb_now_ns()
        let startCPU = threadCPUNanoseconds()
        Self.setMetaLoop(streamedMedia, n)
        let producedCPU = threadCPUNanoseconds()
        let produced = crb_now_ns()
        done.wait()
        let end = crb_now_ns()
        _ = consumer
        let count = received.load(ordering: .relaxed)
        precondition(count == n, "delivered \(count) of \(n); \(stream.statistics)")
        return Sample(
            produceNanoseconds: Double(produced - start), totalNanoseconds: Double(end - start),
            produceCPUNanoseconds: producedCPU - startCPU)
    }

    /// Runs `run`, then, with `MEDIAEVENTS_DRAIN_STATISTICS` set, prints how the drains of the
    /// queue marks went meanwhile: (c)'s delivery queue, (d)'s stream queue (consumers resumed).
    static func withDrainStatistics(
        _ label: String, _ statistics: DrainStatistics, _ n: Int, _ run: () -> Sample
    ) -> Sample {
        _ = statistics.take()
        let sample = run()
        if ProcessInfo.processInfo.environment["MEDIAEVENTS_DRAIN_STATISTICS"] != nil {
            let counts = statistics.take()
            let text = zip(DrainStatistics.names, counts).map { "\($0) \($1)" }.joined(separator: ", ")
            // The paced latency runs time nothing per event: their figures are the latencies.
            let cpu = sample.produceCPUNanoseconds.map { String(format: " (%.0f of its CPU)", $0 / Double(n)) } ?? ""
            let timing =
                sample.totalNanoseconds > 0
                ? String(
                    format: " %.0f ns/event on libvlc's thread%@, %.0f total;", sample.produceNanoseconds / Double(n),
                    cpu, sample.totalNanoseconds / Double(n)) : ""
            let line = "\(label) run:\(timing) \(text)\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        return sample
    }

    /// The C loop (a) runs, on a MediaEvents media: the same libvlc calls from the same code.
    private static func setMetaLoop(_ media: VLCMedia, _ n: Int) {
        withExtendedLifetime(media) {
            _ = crb_set_meta_loop(UnsafeMutableRawPointer(media.nativeMediaForBenchmarks), n, title)
        }
    }

    private static func sample(_ result: crb_result_t, expect n: Int? = nil) -> Sample {
        if let n { precondition(result.delivered == UInt64(n), "delivered \(result.delivered) of \(n)") }
        return Sample(produceNanoseconds: Double(result.produce_ns), totalNanoseconds: Double(result.total_ns))
    }

    /// The median per variant of `runs` runs, after one warm-up run each; the variants take
    /// turns so that a change in machine load hits all of them alike.
    func measure(events: Int, runs: Int, only: [String]? = nil) -> [VariantResult] {
        let variants = variants.filter { only?.contains($0.label) ?? true }
        for variant in variants { _ = variant.run(events) }
        var samples = Array(repeating: [Sample](), count: variants.count)
        for _ in 0..<runs {
            for (index, variant) in variants.enumerated() {
                samples[index].append(variant.run(events))
            }
        }
        return zip(variants, samples).map { variant, samples in
            VariantResult(
                variant: variant,
                produce: Statistics.median(samples.map { $0.produceNanoseconds / Double(events) }),
                total: Statistics.median(samples.map { $0.totalNanoseconds / Double(events) }),
                samples: samples)
        }
    }

    /// End-to-end latency of (c): send (before `setMeta`) to handler entry, with a pause after
    /// each event so that it measures a hop, not a queue under a burst.
    func latencyQueued(events: Int, pauseMicroseconds: UInt32) -> [UInt64] {
        let probe = LatencyProbe(count: events)
        let queue = DispatchQueue(label: "benchmark.latency")
        let media = VLCMedia(
            url: URL(fileURLWithPath: Self.mediaPath), library: library,
            configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
        let subscription = media.observe(.metaChanged) { _ in probe.received() }
        _ = Self.withDrainStatistics("latency (c)", .of(queue), events) {
            for index in 0..<events {
                probe.markSend(index)
                media.setMetaOnCallingThread(.title, Self.title)
                if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
            }
            probe.done.wait()
            return Sample(produceNanoseconds: 0, totalNanoseconds: 0)
        }
        subscription.cancel()
        return probe.latencies
    }

    /// The same paced measurement for (d): send to the first line of a task's `for await`
    /// body over `events(.metaChanged)` of an inline media.
    func latencyStream(events: Int, pauseMicroseconds: UInt32) -> [UInt64] {
        let probe = LatencyProbe(count: events)
        let media = VLCMedia(
            url: URL(fileURLWithPath: Self.mediaPath), library: library, configuration: EventsDefaultConfiguration())
        let stream = media.events(.metaChanged)
        let consumer = Task.detached {
            var count = 0
            for await _ in stream {
                probe.received()
                count += 1
                if count == events { break }
            }
        }
        _ = Self.withDrainStatistics("latency (d)", .streams, events) {
            for index in 0..<events {
                probe.markSend(index)
                media.setMetaOnCallingThread(.title, Self.title)
                if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
            }
            probe.done.wait()
            return Sample(produceNanoseconds: 0, totalNanoseconds: 0)
        }
        _ = consumer
        return probe.latencies
    }

    /// The same paced measurement for (e).
    func latencyDispatch(events: Int, pauseMicroseconds: UInt32) -> [UInt64] {
        var latencies = [UInt64](repeating: 0, count: events)
        let delivered = crb_latency_dispatch(raw, events, pauseMicroseconds, Self.title, &latencies)
        precondition(delivered == events)
        return latencies
    }

    /// Subscribe + cancel on a media that already has a subscription (its native listeners
    /// are attached), in nanoseconds per pair.
    func subscribeCancel(pairs: Int, runs: Int) -> Double {
        var results: [Double] = []
        for _ in 0...runs {
            let counter = inlineCounter
            let start = crb_now_ns()
            for _ in 0..<pairs {
                let subscription = inlineMedia.observe(.metaChanged) { _ in counter.hit() }
                subscription.cancel()
            }
            results.append(Double(crb_now_ns() - start) / Double(pairs))
        }
        return Statistics.median(Array(results.dropFirst()))
    }
}

extension ThroughputBench {
    /// `count` subscriptions on a media that already has one (its native listeners are
    /// attached), then every one cancelled in a random (seeded) order; the best of `runs`.
    func manySubscriptions(count: Int, runs: Int) -> ManySubscriptions {
        let media = VLCMedia(
            url: URL(fileURLWithPath: Self.mediaPath), library: library,
            configuration: EventsDefaultConfiguration())
        let counter = DeliveryCounter()
        let first = media.observe(.metaChanged) { _ in counter.hit() }
        var generator = SplitMix64(seed: 15)
        var best = ManySubscriptions(subscribeSeconds: .infinity, cancelSeconds: .infinity)
        for _ in 0..<max(1, runs) {
            var tokens: [EventSubscription] = []
            tokens.reserveCapacity(count)
            let order = Array(0..<count).shuffled(using: &generator)
            let start = crb_now_ns()
            for _ in 0..<count { tokens.append(media.observe(.metaChanged) { _ in counter.hit() }) }
            let made = crb_now_ns()
            for index in order { tokens[index].cancel() }
            let end = crb_now_ns()
            precondition(!tokens.contains { $0.isActive })
            let run = ManySubscriptions(
                subscribeSeconds: Double(made - start) / 1e9, cancelSeconds: Double(end - made) / 1e9)
            if run.subscribeSeconds + run.cancelSeconds < best.subscribeSeconds + best.cancelSeconds { best = run }
        }
        first.cancel()
        return best
    }
}

/// A seeded generator, so every run cancels in the same random orders.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Send times and latencies of the paced measurement.
final class LatencyProbe: @unchecked Sendable {
    // @unchecked: send time i is written before event i is sent and read by its handler
    // (dispatch's enqueue orders the two); latency i is written only by that handler and read
    // after `done`.
    private let sendTimes: UnsafeMutableBufferPointer<UInt64>
    private let received_: UnsafeMutableBufferPointer<UInt64>
    private let next = Atomic<Int>(0)
    let done = DispatchSemaphore(value: 0)

    init(count: Int) {
        sendTimes = .allocate(capacity: count)
        sendTimes.initialize(repeating: 0)
        received_ = .allocate(capacity: count)
        received_.initialize(repeating: 0)
    }

    deinit {
        sendTimes.deallocate()
        received_.deallocate()
    }

    func markSend(_ index: Int) { sendTimes[index] = crb_now_ns() }

    func received() {
        let now = crb_now_ns()
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        received_[index] = now - sendTimes[index]
        if index + 1 == sendTimes.count { done.signal() }
    }

    var latencies: [UInt64] { Array(received_) }
}
