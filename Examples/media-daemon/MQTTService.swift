import CMosquitto
import Dispatch
import ExampleSupport
import Foundation
import Glibc
import MediaEvents

/// media-daemon on an MQTT broker (`--mqtt`), through libmosquitto, under the topics
/// `media-daemon/ID/...`:
/// - `events`: every log line, as written (same `seq`), QoS 1;
/// - `status`: retained, `{"state":"online",...}` with the current playback, entry and player
///   state while connected, updated on change; `{"state":"offline"}` at exit, or through the
///   broker's last will when the daemon dies or its connection is lost;
/// - `command`: requests in the control socket's forms (native and mpv's), answered on
///   `reply` with the request's `request_id` (`ControlServer.answerWithoutConnection`).
///
/// Threads: libmosquitto's network loop runs on a thread of its own (`networkLoop`), which
/// reconnects with backoff; its callbacks only set flags and hand commands to the control
/// queue asynchronously. The log's tap (often on libvlc's thread) only appends to a bounded
/// outbox and signals a semaphore: nothing there waits for the broker. The publisher thread
/// drains the outbox into libmosquitto while connected, at most `maximumUnacknowledged`
/// messages ahead of the broker's acknowledgements. While the outbox waits (disconnected, or a
/// slow broker), a progress line replaces the pending one of its name (coalesced, as for slow
/// socket clients); beyond `maximumBacklog` lines the oldest progress line goes first, then
/// the oldest line. After each connection the backlog is published in order, then an
/// `MQTTConnected` log line says how many lines were dropped and coalesced.
final class MQTTService: @unchecked Sendable {
    // @unchecked: `handle` is set once in init and used only through libmosquitto's
    // thread-safe calls (publish, subscribe, disconnect: `mosquitto_threaded_set`) besides the
    // network thread's.
    static let maximumBacklog = 1000
    static let maximumUnacknowledged = 64
    /// The longest wait between two connection attempts, in seconds.
    static let maximumReconnectDelay = 10.0
    /// Seconds between the client's pings: a daemon whose network is gone is declared offline
    /// (its last will) after 1.5 times this.
    static let keepAlive: Int32 = 15
    /// The longest command payload answered; a longer one gets an error reply.
    static let maximumCommandBytes = ControlServer.maximumLineBytes

    private struct Item {
        let topic: String
        let payload: [UInt8]
        /// The event name of a progress line (coalesced and dropped first).
        let progressName: String?
        let retain: Bool
    }

    private struct Outbox {
        var items: [Item] = []
        var connected = false
        var stopping = false
        var unacknowledged = 0
        var statusDirty = true
        var lastStatus: String?
        /// After a connection: the `MQTTConnected` line, once the backlog is published.
        var announce = false
        var connections = 0
        var backlogAtConnect = 0
        var dropped = 0
        var coalesced = 0
        /// The disconnect callback wrote its `MQTTDisconnected` line.
        var disconnectedSeen = false
    }

    let options: MQTTOptions
    private let endpoint: MQTTOptions.Endpoint
    private let daemon: Daemon
    private let controlQueue: DispatchQueue
    private let log: EventLog
    /// Writes the service's own log lines: neither the network loop nor the publisher waits
    /// for the log.
    private let logQueue = DispatchQueue(label: "media-daemon.mqtt-log")
    private let outbox = Guarded(Outbox())
    /// Wakes the publisher thread.
    private let wake = DispatchSemaphore(value: 0)
    /// Taken around taking an item and handing it to libmosquitto, so that the exit's last
    /// messages come after the publisher's; counts the messages handed over. (Not a
    /// `Guarded<Void>`: ThreadSanitizer reports an access race on an empty value it guards.)
    private let publishing = Guarded(0)
    private let disconnected = DispatchSemaphore(value: 0)
    /// Ends the network thread's wait between two connection attempts at the exit.
    private let stopWake = DispatchSemaphore(value: 0)
    private let handle: OpaquePointer
    private let topics: (events: String, status: String, command: String, reply: String)

