import Dispatch

/// The VLM (VideoLAN Manager) of a `VLCLibrary`: named broadcast and VOD media that stream
/// an input to a stream-output chain, and their events.
///
/// libvlc sends VLM events from inside its own VLM calls and from the input threads, always
/// with the VLM's lock held, so raw libvlc deadlocks when a listener makes any VLM call
/// (measured with libvlc 3.0.24, from `MediaAdded` as from `InstanceStatusPlaying`). Here every
/// VLM call is queued on the library's VLM control queue and carried out in call order, so it
/// is safe from any thread, this VLM's handlers included. Each call has a variant that
/// returns once libvlc has carried it out and throws `VLCError.operationFailed` with
/// libvlc's message when it fails (an unknown name, a name taken twice, nothing to stop …).
///
/// A libvlc instance has one VLM. Several `VLCVLM`s of the same library share it, each with
/// its own subscribers; the VLM is released (its media deleted and their instances stopped)
/// on the VLM control queue after the last of them is torn down, so a `VLCVLM` created
/// before that release has run still finds the old media. A `VLCVLM` keeps its library alive
/// until the release.
public final class VLCVLM: VLCEventSource {
    /// The library whose VLM this is.
    public let library: VLCLibrary
    /// The subscribers of this VLM.
    public let eventHub = EventHub<VLMEvent>()
    /// How this VLM's events are dispatched.
    public let configuration: any EventsConfiguring
    private let shared: SharedVLM
    /// Whether this object counts as a user of the VLM: set once the VLM was opened for it
    /// (at once, or on the VLM queue), read by its teardown there.
    private let opening = Protected(false)

