/// Rule 8: a list libvlc fills itself (a media's sub-items, a discoverer's results) is copied
/// and attached to with its lock held, never by a thread that may already hold that lock, and a
/// media's sub-item list has one wrapper while it lives.
///
/// - libvlc sends the list's item events (L1b, L1c, L2b, L3) holding the list's non-recursive
///   lock (G22): inside a handler of them, making a wrapper of that very list must not lock it
///   again (it would never return); reading it without the lock is safe, since its owner waits
///   for this handler.
/// - libvlc's preparser adds sub-items holding that lock, and while it holds it waits for a
///   synchronous configuration's queue to deliver the item events to the wrapper that exists.
///   A second wrapper of the media made on that queue (a handler of any object reading
///   `subItems` of a `MediaChanged` payload) would take the lock again: the queue and the
///   preparser would wait for each other. With one wrapper per native list, a second one is
///   made only when none exists, and then no delivery of that list can be waiting.
struct SubItemListLock: LibvlcWorkaround {
    typealias Call = NativeMediaList

    static let rule = 8
    static let test =
        "ReentrancyCasesTests.testSubItems_whenASecondWrapperReadsThemOnTheQueueTheSubItemListWaitsFor_answerWithoutHang"

    /// Around copying `list` and attaching to it: with its lock held, unless this thread
    /// delivers that list's item events (their sender holds it).
    func around<Result>(_ list: NativeMediaList, _ body: () throws -> Result) rethrows -> Result? {
        let locked = !DeliveryContext.isDelivering(from: list.address)
        if locked { list.lock() }
        defer { if locked { list.unlock() } }
        return try body()
    }

    private struct Entry: Sendable {
        weak var list: VLCMediaList?
    }

    private static let wrappers = Protected<[UInt: Entry]>([:])

    /// The wrapper of `list` (one reference of which the caller hands over), made by `make`
    /// when none is alive.
    static func wrapper(of list: NativeMediaList, make: () -> VLCMediaList) -> VLCMediaList {
        let key = list.address
        if let existing = wrappers.withLock({ $0[key]?.list }) {
            // Not the last reference: `existing` holds one. Only the reference count's own
            // lock is taken.
            list.release()
            return existing
        }
        let made = make()
        let kept = wrappers.withLock { wrappers -> VLCMediaList in
            if let raced = wrappers[key]?.list { return raced }
            wrappers = wrappers.filter { $0.value.list != nil }
            wrappers[key] = Entry(list: made)
            return made
        }
        // A wrapper another thread made meanwhile wins; this one goes, outside the lock (its
        // teardown is queued, whatever thread this is).
        return kept
    }
}
