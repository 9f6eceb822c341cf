// Workarounds/ — the libvlc 3 workarounds, one concept: each type here enforces one numbered
// rule of <doc:SendSites> ("Rules"), at the two places where a wrapper meets libvlc — inside
// libvlc's callback (`inCallback`) and around a libvlc call (`around`) — and names the test that
// fails without it. A state that the callback and the calls share is a state machine under one
// lock, acted on after unlocking; a wait sleeps on a condition. Porting to another libvlc means
// revisiting this folder and Native/ (<doc:PortingToLibvlc4>).

/// One libvlc 3 workaround: what it does inside libvlc's callback, what it does around a call,
/// the rule it enforces and the test that shows it.
protocol LibvlcWorkaround: CallbackHook {
    /// What libvlc's callback tells it (`Never`: it does nothing there).
    associatedtype Event = Never
    /// What it needs to know of the call it runs around (`Void`: nothing).
    associatedtype Call = Void

    /// The rule's number in the Rules table of <doc:SendSites>.
    static var rule: Int { get }
    /// The test that fails without it, as `Class.method`; that test names it too.
    static var test: String { get }

    /// Runs `body`, a libvlc call (or the Swift work standing for one), as the rule requires: at
    /// once, after waiting, or not at all (`nil`).
    func around<Result>(_ call: Call, _ body: () throws -> Result) rethrows -> Result?
}

extension LibvlcWorkaround {
    /// Nothing to do inside libvlc's callback.
    func inCallback(_ event: Event) -> Bool { false }

    /// Runs `body` as it is.
    func around<Result>(_ call: Call, _ body: () throws -> Result) rethrows -> Result? { try body() }
}

extension LibvlcWorkaround where Call == Void {
    /// `around((), body)`.
    func around<Result>(_ body: () throws -> Result) rethrows -> Result? { try around((), body) }
}

/// Every libvlc 3 workaround, for the test that keeps them, the Rules table of SendSites.md and
/// their tests in agreement (`WorkaroundRulesTests`).
enum LibvlcWorkarounds {
    static let all: [any LibvlcWorkaround.Type] = [
        PlaybackCache.self, LockedSendDetour.self, TeardownAfterSenderHandler.self, SetMetaQueue.self,
        SubItemListLock.self, MediaReferenceCount.self, DeferredFromHandlers.self, SyncOntoCurrentQueue.self,
        TitleReadGate.self, AdvanceGate.self, ListPlayerListGuard.self, DiscovererServiceGuard.self,
        SnapshotCapture.self, StreamCancellation.self,
    ]
}