    /// Creates the client, sets its last will and starts its network loop, which connects
    /// (and reconnects) in the background: a broker down at start only delays the first
    /// connection. Throws when the URL, the password file or the TLS setup cannot be used.
    init(_ options: MQTTOptions, daemon: Daemon, controlQueue: DispatchQueue, log: EventLog) throws {
        self.options = options
        endpoint = try options.endpoint()
        let credentials = try options.credentials()
        self.daemon = daemon
        self.controlQueue = controlQueue
        self.log = log
        let base = "media-daemon/\(options.id)"
        topics = ("\(base)/events", "\(base)/status", "\(base)/command", "\(base)/reply")
        mosquitto_lib_init()
        guard let handle = mosquitto_new("media-daemon-\(options.id)-\(getpid())", true, nil) else {
            throw MQTTOptions.Invalid(description: "mosquitto_new: \(String(cString: strerror(errno)))")
        }
        self.handle = handle
        // Retained, so that an operator who subscribes later learns that the daemon is gone.
        let offline = Array(Self.offlinePayload(options.id, reason: "lost").utf8)
        try Self.check(mosquitto_will_set(handle, topics.status, Int32(offline.count), offline, 1, true), "will")
        if let credentials {
            try Self.check(mosquitto_username_pw_set(handle, credentials.user, credentials.password), "password")
        }
        if endpoint.tls {
            try Self.check(
                mosquitto_tls_set(
                    handle, options.cafile, options.cafile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil),
                "TLS (--mqtt-cafile)")
        }
        // Its own network thread (`networkLoop`) runs the loop: other threads' publishes wake it.
        mosquitto_threaded_set(handle, true)
        mosquitto_user_data_set(handle, Unmanaged.passRetained(self).toOpaque())
        mosquitto_connect_callback_set(handle) { _, object, code in
            guard let object else { return }
            Unmanaged<MQTTService>.fromOpaque(object).takeUnretainedValue().connected(code)
        }
        mosquitto_disconnect_callback_set(handle) { _, object, code in
            guard let object else { return }
            Unmanaged<MQTTService>.fromOpaque(object).takeUnretainedValue().lost(code)
        }
        mosquitto_publish_callback_set(handle) { _, object, _ in
            guard let object else { return }
            Unmanaged<MQTTService>.fromOpaque(object).takeUnretainedValue().acknowledged()
        }
        mosquitto_message_callback_set(handle) { _, object, message in
            guard let object, let message else { return }
            Unmanaged<MQTTService>.fromOpaque(object).takeUnretainedValue().received(message.pointee)
        }
    }

    /// `{"state":"offline","id":ID,"reason":…}`: `stopped` at the exit, `lost` in the last will
    /// (the daemon died, or its connection did).
    private static func offlinePayload(_ id: String, reason: String) -> String {
        JSON.line([("state", .string("offline")), ("id", .string(id)), ("reason", .string(reason))])
    }

