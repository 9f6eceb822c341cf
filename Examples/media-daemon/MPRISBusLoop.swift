import CSDBus
import ExampleSupport
import Glibc
import MPRISInterfaces
import MediaEvents

/// The D-Bus thread of `MPRISService`: owns the connection and everything sd-bus lends, made
/// and used on that thread only (not Sendable). sd-bus calls the interfaces' handlers from
/// inside `process()`, on this thread, with a pointer to this object as user data: the object
/// lives as long as the thread runs, which is as long as the connection that holds the pointer.
final class MPRISBusLoop {
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    private let service: MPRISService
    private let connection: DBusConnection
    /// The name taken: the requested one, or its instance name.
    private(set) var ownedName = ""
    /// The state last sent in `PropertiesChanged` (or answered, at the start).
    private var sent = MPRISState()
    /// The state the getters answer from: read again for each message, and before each
    /// `PropertiesChanged` (which reads its values from the getters).
    private var current = MPRISState()
    /// Whether `current` was read for the message being handled.
    private var fresh = false
    /// Calls waiting for the control queue, by ticket.
    private var pendingCalls: [Int: DBusMessage] = [:]
    private var nextTicket = 1
    /// A rate set through MPRIS and not carried out yet: answered meanwhile.
    private var pendingRate: Double?
    /// The volume last set through MPRIS (1: libvlc's 100 % at the start). Answered unless the
    /// audio output reported one since (`AudioVolume`): libvlc reads no volume back from
    /// `adummy` and from the daemon's paced output (`amem`), its getter answers 0 there.
    private var volumeSet = 1.0

    /// Connects and serves the interfaces; on the D-Bus thread.
    init(service: MPRISService) throws {
        self.service = service
        let options = service.options
        do {
            connection = try DBusConnection(options.bus, description: "media-daemon-mpris")
        } catch let failure as DBusFailure {
            throw MPRISStartFailure(
                description: "cannot connect to the \(options.bus.rawValue) bus (\(Self.address(of: options.bus))): "
                    + String(cString: strerror(failure.errno)))
        }
        let handlers = mpris_handlers_t(method: mprisMethod, get: mprisGet, set: mprisSet)
        let userData = Unmanaged.passUnretained(self).toOpaque()
        try connection.addObject(
            path: Self.objectPath, interface: Self.rootInterface, vtable: mpris_root_vtable(handlers),
            userData: userData)
        try connection.addObject(
            path: Self.objectPath, interface: Self.playerInterface, vtable: mpris_player_vtable(handlers),
            userData: userData)
    }

    /// Takes the name, or its instance name when another connection has it; waits for the
    /// bus's answer.
    func takeName() throws {
        let options = service.options
        var requested = options.busName
        do {
            do {
                try connection.requestName(requested)
            } catch let failure as DBusFailure where failure.errno == EEXIST {
                requested = options.instanceBusName(pid: getpid())
                try connection.requestName(requested)
            }
        } catch let failure as DBusFailure {
            let hint =
                failure.errno == EACCES || failure.errno == EPERM
                ? " (the bus's policy refuses it: see Examples/media-daemon/media-daemon-mpris.conf)" : ""
            throw MPRISStartFailure(
                description:
                    "cannot take the name \(requested) on the \(options.bus.rawValue) bus (\(Self.address(of: options.bus))): "
                    + String(cString: strerror(failure.errno)) + hint)
        }
        ownedName = requested
        refresh()
        sent = current
        service.note(
            "MPRISReady",
            [
                ("bus", .string(options.bus.rawValue)), ("name", .string(ownedName)),
                ("unique_name", connection.uniqueName.map { .string($0) } ?? .null),
            ])
    }

