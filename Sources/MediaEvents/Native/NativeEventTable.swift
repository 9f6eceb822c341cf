import CLibVLC

/// An object's event manager (`libvlc_event_manager_t`). `libvlc_event_send` holds its lock
/// (EM, recursive) while it calls every listener (G30).
struct NativeEventManager: @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// The manager's address: the `p_obj` of the events it sends when, as a VLM's, it is the
    /// first member of the object it belongs to.
    var address: UInt { UInt(bitPattern: UnsafeRawPointer(pointer)) }

    /// Calls `libvlc_event_attach`; `false` when libvlc refused (a type the object never sends).
    /// - Sends: nothing. Locks: EM (G30): waits for a send running on another thread.
    /// - Queue: where nothing this object's sending thread waits for runs: the object's
    ///   initializer, its control queue or the teardown queue.
    func attach(_ type: Int32, _ callback: NativeCallback, _ userData: UnsafeMutableRawPointer?) -> Bool {
        libvlc_event_attach(pointer, type, callback, userData) == 0
    }

    /// Calls `libvlc_event_detach`, which aborts the process when nothing matches: only
    /// `NativeEventTable` calls it, once per attach. libvlc never touches `userData` after it.
    /// - Sends: nothing. Locks: EM (G30): waits for a send running on another thread.
    /// - Queue: a MediaEvents queue, never a libvlc thread nor the object's own handler.
    func detach(_ type: Int32, _ callback: NativeCallback, _ userData: UnsafeMutableRawPointer?) {
        libvlc_event_detach(pointer, type, callback, userData)
    }
}

/// The listeners of one libvlc event manager: every `libvlc_event_attach` and its one matching
/// `libvlc_event_detach` live here, so they cannot drift apart (libvlc aborts the process on a
/// detach that matches no attach).
///
/// The user data handed to libvlc is the source's receiver (`NativeEventReceiver`), retained
/// here and released only after every detach has returned: libvlc promises not to touch the
/// user data after detach, and not before.
///
/// Attaching is lazy (on the first subscription) and happens at most once. The phase is a state
/// machine under a lock with a condition: a caller that meets an attach in progress sleeps
/// until it is complete, and no lock is held while libvlc runs.
final class NativeEventTable: Sendable {
    private enum Phase: Sendable {
        case idle
        case attaching
        case attached([Int32])
        case detached

        var isAttaching: Bool {
            if case .attaching = self { return true }
            return false
        }
    }

    private let manager: NativeEventManager
    private let types: [Int32]
    private let callback: NativeCallback
    private let userData: UInt
    private let releaseUserData: @Sendable () -> Void
    private let phase = Waitable(Phase.idle)

    init<Receiver: AnyObject & Sendable>(
        manager: NativeEventManager, types: [Int32], callback: NativeCallback, receiver: Receiver
    ) {
        self.manager = manager
        self.types = types
        self.callback = callback
        let retained = Unmanaged.passRetained(receiver)
        self.userData = UInt(bitPattern: retained.toOpaque())
        self.releaseUserData = { retained.release() }
    }

    var isAttached: Bool {
        phase.withLock { phase in
            if case .attached = phase { return true }
            return false
        }
    }

    /// The event manager's address (see `NativeEventManager.address`).
    var managerAddress: UInt { manager.address }

    /// Attaches every listener unless that was done already. Callers racing the first attach
    /// wait until it is complete, so no subscriber can miss an event the first one would see.
    func attachIfNeeded() {
        let attach = phase.wait(until: { !$0.isAttaching }) { phase, _ -> Bool in
            guard case .idle = phase else { return false }
            phase = .attaching
            return true
        }
        guard attach else { return }
        let opaque = UnsafeMutableRawPointer(bitPattern: userData)
        let attached = types.filter { manager.attach($0, callback, opaque) }
        phase.change { $0 = .attached(attached) }
    }

    /// Detaches exactly what was attached, once, then releases the user data. Blocks until a
    /// callback running on another thread has returned (libvlc's event manager lock), so it
    /// must run on a MediaEvents queue, never on a libvlc thread.
    func detachAll() {
        let detach = phase.wait(until: { !$0.isAttaching }) { phase, _ -> [Int32]? in
            defer { phase = .detached }
            switch phase {
            case .attached(let types): return types
            case .idle: return []
            case .attaching, .detached: return nil
            }
        }
        guard let detach else { return }
        let opaque = UnsafeMutableRawPointer(bitPattern: userData)
        for type in detach { manager.detach(type, callback, opaque) }
        releaseUserData()
    }

    deinit { detachAll() }
}

extension NativeMedia {
    /// Attaches `callback` with `userData` to this media's `MediaFreed`, for good: libvlc sends it
    /// once, from the media's last release (M4), after it cancelled and waited for the media's
    /// parse and after every player let the media go. Never detached (the event manager goes
    /// with the media). For what must live exactly as long as libvlc's media (a stream media's
    /// `open` closure).
    /// - Sends: nothing. Locks: EM (G30).
    /// - Queue: the media's initializer, before anyone else holds the media.
    func attachUntilFreed(_ callback: NativeCallback, _ userData: UnsafeMutableRawPointer) {
        _ = eventManager.attach(Int32(libvlc_MediaFreed.rawValue), callback, userData)
    }
}
