import Dispatch

/// Why one input of a player failed: the error messages libvlc logged for it, and the error
/// its media's stream threw.
public struct FailureCause: Sendable, Hashable, CustomStringConvertible {
    /// The error-level messages logged on the input's thread between its `Opening` and its
    /// end, oldest first; empty only when `streamFailure` explains the end.
    public let errors: [LogMessage]
    /// What the media's stream threw (a media made with `VLCMedia(library:open:)`), which
    /// libvlc made the end of the stream or a failure to open; `nil` for any other end.
    public let streamFailure: VLCStreamFailure?
    /// The input's thread, on which libvlc sent `Opening`, logged `errors` and sent the end.
    public let threadID: UInt

    /// The stream's error, then the texts of `errors`, one per line.
    public var description: String {
        ((streamFailure.map { [$0.description] } ?? []) + errors.map(\.text)).joined(separator: "\n")
    }
}

/// An error that the stream of a media made with `VLCMedia(library:open:)` threw.
///
/// libvlc 3 reads such a media through its `imem` access, which turns a read error into the
/// end of the stream (the player sends `EndReached`, as for a media played to its end) and a
/// failed `open` into `EncounteredError`, and keeps neither error. MediaEvents keeps it: the
/// media's `streamFailure`, and the `FailureCause` of that input's `PlaybackEnd` (whose kind is
/// then `encounteredError`). An error thrown after libvlc cancelled the stream (a stop) is no
/// failure.
public struct VLCStreamFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stream call that threw.
    public enum Operation: String, Sendable, Hashable {
        /// The media's `open` closure: libvlc could not open the media.
        case open
        /// `VLCMediaStream.read(into:)`: libvlc ended the playback there.
        case read
    }

    /// The call that threw.
    public let operation: Operation
    /// What it threw.
    public let error: any Error

    /// The operation and the error, for logs: `stream read failed: …`.
    public var description: String { "stream \(operation.rawValue) failed: \(error)" }

    /// Equal when the operations are, and the errors have the same type and description.
    public static func == (lhs: VLCStreamFailure, rhs: VLCStreamFailure) -> Bool {
        lhs.operation == rhs.operation && String(reflecting: lhs.error) == String(reflecting: rhs.error)
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(operation)
        hasher.combine(String(reflecting: error))
    }
}

/// How one input of a player ended, with the messages that explain it: what a
/// `FailureCauseRecorder` delivers.
public struct PlaybackEnd: VLCEvent, Hashable {
    /// The two ends of an input that a recorder reports.
    public enum Kind: Int, VLCEventKind {
        /// The input played to its end (`MediaPlayerEndReached`); libvlc may still have logged
        /// errors (a directory, a file it could only partly decode).
        case endReached
        /// The input failed: libvlc sent `MediaPlayerEncounteredError`, or it sent
        /// `MediaPlayerEndReached` after the media's stream threw (libvlc 3 makes a read error
        /// the end of the stream; the cause's `streamFailure` holds the error).
        case encounteredError

        /// The player event type this end stands for.
        public var nativeType: Int32 {
            switch self {
            case .endReached: MediaPlayerEvent.Kind.endReached.nativeType
            case .encounteredError: MediaPlayerEvent.Kind.encounteredError.nativeType
            }
        }

        /// The kind's position among the two kinds.
        public var index: Int { rawValue }
    }

    /// Which end.
    public let kind: Kind
    /// Why the input failed: the errors libvlc logged for it and what its media's stream
    /// threw; `nil` when neither can be associated with it (nothing was logged on its thread,
    /// or the recorder did not see the input's `Opening`, and no stream threw).
    public let cause: FailureCause?

    /// The end's name and its cause's texts, for logs.
    public var description: String {
        "\(name) cause=\(cause.map { "\"\($0.errors.map(\.text).joined(separator: " | "))\"" } ?? "nil")"
    }
}

