import Dispatch
import Glibc
import Synchronization

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

    /// The serial queue that resumes event streams' waiting consumers in a burst, so that
    /// libvlc's thread does not resume a task for every event (see `EventStreamSink.receive`).
    static let streams = DispatchQueue(label: "MediaEvents.streams", qos: qos)

    /// The stream queue's mark, whose drain list carries the consumers' resumptions.
    static let streamsMark: QueueIdentity.Mark = {
        let mark = QueueIdentity.mark(streams, lingersAfterEveryBatch: true)
        // The first use of a queue's mark decides how it lingers.
        precondition(mark.lingersAfterEveryBatch, "the stream queue was marked before its mark was made")
        return mark
    }()

    /// Every queued release pass, lease, completion and teardown (detach and native
    /// release) that has not finished yet; `VLCLibrary.waitForPendingTeardowns` waits for it.
    static let pendingTeardowns = PendingWork()

    /// A new serial queue that carries out one object's blocking libvlc calls in order.
    static func control(for what: String) -> DispatchQueue {
        DispatchQueue(label: "MediaEvents.control.\(what)", qos: qos)
    }

    /// Drops `value` on the release queue: for wrappers (event payloads, a replaced cache
    /// entry) whose last reference would otherwise go on a libvlc thread. The value is moved
    /// into a parcel first, so no copy of it is left to be released here.
    static func releaseLater<Value>(_ value: consuming Value) {
        let parcel = Parcel(value)
        pendingTeardowns.async(on: release) { parcel.empty() }
    }

    /// Gives a blocking wait a bounded slice at a time and tells it to give up when waiting
    /// may deadlock: when it is made from a delivery or from a queue MediaEvents delivers to
    /// while a synchronous delivery is waiting to enter its queue. That delivery's thread
    /// holds libvlc's locks, which what is awaited may need, and its queue may be this one,
    /// or one that targets it (which libdispatch does not let us ask about).
    static func wait(until done: (DispatchTime) -> Bool, timeout: DispatchTime) -> Bool {
        while true {
            let slice = min(timeout, .now() + .milliseconds(5))
            if done(slice) { return true }
            if DispatchTime.now() >= timeout || QueueIdentity.waitMayDeadlock { return false }
        }
    }
}

/// Holds one value until the one block that receives it empties it or takes it, so that the
/// value is released on that block's thread, within its work.
final class Parcel<Value>: @unchecked Sendable {
    // @unchecked: written once at creation and once by the one block that empties it.
    private var value: Value?

    init(_ value: consuming Value) { self.value = consume value }

    func empty() { value = nil }

    /// The value, which the parcel no longer holds.
    func take() -> Value? {
        defer { value = nil }
        return value
    }
}
