/// Rule 17: `play(at:)` and `play(_:)` of a list player run only once libvlc's list player has a
/// list. libvlc 3 carries out `play_item_at_index` and `play_item` on the list without checking
/// that there is one: they read a missing list's count (SIGSEGV at address 0xb0; `next`,
/// `previous` and `play` check for it).
final class ListPlayerListGuard: LibvlcWorkaround {
    static let rule = 17
    static let test = "VLCMediaListPlayerTests.testPlayAtIndexAndPlayItem_whenNoListYet_changeNothingAndThenPlay"

    /// Whether libvlc's list player has a list: set by the queued `set_media_list`, read by the
    /// queued calls. Only touched on the control queue, so it is what libvlc has when those
    /// calls run, even when another thread sets the list at the same time.
    private let hasList = Protected(false)

    /// On the control queue, after `set_media_list`.
    func listSet() { hasList.withLock { $0 = true } }

    /// Around `play_item_at_index` or `play_item`, on the control queue: skipped (`nil`) while
    /// libvlc's list player has no list.
    func around<Result>(_ call: Void, _ body: () throws -> Result) rethrows -> Result? {
        hasList.withLock({ $0 }) ? try body() : nil
    }
}
