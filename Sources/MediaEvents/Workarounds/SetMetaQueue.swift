/// Rule 5: `VLCMedia.setMeta` never calls libvlc on the caller's thread. libvlc sends
/// `MediaMetaChanged` from inside `libvlc_media_set_meta` holding the media's item event lock
/// (M1a, G16), and a synchronous configuration makes it wait there for its queue: called where
/// that queue cannot run meanwhile (a handler, the queue itself, a queue it targets or one that
/// targets it, which libdispatch does not let MediaEvents tell apart), a direct call would wait
/// for its own caller. So the call is queued on the media's control queue, in call order, and
/// `meta(_:)` answers the value set at once, until every queued set of that key has run.
final class SetMetaQueue: LibvlcWorkaround {
    typealias Call = UInt32

    static let rule = 5
    static let test =
        "ReentrancyCasesTests.testSetMeta_whenCalledFromABlockOfTheQueueTheDeliveryQueueTargets_neitherWaitsNorLosesTheValue"

    /// The latest value set for one meta key and how many of its sets are still queued.
    private struct Pending {
        var value: String?
        var queued = 0
    }

    private let pending = Protected<[UInt32: Pending]>([:])

    /// On the caller's thread, before the call is queued: `key` now reads `value`.
    func queued(_ key: UInt32, _ value: String?) {
        pending.withLock { pending in
            pending[key, default: Pending()].value = value
            pending[key, default: Pending()].queued += 1
        }
    }

    /// The value the latest queued set of `key` gives, while one is queued; `nil` otherwise
    /// (libvlc's answer is then the right one). A set of `nil` reads as `.some(nil)`.
    func pendingValue(of key: UInt32) -> String?? {
        pending.withLock { $0[key].map(\.value) }
    }

    /// Around the queued `libvlc_media_set_meta` of `key`, on the media's control queue: once
    /// it ran, libvlc answers for the key if no later set is queued.
    func around<Result>(_ key: UInt32, _ body: () throws -> Result) rethrows -> Result? {
        let result = try body()
        pending.withLock { pending in
            pending[key]?.queued -= 1
            if pending[key]?.queued == 0 { pending[key] = nil }
        }
        return result
    }
}
