import CLibVLC
import Foundation

/// A media: a file, a URL, or an item of a playlist.
///
/// Its events are delivered to `observe` subscriptions as `MediaEvent`s; the listeners are
/// attached to libvlc on the first subscription.
public final class VLCMedia: VLCEventSource {
    let native: NativePointer
    /// The subscribers of this media.
    public let eventHub = EventHub<MediaEvent>()
    /// How this media's events are dispatched.
    public let configuration: any EventsConfiguring

    /// A media for a local file path. libvlc checks the path only when the media is opened:
    /// a missing file gives `EncounteredError` when played and `failed` when parsed.
    public convenience init(path: String, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        guard let media = libvlc_media_new_path(library.native.raw, path) else {
            preconditionFailure("libvlc_media_new_path failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        self.init(adopting: media, configuration: configuration)
    }

    /// A media for a URL (`file://`, `http://`, …). An unsupported scheme is reported when the
    /// media is opened (`EncounteredError`).
    public convenience init(url: URL, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) {
        let location = url.isFileURL ? url.absoluteURL.absoluteString : url.absoluteString
        guard let media = libvlc_media_new_location(library.native.raw, location) else {
            preconditionFailure("libvlc_media_new_location failed: \(VLCError.lastMessage(or: "out of memory"))")
        }
        self.init(adopting: media, configuration: configuration)
    }

    /// Wraps a media that libvlc lends (an event payload): retains it first.
    convenience init(retaining media: OpaquePointer) {
        libvlc_media_retain(media)
        self.init(adopting: media, configuration: nil)
    }

    /// Takes over one reference of `media`.
    init(adopting media: OpaquePointer, configuration: (any EventsConfiguring)?) {
        native = NativePointer(raw: media)
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        let handler = EventsHandler(object: self, configuration: self.configuration)
        eventHub.bind(NativeEventTable(
            manager: libvlc_media_event_manager(media), types: MediaEvent.Kind.allCases.map(\.nativeType),
            callback: mediaCallback, handler: handler))
    }

    deinit {
        // libvlc's own MediaFreed can never reach this wrapper (its listeners are detached
        // before its reference is released): `.freed` says the wrapper is gone.
        let table = eventHub.finish(lastEvent: .freed)
        let native = native
        // Never release here: this may be a libvlc thread inside this media's own callback,
        // where releasing the last reference frees the listener array libvlc is walking.
        ServiceQueues.teardown.async(group: ServiceQueues.pendingTeardowns) {
            table?.detachAll()
            libvlc_media_release(native.raw)
        }
    }

    /// The media's location (MRL), for example `file:///tmp/a.wav`.
    public var mrl: String {
        guard let mrl = libvlc_media_get_mrl(native.raw) else { return "" }
        defer { free(mrl) }
        return String(cString: mrl)
    }

    /// The duration in milliseconds, or `nil` while it is unknown.
    public var duration: Int64? {
        let ms = libvlc_media_get_duration(native.raw)
        return ms < 0 ? nil : ms
    }

    /// The media's state.
    public var state: PlaybackState {
        PlaybackState(native: Int32(libvlc_media_get_state(native.raw).rawValue))
    }

    /// The result of the last parse.
    public var parsedStatus: ParsedStatus {
        ParsedStatus(native: Int32(libvlc_media_get_parsed_status(native.raw).rawValue))
    }

    /// A metadata value, or `nil` when the media has none.
    public func meta(_ key: MetaKey) -> String? {
        guard let value = libvlc_media_get_meta(native.raw, libvlc_meta_t(rawValue: key.rawValue)) else {
            return nil
        }
        defer { free(value) }
        return String(cString: value)
    }

    /// Sets a metadata value in memory (libvlc sends `MediaMetaChanged`).
    public func setMeta(_ key: MetaKey, _ value: String?) {
        let key = libvlc_meta_t(rawValue: key.rawValue)
        // withCString lends a native string's own NUL-terminated storage; passing the
        // optional String directly made a heap copy (utf8CString) per call.
        guard let value else { return libvlc_media_set_meta(native.raw, key, nil) }
        value.withCString { libvlc_media_set_meta(native.raw, key, $0) }
    }
}

private let mediaCallback: libvlc_callback_t = { event, userData in
    deliverNativeEvent(event, userData, to: VLCMedia.self, MediaEvent.init(native:))
}
