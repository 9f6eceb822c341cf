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
    let native: NativeMediaList
    /// The subscribers of this list.
    public let eventHub = EventHub<MediaListEvent>()
    /// How this list's events are dispatched.
    public let configuration: any EventsConfiguring
    /// Whether edits are refused (lists that libvlc fills itself).
    public let isReadOnly: Bool
    /// Applies edits to libvlc in order, each with libvlc's list lock held.
    let control: ControlQueue<NativeMediaList>
    private let contents: ListContents

    /// Creates an empty list.
    ///
    /// - Parameters:
    ///   - library: the libvlc instance.
    ///   - configuration: how events are dispatched; `nil` uses
    ///     `VLCLibrary.sharedEventsConfiguration` as it is now.
    public convenience init(library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        guard let list = NativeMediaList.new(in: library.native) else {
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
    init(adopting list: NativeMediaList, configuration: (any EventsConfiguring)?) {
        native = list
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        control = ControlQueue(for: "list", native: list, identifiable: true)
        isReadOnly = list.isReadOnly
        contents = ListContents(followsEvents: isReadOnly)
        let table = NativeEventTable(
            everyKindOf: self, manager: list.eventManager, callback: mediaListCallback,
            configuration: self.configuration, hook: contents)
        // Attached with the lock held: an item added after the copy is seen as an event.
        SubItemListLock().around(list) {
            eventHub.bind(table, attachNow: true)
            if isReadOnly {
                let copied = (0..<list.count).compactMap { index in
                    list.item(at: index).map { VLCMedia(adopting: $0, configuration: nil) }
                }
                contents.items.withLock { $0 = copied }
            }
        }
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            let table = eventHub.finish()
            // After every queued edit; never here, where this may be a libvlc thread.
            control.tearDown { list in
                table?.detachAll()
                list.release()
            }
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
                for item in media { list.add(item.native) }
            }
        }
    }

    /// Inserts `media` at `index` (0 through `count`); libvlc then sends `WillAddItem` and
    /// `ItemAdded`. An index beyond the end leaves the list unchanged.
    public func insert(_ media: VLCMedia, at index: Int) {
        edit { items in
            guard (0...items.count).contains(index) else { return nil }
            items.insert(media, at: index)
            return { list in list.insert(media.native, at: Int32(index)) }
        }
    }

    /// Removes the item at `index`; libvlc then sends `WillDeleteItem` and `ItemDeleted`. An
    /// index out of range leaves the list unchanged.
    public func remove(at index: Int) {
        edit { items in
            guard items.indices.contains(index) else { return nil }
            items.remove(at: index)
            return { list in list.remove(at: Int32(index)) }
        }
    }

    /// Removes every item, last first.
    public func removeAll() {
        edit { items in
            guard !items.isEmpty else { return nil }
            items.removeAll()
            return { list in
                var index = list.count - 1
                while index >= 0, list.remove(at: index) == 0 {
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
        if DeliveryContext.isInBlockingDelivery || control.isCurrent { return false }
        return control.waitForPendingCalls()
    }

    /// Waits until libvlc has applied every edit made before, without blocking a thread.
    public func pendingEditsApplied() async {
        await control.pendingCallsDone()
    }

    // MARK: Control queue

    /// Applies `change` to the copy and queues what it returns for libvlc, in one step under
    /// the copy's lock so that libvlc receives the edits in the order the copy took them.
    private func edit(_ change: (inout [VLCMedia]) -> (@Sendable (NativeMediaList) -> Void)?) {
        guard !isReadOnly else { return }
        let control = control
        var removed: [VLCMedia] = []
        contents.items.withLock { items in
            let before = items
            guard let operation = change(&items) else { return }
            removed = before
            control.perform { list in
                list.lock()
                operation(list)
                list.unlock()
            }
        }
        // Dropped on the release queue: this may be a handler on libvlc's thread, where a
        // removed item's last reference must not go.
        ServiceQueues.releaseLater(consume removed)
    }
}

/// The Swift-side copy of a list's items, and the list's hook: for lists libvlc fills itself it
/// is updated inside libvlc's callback, where the list's lock is held, before any dispatch.
final class ListContents: CallbackHook {
    let items = Protected<[VLCMedia]>([])
    let followsEvents: Bool

    init(followsEvents: Bool) { self.followsEvents = followsEvents }

    func inCallback(_ event: MediaListEvent) -> Bool {
        record(event)
        return false
    }

    private func record(_ event: MediaListEvent) {
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
        native.pointer == other.native.pointer
    }
}

/// The receiver of a list's listeners: the list's copy follows its events first.
typealias MediaListListener = SourceListener<VLCMediaList, ListContents>

private let mediaListCallback: NativeCallback = { NativeEvents.forward($0, $1, to: MediaListListener.self) }
