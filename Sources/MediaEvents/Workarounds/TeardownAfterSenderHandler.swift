import Glibc

/// Rule 5: a wrapper dropped inside a handler of an event that its own listeners' event manager
/// sent (a second wrapper of that media, a `FailureCauseRecorder` of that player, another
/// `VLCVLM`) is torn down once that handler has returned: its detach waits for the event
/// manager's lock, which the sending thread holds until then (G30), so queued at once it would
/// hold up its queue, and every wait for teardowns made in the handler.
struct TeardownAfterSenderHandler: LibvlcWorkaround {
    static let rule = 5
    static let test =
        "ReentrancyCasesTests.testWaitForPendingTeardowns_whenASubscribedSecondWrapperOfTheSenderIsDroppedInItsHandler_returnsAtOnce"

    /// Around a teardown: runs `teardown` (which queues the detach) now, or, when this thread
    /// delivers an event that `sender` sent with its locks held and the wrapper's listeners are
    /// attached to it, once that delivery has returned. A deferred teardown counts as pending
    /// from now on, for every wait but one made on this thread (inside the delivery it waits
    /// for), so that a program that waits elsewhere cannot exit before it has been queued.
    func run(_ teardown: @escaping @Sendable () -> Void, listeningTo sender: UInt?, isAttached: Bool) {
        guard isAttached, let sender else { return teardown() }
        let pending = ServiceQueues.pendingTeardowns
        let hold = DeferredTeardown()
        pending.enter(lease: hold.identity, holder: hold)
        let deferred = DeliveryContext.afterDelivery(from: sender) {
            teardown()
            pending.leave(lease: hold.identity)
        }
        if !deferred {
            pending.leave(lease: hold.identity)
            teardown()
        }
    }
}

/// A teardown waiting for the delivery on `thread` to return: counted with the leases, as one
/// that cannot end before a wait made on that thread returns.
private final class DeferredTeardown: LeaseHolder {
    let thread = pthread_self()

    var identity: UInt { UInt(bitPattern: ObjectIdentifier(self)) }

    var leaseWaitsForCurrentQueue: Bool { pthread_equal(thread, pthread_self()) != 0 }
}
