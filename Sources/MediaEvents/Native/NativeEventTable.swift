// Native/ — the only code that calls `libvlc_event_attach`/`libvlc_event_detach`: one table
// of listeners per native object (attached once, detached exactly once, never from inside its
// own callback), the C callback entry that turns a `libvlc_event_t` into a typed event and
// hands it to Delivery/, and the pointer wrapper that crosses threads. Objects/ builds tables;
// nothing else touches libvlc's event managers.

import CLibVLC
import Glibc
import Synchronization

/// A libvlc pointer that may cross threads; libvlc objects are thread-safe, MediaEvents only
/// passes the pointer along.
struct NativePointer: @unchecked Sendable {
    let raw: OpaquePointer
}

/// The native object behind a wrapper: known when the wrapper is made, or created later by the
/// first block of its control queue (a player made inside a handler, where creating it could
/// wait for a libvlc callback that waits for the handler). Set once, before any other block of
/// that queue runs.
final class NativeSlot: Sendable {
    private let bits: Atomic<UInt>

    init(_ pointer: OpaquePointer?) {
        bits = Atomic(pointer.map { UInt(bitPattern: UnsafeRawPointer($0)) } ?? 0)
    }

    /// The object, `nil` until it is created.
    var raw: OpaquePointer? {
        UnsafeRawPointer(bitPattern: bits.load(ordering: .acquiring)).map(OpaquePointer.init)
    }

    /// On the control queue, once: the object is created.
    func set(_ pointer: OpaquePointer) {
        bits.store(UInt(bitPattern: UnsafeRawPointer(pointer)), ordering: .releasing)
    }
}

/// The listeners of one libvlc event manager: every `libvlc_event_attach` and its one
/// matching `libvlc_event_detach` live here, so they cannot drift apart (libvlc aborts the
/// process on a detach that matches no attach).
///
/// The user data handed to libvlc is the object's `EventsHandler`, retained here and released
/// only after every detach has returned: libvlc promises not to touch the user data after
/// detach, and not before.
///
/// Attaching is lazy (on the first subscription) and happens at most once; the phase is an
/// atomic state machine so that no lock is held while libvlc runs.
final class NativeEventTable: Sendable {
    private enum Phase: Int {
        case idle, attaching, attached, detached
    }

    private let manager: NativePointer
    private let types: [Int32]
    private let callback: libvlc_callback_t
    private let userData: UInt
    private let releaseUserData: @Sendable () -> Void
    private let phase = Atomic<Int>(Phase.idle.rawValue)
    // Written by the one thread that won .idle -> .attaching, read by the one that wins the
    // move to .detached; the phase's acquire/release ordering publishes it between them.
    nonisolated(unsafe) private var attachedTypes: [Int32] = []

    init<Handler: AnyObject & Sendable>(
        manager: OpaquePointer, types: [Int32], callback: libvlc_callback_t, handler: Handler
    ) {
        self.manager = NativePointer(raw: manager)
        self.types = types
        self.callback = callback
        let retained = Unmanaged.passRetained(handler)
        self.userData = UInt(bitPattern: retained.toOpaque())
        self.releaseUserData = { retained.release() }
    }

    var isAttached: Bool { phase.load(ordering: .acquiring) == Phase.attached.rawValue }

    /// The event manager's address: the `p_obj` of the events it sends when, as a VLM's, it
    /// is the first member of the object it belongs to.
    var managerAddress: OpaquePointer { manager.raw }

    /// Attaches every listener unless that was done already. Callers racing the first attach
    /// wait until it is complete, so no subscriber can miss an event the first one would see.
    func attachIfNeeded() {
        let won = phase.compareExchange(
            expected: Phase.idle.rawValue, desired: Phase.attaching.rawValue,
            ordering: .acquiringAndReleasing
        ).exchanged
        if won {
            let opaque = UnsafeMutableRawPointer(bitPattern: userData)
            var done: [Int32] = []
            for type in types where libvlc_event_attach(manager.raw, type, callback, opaque) == 0 {
                done.append(type)
            }
            attachedTypes = done
            phase.store(Phase.attached.rawValue, ordering: .releasing)
            return
        }
        while phase.load(ordering: .acquiring) == Phase.attaching.rawValue {
            sched_yield()
        }
    }

