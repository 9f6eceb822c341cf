import CLibVLC
import Dispatch

/// An ordered list of media, safe to read and edit from any thread, handlers of its own
/// events included.
///
/// libvlc sends the list's item events (`WillAddItem`, `ItemAdded`, `WillDeleteItem`,
/// `ItemDeleted`) while it holds the list's own non-recursive lock, and raw libvlc deadlocks
/// when a listener calls back into the list. So this wrapper never makes a caller wait for
/// libvlc:
///
/// - Reads answer from a Swift-side copy of the list and never take libvlc's lock.
/// - An edit updates that copy at once (so a read right after it sees it) and is queued on
///   the list's control queue, which applies the edits to libvlc in call order; libvlc then
///   sends the events. `waitForPendingEdits()` waits until libvlc has applied them.
/// - Inside a handler of the list's events, reads see every edit requested so far, which
///   may include edits whose events are still to come.
///
/// Index arguments out of range leave the list unchanged (libvlc would corrupt memory on an
/// insertion past the end). Lists that libvlc fills itself (the sub-items of a media, a
/// discoverer's results) are read-only: edits leave them unchanged, and their copy follows
/// libvlc's events, updated inside the callback before any handler runs.
public final class VLCMediaList: VLCEventSource {
    let native: NativePointer
    /// The subscribers of this list.
    public let eventHub = EventHub<MediaListEvent>()
    /// How this list's events are dispatched.
    public let configuration: any EventsConfiguring
    /// Whether edits are refused (lists that libvlc fills itself).
    public let isReadOnly: Bool
    /// Applies edits to libvlc in order, each with libvlc's list lock held.
    private let control: DispatchQueue
    private let controlMark: QueueIdentity.Mark
    private let contents: ListContents

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
    public convenience init(
        media: [VLCMedia], library: VLCLibrary,
        configuration: (any EventsConfiguring)? = nil
    ) {
        self.init(library: library, configuration: configuration)
        append(contentsOf: media)
    }

    /// Takes over one reference of `list`. A list libvlc fills itself is copied now and
    /// followed through its events from then on.
    init(adopting list: OpaquePointer, configuration: (any EventsConfiguring)?) {
        native = NativePointer(raw: list)
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        control = ServiceQueues.control(for: "list")
        controlMark = QueueIdentity.mark(control)
        isReadOnly = libvlc_media_list_is_readonly(list) != 0
        contents = ListContents(followsEvents: isReadOnly)
        let table = NativeEventTable(
            everyKindOf: self, manager: libvlc_media_list_event_manager(list), callback: mediaListCallback,
            configuration: self.configuration, companion: contents)
        // Inside a handler of this very list's item events the sending thread holds the
        // list's non-recursive lock: locking it again would never return, and reading it
        // without locking is safe, since its owner waits for this handler.
        let locked = !DeliveryContext.isDelivering(from: list)
        if locked { libvlc_media_list_lock(list) }
        // Attached with the lock held: an item added after the copy is seen as an event.
        eventHub.bind(table, attachNow: true)
        if isReadOnly {
            let copied = (0..<libvlc_media_list_count(list)).compactMap { index in
                libvlc_media_list_item_at_index(list, index).map { VLCMedia(adopting: $0, configuration: nil) }
            }
            contents.items.withLock { $0 = copied }
        }
        if locked { libvlc_media_list_unlock(list) }
    }

    deinit {
        let table = eventHub.finish()
        let native = native
        // After every queued edit; never here, where this may be a libvlc thread.
        ServiceQueues.pendingTeardowns.async(on: control) {
            table?.detachAll()
            libvlc_media_list_release(native.raw)
        }
    }

    // MARK: Reading

    /// The number of items.
    public var count: Int { contents.items.withLock { $0.count } }

    /// Whether the list is empty.
    public var isEmpty: Bool { count == 0 }

    /// The item at `index`, or `nil` when the index is out of range.
    public func media(at index: Int) -> VLCMedia? {
        contents.items.withLock { $0.indices.contains(index) ? $0[index] : nil }
    }

    /// Every item, in order, read at one moment.
    public var items: [VLCMedia] { contents.items.withLock { $0 } }

    /// The index of the first item that is `media` (the same libvlc media, whichever wrapper
    /// holds it), or `nil`.
    public func index(of media: VLCMedia) -> Int? {
        contents.items.withLock { $0.firstIndex { $0.isSameMedia(as: media) } }
    }

    // MARK: Editing

    /// Appends `media`; libvlc then sends `WillAddItem` and `ItemAdded`.
    public func append(_ media: VLCMedia) {
        append(contentsOf: [media])
    }

