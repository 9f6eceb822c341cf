import Glibc

/// Rule 16: the list player's calls, and its player's, wait while libvlc's own thread moves the
/// list player to the next item.
///
/// When the player reaches the end of an item, libvlc's list-player thread moves on holding
/// only its callback lock, takes the list's lock, and lets go of the callback lock for a
/// moment to detach from the player (`set_current_playing_item`). A `next`, `previous`,
/// `play(at:)` or `play` made then takes the list player's locks (the callback lock
/// included) and waits for the list's lock, while that thread waits to take the callback
/// lock back: libvlc 3.0 deadlocks (seen here: `next()` while an item ended). The player's own
/// calls wait too: its `stop` holds the input lock while the input thread's `EndReached`
/// listener waits for the callback lock that moving thread holds, and that thread waits for
/// the input lock to set the next media. The move starts with the player's `EndReached`
/// (`playerReachedEnd`, inside the player's callback, before the list player's own listener)
/// and ends when that thread sends `NextItemSet` or `Played`; a call waits for it on a
/// condition, at most 2 s (when libvlc coalesces two ends into one move, or has no list to
/// move in, no second event comes).
///
/// An item that ends *during* a `next()` (or `previous`, `play(at:)`, `play(_:)`) deadlocks
/// libvlc 3.0 too: that call lets go of the callback lock while it holds the list's lock, and
/// the ending item's listener wakes libvlc's thread, which takes the callback lock and waits
/// for the list's (seen with gdb in a stress test, about one run in ten with 0.1 s items).
/// No item can end during the call when the player has no input: before such a call,
/// `stopInputBeforeMove` stops the player's input (its playback was skipped), waits for a
/// move that input's end began, and stops again if that move started another item.
final class AdvanceGate: LibvlcWorkaround {
    typealias Event = MediaListPlayerEvent

    static let rule = 16
    static let test = "VLCMediaListPlayerTests.testControls_whenListPlayerAndItsPlayerAreDrivenAtOnce_neverDeadlock"

    /// Whose call runs: the list player's (which claims the calling thread, so that its own
    /// `NextItemSet` ends no move; without a list there is nowhere to move, and it only claims)
    /// or its player's (which only waits).
    enum Call {
        case listPlayer(hasList: Bool)
        case player
    }

    private struct State {
        /// `EndReached`s whose move libvlc's thread has not finished: a count, not a flag, as
        /// the next item may end before the move that started it has sent its event.
        var pendingMoves = 0
        /// Every `EndReached` of the player so far: an end during a stop shows here.
        var ends = 0
        /// The thread running one of the list player's calls, whose own `NextItemSet` ends no
        /// move of libvlc's thread.
        var callThread: pthread_t?
    }

    private let state = Waitable(State())

    /// How long a call waits for a move, in nanoseconds.
    static let moveBound: UInt64 = 2_000_000_000

    /// Inside the player's callback: `EndReached` means libvlc's thread is about to move on.
    func playerReachedEnd() {
        state.withLock { state in
            state.pendingMoves += 1
            state.ends &+= 1
        }
    }

    /// Inside the list player's callback: `NextItemSet` or `Played` from libvlc's own thread
    /// ends a move.
    func inCallback(_ event: MediaListPlayerEvent) -> Bool {
        guard event.kind == .nextItemSet || event.kind == .played else { return false }
        let thread = pthread_self()
        state.change { state in
            if let call = state.callThread, pthread_equal(call, thread) != 0 { return }
            state.pendingMoves = max(0, state.pendingMoves - 1)
        }
        return false
    }

    /// Around one of the list player's or its player's calls, on their control queue: waits
    /// (at most `moveBound`) until libvlc's thread is not moving to the next item, then runs it.
    func around<Result>(_ call: Call, _ body: () throws -> Result) rethrows -> Result? {
        switch call {
        case .player:
            settle(claim: false, waiting: true)
            return try body()
        case .listPlayer(let hasList):
            settle(claim: true, waiting: hasList)
            defer { state.withLock { $0.callThread = nil } }
            return try body()
        }
    }

    /// How many times `stopInputBeforeMove` stops an input libvlc's own move started.
    static let stopRounds = 4

    /// On the control queue, before a call that moves the list player to another item:
    /// `stopInput` (which stops the player's input, when it has one) once no move is pending,
    /// until no item ended during it. An end during the stop may have started a move, which
    /// starts the next item: that one is stopped in turn, once the move is over.
    func stopInputBeforeMove(_ stopInput: () -> Void) {
        for _ in 0..<Self.stopRounds {
            settle(claim: false, waiting: true)
            let ends = state.withLock { $0.ends }
            stopInput()
            if state.withLock({ $0.ends }) == ends { return }
        }
    }

    /// Waits until no move is pending (given up after the bound: two ends coalesced into one
    /// move send one event), then, in the same critical section, claims the calling thread.
    private func settle(claim: Bool, waiting: Bool) {
        let deadline = MonotonicClock.now + Self.moveBound
        let thread = pthread_self()
        state.wait(until: { !waiting || $0.pendingMoves == 0 }, deadline: deadline) { state, _ in
            if waiting { state.pendingMoves = 0 }
            if claim { state.callThread = thread }
        }
    }
}

/// The advance gates of the list players that play with one player: told of the player's
/// `EndReached` inside its callback, waited for around the player's own calls.
final class PlayerAdvanceGates: CallbackHook {
    private let gates = Protected<[AdvanceGate]>([])

    func add(_ gate: AdvanceGate) { gates.withLock { $0.append(gate) } }

    func remove(_ gate: AdvanceGate) { gates.withLock { $0.removeAll { $0 === gate } } }

    func inCallback(_ event: MediaPlayerEvent) -> Bool {
        if event.kind == .endReached { gates.withLock { $0.forEach { $0.playerReachedEnd() } } }
        return false
    }

    /// On the player's control queue: waits until no list player of this player is moving on.
    func waitUntilSettled() {
        for gate in gates.withLock({ $0 }) { _ = gate.around(.player) {} }
    }
}