    /// Opens the library's VLM (creating it if no other `VLCVLM` of the library has).
    ///
    /// Made inside a handler (of a VLM event or any other), or on a queue a synchronous
    /// configuration delivers to, where waiting could be waiting for its own caller, it does
    /// not wait for the VLM queue: the VLM is opened there, first of this object's calls, and
    /// its events are delivered from then on.
    ///
    /// - Parameters:
    ///   - library: the libvlc instance.
    ///   - configuration: how events are dispatched; `nil` uses
    ///     `VLCLibrary.sharedEventsConfiguration` as it is now.
    /// - Throws: `VLCError.creationFailed` when the installed libvlc has no VLM (known at once
    ///   once any `VLCVLM` of the process tried; a first one made without waiting that finds
    ///   none makes every call fail instead).
    public init(library: VLCLibrary, configuration: (any EventsConfiguring)? = nil) throws {
        self.library = library
        shared = library.sharedVLM
        self.configuration = configuration ?? VLCLibrary.sharedEventsConfiguration
        let listener = VLMListener(
            handler: EventsHandler(object: self, configuration: self.configuration), hook: NoCallbackHook())
        let table: @Sendable (NativeEventManager) -> NativeEventTable = { manager in
            NativeEventTable(
                manager: manager, types: VLMEvent.Kind.allCases.map(\.nativeType), callback: vlmCallback,
                receiver: listener)
        }
        let eventHub = eventHub
        let opening = opening
        if let manager = try shared.open(
            inPlaceOfWaiting: { result in
                // On the VLM queue, before any call of this object.
                guard case .success(let manager) = result else { return }
                opening.withLock { $0 = true }
                _ = eventHub.bindLate(table(manager))
            })
        {
            opening.withLock { $0 = true }
            eventHub.bind(table(manager), attachNow: true)
        }
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            let table = eventHub.finish()
            let shared = shared
            let library = library
            // Detaching waits for a callback that runs on another thread, and releasing the VLM
            // stops its instances (joins their input threads): neither may run on the thread of
            // this deinit's caller, which may be a libvlc one.
            // Counted, so that `VLCLibrary.waitForPendingTeardowns` waits for the VLM's release.
            let opening = opening
            let tearDown: @Sendable () -> Void = {
                shared.control.tearDown { vlm in
                    table?.detachAll()
                    // Not when the VLM could not be opened for this object (no VLM in libvlc).
                    if opening.withLock({ $0 }) { shared.close(vlm) }
                    _ = library
                }
            }
            // Dropped in a handler of another VLCVLM of the library (the VLM's events come with its
            // event lock held, on the VLM queue when a VLM call sends them): queued after it
            // returns.
            TeardownAfterSenderHandler().run(
                tearDown, listeningTo: table?.managerAddress, isAttached: table?.isAttached == true)
        }
    }

    // MARK: Media

    /// Adds a broadcast media `name` that streams `input` (an MRL) to the stream-output chain
    /// `output` (for example `#std{access=file,mux=wav,dst=/tmp/out.wav}`). Queued; libvlc
    /// sends `mediaAdded` and `mediaChanged`.
    ///
    /// - Parameters:
    ///   - name: the name of the broadcast media, unique in this VLM.
    ///   - input: the MRL of what is broadcast.
    ///   - output: the stream-output chain it is sent to.
    ///   - options: input options such as `:sout-keep`.
    ///   - enabled: whether the media can be played.
    ///   - loop: whether the broadcast starts again at the end of its input.
    public func addBroadcast(
        name: String, input: String, output: String, options: [String] = [],
        enabled: Bool = true, loop: Bool = false
    ) {
        perform(.addBroadcast(name, input, output, options, enabled, loop))
    }

    /// `addBroadcast(name:input:output:options:enabled:loop:)`, returning once libvlc has
    /// added the media.
    ///
    /// - Throws: `VLCError.operationFailed` when libvlc refuses (for example a name in use).
    public func addBroadcastAndWait(
        name: String, input: String, output: String, options: [String] = [],
        enabled: Bool = true, loop: Bool = false
    ) async throws {
        try await performAndWait(.addBroadcast(name, input, output, options, enabled, loop))
    }

    /// Adds a VOD media `name` for `input`, served by a VOD server module with the muxer `mux`
    /// (`nil` for the default). Queued. libvlc refuses it when no VOD server module is
    /// installed (Debian's vlc-plugin-base has none: the RTSP one is in vlc-plugin-access-extra).
    public func addVOD(
        name: String, input: String, options: [String] = [], enabled: Bool = true,
        mux: String? = nil
    ) {
        perform(.addVOD(name, input, options, enabled, mux))
    }

    /// `addVOD(name:input:options:enabled:mux:)`, returning once libvlc has added the media.
    ///
    /// - Throws: `VLCError.operationFailed` when libvlc refuses.
    public func addVODAndWait(
        name: String, input: String, options: [String] = [], enabled: Bool = true,
        mux: String? = nil
    ) async throws {
        try await performAndWait(.addVOD(name, input, options, enabled, mux))
    }

    /// Deletes the media `name`, stopping its instances. Queued; libvlc sends `mediaRemoved`.
    public func deleteMedia(name: String) {
        perform(.delete(name))
    }

    /// `deleteMedia(name:)`, returning once the media is gone.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no media `name`.
    public func deleteMediaAndWait(name: String) async throws {
        try await performAndWait(.delete(name))
    }

    /// Enables or disables the media `name` (a disabled broadcast cannot play; disabling
    /// stops its instances). Queued; libvlc sends `mediaChanged`.
    public func setEnabled(name: String, _ enabled: Bool) {
        perform(.setEnabled(name, enabled))
    }

    /// `setEnabled(name:_:)`, returning once libvlc has carried it out.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no media `name`.
    public func setEnabledAndWait(name: String, _ enabled: Bool) async throws {
        try await performAndWait(.setEnabled(name, enabled))
    }

    /// Sets the stream-output chain of the media `name`; it applies to instances started
    /// afterwards. Queued; libvlc sends `mediaChanged`.
    public func setOutput(name: String, _ output: String) {
        perform(.setOutput(name, output))
    }

    /// `setOutput(name:_:)`, returning once libvlc has carried it out.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no media `name`.
    public func setOutputAndWait(name: String, _ output: String) async throws {
        try await performAndWait(.setOutput(name, output))
    }

    /// Replaces the inputs of the media `name` by `input`. Queued; libvlc sends
    /// `mediaChanged`.
    public func setInput(name: String, _ input: String) {
        perform(.setInput(name, input))
    }

    /// `setInput(name:_:)`, returning once libvlc has carried it out.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no media `name`.
    public func setInputAndWait(name: String, _ input: String) async throws {
        try await performAndWait(.setInput(name, input))
    }

    /// Sets whether the broadcast `name` starts again at the end of its input. Queued.
    public func setLoop(name: String, _ loop: Bool) {
        perform(.setLoop(name, loop))
    }

    /// `setLoop(name:_:)`, returning once libvlc has carried it out.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no media `name`.
    public func setLoopAndWait(name: String, _ loop: Bool) async throws {
        try await performAndWait(.setLoop(name, loop))
    }

    // MARK: Instances

    /// Starts (or resumes) the broadcast `name`. Queued; libvlc sends `instanceStarted`, then
    /// the instance's status events from its input thread.
    public func play(name: String) {
        perform(.play(name))
    }

    /// `play(name:)`, returning once the instance is started.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no media `name` or it is disabled.
    public func playAndWait(name: String) async throws {
        try await performAndWait(.play(name))
    }

    /// Stops the broadcast `name`. Queued; libvlc sends `instanceStopped`.
    public func stop(name: String) {
        perform(.stop(name))
    }

    /// `stop(name:)`, returning once the instance is stopped.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no running instance of `name`
    ///   (libvlc stops an instance by itself at the end of its input).
    public func stopAndWait(name: String) async throws {
        try await performAndWait(.stop(name))
    }

    /// Pauses (or resumes) the broadcast `name`. Queued; libvlc sends `instanceStatusPause`.
    public func pause(name: String) {
        perform(.pause(name))
    }

    /// `pause(name:)`, returning once libvlc has carried it out.
    ///
    /// - Throws: `VLCError.operationFailed` when there is no running instance of `name`.
    public func pauseAndWait(name: String) async throws {
        try await performAndWait(.pause(name))
    }

    /// Seeks the broadcast `name` to `percentage` (0 to 100) of its input. Queued.
    public func seek(name: String, toPercentage percentage: Float) {
        perform(VLMCall("seek \(name)") { $0.seek(name, toPercentage: percentage) })
    }

    /// libvlc's description of the media `name` (of every media for `""`) as JSON text, or
    /// `nil` when there is no such media. Read on the VLM control queue, like the controls.
    public func describe(name: String = "") async -> String? {
        await shared.control.performAndWait { vlm in
            NativeLibrary.clearError()
            return vlm.describe(name)
        }
    }

    /// Waits until every VLM call made before has been carried out.
    public func waitForPendingControls() async {
        await shared.control.pendingCallsDone()
    }

    // MARK: Calls

    private func perform(_ call: VLMCall) {
        shared.control.perform(call.call)
    }

    private func performAndWait(_ call: VLMCall) async throws {
        let failure = await shared.control.performAndWait { vlm -> String? in
            // libvlc keeps the last message of the thread until the next error: clear it
            // so that a failure reports its own.
            NativeLibrary.clearError()
            let result = call.call.body(vlm)
            return result == 0 ? nil : VLCError.lastMessage(or: "libvlc returned \(result)")
        }
        if let failure {
            throw VLCError.operationFailed(what: call.what, reason: failure)
        }
    }
}

