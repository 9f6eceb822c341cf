/// Rule 13 (and rule 5 for attaching): what waits for a lock a sending thread may hold is not
/// done inside a handler, nor on a queue a synchronous configuration delivers to, but later on a
/// MediaEvents queue.
///
/// - `libvlc_media_player_new` (also inside `libvlc_media_list_player_new`) waits for a running
///   `snapshot-file` callback, which takes the event lock of every player of the library in
///   turn (P16): a handler of one of them holds it. A player or list player made there creates
///   its native object as the first block of its control queue (`ControlQueue(creating:)`).
/// - `libvlc_event_attach` waits for the event manager's lock (G30): a first subscription to a
///   wrapper made for an event, or a `FailureCauseRecorder` made in a handler, attaches on the
///   teardown queue; a `VLCVLM` made there opens the VLM on the VLM queue.
struct DeferredFromHandlers: LibvlcWorkaround {
    static let rule = 13
    static let test =
        "ReentrancyCasesTests.testPlayerInit_whenCalledInAHandlerWhileASnapshotIsBeingTaken_returnsAndThePlayerWorks"

    /// Whether doing it now could wait for the caller itself.
    static var mustDefer: Bool { DeliveryContext.isInDelivery || QueueIdentity.isOnSyncDeliveryQueue }

    /// Around a creation or an attach: runs `body` now, or returns `nil` when it must be done
    /// on a MediaEvents queue instead.
    func around<Result>(_ call: Void, _ body: () throws -> Result) rethrows -> Result? {
        Self.mustDefer ? nil : try body()
    }
}
