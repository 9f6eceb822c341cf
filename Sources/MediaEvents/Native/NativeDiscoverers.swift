import CLibVLC
import Glibc

/// A media discoverer (`libvlc_media_discoverer_t`): a services-discovery module that fills a
/// read-only media list on its own thread (L1c, L2b, with ml held).
struct NativeMediaDiscoverer: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Calls `libvlc_media_discoverer_new` for the service `name`; `nil` when libvlc has none.
    /// - Sends: nothing. Locks: the module bank, briefly.
    /// - Queue: any thread.
    static func new(name: String, in library: NativeLibrary) -> NativeMediaDiscoverer? {
        libvlc_media_discoverer_new(library.pointer, name).map(NativeMediaDiscoverer.init)
    }

    /// Calls `libvlc_media_discoverer_release`, which stops a running service first.
    /// - Sends: the sends of `stop()` when it runs.
    /// - Locks: as `stop()` (G27).
    /// - Queue: the discoverer's control queue (its teardown).
    func release() { libvlc_media_discoverer_release(pointer) }

    /// Calls `libvlc_media_discoverer_media_list`: the list the service fills, one reference of
    /// which the caller owns.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var mediaList: NativeMediaList? { libvlc_media_discoverer_media_list(pointer).map(NativeMediaList.init) }

    /// Calls `libvlc_media_discoverer_start`; 0 when the service started. libvlc 3 replaces a
    /// running service without stopping it (rule 18).
    /// - Sends: D1 (`Started`) on the calling thread; L1c when the module adds items at once.
    /// - Locks: the module's own; ml in L1c.
    /// - Queue: the discoverer's control queue, through the service guard.
    func start() -> Int32 { libvlc_media_discoverer_start(pointer) }

    /// Calls `libvlc_media_discoverer_stop`: sends L3b and D2, then joins the service's thread.
    /// libvlc 3 dereferences a missing service (SIGSEGV) when none runs (rule 18).
    /// - Sends: L3b (the list's `EndReached`, ml held) and D2 (`Ended`) on the calling thread.
    /// - Locks: ml (L3b); joins the SD thread (G27).
    /// - Queue: the discoverer's control queue, through the service guard.
    func stop() { libvlc_media_discoverer_stop(pointer) }

    /// Calls `libvlc_media_discoverer_is_running`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var isRunning: Bool { libvlc_media_discoverer_is_running(pointer) != 0 }

    private typealias EventManagerFunction = @convention(c) (OpaquePointer?) -> OpaquePointer?

    /// Calls `libvlc_media_discoverer_event_manager`, which libvlc 3 declares deprecated (a
    /// warning, which the build makes an error): looked up at run time.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var eventManager: NativeEventManager {
        guard let symbol = dlsym(nil, "libvlc_media_discoverer_event_manager") else {
            preconditionFailure("libvlc_media_discoverer_event_manager not found")
        }
        guard let manager = unsafeBitCast(symbol, to: EventManagerFunction.self)(pointer) else {
            preconditionFailure("libvlc_media_discoverer_event_manager returned NULL")
        }
        return NativeEventManager(manager)
    }
}

/// A renderer discoverer (`libvlc_renderer_discoverer_t`): sends R1 and R2 from its module's
/// thread.
struct NativeRendererDiscoverer: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Calls `libvlc_renderer_discoverer_new` for the service `name`; `nil` when libvlc has none.
    /// - Sends: nothing. Locks: the module bank, briefly.
    /// - Queue: any thread.
    static func new(name: String, in library: NativeLibrary) -> NativeRendererDiscoverer? {
        libvlc_renderer_discoverer_new(library.pointer, name).map(NativeRendererDiscoverer.init)
    }

    /// Calls `libvlc_renderer_discoverer_release`, which stops a running service first.
    /// - Sends: nothing. Locks: as `stop()` (G28).
    /// - Queue: the discoverer's control queue (its teardown).
    func release() { libvlc_renderer_discoverer_release(pointer) }

    /// Calls `libvlc_renderer_discoverer_event_manager`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var eventManager: NativeEventManager {
        NativeEventManager(libvlc_renderer_discoverer_event_manager(pointer))
    }

    /// Calls `libvlc_renderer_discoverer_start`; 0 when the service started. libvlc 3 asserts
    /// that none runs, and without asserts replaces a running one (rule 18).
    /// - Sends: R1 later, from the module's thread. Locks: the module's own.
    /// - Queue: the discoverer's control queue, through the service guard.
    func start() -> Int32 { libvlc_renderer_discoverer_start(pointer) }

    /// Calls `libvlc_renderer_discoverer_stop`: closes the module, joining its thread.
    /// - Sends: nothing (found items are released, not reported deleted).
    /// - Locks: joins the module thread (G28): deadlocks from R1 and R2.
    /// - Queue: the discoverer's control queue, through the service guard.
    func stop() { libvlc_renderer_discoverer_stop(pointer) }
}

/// A renderer found by a renderer discoverer (`libvlc_renderer_item_t`), lent by R1 and R2.
struct NativeRendererItem: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Calls `libvlc_renderer_item_hold`: keeps an item libvlc lends.
    /// - Sends: nothing. Locks: none (an atomic count).
    /// - Queue: inside the R1/R2 callback that lends it, or any thread for one already held.
    func hold() -> NativeRendererItem { NativeRendererItem(libvlc_renderer_item_hold(pointer)) }

    /// Calls `libvlc_renderer_item_release`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    func release() { libvlc_renderer_item_release(pointer) }

    /// Calls `libvlc_renderer_item_name`.
    /// - Sends: nothing. Locks: none. Queue: any thread, while held.
    var name: String { String(cString: libvlc_renderer_item_name(pointer)) }

    /// Calls `libvlc_renderer_item_type`.
    /// - Sends: nothing. Locks: none. Queue: any thread, while held.
    var type: String { String(cString: libvlc_renderer_item_type(pointer)) }

    /// Calls `libvlc_renderer_item_icon_uri`.
    /// - Sends: nothing. Locks: none. Queue: any thread, while held.
    var iconURI: String? { libvlc_renderer_item_icon_uri(pointer).map { String(cString: $0) } }

    /// Calls `libvlc_renderer_item_flags`: (`LIBVLC_RENDERER_CAN_AUDIO`, `…_CAN_VIDEO`).
    /// - Sends: nothing. Locks: none. Queue: any thread, while held.
    var capabilities: (audio: Bool, video: Bool) {
        let flags = libvlc_renderer_item_flags(pointer)
        return (flags & LIBVLC_RENDERER_CAN_AUDIO != 0, flags & LIBVLC_RENDERER_CAN_VIDEO != 0)
    }
}
