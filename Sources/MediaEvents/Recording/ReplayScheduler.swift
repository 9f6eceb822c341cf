import Dispatch
import Glibc

/// How fast a ``ReplaySession`` delivers its recording.
public enum ReplayPace: Sendable, Hashable {
    /// One entry after the other, as soon as the previous one's handlers have returned.
    case fast
    /// At the recorded times: each entry when as much time has passed since `start()` as had
    /// passed since the recording started.
    case recorded
    /// Only when the test moves the replay's virtual clock: `advance(by:)`, `advance(to:)`,
    /// `step()`, `runToEnd()`.
    case stepped
}

/// A recorded entry made ready to deliver: checked when the session was made, so delivering it
/// cannot fail. `deliver` makes the event (with the playback ids moved up by the offset it is
/// given) and hands it to its object's `EventsHandler`, with the entry as delivered (its time on
/// the replay's clock, its playback renumbered) for the calls its handlers make.
struct PreparedEntry: Sendable {
    let entry: RecordedEntry
    /// The object whose playback ids this entry carries (for renumbering repeated answers).
    let playbackObject: RecordedObject.ID?
    /// A recorded call's effect on its object's values (a `stop` forgets the current
    /// playback), which no subscriber sees: applied in its place, not counted, not waited for.
    var isSilent = false
    let deliver: @Sendable (_ delivered: RecordedEntry, _ playbackOffset: UInt64) -> Void
}

/// A run of prepared entries that answers a call, times counted from `start`.
struct PreparedAnswer: Sendable {
    let entries: [PreparedEntry]
    let start: Duration
}

/// Which call an answer is for.
struct CallKey: Hashable, Sendable {
    let object: RecordedObject.ID
    let name: String
}

/// The replay's clock and queue of entries: one state machine behind one lock, and one driver
/// on a serial queue of its own that hands the due entries out one at a time.
///
/// **Determinism.** The driver hands out an entry, then waits until its handlers have returned
/// (a no-op delivery through the same configuration, `barrier`, queued behind it) before it
/// takes the next. A call a handler makes is therefore recorded, and its answer scheduled
/// (from the time of the entry being handled), before anything later is delivered: in every
/// configuration, inline, on a queue, synchronous or not, and at every pace, the same app code
/// sees the same sequence every run. Only the recorded pace reads the wall clock, to decide
/// when an entry is due; the order never depends on it.
final class ReplayScheduler: Sendable {
    fileprivate struct Item {
        let time: Duration
        let order: UInt64
        let prepared: PreparedEntry
        let offset: UInt64

        /// The entry as it is delivered: at its time on the replay's clock, its playback
        /// renumbered.
        var delivered: RecordedEntry {
            var entry = prepared.entry
            entry.time = time
            entry.playback = entry.playback.map { PlaybackID(rawValue: $0.rawValue + offset) }
            return entry
        }
    }

    fileprivate enum Action {
        case deliver(Item)
        case apply(Item)
        case wait(until: DispatchTime)
        case idle(resume: [CheckedContinuation<Void, Never>])
    }

    fileprivate struct CallWaiter {
        let id: UInt64
        let name: String
        let object: RecordedObject.ID?
        let continuation: CheckedContinuation<ReplayCall?, Never>
    }

