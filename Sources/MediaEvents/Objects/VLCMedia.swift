import Foundation

/// A media: a file, a URL, or an item of a playlist.
///
/// Its events are delivered to `observe` subscriptions as `MediaEvent`s.
public final class VLCMedia: VLCEventSource {
    let native: NativeMedia
    /// The subscribers of this media.
    public let eventHub = EventHub<MediaEvent>()
    /// How this media's events are dispatched.
    public let configuration: any EventsConfiguring
    /// Carries out the calls that may wait for a lock a libvlc thread holds while it sends
    /// this media's events (`setMeta` from a handler, stopping a parse), then the teardown.
    let control: ControlQueue<NativeMedia>
    /// Values set with `setMeta` whose libvlc call is still queued (rule 5).
    private let pendingMeta = SetMetaQueue()
    /// The list of sub-items, made on first use and kept: making one locks libvlc's list.
    private let subItems_ = Protected<VLCMediaList?>(nil)
    /// The parses this wrapper started that libvlc has not ended yet (pending work).
    let parses = ParsesInFlight()

    /// A media for a local file path. libvlc checks the path only when the media is opened:
    /// a missing file gives `EncounteredError` when played and `failed` when parsed.
    public convenience init(path: String, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        guard let media = NativeMedia.new(path: path, in: library.native) else {
            preconditionFailure("libvlc_media_new_path failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        self.init(adopting: media, configuration: configuration, attachNow: true)
    }

    /// A media for a URL (`file://`, `http://`, …). An unsupported scheme is reported when the
    /// media is opened (`EncounteredError`).
    public convenience init(url: URL, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        let location = url.isFileURL ? url.absoluteURL.absoluteString : url.absoluteString
        guard let media = NativeMedia.new(location: location, in: library.native) else {
            preconditionFailure("libvlc_media_new_location failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        self.init(adopting: media, configuration: configuration, attachNow: true)
    }

    /// Wraps a media that libvlc lends (an event payload): retains it first.
    convenience init(retaining media: NativeMedia, configuration: (any EventsConfiguring)? = nil) {
        media.retain()
        self.init(adopting: media, configuration: configuration)
    }

    /// Takes over one reference of `media`. `attachNow` for a media the user made; wrappers
    /// made for events and lists attach on their first subscription (see `EventHub.bind`).
    init(adopting media: NativeMedia, configuration: (any EventsConfiguring)?, attachNow: Bool = false) {
        native = media
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        control = ControlQueue(for: "media", native: media, target: ServiceQueues.teardown)
        eventHub.bind(
            NativeEventTable(
                everyKindOf: self, manager: media.eventManager, callback: mediaCallback,
                configuration: self.configuration, hook: ParseEndHook(parses: parses)), attachNow: attachNow)
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            // libvlc's own MediaFreed can never reach this wrapper (its listeners are detached
            // before its reference is released): `.freed` says the wrapper is gone.
            let table = eventHub.finish(lastEvent: .freed)
            // Never release here: this may be a libvlc thread inside this media's own callback,
            // where releasing the last reference frees the listener array libvlc is walking.
            // After every queued call of this media.
            let control = control
            let parses = parses
            let tearDown: @Sendable () -> Void = {
                control.tearDown { media in
                    // A parse this wrapper started is stopped (libvlc waits for its task, where
                    // TagLib may run): its end can no longer reach this wrapper's listeners, and
                    // another reference (a player's, a list's) would let it run on unwatched.
                    if parses.isParsing { media.stopParsing() }
                    table?.detachAll()
                    media.release()
                    parses.endAll()
                }
            }
            // Dropped in a handler of an event of this media that another wrapper receives: the
            // detach waits for the event lock this thread holds until the handler returns.
            TeardownAfterSenderHandler().run(
                tearDown, listeningTo: native.address, isAttached: table?.isAttached == true)
        }
    }

    /// The media's location (MRL), for example `file:///tmp/a.wav`.
    public var mrl: String { native.mrl }

    /// The duration in milliseconds, or `nil` while it is unknown.
    public var duration: Int64? {
        let ms = native.duration
        return ms < 0 ? nil : ms
    }

    /// The media's state.
    public var state: PlaybackState {
        PlaybackState(native: native.state)
    }

    /// The result of the last parse.
    public var parsedStatus: ParsedStatus {
        ParsedStatus(native: native.parsedStatus)
    }

    /// A metadata value, or `nil` when the media has none. A value set with `setMeta` is
    /// returned at once, even while its libvlc call is still queued.
    public func meta(_ key: MetaKey) -> String? {
        if let pending = pendingMeta.pendingValue(of: key.rawValue) { return pending }
        return native.meta(key.rawValue)
    }

    /// Sets a metadata value in memory; libvlc then sends `MediaMetaChanged`.
    ///
    /// Queued on the media's control queue, in call order, and `meta(_:)` returns the new
    /// value at once. libvlc sends the event from inside its call, holding the media's event
    /// lock, and a synchronous configuration makes it wait there for its queue: called where
    /// that queue cannot run meanwhile (a handler, the queue itself, a queue it targets or one
    /// that targets it, which libdispatch does not let MediaEvents tell apart), a direct call
    /// would wait for its own caller. So it never calls libvlc on the calling thread.
    public func setMeta(_ key: MetaKey, _ value: String?) {
        let key = key.rawValue
        pendingMeta.queued(key, value)
        let pendingMeta = pendingMeta
        control.perform { media in _ = pendingMeta.around(key) { media.setMeta(key, value) } }
    }

    /// `setMeta` on the calling thread whatever it is: for the benchmark, which measures the
    /// delivery of the events libvlc sends from inside this call, and for the tests that need
    /// libvlc to send an event on a thread of their choosing.
    @_spi(Benchmarks)
    public func setMetaOnCallingThread(_ key: MetaKey, _ value: String?) {
        native.setMeta(key.rawValue, value)
    }

    /// The `libvlc_media_t`, for the benchmark's C loop of `libvlc_media_set_meta`.
    @_spi(Benchmarks)
    public var nativeMediaForBenchmarks: OpaquePointer { native.pointer }

    /// The list of sub-items, made once (and shared with the media's other wrappers: see
    /// `SubItemLists`).
    func sharedSubItemList(_ make: () -> VLCMediaList) -> VLCMediaList {
        if let list = subItems_.withLock({ $0 }) { return list }
        let made = make()
        return subItems_.withLock { current in
            if let current { return current }
            current = made
            return made
        }
    }
}

/// The receiver of a media's listeners.
typealias MediaListener = SourceListener<VLCMedia, ParseEndHook>

private let mediaCallback: NativeCallback = { NativeEvents.forward($0, $1, to: MediaListener.self) }
