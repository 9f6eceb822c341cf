import CLibVLC
import Dispatch

/// A renderer discovery service that the installed libvlc offers.
public struct RendererDiscovererDescription: Sendable, Hashable {
    /// The name to create a discoverer with, for example "microdns_renderer".
    public let name: String
    /// A human-readable name.
    public let longName: String
}

/// Finds renderers (Chromecast …) on the network and reports them as events.
///
/// `start` and `stop` run on the discoverer's control queue: stopping joins the discovery
/// thread that sends the events, so raw libvlc hangs when a listener stops its own
/// discoverer. Here `stop()` is safe from any thread, handlers included.
public final class VLCRendererDiscoverer: VLCEventSource {
    let native: NativePointer
    /// The service's name.
    public let name: String
    /// The library the discoverer was created with; kept until the native discoverer is
    /// released (libvlc's discoverer does not keep its instance alive).
    public let library: VLCLibrary
    /// The subscribers of this discoverer.
    public let eventHub = EventHub<RendererDiscovererEvent>()
    /// How this discoverer's events are dispatched.
    public let configuration: any EventsConfiguring
    private let control: ControlQueue
    /// Whether libvlc's discoverer has a service: libvlc 3 has no getter for it, and its
    /// `start` asserts there is none (with asserts off it drops the running one, whose thread
    /// goes on calling into the discoverer). Only touched on the control queue.
    private let started = Protected(false)

    /// The renderer discovery services of the installed libvlc (plugins).
    public static func available(library: VLCLibrary) -> [RendererDiscovererDescription] {
        var services: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_rd_description_t>?>?
        let count = libvlc_renderer_discoverer_list_get(library.native.raw, &services)
        guard count > 0, let services else { return [] }
        defer { libvlc_renderer_discoverer_list_release(services, Int(count)) }
        return (0..<Int(count)).compactMap { index in
            services[index].map {
                RendererDiscovererDescription(
                    name: String(cString: $0.pointee.psz_name),
                    longName: String(cString: $0.pointee.psz_longname))
            }
        }
    }

    /// Creates a discoverer for the service `name` (see `available(library:)`).
    ///
    /// - Throws: `VLCError.creationFailed` when libvlc has no such service.
    public init(name: String, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) throws {
        guard let discoverer = libvlc_renderer_discoverer_new(library.native.raw, name) else {
            throw VLCError.creationFailed(
                what: "renderer discoverer \(name)",
                reason: VLCError.lastMessage(or: "no such service"))
        }
        native = NativePointer(raw: discoverer)
        self.name = name
        self.library = library
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        control = ControlQueue(for: "renderers", native: discoverer)
        eventHub.bind(
            NativeEventTable(
                everyKindOf: self, manager: libvlc_renderer_discoverer_event_manager(discoverer),
                callback: rendererCallback, configuration: self.configuration), attachNow: true)
    }

    deinit {
        let table = eventHub.finish()
        let library = library
        control.tearDown { discoverer in
            table?.detachAll()
            libvlc_renderer_discoverer_release(discoverer)
            _ = library
        }
    }

    /// Starts discovering; returns once libvlc has started the service (at once when it runs
    /// already).
    ///
    /// - Throws: `VLCError.invalidState` when the service cannot start.
    public func start() async throws {
        let started = started
        // libvlc's error message is per thread: read it where the call failed.
        let failure = await control.performAndWait { discoverer -> String? in
            guard !started.withLock({ $0 }) else { return nil }
            guard libvlc_renderer_discoverer_start(discoverer) == 0 else {
                return VLCError.lastMessage(or: "unknown reason")
            }
            started.withLock { $0 = true }
            return nil
        }
        if let failure {
            throw VLCError.invalidState("renderer discoverer \(name) did not start: \(failure)")
        }
    }

    /// Stops discovering (queued). Renderers found are not reported as deleted.
    public func stop() {
        let started = started
        control.perform { Self.stopNow($0, started) }
    }

    /// `stop()`, returning once the service has stopped.
    public func stopAndWait() async {
        let started = started
        await control.performAndWait { Self.stopNow($0, started) }
    }

    private static func stopNow(_ discoverer: OpaquePointer, _ started: Protected<Bool>) {
        libvlc_renderer_discoverer_stop(discoverer)
        started.withLock { $0 = false }
    }
}

private let rendererCallback: libvlc_callback_t = { event, userData in
    deliverNativeEvent(event, userData, to: VLCRendererDiscoverer.self, RendererDiscovererEvent.init(native:))
}