    fileprivate struct State {
        var pending: [Item] = []
        var nextOrder: UInt64 = 0
        /// The virtual clock: the time of the last entry handed out, or where `advance` moved it.
        var clock: Duration = .zero
        var started = false
        var wallStart = DispatchTime.now()
        /// `stepped`: while the test moves the clock, entries up to this time are due.
        var limit: Duration?
        var unlimited = false
        /// `stepped`: entries `step()` still lets through.
        var steps = 0
        var driverRunning = false
        /// An entry was handed out and its handlers may still run.
        var barrierPending = false
        var stopped = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var finishWaiters: [CheckedContinuation<Void, Never>] = []
        var stepWaiters: [CheckedContinuation<RecordedEntry?, Never>] = []
        var stepped: [RecordedEntry] = []
        var lastDelivered: RecordedEntry?
        var delivered = 0
        var calls: [ReplayCall] = []
        var callWaiters: [CallWaiter] = []
        var nextWaiterID: UInt64 = 0
        var highestPlayback: [RecordedObject.ID: UInt64] = [:]
        var explicitAnswers: [CallKey: [PreparedAnswer]] = [:]
        var recordedAnswers: [CallKey: [PreparedAnswer]] = [:]
        var callCounts: [CallKey: Int] = [:]

        mutating func insert(_ entries: [PreparedEntry], at base: Duration, start: Duration, renumber: Bool) {
            var offsets: [RecordedObject.ID: UInt64] = [:]
            if renumber {
                // The playbacks a segment begins follow the last one the player had; its other
                // ids (late events of the playback before, events of the current one) keep
                // their distance to them. A segment used for the first time keeps its ids.
                var firstBegan: [RecordedObject.ID: UInt64] = [:]
                var highest: [RecordedObject.ID: UInt64] = [:]
                for prepared in entries {
                    guard let object = prepared.playbackObject, let playback = prepared.entry.playback else { continue }
                    highest[object] = max(highest[object] ?? 0, playback.rawValue)
                    if prepared.entry.name == "PlaybackBegan" {
                        firstBegan[object] = min(firstBegan[object] ?? .max, playback.rawValue)
                    }
                }
                for (object, top) in highest {
                    let had = Int64(highestPlayback[object] ?? 0)
                    let offset = firstBegan[object].map { had - (Int64($0) - 1) } ?? had - Int64(top)
                    offsets[object] = UInt64(max(0, offset))
                }
            }
            for prepared in entries {
                let offset = prepared.playbackObject.flatMap { offsets[$0] } ?? 0
                if let object = prepared.playbackObject, let playback = prepared.entry.playback {
                    highestPlayback[object] = max(highestPlayback[object] ?? 0, playback.rawValue + offset)
                }
                let time = base + (prepared.entry.time - start)
                let item = Item(time: max(time, .zero), order: nextOrder, prepared: prepared, offset: offset)
                nextOrder += 1
                // After every item due at the same time or earlier: stable, so equal times keep
                // the order they were scheduled in.
                let index = pending.partitioningIndex { $0.time > item.time }
                pending.insert(item, at: index)
            }
        }

        /// The virtual time now: at the recorded pace, the wall clock since `start()`.
        func now(_ pace: ReplayPace) -> Duration {
            guard pace == .recorded, started else { return clock }
            let elapsed = DispatchTime.now().uptimeNanoseconds - wallStart.uptimeNanoseconds
            return max(clock, .nanoseconds(Int64(elapsed)))
        }
    }

    let pace: ReplayPace
    private let state = Protected(State())
    private let queue = DispatchQueue(label: "MediaEvents.replay", qos: ServiceQueues.qos)
    /// Signalled when an entry is scheduled, so that a driver waiting for a later recorded time
    /// looks again.
    private let wakeUp = DispatchSemaphore(value: 0)
    /// Runs its closure once every delivery handed out before has run (see the session).
    private let barrier: @Sendable (@escaping @Sendable () -> Void) -> Void

    init(pace: ReplayPace, barrier: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.pace = pace
        self.barrier = barrier
    }

    // MARK: Setting up

    /// Schedules `entries` at their recorded times (the timeline, or a prologue).
    func schedule(_ entries: [PreparedEntry]) {
        state.withLock { $0.insert(entries, at: .zero, start: .zero, renumber: false) }
        kick()
    }

    /// The recording's own answers: the `n`-th call on an object is answered with what followed
    /// its `n`-th recorded occurrence (the last one again once they are used up).
    func setRecordedAnswers(_ answers: [CallKey: [PreparedAnswer]]) {
        state.withLock { $0.recordedAnswers = answers }
    }

