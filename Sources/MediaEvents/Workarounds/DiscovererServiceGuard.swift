/// Rule 18: a discoverer's `start` runs only when its service does not run, and a media
/// discoverer's `stop` only when it runs.
///
/// libvlc 3's media discoverer `stop` destroys its service without checking there is one: a
/// stop before `start`, or a second one, dereferences a null service in libvlccore (SIGSEGV).
/// Both discoverers' `start` replace a running service, whose thread goes on feeding the list
/// or calling into the discoverer (the renderer discoverer only asserts against it). libvlc
/// says whether a media discoverer runs; for a renderer discoverer, which has no such getter,
/// the guard keeps track (its `stop` is safe either way and always runs).
final class DiscovererServiceGuard: LibvlcWorkaround {
    static let rule = 18
    static let test = "VLCDiscovererTests.testStartAndStop_whenRepeatedOrOutOfOrder_changeNothing"

    enum Call {
        case start, stop
    }

    /// libvlc's answer, for a media discoverer; `nil` for a renderer discoverer.
    private let libvlcSaysRunning: (@Sendable () -> Bool)?
    /// Whether the renderer discoverer's service runs; only touched on its control queue.
    private let started = Protected(false)

    init(isRunning: (@Sendable () -> Bool)?) {
        libvlcSaysRunning = isRunning
    }

    /// Around `start` or `stop`, on the control queue: `nil` when it must not run. A renderer
    /// discoverer's `start` body returns whether it started (`true`) for the guard to note.
    func around<Result>(_ call: Call, _ body: () throws -> Result) rethrows -> Result? {
        if let libvlcSaysRunning {
            let running = libvlcSaysRunning()
            switch call {
            case .start: return running ? nil : try body()
            case .stop: return running ? try body() : nil
            }
        }
        switch call {
        case .start:
            guard !started.withLock({ $0 }) else { return nil }
            return try body()
        case .stop:
            defer { started.withLock { $0 = false } }
            return try body()
        }
    }

    /// A renderer discoverer's service started (on the control queue, after a `start` that
    /// succeeded).
    func serviceStarted() { started.withLock { $0 = true } }
}
