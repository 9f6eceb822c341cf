import Dispatch

/// Decides where and how an object's events are handed to its observers.
///
/// libvlc calls its listeners on its own threads (and sometimes on yours, from inside a
/// control call such as `stop()`), with its own locks held. A configuration chooses what
/// happens next:
///
/// - `dispatchQueue == nil`: the handler runs synchronously on the thread libvlc called back on.
/// - a queue with `isAsync == false`: libvlc's thread waits while the handler runs on the queue.
///   When the calling thread is already running on that queue the handler runs inline instead
///   (a `sync` onto the current queue would trap).
/// - a queue with `isAsync == true`: the handler is queued and libvlc's thread continues at once.
///
/// The configuration is read once, when an object is created. Conform your own types freely;
/// the same-queue guard applies to them too.
public protocol EventsConfiguring: Sendable {
    /// The queue handlers run on, or `nil` to run them on the thread libvlc called back on.
    var dispatchQueue: DispatchQueue? { get }
    /// Whether handlers are queued (`true`) or libvlc's thread waits for them (`false`).
    var isAsync: Bool { get }
}

/// Runs handlers synchronously on the thread libvlc called back on: the cheapest
/// configuration, and the default. Handlers must be quick; any control call they make on
/// the object is queued, so they cannot deadlock libvlc.
public struct EventsDefaultConfiguration: EventsConfiguring {
    /// Creates the default configuration.
    public init() {}
    /// Always `nil`: handlers run on the thread libvlc called back on.
    public var dispatchQueue: DispatchQueue? { nil }
    /// Always `false`: nothing is queued.
    public var isAsync: Bool { false }
}

/// Queues handlers asynchronously on the main queue, as libvlc bindings traditionally did.
///
/// - Important: `DispatchQueue.main` only runs blocks while something drains it
///   (`dispatchMain()`, `RunLoop.main.run()`, an app's main loop). In a command-line program
///   or daemon that never drains the main queue this configuration delivers nothing.
public struct EventsLegacyConfiguration: EventsConfiguring {
    /// Creates the main-queue configuration.
    public init() {}
    /// Always `DispatchQueue.main`.
    public var dispatchQueue: DispatchQueue? { .main }
    /// Always `true`: handlers are queued and libvlc's thread continues at once.
    public var isAsync: Bool { true }
}

/// Runs handlers on a queue of your choice, synchronously or asynchronously.
public struct EventsQueueConfiguration: EventsConfiguring {
    /// The queue given to `init(queue:isAsync:)`; never `nil`.
    public let dispatchQueue: DispatchQueue?
    /// As given to `init(queue:isAsync:)`: `true` queues each delivery, `false` makes libvlc's
    /// thread wait until the handler has run.
    public let isAsync: Bool

    /// - Parameters:
    ///   - queue: the queue handlers run on.
    ///   - isAsync: `true` queues each delivery and lets libvlc's thread go on; `false` makes
    ///     libvlc's thread wait until the handler has run on `queue`.
    public init(queue: DispatchQueue, isAsync: Bool) {
        self.dispatchQueue = queue
        self.isAsync = isAsync
    }
}