    /// Answers the next `key` call with `answer`, before any recorded answer.
    func addAnswer(_ answer: PreparedAnswer, for key: CallKey) {
        state.withLock { $0.explicitAnswers[key, default: []].append(answer) }
    }

    // MARK: Driving

    func start() {
        state.withLock { state in
            guard !state.started else { return }
            state.started = true
            state.wallStart = .now()
        }
        kick()
    }

    /// Waits until nothing is due and the handlers of everything handed out have returned;
    /// `moving` changes what is due, in the same transition that registers the wait (so the
    /// driver cannot go idle in between and leave the move undone).
    fileprivate func waitUntilIdle(moving move: @escaping @Sendable (inout State) -> Void) async {
        await withCheckedContinuation { continuation in
            let stopped = state.withLock { state -> Bool in
                if state.stopped { return true }
                move(&state)
                state.idleWaiters.append(continuation)
                return false
            }
            if stopped { continuation.resume() } else { kick() }
        }
    }

    /// Waits until every scheduled entry has been delivered (and its handlers have returned).
    func waitUntilFinished() async { await waitUntilFinished { _ in } }

    fileprivate func waitUntilFinished(moving move: @escaping @Sendable (inout State) -> Void) async {
        await withCheckedContinuation { continuation in
            let stopped = state.withLock { state -> Bool in
                if state.stopped { return true }
                move(&state)
                state.finishWaiters.append(continuation)
                return false
            }
            if stopped { continuation.resume() } else { kick() }
        }
    }

    /// `stepped`: moves the clock to `target` (never back) delivering what is due by then.
    func advance(to target: Duration) async {
        precondition(pace == .stepped, "advance needs a ReplaySession made with pace .stepped")
        await waitUntilIdle { state in
            state.started = true
            state.limit = max(state.limit ?? state.clock, target)
        }
    }

    /// `stepped`: moves the clock forward by `duration`.
    func advance(by duration: Duration) async {
        precondition(pace == .stepped, "advance needs a ReplaySession made with pace .stepped")
        await waitUntilIdle { state in
            state.started = true
            state.limit = max(state.limit ?? state.clock, state.clock + duration)
        }
    }

    /// `stepped`: delivers every entry left, and those their handlers' calls schedule.
    func runToEnd() async {
        precondition(pace == .stepped, "runToEnd needs a ReplaySession made with pace .stepped")
        await waitUntilFinished { state in
            state.started = true
            state.unlimited = true
        }
    }

    /// `stepped`: delivers the next entry, moving the clock to its time; `nil` when none is
    /// left.
    func step() async -> RecordedEntry? {
        precondition(pace == .stepped, "step needs a ReplaySession made with pace .stepped")
        return await withCheckedContinuation { continuation in
            let none = state.withLock { state -> Bool in
                state.started = true
                guard !state.pending.isEmpty, !state.stopped else { return true }
                state.steps += 1
                state.stepWaiters.append(continuation)
                return false
            }
            if none {
                continuation.resume(returning: nil)
            } else {
                kick()
            }
        }
    }

    var clock: Duration { state.withLock { $0.now(pace) } }
    var pendingCount: Int { state.withLock { $0.pending.count } }
    var deliveredCount: Int { state.withLock { $0.delivered } }
    var isFinished: Bool { state.withLock { $0.pending.isEmpty && !$0.driverRunning && !$0.barrierPending } }

    /// Ends the replay: nothing more is delivered; every waiter returns.
    func stop() {
        let (waiters, steps, calls) = state.withLock { state in
            state.stopped = true
            state.pending = []
            defer {
                state.idleWaiters = []
                state.finishWaiters = []
                state.stepWaiters = []
                state.callWaiters = []
            }
            return (state.idleWaiters + state.finishWaiters, state.stepWaiters, state.callWaiters)
        }
        waiters.forEach { $0.resume() }
        steps.forEach { $0.resume(returning: nil) }
        calls.forEach { $0.continuation.resume(returning: nil) }
        wakeUp.signal()
    }

