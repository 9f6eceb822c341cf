import CLibVLC
import Dispatch

/// An ordered list of media, safe to read and edit from any thread, handlers of its own
/// events included.
///
/// libvlc sends the list's item events (`WillAddItem`, `ItemAdded`, `WillDeleteItem`,
/// `ItemDeleted`) while it holds the list's own non-recursive lock, and raw libvlc deadlocks
/// when a listener calls back into the list. This wrapper takes libvlc's lock itself, so
/// there is nothing to lock by hand, and works as follows:
///
/// - Every edit and every read runs on the list's serial control queue, in call order, with
///   libvlc's lock held. Outside a delivery of this list's events, an edit has been carried
///   out (and its events delivered, if handlers are synchronous) when the call returns, and
///   a read sees every edit made before it.
/// - Inside a synchronous delivery of this list's events (the default configuration, or a
///   queue configuration with `isAsync == false`), the lock is held on the handler's behalf:
///   a read answers at once from the list as it is at that moment, and an edit is queued on
///   the control queue and carried out after the current edit has finished (in call order
///   with every later edit); it has not happened yet when the call returns.
/// - Handlers of an asynchronous configuration run when the lock is no longer held and
///   behave like any other caller.
///
/// Index arguments out of range leave the list unchanged (libvlc would corrupt memory on an
/// insertion past the end). Lists owned by libvlc (sub-items of a media, a discoverer's
/// results) are read-only: edits leave them unchanged.
public final class VLCMediaList: VLCEventSource {
    let native: NativePointer
    /// The subscribers of this list.
    public let eventHub = EventHub<MediaListEvent>()
    /// How this list's events are dispatched.
    public let configuration: any EventsConfiguring
    /// Carries out reads and edits in order, each with libvlc's list lock held.
    private let control: DispatchQueue
    private let controlMark: QueueIdentity.Mark

