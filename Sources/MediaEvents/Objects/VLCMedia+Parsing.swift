import Dispatch

/// What libvlc may do to parse a media (`libvlc_media_parse_flag_t`).
public struct ParseOptions: OptionSet, Sendable {
    /// The `libvlc_media_parse_flag_t` bits.
    public let rawValue: Int32
    /// Options made of `libvlc_media_parse_flag_t` bits.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Parse local files only (no options set).
    public static let local: ParseOptions = []
    /// Parse network media too.
    public static let network = ParseOptions(rawValue: 0x01)
    /// Fetch artwork from local files.
    public static let fetchLocal = ParseOptions(rawValue: 0x02)
    /// Fetch artwork from the network.
    public static let fetchNetwork = ParseOptions(rawValue: 0x04)
    /// Let libvlc ask questions (login dialogs); without a dialog handler they are cancelled.
    public static let interact = ParseOptions(rawValue: 0x08)
}

extension VLCMedia {
    /// Starts parsing in the background; libvlc then sends `MediaParsedChanged` with the
    /// result, and `MediaMetaChanged`, `MediaDurationChanged`, `MediaSubItemAdded`,
    /// `MediaSubItemTreeAdded` as it finds things. Observe before calling this to see them.
    ///
    /// The parse is pending work (``VLCLibrary/waitForPendingTeardowns(timeout:)``) until
    /// libvlc ends it, also when the caller stopped waiting for it (a cancelled `parse`):
    /// libvlc's preparser reads tags with TagLib on a thread of its own, and a program that
    /// exits while it runs crashes in the C++ libraries' static destructors. Dropping the
    /// media stops its parse.
    ///
    /// libvlc 3 parses a media once: a later call throws (libvlc 3.0.24 refuses it) unless
    /// the last result was `skipped`.
    ///
    /// - Parameters:
    ///   - options: what libvlc may do.
    ///   - timeout: `nil` uses libvlc's default (`--preparse-timeout`, 5 s); otherwise at
    ///     least one millisecond.
    /// - Throws: `VLCError.parseFailed` when libvlc refuses to start.
    public func startParsing(options: ParseOptions = .local, timeout: Duration? = nil) throws {
        // Counted before the call: libvlc may end the parse inside it (skipped, failed).
        let parse = parses.begin()
        eventHub.listen()
        let status = native.parse(flags: options.rawValue, timeout: Self.milliseconds(timeout))
        if status != 0 {
            parses.end(parse)
            throw VLCError.parseFailed(mrl: mrl, status: VLCError.lastMessage(or: "libvlc refused to parse"))
        }
        if parsedStatus != .none { return parses.end(parse) }
        // libvlc ends every parse with MediaParsedChanged within its timeout, except when a
        // stop and a new parse of the same media cross (its `parse_stop` swallows the end):
        // the parse stops counting as pending work two seconds after its timeout at the latest.
        let grace = Self.milliseconds(timeout) > 0 ? Int(Self.milliseconds(timeout)) + 2000 : 7000
        let parses = parses
        ServiceQueues.release.asyncAfter(deadline: .now() + .milliseconds(grace)) { parses.end(parse) }
    }

    /// Stops a parse in progress; libvlc then reports it as ended. Queued on the media's
    /// control queue and returns at once: libvlc's stop waits for the preparser task, which
    /// may be the very thread running a handler of this media's parse events.
    public func stopParsing() {
        control.perform { $0.stopParsing() }
    }

