// Logs/ — libvlc's log as an event source (one C logger per library, installed once and
// unset once on a MediaEvents queue), its messages, and the cause of a failure recorded from
// them. The C logger and its set/unset pair are Native/'s NativeLogger (the va_list callback is
// the CLibVLCLog target).

import Dispatch
import Glibc
import Synchronization

/// libvlc's log as typed messages: `library.logs`.
///
/// libvlc says *why* something failed only in its log (`cannot open file /x (No such file or
/// directory)`, `connection failed: Connection refused`); the event managers only say
/// `EncounteredError`. Subscribe with `observe(minimumLevel:…)` or `events(minimumLevel:…)`;
/// handlers are dispatched as `configuration` says, like every other source's.
///
/// The log callback is installed with `libvlc_log_set` once, on the first subscription (or
/// the first `FailureCauseRecorder`), and removed with `libvlc_log_unset` once, when this
/// object is torn down, on a MediaEvents queue: `libvlc_log_unset` waits for running
/// callbacks, so it never runs from one, and cancelling a subscription never calls it. Once
/// installed, libvlc's own stderr logger is replaced for the rest of the instance's life.
///
/// libvlc calls its log callback on many threads at once. A message is formatted only when
/// someone listens at its level: the C callback checks a per-level mask first, so messages of
/// other levels cost one atomic load and no formatting or allocation.
///
/// Not a `VLCEventSource`: its subscriptions also switch formatting on and off per level in
/// the C callback, which the generic `observe(_:)` and `events(_:)` of that protocol cannot
/// do; the methods here take a minimum level instead of kinds.
public final class VLCLogSource: Sendable {
    /// The subscribers.
    let eventHub = EventHub<LogMessage>()
    /// How log handlers are dispatched; read once, when the library was created.
    public let configuration: any EventsConfiguring
    let router: LogRouter
    let native: NativeLogger
    private let listeners = Protected(LogListenerRegistry())

