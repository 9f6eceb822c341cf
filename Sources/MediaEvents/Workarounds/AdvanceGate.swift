import Dispatch
import Glibc

/// Keeps the list player's calls out of libvlc's own move to the next item.
///
/// When the player reaches the end of an item, libvlc's list-player thread moves on holding
/// only its callback lock, takes the list's lock, and lets go of the callback lock for a
/// moment to detach from the player (`set_current_playing_item`). A `next`, `previous`,
/// `play(at:)` or `play` made then takes the list player's locks (the callback lock
/// included) and waits for the list's lock, while that thread waits to take the callback
/// lock back: libvlc 3.0 deadlocks (seen here: `next()` while an item ended). The move starts
/// with the player's `EndReached` (this gate hears it inside the callback, before the list
/// player's own listener) and ends when that thread sends `NextItemSet` or `Played`; a call
/// waits for it, at most 2 s (when libvlc coalesces two ends into one move, or has no list to
/// move in, no second event comes).
///
/// What this cannot prevent: an item that ends *during* a `next()` (or `previous`, `play(at:)`,
/// `play(_:)`). That call lets go of the callback lock while it holds the list's lock; the
/// ending item's listener wakes libvlc's thread, which takes the callback lock and waits for
/// the list's: libvlc 3.0 deadlocks inside the call (seen with gdb in a stress test, about one
/// run in ten with 0.1 s items). A limit of libvlc's list player, documented in LibvlcQuirks.
final class AdvanceGate: Sendable {
    private struct State {
        /// `EndReached`s whose move libvlc's thread has not finished: a count, not a flag, as
        /// the next item may end before the move that started it has sent its event.
        var pendingMoves = 0
        /// The thread running one of the list player's calls, whose own `NextItemSet` ends no
        /// move of libvlc's thread.
        var callThread: pthread_t?
    }

    private let state = Protected(State())

    /// The player sent `EndReached`: libvlc's thread is about to move on.
    func playerReachedEnd() { state.withLock { $0.pendingMoves += 1 } }

    /// The list player sent an event (inside libvlc's callback).
    func listPlayerSent(_ event: MediaListPlayerEvent) {
        guard event.kind == .nextItemSet || event.kind == .played else { return }
        let thread = pthread_self()
        state.withLock { state in
            if let call = state.callThread, pthread_equal(call, thread) != 0 { return }
            state.pendingMoves = max(0, state.pendingMoves - 1)
        }
    }

    /// Waits (at most 2 s) until libvlc's thread is not moving to the next item, then, in the
    /// same critical section, marks the calling thread as running a call (`claim`) or not. The
    /// player's own calls wait too: its `stop` holds the input lock while the input thread's
    /// `EndReached` listener waits for the callback lock that moving thread holds, and that
    /// thread waits for the input lock to set the next media. Without `waiting` it only claims.
    func waitUntilSettled(claim: Bool = false, waiting: Bool = true) {
        let deadline = DispatchTime.now() + .seconds(2)
        let thread = pthread_self()
        while true {
            let settled = state.withLock { state -> Bool in
                if waiting {
                    // Given up after the deadline: two ends coalesced into one move send one event.
                    if state.pendingMoves > 0, DispatchTime.now() < deadline { return false }
                    state.pendingMoves = 0
                }
                if claim { state.callThread = thread }
                return true
            }
            if settled { return }
            usleep(500)
        }
    }

    /// Runs one of the list player's calls once libvlc's thread is not moving to the next item
    /// (without a list it has nowhere to move, so the call only claims the thread).
    func run(hasList: Bool, _ call: () -> Void) {
        waitUntilSettled(claim: true, waiting: hasList)
        call()
        state.withLock { $0.callThread = nil }
    }
}
