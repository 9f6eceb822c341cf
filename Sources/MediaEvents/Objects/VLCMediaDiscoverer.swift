import CLibVLC
import Dispatch
import Glibc

/// The kind of media a discovery service finds (`libvlc_media_discoverer_category_t`).
public enum MediaDiscovererCategory: Int32, Sendable, CaseIterable {
    /// Devices: discs, capture devices, MTP players.
    case devices = 0
    /// Local network services: UPnP, SAP, Zeroconf.
    case lan
    /// Podcasts and internet radio directories.
    case podcasts
    /// The user's media folders.
    case localDirectories
}

/// A media discovery service that the installed libvlc offers.
public struct MediaDiscovererDescription: Sendable, Hashable {
    /// The name to create a discoverer with, for example "audio_dir".
    public let name: String
    /// A human-readable name, for example "My Music".
    public let longName: String
    /// The kind of media it finds.
    public let category: MediaDiscovererCategory
}

/// A services-discovery module (UPnP, SAP, local folders …) that fills a media list.
///
/// What the service finds arrives as events of `mediaList` (read-only, filled by libvlc on
/// its own thread with the list's lock held: the list's handlers may read it). The
/// discoverer's own events are `started` and `ended`. `start` and `stop` run on the
/// discoverer's control queue, so they are safe from any thread, handlers included
/// (stopping joins the service's thread).
public final class VLCMediaDiscoverer: VLCEventSource {
    let native: NativePointer
    /// The service's name.
    public let name: String
    /// The library the discoverer was created with; kept until the native discoverer is
    /// released (libvlc's discoverer does not keep its instance alive).
    public let library: VLCLibrary
    /// The subscribers of this discoverer.
    public let eventHub = EventHub<MediaDiscovererEvent>()
    /// How this discoverer's events (and its list's) are dispatched.
    public let configuration: any EventsConfiguring
    /// The media the service has found; it changes while the service runs.
    public let mediaList: VLCMediaList
    private let control: ControlQueue

    /// The services of `category` that the installed libvlc offers.
    public static func available(
        category: MediaDiscovererCategory,
        library: VLCLibrary
    ) -> [MediaDiscovererDescription] {
        var services: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_discoverer_description_t>?>?
        let count = libvlc_media_discoverer_list_get(
            library.native.raw, libvlc_media_discoverer_category_t(UInt32(category.rawValue)), &services)
        guard count > 0, let services else { return [] }
        defer { libvlc_media_discoverer_list_release(services, Int(count)) }
        return (0..<Int(count)).compactMap { index in
            services[index].map {
                MediaDiscovererDescription(
                    name: String(cString: $0.pointee.psz_name),
                    longName: String(cString: $0.pointee.psz_longname),
                    category: category)
            }
        }
    }

    /// Every service the installed libvlc offers, by category.
    public static func available(library: VLCLibrary) -> [MediaDiscovererDescription] {
        MediaDiscovererCategory.allCases.flatMap { available(category: $0, library: library) }
    }

    /// Creates a discoverer for the service `name` (see `available(library:)`); it does not
    /// run until `start()`.
    ///
    /// - Throws: `VLCError.creationFailed` when libvlc has no such service.
    public init(name: String, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) throws {
        guard let discoverer = libvlc_media_discoverer_new(library.native.raw, name) else {
            throw VLCError.creationFailed(
                what: "media discoverer \(name)",
                reason: VLCError.lastMessage(or: "no such service"))
        }
        native = NativePointer(raw: discoverer)
        self.name = name
        self.library = library
        let configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        self.configuration = configuration
        control = ControlQueue(for: "discoverer", native: discoverer)
        guard let list = libvlc_media_discoverer_media_list(discoverer) else {
            preconditionFailure("libvlc_media_discoverer_media_list returned NULL")
        }
        mediaList = VLCMediaList(adopting: list, configuration: configuration)
        eventHub.bind(
            NativeEventTable(
                everyKindOf: self, manager: DiscovererEventManager.get(discoverer),
                callback: mediaDiscovererCallback, configuration: configuration), attachNow: true)
    }

    deinit {
        let table = eventHub.finish()
        let library = library
        control.tearDown { discoverer in
            table?.detachAll()
            libvlc_media_discoverer_release(discoverer)
            _ = library
        }
    }

    /// Whether the service runs.
    public var isRunning: Bool { libvlc_media_discoverer_is_running(native.raw) != 0 }

    /// Starts the service; returns once it runs (libvlc sends `started`; nothing happens when
    /// it runs already).
    ///
    /// - Throws: `VLCError.invalidState` when the service cannot start.
    public func start() async throws {
        // libvlc's error message is per thread: read it where the call failed.
        let failure = await control.performAndWait { discoverer -> String? in
            // libvlc 3 would drop the running service, whose thread goes on feeding the list.
            guard libvlc_media_discoverer_is_running(discoverer) == 0 else { return nil }
            return libvlc_media_discoverer_start(discoverer) == 0 ? nil : VLCError.lastMessage(or: "unknown reason")
        }
        if let failure {
            throw VLCError.invalidState("media discoverer \(name) did not start: \(failure)")
        }
    }

    /// Stops the service (queued); libvlc sends `ended`. The list keeps what was found. When
    /// the service does not run, nothing happens.
    public func stop() {
        control.perform { Self.stopNow($0) }
    }

    /// `stop()`, returning once the service has stopped.
    public func stopAndWait() async {
        await control.performAndWait { Self.stopNow($0) }
    }

    /// libvlc 3's `stop` destroys the service without checking that there is one: on a
    /// discoverer that does not run it dereferences a null service (SIGSEGV in libvlccore).
    private static func stopNow(_ discoverer: OpaquePointer) {
        guard libvlc_media_discoverer_is_running(discoverer) != 0 else { return }
        libvlc_media_discoverer_stop(discoverer)
    }
}

/// `libvlc_media_discoverer_event_manager` is declared deprecated (its events are only sent
/// by start and stop), and a deprecated call is a warning, so it is looked up at run time.
private enum DiscovererEventManager {
    typealias Function = @convention(c) (OpaquePointer?) -> OpaquePointer?

    static func get(_ discoverer: OpaquePointer) -> OpaquePointer {
        guard let symbol = dlsym(nil, "libvlc_media_discoverer_event_manager") else {
            preconditionFailure("libvlc_media_discoverer_event_manager not found")
        }
        guard let manager = unsafeBitCast(symbol, to: Function.self)(discoverer) else {
            preconditionFailure("libvlc_media_discoverer_event_manager returned NULL")
        }
        return manager
    }
}

private let mediaDiscovererCallback: libvlc_callback_t = { event, userData in
    deliverNativeEvent(event, userData, to: VLCMediaDiscoverer.self, MediaDiscovererEvent.init(native:))
}