    init(instance: NativeLibrary, configuration: any EventsConfiguring) {
        self.configuration = configuration
        router = LogRouter()
        // The logger holds the router until it is freed, after the unset: this object may be
        // gone while libvlc still logs (a player released after the library's last wrapper).
        native = NativeLogger(instance: instance, callback: logDeliver, context: router)
        router.bind(EventsHandler(object: self, configuration: configuration))
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            _ = eventHub.finish()
            let native = native
            // Never installed: no callback can be running, and nothing needs a queue.
            if native.endIfNeverInstalled() { return }
            // This may be any thread, one inside a log callback included (through a handler that
            // drops the last reference to the library): libvlc_log_unset would wait for itself.
            ServiceQueues.pendingTeardowns.async(on: ServiceQueues.teardown) {
                native.tearDown()
            }
        }
    }

    // MARK: Subscribing

    /// Calls `handler` for each message of `minimumLevel` or above, as `configuration` says,
    /// until the returned token is cancelled or deinitialized.
    ///
    /// ```swift
    /// let subscription = library.logs.observe(minimumLevel: .error) { message in
    ///     print(message.module ?? "-", message.text)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - minimumLevel: the least severe level delivered.
    ///   - onCompletion: called exactly once when the library's log is torn down, unless the
    ///     subscription was cancelled first.
    ///   - handler: runs outside every MediaEvents lock, possibly on several libvlc threads at
    ///     once with the default configuration. It may call any member of the library and of
    ///     this object, subscribe, cancel its own subscription, or drop the last reference.
    public func observe(
        minimumLevel: LogLevel = .warning,
        onCompletion: (@Sendable () -> Void)? = nil,
        handler: @escaping @Sendable (LogMessage) -> Void
    ) -> EventSubscription {
        let sink = ClosureSink(mask: KindMask(minimumLevel.andAbove), handler: handler, completion: onCompletion)
        if !eventHub.add(sink) {
            if let work = sink.finish(lastEvent: nil) {
                ServiceQueues.pendingTeardowns.async(on: ServiceQueues.release, work)
            }
        } else {
            startListening(sink, at: minimumLevel)
        }
        return EventSubscription(
            cancel: { [weak self] in
                guard sink.cancel(), let self else { return }
                self.eventHub.remove(sink)
                self.listeners.withLock { $0.prune(applyingTo: self.native, self.router) }
            },
            isActive: { sink.isActive }
        )
    }

    /// The messages of `minimumLevel` or above as an `AsyncSequence`, subscribed from now on.
    ///
    /// ```swift
    /// for await message in library.logs.events(minimumLevel: .warning) { print(message) }
    /// ```
    ///
    /// - Parameters:
    ///   - minimumLevel: the least severe level delivered.
    ///   - buffering: what to keep while the consumer is busy. The default keeps every
    ///     warning and error and, of debug and notice, only the latest pending message of each
    ///     (the others are counted in `statistics.coalesced`); `.unbounded` keeps everything.
    /// - Returns: a stream for one consumer; it ends when the library's log is torn down, when
    ///   the consuming task is cancelled or when the consumer stops iterating. Formatting for
    ///   its levels stops at the first message after it ended.
    public func events(minimumLevel: LogLevel = .warning, buffering: EventBufferingPolicy = .default)
        -> EventStream<LogMessage>
    {
        let sink = EventStreamSink(mask: KindMask(minimumLevel.andAbove), policy: buffering, hub: eventHub)
        if !eventHub.add(sink) {
            sink.finishNow()
        } else {
            startListening(sink, at: minimumLevel)
        }
        return EventStream(sink: sink)
    }

    /// Waits for the next message of `minimumLevel` or above.
    ///
    /// - Throws: `VLCError.timedOut` when none arrives within `timeout`; `CancellationError`
    ///   when the calling task is cancelled.
    public func nextMessage(minimumLevel: LogLevel = .warning, timeout: Duration) async throws -> LogMessage {
        try await events(minimumLevel: minimumLevel, buffering: .keepOldest(1))
            .first(timeout: timeout, describing: "a log message of level \(minimumLevel) or above") { _ in true }
    }

    /// Sends `text` through the C log callback as a message of `level` logged on the calling
    /// thread, as libvlc would but without libvlc's own cost: what the benchmark measures.
    @_spi(Benchmarks)
    public func _logThroughCallback(_ level: LogLevel, _ text: UnsafePointer<CChar>) {
        native.logThroughCallback(level: level.libvlcLevel, text)
    }

    /// The levels formatted now (someone listens at them), for tests and diagnostics.
    var formattedLevels: Set<LogLevel> {
        let mask = native.mask
        return Set(LogLevel.allCases.filter { mask & (1 << UInt32($0.libvlcLevel)) != 0 })
    }

    // MARK: Listener bookkeeping

    private func startListening(_ listener: any LogListener, at minimumLevel: LogLevel) {
        listeners.withLock { registry in
            registry.add(listener, levels: minimumLevel.andAbove)
            registry.prune(applyingTo: native, router)
        }
        native.installIfNeeded()
    }

    /// A `FailureCauseRecorder` needs error messages captured on libvlc's threads.
    func startCapturing() {
        listeners.withLock { registry in
            registry.capturers += 1
            registry.prune(applyingTo: native, router)
        }
        native.installIfNeeded()
    }

    func stopCapturing() {
        listeners.withLock { registry in
            registry.capturers -= 1
            registry.prune(applyingTo: native, router)
        }
    }

    /// Called after each delivery: a stream that ended left the hub without telling this
    /// object, so its levels stay formatted until the next delivered message notices.
    fileprivate func pruneListenersIfNeeded() {
        let live = eventHub.sinkCount
        listeners.withLock { registry in
            if live < registry.entries.count { registry.prune(applyingTo: native, router) }
        }
    }
}

/// A subscriber that can tell whether it still wants messages.
protocol LogListener: AnyObject, Sendable {
    var isListening: Bool { get }
}

extension ClosureSink: LogListener {
    var isListening: Bool { isActive }
}

extension EventStreamSink: LogListener {
    var isListening: Bool { !isFinished }
}

