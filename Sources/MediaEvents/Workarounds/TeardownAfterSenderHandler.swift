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
    /// attached to it, once that delivery has returned.
    func run(_ teardown: @escaping @Sendable () -> Void, listeningTo sender: UInt?, isAttached: Bool) {
        guard isAttached, let sender, DeliveryContext.afterDelivery(from: sender, teardown) else {
            return teardown()
        }
    }
}