    /// Parses the media and returns how parsing ended.
    ///
    /// Returns `.done`, `.failed` (a missing, empty or unreadable file), `.timeout` (libvlc
    /// gave up after `timeout`) or `.skipped` (for example a network media with `.local`):
    /// a failure is a result, not an error. Afterwards `meta(_:)`, `tracks`, `duration` and
    /// `subItems` show what was found; a playlist file (`.m3u` …) has its entries as
    /// sub-items. When the media was parsed before, returns that result at once. libvlc
    /// reports `.done` for a file it can open but not decode (random bytes): check `tracks`.
    ///
    /// - Parameters:
    ///   - options: what libvlc may do.
    ///   - timeout: `nil` uses libvlc's default (`--preparse-timeout`, 5 s). When given, the
    ///     call returns within it plus two seconds even if libvlc never reports the end (a
    ///     stop crossing a new parse of the same media): with the media's status, or `.timeout`.
    /// - Throws: `VLCError.parseFailed` when libvlc refuses to start, `CancellationError`
    ///   when the task is cancelled, before the call (nothing is started) or while it waits
    ///   (the parse is then stopped).
    public func parse(options: ParseOptions = .local, timeout: Duration? = nil) async throws -> ParsedStatus {
        // Before anything that may answer at once (a remote media with `.local` is skipped,
        // a parsed one returns its old result): a cancelled task gets its error for every source.
        try Task.checkCancellation()
        let waiter = ParseWaiter()
        // Subscribed before parsing starts, so the result cannot slip by.
        let subscription = observe(
            .parsedChanged,
            onCompletion: {
                waiter.finish(.failure(VLCError.sourceEnded(waitingFor: "MediaParsedChanged")))
            }
        ) { event in
            if case .parsedChanged(let status) = event, status != .none {
                waiter.finish(.success(status))
            }
        }
        defer { subscription.cancel() }
        do {
            try startParsing(options: options, timeout: timeout)
        } catch {
            // libvlc 3.0.24 refuses to parse a media that was parsed before.
            let status = parsedStatus
            if status != .none { return status }
            throw error
        }
        // Finished already (the event may have gone to the subscription too: finish is
        // idempotent).
        let status = parsedStatus
        if status != .none { waiter.finish(.success(status)) }
        // libvlc ends every parse with MediaParsedChanged, within its timeout, except when a
        // stop and a new parse of the same media cross (its `parse_stop` then swallows the
        // end): a bounded wait answers from the media's status then, `.timeout` if none.
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            let grace = Double(seconds) + Double(attoseconds) / 1e18 + 2
            // Weakly: the deadline outlives a parse that ended in time by up to `timeout` plus two
            // seconds, and holding the wrapper kept its media, and so the libvlc instance, alive
            // that long (past a program's exit, whose libvlc threads were then never joined).
            // While this call waits, its caller keeps the wrapper.
            ServiceQueues.release.asyncAfter(deadline: .now() + .milliseconds(Int(grace * 1000))) {
                [weak self] in
                let status = self?.parsedStatus ?? .none
                waiter.finish(.success(status == .none ? .timeout : status))
            }
        }
        return try await withTaskCancellationHandler {
            try await waiter.wait()
        } onCancel: {
            waiter.finish(.failure(CancellationError()))
            stopParsing()
        }
    }

    /// The sub-items found by parsing (the entries of a playlist), in order.
    public var subItems: [VLCMedia] {
        subItemList.items
    }

    /// The list libvlc fills with the sub-items; observe it to see them arrive. Read-only.
    ///
    /// The same list for the life of this wrapper, and for every wrapper of the same media
    /// (the one a `MediaChanged` carries, a list's item) while one of them keeps it: the first
    /// wrapper that asks makes it, with its own configuration, and the others answer with it.
    public var subItemList: VLCMediaList {
        sharedSubItemList {
            guard let list = native.subItems else {
                preconditionFailure("libvlc_media_subitems failed: \(VLCError.lastMessage(or: "out of memory"))")
            }
            return SubItemListLock.wrapper(of: list) { VLCMediaList(adopting: list, configuration: configuration) }
        }
    }

    private static func milliseconds(_ timeout: Duration?) -> Int32 {
        guard let timeout else { return -1 }
        let (seconds, attoseconds) = timeout.components
        let ms = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        // 0 would mean "no timeout" to libvlc.
        return Int32(clamping: max(1, ms))
    }
}

/// One parse result, delivered once, to a waiter that may arrive before or after it.
private final class ParseWaiter: Sendable {
    private enum State {
        case waiting(CheckedContinuation<ParsedStatus, any Error>?)
        case finished(Result<ParsedStatus, any Error>)
    }

    private let state = Protected(State.waiting(nil))

    func finish(_ result: Result<ParsedStatus, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<ParsedStatus, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .finished(result)
            return continuation
        }
        continuation?.resume(with: result)
    }

    func wait() async throws -> ParsedStatus {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<ParsedStatus, any Error>? in
                switch state {
                case .finished(let result): return result
                case .waiting: state = .waiting(continuation); return nil
                }
            }
            if let result { continuation.resume(with: result) }
        }
    }
}

/// The parses a media wrapper started that libvlc has not ended yet, each one pending work
/// (`ServiceQueues.pendingTeardowns`) from `startParsing` until its end reaches the wrapper's
/// listeners, the wrapper's teardown, or its deadline.
final class ParsesInFlight: Sendable {
    private struct State {
        var next: UInt64 = 0
        var running: Set<UInt64> = []
    }

    private let state = Protected(State())

    var isParsing: Bool { state.withLock { !$0.running.isEmpty } }

    /// Counts a parse about to start; returns its identity for `end(_:)`.
    func begin() -> UInt64 {
        ServiceQueues.pendingTeardowns.enter(.parse)
        return state.withLock { state in
            state.next += 1
            state.running.insert(state.next)
            return state.next
        }
    }

    /// The parse `id` is over (or no longer watched); idempotent.
    func end(_ id: UInt64) {
        if state.withLock({ $0.running.remove(id) }) != nil { ServiceQueues.pendingTeardowns.leave(.parse) }
    }

    /// Every parse is over: libvlc parses a media once at a time, and sent its end.
    func endAll() {
        let ended = state.withLock { state -> Int in
            defer { state.running.removeAll() }
            return state.running.count
        }
        for _ in 0..<ended { ServiceQueues.pendingTeardowns.leave(.parse) }
    }
}

/// A media's hook: notes the end of a parse inside libvlc's callback, so that the parse stops
/// counting as pending work however the media's events are delivered (a queue that is busy,
/// or the very thread that waits for pending work).
struct ParseEndHook: CallbackHook {
    let parses: ParsesInFlight

    func inCallback(_ event: MediaEvent) -> Bool {
        if case .parsedChanged(let status) = event, status != .none { parses.endAll() }
        return false
    }
}