/// Which levels someone listens at: the subscribers (held weakly) and the failure recorders.
struct LogListenerRegistry {
    struct Entry {
        weak var listener: (any LogListener)?
        let levels: UInt8
    }

    private(set) var entries: [Entry] = []
    var capturers = 0

    mutating func add(_ listener: any LogListener, levels: [LogLevel]) {
        entries.append(Entry(listener: listener, levels: levels.reduce(0) { $0 | 1 << UInt8($1.index) }))
    }

    /// Drops the subscribers that ended and publishes the levels still wanted to the router
    /// (Swift side) and to the C callback's mask. Runs under the registry's lock so that two
    /// updates cannot publish out of order; neither store calls user code or libvlc.
    mutating func prune(applyingTo native: NativeLogger, _ router: LogRouter) {
        entries.removeAll { !($0.listener?.isListening ?? false) }
        let published = entries.reduce(UInt8(0)) { $0 | $1.levels }
        router.publishedLevels.store(published, ordering: .relaxed)
        var mask: UInt32 = 0
        for level in LogLevel.allCases where published & (1 << UInt8(level.index)) != 0 {
            mask |= 1 << UInt32(level.libvlcLevel)
        }
        router.isCapturing.store(capturers > 0, ordering: .relaxed)
        if capturers > 0 { mask |= 1 << UInt32(LogLevel.error.libvlcLevel) }
        native.setMask(mask)
    }
}

/// What the C callback calls: copies the message, hands error messages to the failure
/// recorder of the thread's input, and delivers to the subscribers as configured.
final class LogRouter: @unchecked Sendable {
    // @unchecked: `handler` is written once, in VLCLogSource.init, before the C logger can be
    // installed; libvlc_log_set takes libvlc's logger lock after that write and every callback
    // takes it before reading, which orders the two. Everything else is Atomic or Protected.
    nonisolated(unsafe) private var handler: EventsHandler<VLCLogSource>?
    /// Bits by `LogLevel.index`: the levels with subscribers.
    let publishedLevels = Atomic<UInt8>(0)
    /// Whether any `FailureCauseRecorder` wants error messages.
    let isCapturing = Atomic<Bool>(false)
    /// The recorder of the input each thread runs, by thread.
    private let inputs = Protected<[UInt: WeakInputTracker]>([:])

    func bind(_ handler: EventsHandler<VLCLogSource>) {
        self.handler = handler
    }

    func deliver(_ native: NativeLogMessage) {
        let level = native.level
        let publish = publishedLevels.load(ordering: .relaxed) & (1 << UInt8(level.index)) != 0
        let capture = level == .error && isCapturing.load(ordering: .relaxed)
        guard publish || capture else { return }
        let message = native.copy(threadID: currentThread())
        if capture {
            // The tracker is called after unlocking; it only appends under its own lock.
            inputs.withLock { $0[message.threadID]?.tracker }?.record(message)
        }
        if publish, let handler {
            handler.handle(message, sender: 0) { source, message in
                source.eventHub.publish(message)
                source.pruneListenersIfNeeded()
            }
        }
    }

    /// From now on, error messages logged on `thread` go to `tracker`.
    func register(_ tracker: InputTracker, for thread: UInt) {
        inputs.withLock { $0[thread] = WeakInputTracker(tracker: tracker) }
    }

    /// Stops sending `thread`'s messages to `tracker` (unless another took the thread since).
    func unregister(_ tracker: InputTracker, for thread: UInt) {
        inputs.withLock { inputs in
            if let current = inputs[thread], current.tracker == nil || current.tracker === tracker {
                inputs[thread] = nil
            }
        }
    }
}

struct WeakInputTracker {
    weak var tracker: InputTracker?
}

/// The calling thread's identity (`pthread_self()`).
func currentThread() -> UInt { UInt(pthread_self()) }

private let logDeliver: NativeLogger.Callback = { context, message in
    guard let context, let message else { return }
    // Borrowed without a retain: the NativeLogger holds the router until the C logger is
    // freed, after libvlc_log_unset has waited for the running callbacks.
    Unmanaged<LogRouter>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.deliver(NativeLogMessage(message)) }
}
