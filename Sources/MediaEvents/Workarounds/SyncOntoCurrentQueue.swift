/// Rule 14: a synchronous delivery onto the queue the sending thread already runs (directly, or
/// through a queue that targets it) runs inline: libdispatch traps (SIGILL) on a `sync` onto a
/// queue the thread owns. Each delivery queue's `QueueIdentity.Mark` has its own key, so one
/// mark never hides another (`getSpecific` answers with the nearest queue of the hierarchy that
/// has a value for a key).
struct SyncOntoCurrentQueue: LibvlcWorkaround {
    typealias Call = QueueIdentity.Mark

    static let rule = 14
    static let test =
        "ReentrancyCasesTests.testSyncDelivery_whenSentFromBlockOfMarkedQueueTargetingItsQueue_runsInlineWithoutTrap"

    /// Around a synchronous delivery to the queue of `mark`: runs it here when this thread runs
    /// a block of that queue; `nil` when the delivery must `sync` onto the queue.
    @inline(__always)
    func around<Result>(_ mark: QueueIdentity.Mark, _ body: () throws -> Result) rethrows -> Result? {
        QueueIdentity.isCurrent(mark) ? try body() : nil
    }
}
