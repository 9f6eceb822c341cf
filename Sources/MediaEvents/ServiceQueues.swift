import Dispatch

/// The queues MediaEvents runs its own work on.
///
/// Quality of service: work on these queues holds libvlc locks that libvlc's own
/// high-priority threads then wait for. A teardown's `libvlc_event_detach` takes the event
/// manager lock the input thread needs to send its next event; `libvlc_media_player_stop`
/// holds the player's input lock that every getter takes. If these queues ran at utility or
/// background QoS, a user-interactive caller or libvlc's input thread could wait behind
/// low-priority work that the scheduler keeps postponing (priority inversion). They run at
/// `.userInitiated`: above any background work, without competing with a UI thread.
enum ServiceQueues {
    static let qos: DispatchQoS = .userInitiated

    /// The serial queue on which the strong references taken for deliveries are dropped, so
    /// that a wrapper's `deinit` never runs on a libvlc thread.
    static let release = DispatchQueue(label: "MediaEvents.release", qos: qos)

    private static let releaseMark = QueueIdentity.mark(release)

    /// Whether the current thread runs a block of the release queue: lets tests prove that a
    /// wrapper's `deinit` triggered by a delivery runs there and not on libvlc's thread.
    static var isOnReleaseQueue: Bool { QueueIdentity.isCurrent(releaseMark) }

    /// The serial queue that detaches and releases objects that have no control queue of
    /// their own (media, lists), away from libvlc threads and their locks.
    static let teardown = DispatchQueue(label: "MediaEvents.teardown", qos: qos)

    /// Every queued release pass and teardown (detach and native release) that has not
    /// finished yet; `VLCLibrary.waitForPendingTeardowns` waits for it.
    static let pendingTeardowns = DispatchGroup()

    /// A new serial queue that carries out one object's blocking libvlc calls in order.
    static func control(for what: String) -> DispatchQueue {
        DispatchQueue(label: "MediaEvents.control.\(what)", qos: qos)
    }
}

/// Identifies the queue the current thread is running on, so that a synchronous delivery
/// onto that very queue runs inline instead of trapping in `DispatchQueue.sync`.
///
/// Each queue used for synchronous delivery is marked once with a unique token under a
/// private key; `DispatchQueue.getSpecific(key:)` then answers for the current queue and the
/// queues it targets, which are exactly the cases where `sync` would deadlock or trap.
enum QueueIdentity {
    /// One per queue used for delivery: identifies the queue, and batches the asynchronous
    /// deliveries of every object that targets it into one list, so that events of different
    /// objects (a player and its media) keep libvlc's order on a shared queue, and a burst
    /// costs one `async` per batch rather than one per event.
    final class Mark: Sendable {
        private struct Batch {
            var pending: [@Sendable () -> Void] = []
            var drainScheduled = false
        }

        private let batch = Protected(Batch())

        /// Queues `work` on `queue` (the queue this mark belongs to), after every delivery
        /// queued before it through this mark.
        func enqueue(_ work: @escaping @Sendable () -> Void, on queue: DispatchQueue) {
            let schedule = batch.withLock { batch -> Bool in
                batch.pending.append(work)
                if batch.drainScheduled { return false }
                batch.drainScheduled = true
                return true
            }
            if schedule {
                queue.async { self.drain(on: queue) }
            }
        }

        /// Runs one batch, then yields the queue so a continuous stream of events cannot
        /// starve the queue's other work.
        private func drain(on queue: DispatchQueue) {
            let work = batch.withLock { batch in
                defer { batch.pending = [] }
                return batch.pending
            }
            for item in work { item() }
            let more = batch.withLock { batch -> Bool in
                if batch.pending.isEmpty {
                    batch.drainScheduled = false
                    return false
                }
                return true
            }
            if more {
                queue.async { self.drain(on: queue) }
            }
        }
    }

    private static let key = DispatchSpecificKey<Mark>()
    private static let marking = Protected<Void>(())

    /// The mark of `queue`, set on first use.
    static func mark(_ queue: DispatchQueue) -> Mark {
        marking.withLock { _ in
            if let existing = queue.getSpecific(key: key) { return existing }
            let mark = Mark()
            queue.setSpecific(key: key, value: mark)
            return mark
        }
    }

    /// Whether the current thread runs a block of the queue that carries `mark`.
    static func isCurrent(_ mark: Mark) -> Bool {
        DispatchQueue.getSpecific(key: key) === mark
    }
}
