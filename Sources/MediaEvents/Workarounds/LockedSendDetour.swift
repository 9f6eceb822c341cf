import Dispatch
import Synchronization

/// Rule 3 (and 13 for `SnapshotTaken`): `TitleChanged` and `SnapshotTaken` are delivered from a
/// queue of MediaEvents, never from the sending thread, in the inline and synchronous
/// configurations: libvlc sends each with a lock held that ordinary calls need.
///
/// - `TitleChanged` from `InitTitle` comes with the media's item lock held (send site P13a),
///   which every media getter (`mrl`, `duration`, `meta`, `tracks`) takes: from an inline
///   handler that is a self-deadlock on the input thread, and a synchronous delivery makes that
///   thread wait for a queue where anything reading the media waits for the lock. The callback
///   cannot tell that send site from the others (a chapter jump, `setTitle`), so every
///   `TitleChanged` takes the detour.
/// - `SnapshotTaken` comes from a callback of the library's `snapshot-file` variable (P16):
///   until it returns, creating or releasing any player of that library waits
///   (`var_AddCallback`/`var_DelCallback` wait for a running callback), a new player made in
///   the handler included.
///
/// The events that follow one of them go the same way until it has been delivered, so that
/// handlers see libvlc's order. libvlc sends one object's events one at a time (under its
/// event manager's lock), so the decision and the queueing are serialized. The asynchronous
/// configurations never make libvlc wait: they need no detour.
final class LockedSendDetour: LibvlcWorkaround {
    typealias Event = Request

    static let rule = 3
    static let test = "ReentrancyMatrixTests.testEveryMember_whenCalledFromEveryHandlerInline_neitherHangsNorCrashes"

    /// One delivery of the player, as its callback is about to hand it to the handler.
    struct Request {
        let delivery: PlayerDelivery
        let sender: UInt
        let handler: EventsHandler<VLCMediaPlayer>
    }

    private let isAsync: Bool
    private let queue = DispatchQueue(label: "MediaEvents.detour.player", qos: ServiceQueues.qos)
    /// Detoured deliveries not yet done.
    private let pending = Atomic<Int>(0)

    init(configuration: any EventsConfiguring) {
        isAsync = configuration.dispatchQueue != nil && configuration.isAsync
    }

    /// Inside the player's callback: queues the delivery of `request` when it must not be
    /// delivered on this thread (`true`); `false` to deliver it as the configuration says.
    func inCallback(_ request: Request) -> Bool {
        guard !isAsync, let kind = request.delivery.event?.kind,
            kind == .titleChanged || kind == .snapshotTaken || pending.load(ordering: .acquiring) > 0
        else { return false }
        pending.add(1, ordering: .relaxed)
        let handler = Unmanaged.passRetained(request.handler)
        let delivery = request.delivery
        let sender = request.sender
        ServiceQueues.pendingTeardowns.async(on: queue) {
            handler.takeRetainedValue().handle(delivery, sender: sender) { player, delivery in
                player.publish(delivery)
            }
            self.pending.subtract(1, ordering: .releasing)
        }
        return true
    }
}
