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
final class AdvanceGate: Sendable {
    private struct State {
        var advancing = false
        /// The thread running one of the list player's calls, whose own `NextItemSet` ends no
        /// move of libvlc's thread.
        var callThread: pthread_t?
    }

    private let state = Protected(State())

    /// The player sent `EndReached`: libvlc's thread is about to move on.
    func playerReachedEnd() { state.withLock { $0.advancing = true } }

    /// The list player sent an event (inside libvlc's callback).
    func listPlayerSent(_ event: MediaListPlayerEvent) {
        guard event.kind == .nextItemSet || event.kind == .played else { return }
        let thread = pthread_self()
        state.withLock { state in
            if let call = state.callThread, pthread_equal(call, thread) != 0 { return }
            state.advancing = false
        }
    }

    /// Waits (at most 2 s) until libvlc's thread is not moving to the next item. The player's
    /// own calls wait too: its `stop` holds the input lock while the input thread's
    /// `EndReached` listener waits for the callback lock that moving thread holds, and that
    /// thread waits for the input lock to set the next media.
    func waitUntilSettled() {
        let deadline = DispatchTime.now() + .seconds(2)
        while state.withLock({ $0.advancing }), DispatchTime.now() < deadline {
            usleep(500)
        }
    }

    /// Runs one of the list player's calls once libvlc's thread is not moving to the next item.
    func run(hasList: Bool, _ call: () -> Void) {
        if hasList { waitUntilSettled() }
        let thread = pthread_self()
        state.withLock {
            $0.advancing = false
            $0.callThread = thread
        }
        call()
        state.withLock { $0.callThread = nil }
    }
}