    /// Where sd-bus looks for `bus`, for messages.
    private static func address(of bus: DBusBusKind) -> String {
        func variable(_ name: String) -> String? {
            getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        switch bus {
        case .session:
            if let address = variable("DBUS_SESSION_BUS_ADDRESS") { return "DBUS_SESSION_BUS_ADDRESS=\(address)" }
            if let directory = variable("XDG_RUNTIME_DIR") { return "\(directory)/bus" }
            return "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"
        case .system:
            if let address = variable("DBUS_SYSTEM_BUS_ADDRESS") { return "DBUS_SYSTEM_BUS_ADDRESS=\(address)" }
            return "/run/dbus/system_bus_socket"
        }
    }

    /// Serves the bus until the connection is gone, then says so in the log and returns: the
    /// daemon plays on without it.
    func run() {
        let reason: String
        do {
            try serve()
            reason = "closed"
        } catch {
            reason = "\(error)"
        }
        service.inbox.withLock { $0.closed = true }
        for call in pendingCalls.values { connection.release(call) }
        pendingCalls = [:]
        connection.close()
        service.note(
            "MPRISDisconnected",
            [("bus", .string(service.options.bus.rawValue)), ("name", .string(ownedName)), ("reason", .string(reason))])
    }

    private func serve() throws {
        while true {
            fresh = false
            while try connection.process() { fresh = false }
            handleInbox()
            let (fd, events, timeout) = try connection.pollParameters()
            var fds = [
                pollfd(fd: fd, events: events, revents: 0),
                pollfd(fd: service.wakeFDs.read, events: Int16(POLLIN), revents: 0),
            ]
            // At least every second: changes no event announces (a rate set through another
            // interface) are sent then.
            let result = poll(&fds, 2, Int32(min(timeout ?? 1000, 1000)))
            if result < 0, errno != EINTR { throw DBusFailure(call: "poll", errno: errno) }
            if result == 0 { service.inbox.withLock { $0.changed = true } }
        }
    }

    /// Takes what the other threads posted and acts on it: replies, `Seeked`, and
    /// `PropertiesChanged` for what changed since last sent. A message sd-bus cannot queue
    /// (its queue for a bus that stopped reading is full) is dropped: only a lost connection,
    /// which `process()` reports, ends the service.
    private func handleInbox() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(service.wakeFDs.read, &bytes, bytes.count) > 0 {}
        // After draining the pipe: a post after this take writes it again.
        let work = service.inbox.withLock { inbox in
            defer {
                inbox.changed = false
                inbox.replies = []
                inbox.seeked = []
                inbox.rateApplied = false
                inbox.wakePending = false
            }
            return inbox
        }
        if work.rateApplied { pendingRate = nil }
        for (ticket, error) in work.replies {
            guard let call = pendingCalls.removeValue(forKey: ticket) else { continue }
            if let error {
                try? connection.replyError(to: call, name: error.name, message: error.message)
            } else {
                try? connection.replySuccess(to: call)
            }
        }
        // The properties first: a client that reads Position on Seeked sees the new track.
        if work.changed || !work.replies.isEmpty || !work.seeked.isEmpty { sendChanges() }
        for position in work.seeked {
            try? connection.emitSignal(
                path: Self.objectPath, interface: Self.playerInterface, member: "Seeked", position)
        }
    }

    private func sendChanges() {
        refresh()
        var names = current.changedProperties(since: sent)
        var next = current
        if current.metadataSettling {
            // Sent complete once the player has the new entry's media (its MediaChanged).
            names.removeAll { $0 == "Metadata" }
            next.metadata = sent.metadata
        }
        guard !names.isEmpty else { return }
        // Not sent: tried again with the next change.
        guard
            (try? connection.emitPropertiesChanged(path: Self.objectPath, interface: Self.playerInterface, names: names))
                != nil
        else { return }
        sent = next
    }

    /// Reads the state again, unless it was read for the message being handled.
    private func refresh() {
        guard !fresh else { return }
        fresh = true
        guard let playlist = service.daemon.playlistPlayer else { return }
        let reported = service.reportedVolume.withLock { $0 }
        current = MPRISState.read(playlist, volume: reported ?? volumeSet, pendingRate: pendingRate)
    }

    // MARK: Handlers (called by sd-bus from `process()`)