    /// Detaches exactly what was attached, once, then releases the user data. Blocks until a
    /// callback running on another thread has returned (libvlc's event manager lock), so it
    /// must run on a MediaEvents queue, never on a libvlc thread.
    func detachAll() {
        while true {
            let current = phase.load(ordering: .acquiring)
            if current == Phase.detached.rawValue { return }
            if current == Phase.attaching.rawValue { sched_yield(); continue }
            if phase.compareExchange(
                expected: current, desired: Phase.detached.rawValue,
                ordering: .acquiringAndReleasing
            ).exchanged {
                if current == Phase.attached.rawValue {
                    let opaque = UnsafeMutableRawPointer(bitPattern: userData)
                    for type in attachedTypes {
                        libvlc_event_detach(manager.raw, type, callback, opaque)
                    }
                }
                releaseUserData()
                return
            }
        }
    }

    deinit { detachAll() }
}

extension NativeEventTable {
    /// Listeners for every kind of `source`'s events on `manager`, whose user data is a new
    /// `EventsHandler` for `source`: what each object makes in its `init` and binds to its hub.
    convenience init<Source: VLCEventSource>(
        everyKindOf source: Source, manager: OpaquePointer, callback: libvlc_callback_t,
        configuration: any EventsConfiguring, companion: (any AnyObject & Sendable)? = nil
    ) {
        self.init(
            manager: manager, types: Source.Event.Kind.allCases.map(\.nativeType), callback: callback,
            handler: EventsHandler(object: source, configuration: configuration, companion: companion))
    }
}

/// The body of every source's C callback: borrows the handler from libvlc's user data,
/// converts the event inside the callback (where lent pointers are valid), lets `beforeDispatch`
/// update what must follow the event on libvlc's thread, then delivers it to the source's hub.
@inline(__always)
func deliverNativeEvent<Source: VLCEventSource>(
    _ event: UnsafePointer<libvlc_event_t>?, _ userData: UnsafeMutableRawPointer?,
    to source: Source.Type, _ convert: (libvlc_event_t) -> Source.Event?,
    beforeDispatch: (EventsHandler<Source>, Source.Event) -> Void = { _, _ in },
    detour: ((EventsHandler<Source>, Source.Event, UInt) -> Bool)? = nil
) {
    guard let event, let userData else { return }
    // Borrowed without a retain: the native event table holds the handler until every
    // listener is detached.
    Unmanaged<EventsHandler<Source>>.fromOpaque(userData)._withUnsafeGuaranteedRef { handler in
        guard let typed = convert(event.pointee) else { return }
        beforeDispatch(handler, typed)
        let sender = UInt(bitPattern: event.pointee.p_obj)
        if detour?(handler, typed, sender) != true {
            handler.handle(typed, sender: sender) { source, event in source.eventHub.publish(event) }
        }
        // The wrappers an event carries (a media it lends, list items) were made for it here;
        // their last reference must not go on this libvlc thread.
        if typed.holdsWrappers { ServiceQueues.releaseLater(consume typed) }
    }
}

/// Attaches `callback` with `userData` to `media`'s `MediaFreed`, for good: libvlc sends it
/// once, from its last release, after it cancelled and waited for the media's parse and after
/// every player let the media go. Never detached (the event manager goes with the media).
/// For what must live exactly as long as libvlc's media (a stream media's `open` closure).
func attachUntilFreed(_ media: OpaquePointer, _ callback: libvlc_callback_t, _ userData: UnsafeMutableRawPointer) {
    libvlc_event_attach(libvlc_media_event_manager(media), Int32(libvlc_MediaFreed.rawValue), callback, userData)
}