/// One VLM call, defined once for its queued form (`play(name:)`) and its awaited one
/// (`playAndWait(name:)`), with what it does in words for the awaited form's error.
private struct VLMCall: Sendable {
    let what: String
    let call: ControlCall<NativeVLM, Int32>

    init(_ what: String, _ body: @escaping @Sendable (NativeVLM) -> Int32) {
        self.what = what
        call = ControlCall(body)
    }

    static func addBroadcast(
        _ name: String, _ input: String, _ output: String, _ options: [String], _ enabled: Bool, _ loop: Bool
    ) -> VLMCall {
        VLMCall("add broadcast \(name)") {
            $0.addBroadcast(name: name, input: input, output: output, options: options, enabled: enabled, loop: loop)
        }
    }

    static func addVOD(_ name: String, _ input: String, _ options: [String], _ enabled: Bool, _ mux: String?)
        -> VLMCall
    {
        VLMCall("add VOD \(name)") { $0.addVOD(name: name, input: input, options: options, enabled: enabled, mux: mux) }
    }

    static func delete(_ name: String) -> VLMCall { VLMCall("delete \(name)") { $0.deleteMedia(name) } }

    static func setEnabled(_ name: String, _ enabled: Bool) -> VLMCall {
        VLMCall("enable \(name)") { $0.setEnabled(name, enabled) }
    }