/// Attaches to each end of a player's input the error messages libvlc logged for that input:
/// the cause of an `EncounteredError`.
///
/// ```swift
/// let causes = FailureCauseRecorder(player: player)
/// let end = try await causes.waitFor(.encounteredError, .endReached, timeout: .seconds(10)) {
///     player.play()
/// }
/// print(end.cause?.description ?? "no cause logged")
/// // cannot open file /tmp/x.wav (No such file or directory) …
/// ```
///
/// **The association.** libvlc 3 runs each input of a player on a thread of its own, and
/// sends that player's `Opening`, `EncounteredError` and `EndReached` from that thread (measured
/// on 3.0.24 for a missing file, an empty file, a directory, a closed port, an unsupported
/// scheme and corrupt files). The recorder listens to the player's event manager itself, so it
/// sees on which thread `Opening` arrives, and keeps the error-level messages logged on that
/// thread until the input's end. Nothing is guessed from the text.
///
/// **What it cannot do.** `libvlc_log_get_object` names only the object that logged (its type
/// and address), not its parent, so messages cannot be tied to a player by object. Messages
/// logged on other threads (decoders, audio and video outputs, the preparser) are never part
/// of a cause, even when they concern this input. A parse failure has no cause: libvlc 3 makes
/// the preparser's input quiet, and it logs nothing (measured: no error or warning for a missing
/// or an empty file). An input whose `Opening` the recorder did not see (it was created after
/// `play()`), or whose end comes from another thread, gets `cause: nil`, as does an input that
/// logged no error. A `stop()` ends an input without a `PlaybackEnd`.
///
/// **A stream media's error.** For a media made with `VLCMedia(library:open:)`, what its
/// stream threw (`open`, or a `read`, which libvlc turns into the end of the stream and reports
/// as `EndReached`) is the cause's `streamFailure`, and the end is reported as
/// `encounteredError`: the error is recorded for the input's thread, which opened the stream
/// and sends the end, before the end is sent.
///
/// Events are dispatched as the player's `configuration` says. The recorder keeps the
/// library's log callback installed with error messages formatted while it exists.
public final class FailureCauseRecorder: VLCEventSource {
    /// The subscribers of this recorder.
    public let eventHub = EventHub<PlaybackEnd>()
    /// How the recorder's events are dispatched: the player's configuration.
    public let configuration: any EventsConfiguring
    /// Kept, so that the native player outlives this recorder's listeners: they are detached
    /// on the teardown queue, and the player's own teardown comes after its wrapper is gone.
    private let player: VLCMediaPlayer
    private let logs: VLCLogSource
    private let tracker: InputTracker

    /// Starts recording the causes of `player`'s failures. Create it before `play()`: an input
    /// already running when it is created gets `cause: nil`. Made inside a handler (or on a
    /// queue a synchronous configuration delivers to) it attaches on a MediaEvents queue, so it
    /// may miss an input that opens right away.
    public init(player: VLCMediaPlayer) {
        configuration = player.configuration
        logs = player.library.logs
        tracker = InputTracker(router: logs.router)
        // The wrapper, not a native reference: `libvlc_media_player_retain` takes the player's
        // object lock, which libvlc holds while `play` sends the media's events, so a recorder
        // made in such a handler would wait for itself.
        self.player = player
        logs.startCapturing()
        let listener = RecorderListener(
            handler: EventsHandler(object: self, configuration: configuration), tracker: tracker)
        let table: @Sendable (NativeMediaPlayer) -> NativeEventTable = { player in
            NativeEventTable(
                manager: player.eventManager,
                types: [MediaPlayerEvent.Kind.opening, .stopped, .endReached, .encounteredError].map(\.nativeType),
                callback: recorderCallback, receiver: listener)
        }
        // At once: the next Opening must be seen whether or not anyone subscribed yet. Except
        // where attaching could wait for its own caller (inside a handler, or on a queue a
        // synchronous delivery may be waiting for, whose thread may hold the player's event
        // lock): there it is done on the teardown queue, and recording starts with the first
        // input that opens after it. A player made in a handler whose native player is not
        // created yet: right after it is, on its control queue, before any of its calls.
        guard let native = player.native.current else {
            let eventHub = eventHub
            player.control.perform { player in _ = eventHub.bindLate(table(player)) }
            return
        }
        if DeferredFromHandlers.mustDefer {
            let table = table(native)
            eventHub.bind(table, attachNow: false)
            ServiceQueues.pendingTeardowns.async(on: ServiceQueues.teardown) { table.attachIfNeeded() }
        } else {
            eventHub.bind(table(native), attachNow: true)
        }
    }

