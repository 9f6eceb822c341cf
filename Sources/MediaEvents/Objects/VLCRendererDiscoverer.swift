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
    let native: NativeRendererDiscoverer
    /// The service's name.
    public let name: String
    /// The library the discoverer was created with; kept until the native discoverer is
    /// released (libvlc's discoverer does not keep its instance alive).
    public let library: VLCLibrary
    /// The subscribers of this discoverer.
    public let eventHub = EventHub<RendererDiscovererEvent>()
    /// How this discoverer's events are dispatched.
    public let configuration: any EventsConfiguring
    private let control: ControlQueue<NativeRendererDiscoverer>
    /// `start` only when no service runs (rule 18): libvlc 3 has no getter for it, and its
    /// `start` asserts there is none (with asserts off it drops the running one, whose thread
    /// goes on calling into the discoverer).
    private let serviceGuard = DiscovererServiceGuard(isRunning: nil)

    /// The renderer discovery services of the installed libvlc (plugins).
    public static func available(library: VLCLibrary) -> [RendererDiscovererDescription] {
        library.native.rendererDiscoverers().map { RendererDiscovererDescription(name: $0.name, longName: $0.longName) }
    }

    /// Creates a discoverer for the service `name` (see `available(library:)`).
    ///
    /// - Throws: `VLCError.creationFailed` when libvlc has no such service.
    public init(name: String, library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) throws {
        guard let discoverer = NativeRendererDiscoverer.new(name: name, in: library.native) else {
            throw VLCError.creationFailed(
                what: "renderer discoverer \(name)",
                reason: VLCError.lastMessage(or: "no such service"))
        }
        native = discoverer
        self.name = name
        self.library = library
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        control = ControlQueue(for: "renderers", native: discoverer)
        eventHub.bind(
            NativeEventTable(
                everyKindOf: self, manager: discoverer.eventManager, callback: rendererCallback,
                configuration: self.configuration), attachNow: true)
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

    /// Starts discovering; returns once libvlc has started the service (at once when it runs
    /// already).
    ///
    /// - Throws: `VLCError.invalidState` when the service cannot start.
    public func start() async throws {
        let serviceGuard = serviceGuard
        // libvlc's error message is per thread: read it where the call failed.
        let failure = await control.performAndWait { discoverer -> String? in
            serviceGuard.around(.start) { () -> String? in
                guard discoverer.start() == 0 else { return VLCError.lastMessage(or: "unknown reason") }
                serviceGuard.serviceStarted()
                return nil
            } ?? nil
        }
        if let failure {
            throw VLCError.invalidState("renderer discoverer \(name) did not start: \(failure)")
        }
    }

    /// Stops discovering (queued). Renderers found are not reported as deleted.
    public func stop() {
        control.perform(stopCall)
    }

    /// `stop()`, returning once the service has stopped.
    public func stopAndWait() async {
        await control.performAndWait(stopCall)
    }

    private var stopCall: ControlCall<NativeRendererDiscoverer, Void> {
        let serviceGuard = serviceGuard
        return ControlCall { discoverer in _ = serviceGuard.around(.stop) { discoverer.stop() } }
    }
}

/// The receiver of a renderer discoverer's listeners.
typealias RendererDiscovererListener = SourceListener<
    VLCRendererDiscoverer, NoCallbackHook<RendererDiscovererEvent>
>

private let rendererCallback: NativeCallback = { NativeEvents.forward($0, $1, to: RendererDiscovererListener.self) }