    static func setOutput(_ name: String, _ output: String) -> VLMCall {
        VLMCall("set output of \(name)") { $0.setOutput(name, output) }
    }

    static func setInput(_ name: String, _ input: String) -> VLMCall {
        VLMCall("set input of \(name)") { $0.setInput(name, input) }
    }

    static func setLoop(_ name: String, _ loop: Bool) -> VLMCall {
        VLMCall("set loop of \(name)") { $0.setLoop(name, loop) }
    }

    static func play(_ name: String) -> VLMCall { VLMCall("play \(name)") { $0.play(name) } }

    static func stop(_ name: String) -> VLMCall { VLMCall("stop \(name)") { $0.stop(name) } }

    static func pause(_ name: String) -> VLMCall { VLMCall("pause \(name)") { $0.pause(name) } }
}

/// The one native VLM of a library, shared by its `VLCVLM`s and released after the last one.
///
/// Opening (0 → 1 user) and closing (1 → 0) run on `control`, so a new `VLCVLM` never gets
/// the event manager of a VLM whose release is still pending: libvlc frees that event manager
/// in `libvlc_vlm_release`, and the next VLM call creates a new one.
final class SharedVLM: Sendable {
    /// Carries out every VLM call of the library in order, away from libvlc's threads.
    let control: ControlQueue<NativeVLM>

    private struct State {
        var users = 0
        var manager: NativeEventManager?
    }

    private let state = Protected(State())

    /// Whether the installed libvlc has a VLM, once a first `VLCVLM` of the process tried.
    private static let supported = Protected<Bool?>(nil)

    init(_ vlm: NativeVLM) {
        control = ControlQueue(for: "vlm", native: vlm, identifiable: true)
    }

    /// Adds a user and returns the VLM's event manager, creating the VLM for the first user.
    ///
    /// Opening waits for `control` (see the type's note) unless a VLCVLM of the library is
    /// alive. Where that wait could wait for its own caller (inside a handler, on a queue a
    /// synchronous configuration delivers to, on `control` itself) it returns `nil` instead and
    /// hands the result to `opened`, on `control`, before any call queued after it.
    func open(
        inPlaceOfWaiting opened: @escaping @Sendable (Result<NativeEventManager, VLCError>) -> Void
    ) throws -> NativeEventManager? {
        // A live VLCVLM keeps the VLM open, so a second one (even from a VLM handler, with the
        // VLM's lock held) needs no queue.
        if let manager = addUserIfOpen() { return manager }
        let openNow: @Sendable (NativeVLM) -> Result<NativeEventManager, VLCError> = { [self] vlm in
            if let manager = addUserIfOpen() { return .success(manager) }
            NativeLibrary.clearError()
            guard let manager = vlm.eventManager else {
                Self.supported.withLock { $0 = false }
                return .failure(.creationFailed(what: "VLM", reason: VLCError.lastMessage(or: "VLM not supported")))
            }
            Self.supported.withLock { $0 = true }
            state.withLock { $0 = State(users: 1, manager: manager) }
            return .success(manager)
        }
        if DeferredFromHandlers.mustDefer || control.isCurrent {
            if Self.supported.withLock({ $0 }) == false {
                throw VLCError.creationFailed(what: "VLM", reason: "VLM not supported")
            }
            control.perform { opened(openNow($0)) }
            return nil
        }
        return try control.performBlocking(openNow).get()
    }

    private func addUserIfOpen() -> NativeEventManager? {
        state.withLock { state -> NativeEventManager? in
            guard state.users > 0 else { return nil }
            state.users += 1
            return state.manager
        }
    }

    /// Removes a user, releasing the VLM after the last one. Runs on `control`.
    func close(_ vlm: NativeVLM) {
        let last = state.withLock { state -> Bool in
            state.users -= 1
            guard state.users == 0 else { return false }
            state.manager = nil
            return true
        }
        if last {
            vlm.release()
        }
    }
}

/// The receiver of a `VLCVLM`'s listeners.
typealias VLMListener = SourceListener<VLCVLM, NoCallbackHook<VLMEvent>>

private let vlmCallback: NativeCallback = { NativeEvents.forward($0, $1, to: VLMListener.self) }