    private static func check(_ code: Int32, _ what: String) throws {
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTOptions.Invalid(description: "\(what): \(String(cString: mosquitto_strerror(code)))")
        }
    }

    /// Taps the log, starts the publisher thread and the network loop (which connects).
    func start() throws {
        daemon.setLineTap { [weak self] record, line in self?.queue(record, line) }
        daemon.addExitHook { [weak self] in self?.finish() }
        let publisher = Thread { [weak self] in self?.publishLoop() }
        publisher.name = "media-daemon.mqtt-publish"
        publisher.start()
        let network = Thread { [weak self] in self?.networkLoop() }
        network.name = "media-daemon.mqtt-network"
        network.start()
    }

    /// The network thread: connects (a slow DNS lookup or TCP connect waits here only), runs
    /// libmosquitto's loop, and after a refusal or a lost connection reconnects after 1 s,
    /// doubling to at most `maximumReconnectDelay` while the broker stays away.
    private func networkLoop() {
        var code = mosquitto_connect(handle, endpoint.host, endpoint.port, Self.keepAlive)
        var delay = 1.0
        var failures = 0
        // At the exit the loop runs on until the DISCONNECT is written (`finish`).
        while !outbox.withLock({ $0.stopping && !$0.connected }) {
            if code == MOSQ_ERR_SUCCESS.rawValue {
                code = mosquitto_loop(handle, 200, 1)
                if code == MOSQ_ERR_SUCCESS.rawValue {
                    if outbox.withLock({ $0.connected }) {
                        delay = 1
                        failures = 0
                    }
                    continue
                }
            }
            if outbox.withLock({ $0.stopping }) { break }
            failures += 1
            // The first failure of a series only (a broker away for an hour is one line), unless
            // the disconnect callback said it already.
            let said = outbox.withLock { box in
                defer { box.disconnectedSeen = false }
                return box.disconnectedSeen
            }
            if failures == 1, !said {
                note("MQTTDisconnected", [("reason", .string(Self.reason(code)))])
            }
            _ = stopWake.wait(timeout: .now() + delay)
            delay = min(delay * 2, Self.maximumReconnectDelay)
            if outbox.withLock({ $0.stopping }) { break }
            code = mosquitto_reconnect(handle)
        }
    }

    private static func reason(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(code))
    }

    // MARK: The log's lines (any thread, under the log's lock)

    private func queue(_ record: EventRecord, _ line: String) {
        let item = Item(
            topic: topics.events, payload: Array(line.utf8), progressName: record.isProgress ? record.name : nil,
            retain: false)
        outbox.withLock { box in
            Self.add(item, to: &box)
            if !record.isProgress { box.statusDirty = true }
        }
        wake.signal()
    }

    /// Appends `item`: a progress line replaces the pending one of its name; beyond the bound,
    /// the oldest progress line goes, or else the oldest line.
    private static func add(_ item: Item, to box: inout Outbox) {
        if let name = item.progressName, let index = box.items.firstIndex(where: { $0.progressName == name }) {
            box.items.remove(at: index)
            box.coalesced += 1
        }
        box.items.append(item)
        if box.items.count > maximumBacklog {
            let index = box.items.firstIndex { $0.progressName != nil } ?? 0
            box.items.remove(at: index)
            box.dropped += 1
        }
    }

    // MARK: The network loop's callbacks (its thread: they never wait)

    private func connected(_ code: Int32) {
        guard code == 0 else {
            note("MQTTRefused", [("reason", .string(String(cString: mosquitto_connack_string(code))))])
            return
        }
        _ = mosquitto_subscribe(handle, nil, topics.command, 1)
        outbox.withLock { box in
            box.connected = true
            box.unacknowledged = 0
            box.statusDirty = true
            box.lastStatus = nil
            box.announce = true
            box.connections += 1
            box.backlogAtConnect = box.items.count
        }
        wake.signal()
    }

    private func lost(_ code: Int32) {
        let stopping = outbox.withLock { box in
            box.connected = false
            box.disconnectedSeen = true
            return box.stopping
        }
        if stopping {
            disconnected.signal()
        } else {
            note("MQTTDisconnected", [("reason", .string(Self.reason(code == 0 ? MOSQ_ERR_CONN_LOST.rawValue : code)))])
        }
    }

    private func acknowledged() {
        outbox.withLock { $0.unacknowledged = max(0, $0.unacknowledged - 1) }
        wake.signal()
    }

    /// A command: answered on the control queue, its reply queued for the publisher.
    private func received(_ message: mosquitto_message) {
        guard let topic = message.topic, String(cString: topic) == topics.command else { return }
        let count = Int(message.payloadlen)
        if count > Self.maximumCommandBytes {
            reply(
                JSON.line([
                    ("request_id", .null), ("ok", .bool(false)),
                    ("error", .string("command longer than \(Self.maximumCommandBytes) bytes: not read")),
                ]))
            return
        }
        let bytes = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
        let id = options.id
        controlQueue.async { [weak self, daemon] in
            let line = ControlServer.answerWithoutConnection(
                bytes, commands: daemon, clientName: "mqtt-\(id)",
                unsupported: "not over MQTT: media-daemon/\(id)/events carries every line")
            self?.reply(line)
        }
    }

    private func reply(_ line: String) {
        outbox.withLock { box in
            Self.add(Item(topic: topics.reply, payload: Array(line.utf8), progressName: nil, retain: false), to: &box)
        }
        wake.signal()
    }

    // MARK: The publisher thread

    private enum Step {
        case publish(Item)
        case status
        case announce([(String, JSONValue)])
    }

    private func publishLoop() {
        while true {
            // Once a second at least: the status also changes without a line (a command's
            // effect on the player's state is read, not announced).
            if wake.wait(timeout: .now() + 1) == .timedOut {
                outbox.withLock { $0.statusDirty = true }
            }
            while let step = nextStep() {
                switch step {
                case .publish: break
                case .status: publishStatus()
                case .announce(let fields): note("MQTTConnected", fields)
                }
            }
        }
    }

    /// The next thing to do while connected; an item is handed to libmosquitto here, under
    /// `publishing`.
    private func nextStep() -> Step? {
        publishing.withLock { handed in
            let step = outbox.withLock { box -> Step? in
                guard box.connected, !box.stopping else { return nil }
                if box.statusDirty {
                    box.statusDirty = false
                    return .status
                }
                guard box.unacknowledged < Self.maximumUnacknowledged else { return nil }
                if !box.items.isEmpty {
                    box.unacknowledged += 1
                    return .publish(box.items.removeFirst())
                }
                guard box.announce else { return nil }
                box.announce = false
                defer {
                    box.dropped = 0
                    box.coalesced = 0
                }
                return .announce([
                    ("broker", .string(options.url)), ("connection", .int(Int64(box.connections))),
                    ("backlog", .int(Int64(box.backlogAtConnect))), ("dropped", .int(Int64(box.dropped))),
                    ("coalesced", .int(Int64(box.coalesced))),
                ])
            }
            if case .publish(let item) = step {
                send(item)
                handed += 1
            }
            return step
        }
    }

    /// Hands `item` to libmosquitto; put back first when it refuses (the connection is gone).
    private func send(_ item: Item) {
        let code = item.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, nil, item.topic, Int32(bytes.count), bytes.baseAddress, 1, item.retain)
        }
        guard code != MOSQ_ERR_SUCCESS.rawValue else { return }
        outbox.withLock { box in
            box.unacknowledged = max(0, box.unacknowledged - 1)
            box.items.insert(item, at: 0)
            if code == MOSQ_ERR_NO_CONN.rawValue { box.connected = false }
        }
    }

    /// Publishes the retained status when it differs from the last one published.
    private func publishStatus() {
        // The daemon is exiting: its offline status comes next.
        guard daemon.playlistPlayer != nil else { return }
        let status = JSON.line(statusFields())
        let changed = outbox.withLock { box in
            defer { box.lastStatus = status }
            return box.lastStatus != status
        }
        guard changed else { return }
        publishing.withLock { handed in
            // The exit may have begun since the check above: its offline status is the last.
            let stopping = outbox.withLock { box in
                if !box.stopping { box.unacknowledged += 1 }
                return box.stopping
            }
            guard !stopping else { return }
            send(Item(topic: topics.status, payload: Array(status.utf8), progressName: nil, retain: true))
            handed += 1
        }
    }

    /// `{"state":"online","id":…}` and the daemon's playback, entry and player state (the
    /// `status` reply's fields that do not change while a playback runs on).
    private func statusFields() -> [(String, JSONValue)] {
        let kept: Set = ["playback", "entry_id", "item", "entry", "paused", "idle", "items", "live", "unhealthy"]
        var fields: [(String, JSONValue)] = [("state", .string("online")), ("id", .string(options.id))]
        for (key, value) in daemon.statusFields() {
            if key == "state" {
                fields.append(("player", value))
            } else if kept.contains(key) {
                fields.append((key, value))
            }
        }
        return fields
    }

    // MARK: Exit

    /// At the exit (after the `Exited` line): the lines still queued, then the retained
    /// offline status, then a clean disconnect (no last will), within 0.4 s.
    private func finish() {
        let pending = publishing.withLock { _ in
            outbox.withLock { box -> [Item]? in
                box.stopping = true
                guard box.connected else { return nil }
                defer { box.items = [] }
                return box.items
            }
        }
        stopWake.signal()
        guard let pending else { return }
        let offline = Item(
            topic: topics.status, payload: Array(Self.offlinePayload(options.id, reason: "stopped").utf8),
            progressName: nil, retain: true)
        outbox.withLock { $0.unacknowledged += pending.count + 1 }
        for item in pending + [offline] { send(item) }
        // Every acknowledgement read before the DISCONNECT: a socket closed with unread data
        // is reset, and the broker may then drop the DISCONNECT and publish the last will.
        let deadline = DispatchTime.now() + 0.25
        while outbox.withLock({ $0.unacknowledged > 0 }), DispatchTime.now() < deadline { usleep(2000) }
        // The network thread writes the DISCONNECT, closes, then reports it.
        if mosquitto_disconnect(handle) == MOSQ_ERR_SUCCESS.rawValue {
            _ = disconnected.wait(timeout: .now() + 0.15)
        }
    }

    private func note(_ name: String, _ fields: [(String, JSONValue)]) {
        logQueue.async { [log] in
            log.writeAlways(EventRecord(source: "daemon", name: name, fields: fields))
        }
    }
}