    private func kick() {
        let start = state.withLock { state -> Bool in
            if state.driverRunning || state.barrierPending || state.stopped { return false }
            state.driverRunning = true
            return true
        }
        if start {
            queue.async { self.drive() }
        } else {
            wakeUp.signal()
        }
    }

    /// The driver: hands out due entries one at a time, each after the previous one's handlers.
    private func drive() {
        while true {
            switch state.withLock({ $0.nextAction(pace) }) {
            case .apply(let item):
                item.prepared.deliver(item.delivered, item.offset)
            case .deliver(let item):
                item.prepared.deliver(item.delivered, item.offset)
                barrier { self.barrierPassed() }
                // Inline and synchronous deliveries have passed the barrier already: go on here;
                // otherwise the barrier's pass starts the driver again.
                let goOn = state.withLock { state -> Bool in
                    if !state.barrierPending { return true }
                    state.driverRunning = false
                    return false
                }
                if !goOn { return }
                resumeSteps()
            case .wait(let deadline):
                _ = wakeUp.wait(timeout: deadline)
            case .idle(let waiters):
                waiters.forEach { $0.resume() }
                return
            }
        }
    }

    private func barrierPassed() {
        let restart = state.withLock { state -> Bool in
            state.barrierPending = false
            if state.driverRunning || state.stopped { return false }
            state.driverRunning = true
            return true
        }
        if restart {
            resumeSteps()
            queue.async { self.drive() }
        }
    }

    /// Resumes the `step()` waiting for the entry just delivered, once its handlers returned.
    private func resumeSteps() {
        let done = state.withLock { state -> [(CheckedContinuation<RecordedEntry?, Never>, RecordedEntry)] in
            let count = min(state.stepped.count, state.stepWaiters.count)
            defer {
                state.stepped.removeFirst(count)
                state.stepWaiters.removeFirst(count)
            }
            return Array(zip(state.stepWaiters.prefix(count), state.stepped.prefix(count)))
        }
        for (continuation, entry) in done { continuation.resume(returning: entry) }
    }

    // MARK: Calls

    /// Records a call the app made on a replay object and schedules its answer.
    func call(_ name: String, on object: RecordedObject.ID, fields: [RecordedField], answers: Bool) -> ReplayCall {
        let trigger = ReplayDeliveryContext.current
        let (call, woken) = state.withLock { state -> (ReplayCall, [CallWaiter]) in
            let key = CallKey(object: object, name: name)
            let count = state.callCounts[key, default: 0]
            state.callCounts[key] = count + 1
            var answer: PreparedAnswer?
            if var explicit = state.explicitAnswers[key], !explicit.isEmpty {
                answer = explicit.removeFirst()
                state.explicitAnswers[key] = explicit
            } else if answers, let recorded = state.recordedAnswers[key], !recorded.isEmpty {
                answer = recorded[min(count, recorded.count - 1)]
            }
            // From the time of the entry whose handler made the call: where the app reacted in
            // the replay's time, however late its queue ran the handler.
            let base = trigger.map { max($0.time, .zero) } ?? state.now(pace)
            if let answer, !state.stopped {
                state.insert(answer.entries, at: base, start: answer.start, renumber: true)
            }
            let call = ReplayCall(
                name: name, object: object, fields: fields, time: base, trigger: trigger,
                previous: state.lastDelivered, isAnswered: answer != nil)
            state.calls.append(call)
            let (woken, waiting) = state.callWaiters.partitioned { waiter in
                waiter.name == name && (waiter.object == nil || waiter.object == object)
            }
            state.callWaiters = waiting
            return (call, woken)
        }
        for waiter in woken { waiter.continuation.resume(returning: call) }
        kick()
        return call
    }

    var calls: [ReplayCall] { state.withLock { $0.calls } }

