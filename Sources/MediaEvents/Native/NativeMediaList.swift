import CLibVLC

/// A media list (`libvlc_media_list_t`). Its item events are sent with the list's own
/// non-recursive lock (ml) held when libvlc fills it (sub-items, a discoverer's results), or
/// when the caller holds it (MediaEvents' edits do).
struct NativeMediaList: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Calls `libvlc_media_list_new`; `nil` when out of memory.
    /// - Sends: nothing. Locks: none of <doc:SendSites>.
    /// - Queue: any thread.
    static func new(in library: NativeLibrary) -> NativeMediaList? {
        libvlc_media_list_new(library.pointer).map(NativeMediaList.init)
    }

    /// Calls `libvlc_media_list_release`. The last release destroys the event manager and
    /// releases the items (M4 for each last reference), without ml (G25).
    /// - Sends: M4 of the items it frees.
    /// - Locks: the reference count's lock.
    /// - Queue: the list's control queue, never a handler of this list (use after free);
    ///   any thread for a reference that is not the last.
    func release() { libvlc_media_list_release(pointer) }

    /// Calls `libvlc_media_list_event_manager`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var eventManager: NativeEventManager { NativeEventManager(libvlc_media_list_event_manager(pointer)) }

    /// Calls `libvlc_media_list_lock`.
    /// - Sends: nothing. Locks: ml (G22), not recursive.
    /// - Queue: never a thread that holds ml: a handler of this list's L1b/c, L2b or L3, or a
    ///   queue such a synchronous delivery waits for (rule 8).
    func lock() { libvlc_media_list_lock(pointer) }

    /// Calls `libvlc_media_list_unlock`.
    /// - Sends: nothing. Locks: releases ml.
    /// - Queue: the thread that called `lock()`.
    func unlock() { libvlc_media_list_unlock(pointer) }

    /// Calls `libvlc_media_list_count`.
    /// - Sends: nothing. Locks: none; libvlc wants ml held (G23).
    /// - Queue: with ml held, or inside this list's own item handlers (their sender holds it).
    var count: Int32 { libvlc_media_list_count(pointer) }

    /// Calls `libvlc_media_list_item_at_index`: the item, one reference of which the caller owns.
    /// - Sends: nothing. Locks: none; libvlc wants ml held (G23).
    /// - Queue: as `count`.
    func item(at index: Int32) -> NativeMedia? {
        libvlc_media_list_item_at_index(pointer, index).map(NativeMedia.init)
    }

    /// Calls `libvlc_media_list_is_readonly`: whether libvlc fills the list itself.
    /// - Sends: nothing. Locks: none (G23).
    /// - Queue: any thread.
    var isReadOnly: Bool { libvlc_media_list_is_readonly(pointer) != 0 }

    /// Calls `libvlc_media_list_add_media`; 0 on success.
    /// - Sends: L1a (`WillAddItem`, `ItemAdded`) on the calling thread.
    /// - Locks: none itself; libvlc wants ml held, and MediaEvents holds it (G23).
    /// - Queue: the list's control queue, between `lock()` and `unlock()`.
    @discardableResult
    func add(_ media: NativeMedia) -> Int32 { libvlc_media_list_add_media(pointer, media.pointer) }

    /// Calls `libvlc_media_list_insert_media`; 0 on success.
    /// - Sends: L1a on the calling thread.
    /// - Locks: as `add`.
    /// - Queue: as `add`.
    @discardableResult
    func insert(_ media: NativeMedia, at index: Int32) -> Int32 {
        libvlc_media_list_insert_media(pointer, media.pointer, index)
    }

    /// Calls `libvlc_media_list_remove_index`; 0 on success.
    /// - Sends: L2a (`WillDeleteItem`, `ItemDeleted`) on the calling thread, then M4 when that
    ///   was the item's last reference.
    /// - Locks: as `add`.
    /// - Queue: as `add`.
    @discardableResult
    func remove(at index: Int32) -> Int32 { libvlc_media_list_remove_index(pointer, index) }
}