    fileprivate func method(_ message: DBusMessage, _ busError: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let action: MPRISAction
        do {
            switch message.member {
            case "Raise": return reply(message)
            case "Quit":
                // Answered first: the daemon exits within 2 s, and the caller learns it was heard.
                let result = reply(message)
                service.perform(.quit, ticket: nil)
                return result
            case "Play": action = .play
            case "Pause": action = .pause
            case "PlayPause": action = .playPause
            case "Stop": action = .stop
            case "Next": action = .next
            case "Previous": action = .previous
            case "Seek": action = .seek(offset: try message.readInt64())
            case "SetPosition":
                let track = try message.readString("o")
                action = .setPosition(trackID: track, position: try message.readInt64())
            case "OpenUri": action = .openURI(try message.readString())
            default:
                return setDBusError(
                    busError, name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(message.member)")
            }
        } catch {
            return setDBusError(busError, name: MPRISError.invalidArguments("").name, message: "\(error)")
        }
        // Answered once the control queue has carried it out (`handleInbox`).
        let ticket = nextTicket
        nextTicket += 1
        pendingCalls[ticket] = connection.retain(message)
        service.perform(action, ticket: ticket)
        return 1
    }

    private func reply(_ message: DBusMessage) -> Int32 {
        do {
            try connection.replySuccess(to: connection.retain(message))
        } catch let failure as DBusFailure {
            return -failure.errno
        } catch {
            return -EIO
        }
        return 1
    }

    fileprivate func get(
        _ interface: String, _ property: String, _ reply: DBusMessage, _ busError: UnsafeMutablePointer<sd_bus_error>?
    ) -> Int32 {
        refresh()
        let value: DBusValue
        switch property {
        // org.mpris.MediaPlayer2
        case "CanQuit": value = .bool(true)
        case "CanRaise", "HasTrackList": value = .bool(false)
        case "Identity": value = .string("media-daemon")
        case "SupportedUriSchemes": value = .strings(mprisURISchemes)
        case "SupportedMimeTypes": value = .strings(mprisMIMETypes)
        // org.mpris.MediaPlayer2.Player
        case "PlaybackStatus": value = .string(current.playbackStatus)
        case "LoopStatus": value = .string(current.loopStatus)
        case "Rate": value = .double(current.rate)
        case "Volume": value = .double(current.volume)
        case "Position": value = .int64(position())
        case "MinimumRate": value = .double(mprisRateRange.lowerBound)
        case "MaximumRate": value = .double(mprisRateRange.upperBound)
        case "CanGoNext": value = .bool(current.canGoNext)
        case "CanGoPrevious": value = .bool(current.canGoPrevious)
        case "CanPlay": value = .bool(current.canPlay)
        case "CanPause": value = .bool(current.canPause)
        case "CanSeek": value = .bool(current.canSeek)
        case "CanControl": value = .bool(true)
        case "Metadata":
            do { try reply.appendDictionary(current.metadata) } catch { return failed(error) }
            return 1
        default:
            return setDBusError(
                busError, name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(property)")
        }
        do { try reply.append(value) } catch { return failed(error) }
        return 1
    }

    /// `Position` now, in microseconds: the time libvlc reported, or a jump it has not yet.
    private func position() -> Int64 {
        guard current.trackID != nil, let player = service.daemon.playlistPlayer?.player else { return 0 }
        let milliseconds = service.positions.withLock { $0.position(of: player.currentPlayback, time: player.time) }
        return milliseconds * 1000
    }

    fileprivate func set(_ property: String, _ value: DBusMessage, _ busError: UnsafeMutablePointer<sd_bus_error>?)
        -> Int32
    {
        func invalid(_ message: String) -> Int32 {
            setDBusError(busError, name: MPRISError.invalidArguments(message).name, message: message)
        }
        do {
            switch property {
            case "LoopStatus":
                let text = try value.readString()
                guard let loop = MPRISState.loop(text) else {
                    return invalid("LoopStatus is None, Track or Playlist, not '\(text)'")
                }
                // A value under the playlist's lock: set here, in order with the calls queued
                // before and after it.
                service.daemon.playlistPlayer?.loop = loop
                service.post { $0.changed = true }
            case "Rate":
                let rate = try value.readDouble()
                guard rate.isFinite else { return invalid("Rate must be a number, not \(rate)") }
                if rate != 0 { pendingRate = min(max(rate, mprisRateRange.lowerBound), mprisRateRange.upperBound) }
                service.perform(.setRate(rate), ticket: nil)
            case "Volume":
                let volume = try value.readDouble()
                guard volume.isFinite else { return invalid("Volume must be a number, not \(volume)") }
                // The daemon's volume is 0 to 200 %; a negative value is 0 (the specification).
                volumeSet = (min(max(volume, 0), 2) * 100).rounded() / 100
                // Until the output reports the new volume, if it reports volumes at all.
                service.reportedVolume.withLock { $0 = nil }
                service.perform(.setVolume(volume), ticket: nil)
            default:
                return setDBusError(
                    busError, name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(property) is read-only")
            }
        } catch {
            return invalid("\(error)")
        }
        // sd-bus answers the set when this returns: the new value is answered from now on (the
        // pending values), and PropertiesChanged follows from `handleInbox`.
        fresh = false
        return 1
    }

    private func failed(_ error: any Error) -> Int32 {
        (error as? DBusFailure).map { -$0.errno } ?? -EIO
    }
}

/// Why `--mpris` could not start, for the message at exit.
struct MPRISStartFailure: Error, CustomStringConvertible {
    let description: String
}

// The C handlers of every member (MPRISInterfaces): the user data is the MPRISBusLoop,
// unretained (see its documentation); they run on the D-Bus thread, inside `process()`.

private let mprisMethod: sd_bus_message_handler_t = { message, userData, error in
    guard let message, let userData else { return -EINVAL }
    return Unmanaged<MPRISBusLoop>.fromOpaque(userData).takeUnretainedValue().method(DBusMessage(message), error)
}

private let mprisGet: sd_bus_property_get_t = { _, _, interface, property, reply, userData, error in
    guard let interface, let property, let reply, let userData else { return -EINVAL }
    return Unmanaged<MPRISBusLoop>.fromOpaque(userData).takeUnretainedValue().get(
        String(cString: interface), String(cString: property), DBusMessage(reply), error)
}

private let mprisSet: sd_bus_property_set_t = { _, _, _, property, value, userData, error in
    guard let property, let value, let userData else { return -EINVAL }
    return Unmanaged<MPRISBusLoop>.fromOpaque(userData).takeUnretainedValue().set(
        String(cString: property), DBusMessage(value), error)
}