    /// Creates an empty list.
    ///
    /// - Parameters:
    ///   - library: the libvlc instance.
    ///   - configuration: how events are dispatched; `nil` uses
    ///     `VLCLibrary.sharedEventsConfiguration` as it is now.
    public convenience init(library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        guard let list = libvlc_media_list_new(library.native.raw) else {
            preconditionFailure("libvlc_media_list_new failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        self.init(adopting: list, configuration: configuration)
    }

    /// Creates a list holding `media`, in order.
    public convenience init(media: [VLCMedia], library: VLCLibrary,
                            configuration: (any EventsConfiguring)? = nil) {
        self.init(library: library, configuration: configuration)
        append(contentsOf: media)
    }

    /// Takes over one reference of `list`.
    init(adopting list: OpaquePointer, configuration: (any EventsConfiguring)?) {
        native = NativePointer(raw: list)
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        control = ServiceQueues.control(for: "list")
        controlMark = QueueIdentity.mark(control)
        let handler = EventsHandler(object: self, configuration: self.configuration)
        eventHub.bind(NativeEventTable(
            manager: libvlc_media_list_event_manager(list),
            types: MediaListEvent.Kind.allCases.map(\.nativeType),
            callback: mediaListCallback, handler: handler))
    }

    deinit {
        let table = eventHub.finish()
        let native = native
        // After every queued edit; never here, where this may be a libvlc thread.
        control.async {
            table?.detachAll()
            libvlc_media_list_release(native.raw)
        }
    }

    // MARK: Reading

    /// The number of items.
    public var count: Int {
        read { Int(libvlc_media_list_count($0)) }
    }

    /// Whether the list is empty.
    public var isEmpty: Bool { count == 0 }

    /// The item at `index`, or `nil` when the index is out of range.
    public func media(at index: Int) -> VLCMedia? {
        guard index >= 0, index <= Int(Int32.max) else { return nil }
        return read { list in
            libvlc_media_list_item_at_index(list, Int32(index)).map {
                VLCMedia(adopting: $0, configuration: nil)
            }
        }
    }

    /// Every item, in order, read at one moment.
    public var items: [VLCMedia] {
        read { list in
            (0..<libvlc_media_list_count(list)).compactMap { index in
                libvlc_media_list_item_at_index(list, index).map { VLCMedia(adopting: $0, configuration: nil) }
            }
        }
    }

    /// The index of the first item that is `media` (the same libvlc media, whichever wrapper
    /// holds it), or `nil`.
    public func index(of media: VLCMedia) -> Int? {
        let index = read { libvlc_media_list_index_of_item($0, media.native.raw) }
        return index < 0 ? nil : Int(index)
    }

    /// Whether edits are refused (lists that libvlc fills itself).
    public var isReadOnly: Bool {
        read { libvlc_media_list_is_readonly($0) != 0 }
    }

    // MARK: Editing

    /// Appends `media`; libvlc sends `WillAddItem` then `ItemAdded`.
    public func append(_ media: VLCMedia) {
        edit { list in _ = libvlc_media_list_add_media(list, media.native.raw) }
    }

    /// Appends every media of `media`, in order, as one edit.
    public func append(contentsOf media: [VLCMedia]) {
        edit { list in
            for item in media { _ = libvlc_media_list_add_media(list, item.native.raw) }
        }
    }

    /// Inserts `media` at `index` (0 through `count`); libvlc sends `WillAddItem` then
    /// `ItemAdded`. An index beyond the end leaves the list unchanged.
    public func insert(_ media: VLCMedia, at index: Int) {
        edit { list in
            guard index >= 0, index <= Int(libvlc_media_list_count(list)) else { return }
            _ = libvlc_media_list_insert_media(list, media.native.raw, Int32(index))
        }
    }

    /// Removes the item at `index`; libvlc sends `WillDeleteItem` then `ItemDeleted`. An index
    /// out of range leaves the list unchanged.
    public func remove(at index: Int) {
        edit { list in
            guard index >= 0, index < Int(libvlc_media_list_count(list)) else { return }
            _ = libvlc_media_list_remove_index(list, Int32(index))
        }
    }

    /// Removes every item, last first, as one edit.
    public func removeAll() {
        edit { list in
            var index = libvlc_media_list_count(list) - 1
            while index >= 0, libvlc_media_list_remove_index(list, index) == 0 {
                index -= 1
            }
        }
    }

    /// Waits until every edit queued before (for example by a handler) has been carried out.
    /// Inside a synchronous delivery of this list's events it returns at once.
    public func waitForPendingEdits() {
        read { _ in }
    }

    // MARK: Control queue

    private func edit(_ operation: @escaping @Sendable (OpaquePointer) -> Void) {
        let native = native
        let locked: @Sendable () -> Void = {
            libvlc_media_list_lock(native.raw)
            operation(native.raw)
            libvlc_media_list_unlock(native.raw)
        }
        // Waiting here would deadlock: the lock is held for this delivery, and the control
        // queue may be the very thread that waits for this handler.
        if DeliveryScope.isDelivering(self) || QueueIdentity.isCurrent(controlMark) {
            control.async(execute: locked)
        } else {
            control.sync(execute: locked)
        }
    }

    private func read<R>(_ body: (OpaquePointer) -> R) -> R {
        let native = native
        // The thread that sent this event holds the lock and waits for the handler, so the
        // list cannot change under the read.
        if DeliveryScope.isDelivering(self) {
            return body(native.raw)
        }
        if QueueIdentity.isCurrent(controlMark) {
            libvlc_media_list_lock(native.raw)
            defer { libvlc_media_list_unlock(native.raw) }
            return body(native.raw)
        }
        return control.sync {
            libvlc_media_list_lock(native.raw)
            defer { libvlc_media_list_unlock(native.raw) }
            return body(native.raw)
        }
    }
}

extension VLCMedia {
    /// Whether both wrappers hold the same libvlc media (items read from a list or carried
    /// by an event are new wrappers of the list's media).
    public func isSameMedia(as other: VLCMedia) -> Bool {
        native.raw == other.native.raw
    }
}

private let mediaListCallback: libvlc_callback_t = { event, userData in
    guard let event, let userData else { return }
    let handler = Unmanaged<EventsHandler<VLCMediaList>>.fromOpaque(userData).takeUnretainedValue()
    guard let typed = MediaListEvent(native: event.pointee) else { return }
    let isSynchronous = !handler.configuration.isAsync
    handler.handle(typed) { list, event in
        if isSynchronous {
            DeliveryScope.delivering(list) { list.eventHub.publish(event) }
        } else {
            list.eventHub.publish(event)
        }
    }
}