    /// The first call named `name` (on `object`, or any) at or after the `index`-th call;
    /// waits for it; `nil` when the replay stops first.
    func waitForCall(_ name: String, on object: RecordedObject.ID?, from index: Int) async -> ReplayCall? {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let found = state.withLock { state -> ReplayCall?? in
                    if let call = state.calls.dropFirst(index).first(where: { call in
                        call.name == name && (object == nil || call.object == object)
                    }) {
                        return .some(call)
                    }
                    if state.stopped { return .some(nil) }
                    state.callWaiters.append(
                        CallWaiter(id: id, name: name, object: object, continuation: continuation))
                    return .none
                }
                if case .some(let call) = found { continuation.resume(returning: call) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CallWaiter? in
                guard let index = state.callWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.callWaiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: nil)
        }
    }
}

extension ReplayScheduler.State {
    fileprivate func hasDue(_ pace: ReplayPace) -> Bool {
        guard let first = pending.first, started, !stopped else { return false }
        switch pace {
        case .fast: return true
        case .recorded: return now(pace) >= first.time
        case .stepped: return steps > 0 || unlimited || limit.map { first.time <= $0 } == true
        }
    }

    fileprivate mutating func nextAction(_ pace: ReplayPace) -> ReplayScheduler.Action {
        if hasDue(pace) {
            let item = pending.removeFirst()
            if item.prepared.isSilent { return .apply(item) }
            if pace == .stepped, !unlimited, limit.map({ item.time <= $0 }) != true {
                steps -= 1
                stepped.append(item.delivered)
            }
            clock = max(clock, item.time)
            lastDelivered = item.delivered
            delivered += 1
            // Until the barrier behind its delivery has passed.
            barrierPending = true
            return .deliver(item)
        }
        if pace == .recorded, started, !stopped, let first = pending.first {
            let due = wallStart.uptimeNanoseconds + UInt64(max(0, first.time.nanosecondsRounded))
            return .wait(until: DispatchTime(uptimeNanoseconds: due))
        }
        driverRunning = false
        if pace == .stepped {
            // The clock stays where the test moved it; what calls schedule from now on waits
            // for the next move.
            if let limit { clock = max(clock, limit) }
            limit = nil
            unlimited = false
        }
        var waiters = idleWaiters
        idleWaiters = []
        if pending.isEmpty || stopped {
            waiters += finishWaiters
            finishWaiters = []
        }
        return .idle(resume: waiters)
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    fileprivate var nanosecondsRounded: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}

extension Array {
    /// The first index whose element satisfies `belongsAfter`, for an array where every element
    /// that satisfies it comes after every one that does not (binary search).
    fileprivate func partitioningIndex(where belongsAfter: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongsAfter(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The elements that satisfy `belongs`, and the others, each in order.
    fileprivate func partitioned(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
        var yes: [Element] = []
        var no: [Element] = []
        for element in self {
            if belongs(element) { yes.append(element) } else { no.append(element) }
        }
        return (yes, no)
    }
}

/// The entry whose handlers run on this thread, so that a call made from one can say which
/// event it answered (``ReplayCall/trigger``).
enum ReplayDeliveryContext {
    private final class Frame {
        let entry: RecordedEntry
        let previous: UnsafeMutableRawPointer?
        init(entry: RecordedEntry, previous: UnsafeMutableRawPointer?) {
            self.entry = entry
            self.previous = previous
        }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// Runs `body` (the handlers of `entry`'s event) with `entry` as this thread's current entry.
    static func withEntry<Result>(_ entry: RecordedEntry, _ body: () -> Result) -> Result {
        let frame = Frame(entry: entry, previous: pthread_getspecific(key))
        let pointer = Unmanaged.passRetained(frame).toOpaque()
        pthread_setspecific(key, pointer)
        defer {
            pthread_setspecific(key, frame.previous)
            Unmanaged<Frame>.fromOpaque(pointer).release()
        }
        return body()
    }

    /// The entry whose handler runs on this thread, if any.
    static var current: RecordedEntry? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Frame>.fromOpaque(pointer).takeUnretainedValue().entry
    }
}