    deinit {
        ServiceQueues.pendingTeardowns.countingDeinit {
            let table = eventHub.finish()
            tracker.inputGone()
            logs.stopCapturing()
            let player = player
            // Detaching waits for a running callback: never on a libvlc thread. The player wrapper
            // is let go only afterwards (its own teardown then stops and releases the player on its
            // control queue).
            let tearDown: @Sendable () -> Void = {
                ServiceQueues.pendingTeardowns.async(on: ServiceQueues.teardown) {
                    table?.detachAll()
                    withExtendedLifetime(player) {}
                }
            }
            // Dropped in a handler of the player's events: the detach waits for the event lock
            // this thread holds until the handler returns.
            TeardownAfterSenderHandler().run(
                tearDown, listeningTo: player.native.current?.address, isAttached: table?.isAttached == true)
        }
    }
}

/// The input a recorder's player runs now: its thread and the errors logged on it. Updated on
/// libvlc's threads, inside the recorder's native callback and the log callback.
final class InputTracker: Sendable {
    private struct State {
        var thread: UInt?
        var errors: [LogMessage] = []
    }

    private let router: LogRouter
    private let state = Protected(State())

    init(router: LogRouter) {
        self.router = router
    }

    /// A new input opens on `thread` (the calling thread).
    func inputOpening(on thread: UInt) {
        let previous = state.withLock { state -> UInt? in
            defer { state = State(thread: thread) }
            return state.thread
        }
        if let previous, previous != thread { router.unregister(self, for: previous) }
        router.register(self, for: thread)
    }

    /// An error message logged on the input's thread.
    func record(_ message: LogMessage) {
        state.withLock { state in
            if state.thread == message.threadID { state.errors.append(message) }
        }
    }

    /// The input ended on `thread`: its cause, if the end belongs to the input seen opening.
    func inputEnded(on thread: UInt) -> FailureCause? {
        let (input, errors) = state.withLock { state -> (UInt?, [LogMessage]) in
            defer { state = State() }
            return (state.thread, state.errors)
        }
        guard let input else { return nil }
        router.unregister(self, for: input)
        guard input == thread, !errors.isEmpty else { return nil }
        return FailureCause(errors: errors, streamFailure: nil, threadID: thread)
    }

    /// The input is gone (stopped, or the recorder ends): its thread may be reused.
    func inputGone() {
        let input = state.withLock { state -> UInt? in
            defer { state = State() }
            return state.thread
        }
        if let input { router.unregister(self, for: input) }
    }
}

/// The receiver of a recorder's listeners (the player's `Opening`, `Stopped`, `EndReached` and
/// `EncounteredError`): follows the input's thread and delivers each end with its cause.
final class RecorderListener: NativeEventReceiver {
    private let handler: EventsHandler<FailureCauseRecorder>
    private let tracker: InputTracker

    init(handler: EventsHandler<FailureCauseRecorder>, tracker: InputTracker) {
        self.handler = handler
        self.tracker = tracker
    }

    func receive(_ event: consuming MediaPlayerEvent, sender: UInt) {
        let kind: PlaybackEnd.Kind
        switch event.kind {
        case .opening:
            tracker.inputOpening(on: currentThread())
            return
        case .stopped:
            // Sent from the input's thread or from inside stop() on the control queue; either
            // way the input thread is finished (or about to be) and its identity may be reused.
            tracker.inputGone()
            return
        case .endReached: kind = .endReached
        case .encounteredError: kind = .encounteredError
        default: return
        }
        let thread = currentThread()
        let logged = tracker.inputEnded(on: thread)
        // Sent before the input closes its stream, on the thread that opened it.
        let end: PlaybackEnd
        if let streamFailure = StreamFailures.failure(onInputThread: thread) {
            end = PlaybackEnd(
                kind: .encounteredError,
                cause: FailureCause(errors: logged?.errors ?? [], streamFailure: streamFailure, threadID: thread))
        } else {
            end = PlaybackEnd(kind: kind, cause: logged)
        }
        handler.handle(end, sender: 0) { recorder, end in recorder.eventHub.publish(end) }
    }
}

private let recorderCallback: NativeCallback = { NativeEvents.forward($0, $1, to: RecorderListener.self) }
