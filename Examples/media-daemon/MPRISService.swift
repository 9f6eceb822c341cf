import Dispatch
import ExampleSupport
import Foundation
import Glibc
import MediaEvents

/// media-daemon on D-Bus (`--mpris`): the MPRIS interfaces `org.mpris.MediaPlayer2` and
/// `org.mpris.MediaPlayer2.Player` at `/org/mpris/MediaPlayer2`, under the name
/// `org.mpris.MediaPlayer2.<name>`.
///
/// Everything about the bus runs on one thread of its own (`MPRISBusLoop`, on which sd-bus is
/// used and nowhere else), so that a slow or dead bus never slows libvlc's threads or the
/// player. The other threads only post to its inbox, under a lock taken for a few
/// assignments, and wake it through a pipe written without waiting:
/// - the daemon's event tap (libvlc's threads, or the events queue): "something changed";
///   the D-Bus thread then reads the state and sends `PropertiesChanged` for what differs from
///   what it sent last;
/// - the control queue, where the D-Bus thread queues every method call and property set as an
///   `MPRISAction` (through `Daemon.run(_:)`, as the control socket's commands): its reply and
///   its `Seeked`, once the player has carried out the libvlc calls it queued (at most 2 s).
///
/// The thread also reads the state every second, for changes no event announces (a rate or a
/// loop set through another interface).
final class MPRISService: Sendable {
    /// Where `connect` connects, and the name `takeName` takes.
    let options: MPRISOptions
    let daemon: Daemon
    private let controlQueue: DispatchQueue
    private let log: EventLog
    /// Writes the service's log lines, so that the D-Bus thread never waits for the log.
    private let logQueue = DispatchQueue(label: "media-daemon.mpris-log")
    /// The pipe that wakes the D-Bus thread: written by `post`, read by the thread.
    let wakeFDs: (read: Int32, write: Int32)
    let inbox = Guarded(MPRISInbox())
    /// What `Position` answers after a jump until libvlc reports it (see `PositionTracking`).
    let positions = Guarded(PositionTracking())
    /// The volume the audio output last reported (`AudioVolume`; 1 is 100 %), if it reports any.
    let reportedVolume = Guarded<Double?>(nil)

    /// Tells the main thread how each step of the D-Bus thread's start went.
    private let started = Guarded<Result<Void, any Error>?>(nil)
    private let stepDone = DispatchSemaphore(value: 0)
    /// Lets the D-Bus thread take the name (`takeName()`).
    private let nameWanted = DispatchSemaphore(value: 0)

    private init(options: MPRISOptions, daemon: Daemon, controlQueue: DispatchQueue, log: EventLog) throws {
        self.options = options
        self.daemon = daemon
        self.controlQueue = controlQueue
        self.log = log
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw DBusFailure(call: "pipe", errno: errno) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeFDs = (ends[0], ends[1])
    }

    /// Connects to the bus and serves the interfaces, on the D-Bus thread; returns once that is
    /// done, or throws why it could not be (no bus, no answer within 30 s). The name is taken
    /// by `takeName()`, once the daemon has its playlist: a client that finds the name finds
    /// the playlist playing.
    static func connect(
        _ options: MPRISOptions, daemon: Daemon, controlQueue: DispatchQueue, log: EventLog
    ) throws -> MPRISService {
        let service = try MPRISService(options: options, daemon: daemon, controlQueue: controlQueue, log: log)
        let thread = Thread {
            let loop: MPRISBusLoop
            do {
                loop = try MPRISBusLoop(service: service)
                service.finishStep(.success(()))
                service.nameWanted.wait()
                try loop.takeName()
                service.finishStep(.success(()))
            } catch {
                service.finishStep(.failure(error))
                return
            }
            loop.run()
        }
        thread.name = "media-daemon.mpris"
        thread.start()
        try service.waitForStep("connect to")
        daemon.setEventTap { [weak service] event in service?.tap(event) }
        return service
    }

    /// Takes the name `org.mpris.MediaPlayer2.<name>`, or its instance name when another
    /// connection has it; returns once the bus has answered, or throws why not (the policy
    /// refuses it, no answer within 30 s).
    func takeName() throws {
        nameWanted.signal()
        try waitForStep("take a name on")
    }

    private func finishStep(_ result: Result<Void, any Error>) {
        started.withLock { $0 = result }
        stepDone.signal()
    }

    private func waitForStep(_ what: String) throws {
        guard stepDone.wait(timeout: .now() + 30) == .success, let result = started.withLock({ $0 }) else {
            throw MPRISStartFailure(description: "could not \(what) the \(options.bus.rawValue) bus within 30 s")
        }
        try result.get()
    }

    // MARK: Posting to the D-Bus thread

