// Objects/ — the wrappers users hold: the library, media (also from Swift bytes), players,
// lists, list players, discoverers and the VLM. Each builds its Native/ table with its
// receiver, queues every blocking libvlc call on its control queue (one `ControlCall` for each
// `x`/`xAndWait` pair), runs the Workarounds/ its calls need, and hands its teardown to
// Delivery/'s queues; none calls libvlc itself (Native/ does).

import Dispatch

/// A libvlc instance. Create one per process and share it between players and media.
public final class VLCLibrary: Sendable {
    /// Arguments that let libvlc run with no display and no sound card: dummy audio and
    /// video outputs, no interface, no messages on stderr. `--quiet` silences only libvlc's
    /// stderr logger: `logs` still receives every message (measured on 3.0.24: the same
    /// messages with `--quiet`, without it and with `--verbose=2`).
    public static let headlessArguments = [
        "--quiet", "--intf=dummy", "--aout=adummy", "--vout=dummy", "--no-video-title-show",
        "--no-stats", "--no-snapshot-preview",
    ]

    private static let sharedConfiguration = Protected<any EventsConfiguring>(EventsDefaultConfiguration())

    /// The dispatch configuration new objects use unless their initializer is given one.
    ///
    /// Thread-safe. Read when an object is created: changing it does not affect existing
    /// objects. Defaults to `EventsDefaultConfiguration` (handlers run on libvlc's thread).
    /// `EventsLegacyConfiguration` delivers nothing in a program that never drains the
    /// main queue.
    public static var sharedEventsConfiguration: any EventsConfiguring {
        get { sharedConfiguration.withLock { $0 } }
        set { sharedConfiguration.withLock { $0 = newValue } }
    }

    let native: NativeLibrary
    /// The arguments libvlc was started with.
    public let arguments: [String]
    /// The instance's one VLM, opened by the first `VLCVLM` of this library.
    let sharedVLM: SharedVLM
    /// libvlc's log messages: subscribe with `logs.observe(minimumLevel:…)` or
    /// `logs.events(minimumLevel:…)`; `FailureCauseRecorder` ties error messages to a
    /// player's failures.
    public let logs: VLCLogSource

    /// Starts libvlc.
    ///
    /// - Parameters:
    ///   - arguments: libvlc command-line options; the default runs headless.
    ///   - logsConfiguration: how `logs` handlers are dispatched; `nil` uses
    ///     `VLCLibrary.sharedEventsConfiguration` as it is now.
    /// - Throws: `VLCError.libraryInitializationFailed` when libvlc refuses the arguments or
    ///   cannot load its plugins.
    public init(
        arguments: [String] = VLCLibrary.headlessArguments,
        logsConfiguration: (any EventsConfiguring)? = nil
    ) throws {
        let created = MediaReferenceCount().around { NativeLibrary.new(arguments: arguments) }
        guard let instance = created.flatMap({ $0 }) else {
            throw VLCError.libraryInitializationFailed(
                arguments: arguments,
                reason: VLCError.lastMessage(or: "libvlc_new returned NULL (unknown option or missing plugins?)"))
        }
        native = instance
        sharedVLM = SharedVLM(NativeVLM(of: instance))
        self.arguments = arguments
        logs = VLCLogSource(
            instance: instance, configuration: logsConfiguration ?? VLCLibrary.sharedEventsConfiguration)
    }

    /// Waits until every wrapper already gone has been detached and released in libvlc.
    ///
    /// Wrappers hand their native teardown to MediaEvents' queues so that it never runs on a
    /// libvlc thread; it finishes shortly after the last reference goes. Call this before a
    /// program exits: a process that exits while libvlc's threads still work (a parse, a
    /// playback being stopped) can crash in a plugin's static destructors. Every parse counts
    /// too (`VLCMedia.startParsing`, `parse`, a playlist's parse of its next entry), until
    /// libvlc has ended it. A teardown runs after the calls queued before it (a `stop`); a
    /// wrapper still held somewhere (a task suspended in `waitForPendingControls()`) is not
    /// torn down, and its calls are not waited for. A wrapper's teardown counts from before its
    /// subscriptions' completions are queued: a thread that an `onCompletion` wakes and that
    /// then waits here waits for that wrapper's teardown.
    ///
    /// Callable from anywhere, handlers included. Inside a handler it does not wait for parses
    /// (the handler may run on the preparser's thread), nor for the
    /// objects whose events are being delivered on this thread, nor for those whose deliveries
    /// wait behind it on its queue (they cannot be released before the handler returns), so
    /// exiting from an `EndReached` handler works; a wrapper dropped in the handler that
    /// listens to the sender's events (another wrapper of that media, a
    /// `FailureCauseRecorder` of that player) is torn down once the handler returns, as its
    /// detach needs the event lock libvlc holds until then. It gives
    /// up, returning `false`, when waiting could deadlock: made from a handler or from a
    /// queue MediaEvents delivers to while a synchronous delivery waits to enter its queue
    /// (that delivery's thread holds libvlc locks a teardown may need).
    ///
    /// - Returns: `false` if teardowns were still running after `timeout` seconds, or when
    ///   it gave up.
    @discardableResult
    public static func waitForPendingTeardowns(timeout: Double = 5) -> Bool {
        // Deliveries that ran before this handler in its batch return their borrows now.
        DeliveryEnding.Run.endCurrentThreadRun()
        let excluded = DeliveryContext.deliveringHandlers
        // A handler may run on the preparser's thread, whose parse cannot end before it returns.
        let ignoringParses = DeliveryContext.isInDelivery
        return ServiceQueues.wait(
            until: { slice in
                ServiceQueues.pendingTeardowns.waitForIdle(
                    excluding: excluded, ignoringParses: ignoringParses, until: slice)
            }, timeout: .now() + timeout)
    }

    /// Whether libvlc's media reference count is changed atomically in this process.
    ///
    /// libvlc 3.0 counts a media's references with a plain `int` that its own threads (the
    /// input thread at every state change, the list player's, the preparser) and the
    /// program's change at the same moments, so a retain or a release can be lost: a leak,
    /// or a media freed while in use. MediaEvents replaces `libvlc_media_retain` and
    /// `libvlc_media_release` for the whole process with versions that change the same count
    /// with atomic operations (libvlc's own calls reach them too) and let libvlc free the
    /// media at the last release, as before.
    ///
    /// Answered from what is bound, checked once: the process's global lookup must find the
    /// replacements and libvlc's own relocations for the two functions, where bound, must
    /// hold them. `false` when the installed libvlc does not store the count where 3.0 does
    /// (checked against libvlc's own functions), when MediaEvents was loaded after libvlc (a
    /// shared library opened later: the lookup finds libvlc's functions first), when libvlc
    /// binds those calls to itself (built with `-Bsymbolic-functions`), or when the
    /// environment sets `MEDIAEVENTS_ATOMIC_MEDIA_REFCOUNT=0`: libvlc's own functions then run
    /// unchanged, for every caller. None of these cases stops the process.
    public static var mediaReferenceCountIsAtomic: Bool { MediaReferenceCount.isAtomic }

    /// The libvlc version string, for example "3.0.24 Vetinari".
    public static var version: String { NativeLibrary.version }

    deinit {
        // Not the last reference once the log callback was installed: `logs` holds its own
        // until it has unset the callback on a MediaEvents queue.
        native.release()
    }
}