    /// Appends every media of `media`, in order.
    public func append(contentsOf media: [VLCMedia]) {
        edit { items in
            items.append(contentsOf: media)
            return { list in
                for item in media { _ = libvlc_media_list_add_media(list, item.native.raw) }
            }
        }
    }

    /// Inserts `media` at `index` (0 through `count`); libvlc then sends `WillAddItem` and
    /// `ItemAdded`. An index beyond the end leaves the list unchanged.
    public func insert(_ media: VLCMedia, at index: Int) {
        edit { items in
            guard (0...items.count).contains(index) else { return nil }
            items.insert(media, at: index)
            return { list in _ = libvlc_media_list_insert_media(list, media.native.raw, Int32(index)) }
        }
    }

    /// Removes the item at `index`; libvlc then sends `WillDeleteItem` and `ItemDeleted`. An
    /// index out of range leaves the list unchanged.
    public func remove(at index: Int) {
        edit { items in
            guard items.indices.contains(index) else { return nil }
            items.remove(at: index)
            return { list in _ = libvlc_media_list_remove_index(list, Int32(index)) }
        }
    }

    /// Removes every item, last first.
    public func removeAll() {
        edit { items in
            guard !items.isEmpty else { return nil }
            items.removeAll()
            return { list in
                var index = libvlc_media_list_count(list) - 1
                while index >= 0, libvlc_media_list_remove_index(list, index) == 0 {
                    index -= 1
                }
            }
        }
    }

    /// Waits until libvlc has applied every edit made before (and its events have been sent).
    ///
    /// Does not wait, and returns `false`, where waiting could never end: inside a handler
    /// that a libvlc thread waits for (inline or synchronous: the edit being applied may be
    /// the one that sent the event) and on the list's control queue; and it gives up when,
    /// made from a handler or from a queue MediaEvents delivers to, a synchronous delivery
    /// waits to enter its queue meanwhile (that delivery may hold the list's lock). Use
    /// `pendingEditsApplied()` there to go on once the edits are applied.
    ///
    /// - Returns: `true` once the edits are applied.
    @discardableResult
    public func waitForPendingEdits() -> Bool {
        if DeliveryContext.isInBlockingDelivery || QueueIdentity.isCurrent(controlMark) { return false }
        let applied = DispatchSemaphore(value: 0)
        control.async { applied.signal() }
        return ServiceQueues.wait(until: { applied.wait(timeout: $0) == .success }, timeout: .distantFuture)
    }

    /// Waits until libvlc has applied every edit made before, without blocking a thread.
    public func pendingEditsApplied() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            control.async { continuation.resume() }
        }
    }

    // MARK: Control queue

    /// Applies `change` to the copy and queues what it returns for libvlc, in one step under
    /// the copy's lock so that libvlc receives the edits in the order the copy took them.
    private func edit(_ change: (inout [VLCMedia]) -> (@Sendable (OpaquePointer) -> Void)?) {
        guard !isReadOnly else { return }
        let native = native
        let control = control
        var removed: [VLCMedia] = []
        contents.items.withLock { items in
            let before = items
            guard let operation = change(&items) else { return }
            removed = before
            control.async {
                libvlc_media_list_lock(native.raw)
                operation(native.raw)
                libvlc_media_list_unlock(native.raw)
            }
        }
        // Dropped on the release queue: this may be a handler on libvlc's thread, where a
        // removed item's last reference must not go.
        ServiceQueues.releaseLater(consume removed)
    }
}

/// The Swift-side copy of a list's items. For lists libvlc fills itself it is updated inside
/// libvlc's callback, where the list's lock is held, before any dispatch.
final class ListContents: Sendable {
    let items = Protected<[VLCMedia]>([])
    let followsEvents: Bool

    init(followsEvents: Bool) { self.followsEvents = followsEvents }

    func record(_ event: MediaListEvent) {
        guard followsEvents else { return }
        let dropped: VLCMedia? = items.withLock { items -> VLCMedia? in
            switch event {
            case let .itemAdded(media, index) where (0...items.count).contains(index):
                items.insert(media, at: index)
                return nil
            case let .itemDeleted(_, index) where items.indices.contains(index):
                return items.remove(at: index)
            default:
                return nil
            }
        }
        // This is libvlc's thread: the last reference of a removed item goes elsewhere.
        if dropped != nil { ServiceQueues.releaseLater(consume dropped) }
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
    deliverNativeEvent(event, userData, to: VLCMediaList.self, MediaListEvent.init(native:)) { handler, typed in
        unsafeDowncast(handler.companion.unsafelyUnwrapped, to: ListContents.self).record(typed)
    }
}