    /// Changes the inbox and wakes the D-Bus thread unless a wake is pending already. Never
    /// waits (the pipe is non-blocking; a full pipe has a wake pending anyway).
    func post(_ change: (inout MPRISInbox) -> Void) {
        let wake = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            change(&inbox)
            defer { inbox.wakePending = true }
            return !inbox.wakePending
        }
        if wake {
            var byte: UInt8 = 1
            _ = write(wakeFDs.write, &byte, 1)
        }
    }

    /// The daemon's tap: where the event is delivered (often libvlc's thread). Only notes and
    /// posts: never waits.
    private func tap(_ event: DaemonEvent) {
        guard case .playback(let event) = event else {
            post { $0.changed = true }
            return
        }
        switch event.payload {
        case .player(.timeChanged(let milliseconds)):
            // Progress is not a change; it ends a jump's wait for libvlc's report of it.
            positions.withLock { $0.reported(milliseconds, of: event.playback) }
            return
        case .player(.positionChanged), .player(.buffering):
            return
        case .player(.audioVolume(let volume)):
            reportedVolume.withLock { $0 = Double(volume) }
            post { $0.changed = true }
        case .began:
            let restarted = positions.withLock { $0.began(event.playback, entry: event.entry) }
            // The same entry again (loop Track, or Previous on a one-entry playlist loop): the
            // track id stays and the position goes back to 0, which clients learn from Seeked.
            post { inbox in
                inbox.changed = true
                if restarted { inbox.seeked.append(0) }
            }
        case .ended(let summary):
            positions.withLock { $0.ended(event.playback, stopped: summary.outcome == .stopped) }
            post { $0.changed = true }
        default:
            post { $0.changed = true }
        }
    }

    // MARK: Carrying out calls

    /// Carries out `action` on the control queue, then tells the D-Bus thread with `ticket`
    /// (its reply) once the player has carried out the libvlc calls it queued, or after 2 s.
    func perform(_ action: MPRISAction, ticket: Int?) {
        controlQueue.async { [self] in
            let outcome = daemon.carryOut(action)
            if let seekedTo = outcome.seekedTo {
                positions.withLock { $0.jumped(to: seekedTo, playback: outcome.seekedPlayback) }
            }
            afterPlayerCalls {
                self.post { inbox in
                    inbox.changed = true
                    if let ticket { inbox.replies.append((ticket, outcome.error)) }
                    if let seekedTo = outcome.seekedTo { inbox.seeked.append(seekedTo * 1000) }
                    if case .setRate = action { inbox.rateApplied = true }
                }
            }
        }
    }

    /// Calls `body` once the player's control queue has run what was queued before, or after
    /// 2 s if libvlc does not return (the watchdog reports that).
    private func afterPlayerCalls(_ body: @escaping @Sendable () -> Void) {
        let done = Guarded(false)
        let once: @Sendable () -> Void = {
            if done.withLock({ done in
                defer { done = true }; return !done
            }) {
                body()
            }
        }
        // Without keeping the player alive meanwhile (see `Liveness.afterPlayerCalls`).
        if let player = daemon.playlistPlayer?.player {
            player.afterPendingControls(once)
        } else {
            once()
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 2, execute: once)
    }

    // MARK: Log

    /// Writes a daemon line (`"source":"daemon"`) on the service's own queue.
    func note(_ name: String, _ fields: [(String, JSONValue)]) {
        let log = log
        logQueue.async { log.writeAlways(EventRecord(source: "daemon", name: name, fields: fields)) }
    }
}

/// What the other threads post to the D-Bus thread.
struct MPRISInbox {
    /// Something changed: read the state, send `PropertiesChanged`.
    var changed = false
    /// Replies to send: the ticket of the call, and the error (`nil`: success).
    var replies: [(ticket: Int, error: MPRISError?)] = []
    /// `Seeked` signals to send, in microseconds.
    var seeked: [Int64] = []
    /// A rate set by MPRIS has been carried out: show the player's value again.
    var rateApplied = false
    /// A wake is in the pipe, not yet read.
    var wakePending = false
    /// The bus is gone: nothing is posted any more.
    var closed = false
}

/// The position after a jump made through MPRIS: libvlc reports the new time only with the
/// next `TimeChanged`, and sends none while paused until playback resumes, so `Position`
/// answers the jump's target until libvlc reports a time near it, or the playback ends.
struct PositionTracking {
    /// The jump not yet reported: its playback and target (ms).
    private(set) var jump: (playback: PlaybackID?, milliseconds: Int64)?
    /// The entry of the last playback that began.
    private var lastEntry: PlaylistEntryID?
    /// Whether the last playback that ended was stopped (a `play` after it starts at 0, as
    /// clients expect).
    private var lastStopped = false

    mutating func jumped(to milliseconds: Int64, playback: PlaybackID?) {
        jump = (playback, milliseconds)
    }

    mutating func reported(_ milliseconds: Int64, of playback: PlaybackID) {
        guard let jump, jump.playback == playback, abs(milliseconds - jump.milliseconds) < 2000 else { return }
        self.jump = nil
    }

    /// A playback began; returns whether it plays the same entry as the one before, which
    /// was not stopped: the position went back to 0 under the same track id.
    mutating func began(_ playback: PlaybackID, entry: PlaylistEntryID?) -> Bool {
        if let jump, jump.playback != playback { self.jump = nil }
        defer { lastEntry = entry }
        return entry != nil && entry == lastEntry && !lastStopped
    }

    mutating func ended(_ playback: PlaybackID, stopped: Bool) {
        if let jump, jump.playback == playback { self.jump = nil }
        lastStopped = stopped
    }

    /// The position to answer for `playback` when libvlc says `time` (ms).
    func position(of playback: PlaybackID?, time: Int64) -> Int64 {
        if let jump, jump.playback == playback { return jump.milliseconds }
        return max(time, 0)
    }
}
