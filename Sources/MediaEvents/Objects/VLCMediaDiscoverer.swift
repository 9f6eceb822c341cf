import Dispatch

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
    let native: NativeMediaDiscoverer
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
    private let control: ControlQueue<NativeMediaDiscoverer>
    /// `start` only when the service does not run, `stop` only when it runs (rule 18).
    private let serviceGuard: DiscovererServiceGuard

    /// The services of `category` that the installed libvlc offers.
    public static func available(
        category: MediaDiscovererCategory,
        library: VLCLibrary
    ) -> [MediaDiscovererDescription] {
        library.native.mediaDiscoverers(category: category.rawValue).map {
            MediaDiscovererDescription(name: $0.name, longName: $0.longName, category: category)
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
        guard let discoverer = NativeMediaDiscoverer.new(name: name, in: library.native) else {
            throw VLCError.creationFailed(
                what: "media discoverer \(name)",
                reason: VLCError.lastMessage(or: "no such service"))
        }
        native = discoverer
        self.name = name
        self.library = library
        let configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        self.configuration = configuration
        control = ControlQueue(for: "discoverer", native: discoverer)
        serviceGuard = DiscovererServiceGuard(isRunning: { discoverer.isRunning })
        guard let list = discoverer.mediaList else {
            preconditionFailure("libvlc_media_discoverer_media_list returned NULL")
        }
        mediaList = VLCMediaList(adopting: list, configuration: configuration)
        eventHub.bind(
            NativeEventTable(
                everyKindOf: self, manager: discoverer.eventManager, callback: mediaDiscovererCallback,
                configuration: configuration), attachNow: true)
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            let table = eventHub.finish()
            let library = library
            control.tearDown { discoverer in
                table?.detachAll()
                discoverer.release()
                _ = library
            }
        }
    }

    /// Whether the service runs.
    public var isRunning: Bool { native.isRunning }

    /// Starts the service; returns once it runs (libvlc sends `started`; nothing happens when
    /// it runs already).
    ///
    /// - Throws: `VLCError.invalidState` when the service cannot start.
    public func start() async throws {
        let serviceGuard = serviceGuard
        // libvlc's error message is per thread: read it where the call failed.
        let failure = await control.performAndWait { discoverer -> String? in
            serviceGuard.around(.start) {
                discoverer.start() == 0 ? nil : VLCError.lastMessage(or: "unknown reason")
            } ?? nil
        }
        if let failure {
            throw VLCError.invalidState("media discoverer \(name) did not start: \(failure)")
        }
    }

    /// Stops the service (queued); libvlc sends `ended`. The list keeps what was found. When
    /// the service does not run, nothing happens.
    public func stop() {
        control.perform(stopCall)
    }

    /// `stop()`, returning once the service has stopped.
    public func stopAndWait() async {
        await control.performAndWait(stopCall)
    }

    private var stopCall: ControlCall<NativeMediaDiscoverer, Void> {
        let serviceGuard = serviceGuard
        return ControlCall { discoverer in _ = serviceGuard.around(.stop) { discoverer.stop() } }
    }
}

/// The receiver of a media discoverer's listeners.
typealias MediaDiscovererListener = SourceListener<VLCMediaDiscoverer, NoCallbackHook<MediaDiscovererEvent>>

private let mediaDiscovererCallback: NativeCallback = {
    NativeEvents.forward($0, $1, to: MediaDiscovererListener.self)
}
