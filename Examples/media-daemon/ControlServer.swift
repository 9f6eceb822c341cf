import Dispatch
import ExampleSupport
import Foundation
import Glibc
import MediaEvents

/// What a command answers: the fields of an `"ok":true` reply, or an error message.
enum CommandReply {
    case ok([(String, JSONValue)])
    case error(String)
}

/// The commands the daemon itself carries out (everything but subscriptions).
protocol ControlCommands: AnyObject, Sendable {
    /// Runs `command` with the request's other members (see `DaemonCommand`); on the control
    /// queue, never waiting for libvlc (control calls are queued on the player).
    func perform(_ command: String, _ request: [String: Any]) -> CommandReply
    /// The daemon's part of a `status` reply.
    func statusFields() -> [(String, JSONValue)]
    /// mpv's property `name` (see `MpvProperties.swift`); never waits.
    func mpvProperty(_ name: String) -> Result<JSONValue, MpvError>
    /// Sets mpv's property `name`; `nil` when done.
    func mpvSetProperty(_ name: String, _ value: Any) -> MpvError?
    /// Carries out mpv's input command `name`.
    func mpvCommand(_ name: String, _ args: [Any]) -> Result<JSONValue?, MpvError>
}

/// The `--control` socket: JSON Lines commands and replies, and the log's events pushed to
/// subscribed clients; on the same socket, mpv's JSON IPC (a request whose "command" is an
/// array): mpv's replies, events and property observers for the connections that use it.
///
/// A client that subscribes `since` a seq first gets the log lines it missed from a ring of the
/// last `catchUpLines` (or one line saying how many are gone). A client that has sent nothing
/// for `clientTimeout` seconds and takes no events is disconnected. Beyond `maximumClients`,
/// one more connection is accepted for the operator: it gets one reply, then is closed.
///
/// Everything about the sockets runs on one serial queue (`queue`); a thread of the server's
/// own (`ClientPoller`) waits for the clients' requests and reads and answers them on that
/// queue, sending the replies before it waits again. Events come from the
/// log's tap on whatever thread wrote the line (often libvlc's) and are only appended to the
/// clients' outboxes there: nothing waits for a client. Each outbox keeps state events and
/// replies lossless up to `maximumPending` lines and coalesces progress events (one pending
/// value per event name, moved behind what arrived before it); a client over the bound is
/// disconnected with a last line saying why.
final class ControlServer: Sendable {
    static let maximumLineBytes = 64 * 1024
    static let maximumClients = 64
    static let maximumPending = 1024
    /// The send buffer of a client's socket (the kernel doubles it for its bookkeeping).
    static let socketBufferBytes = 32 * 1024
    /// How long a client dropped for not reading has to take its last line.
    static let closingGrace = 5.0
    /// How long the operator's connection may stay without sending its request.
    static let operatorTimeout = 10.0
    /// At most this much of the pending lines goes out in one `send` (a line longer than it
    /// goes alone).
    static let flushBytes = 16 * 1024

    /// The daemon's own line names and the playlist's, accepted by `subscribe` besides
    /// libvlc's.
    static let daemonEventNames =
        [
            "Started", "PlaybackBegan", "PlaybackStalled", "PlaybackEnded", "EntryRejected", "PlaylistEnded",
            "Reloaded", "ReloadFailed", "Loaded", "Status", "Unhealthy", "Healthy", "Stopping", "Exited",
            "LogMessage",
        ] + PlaylistEvent.Kind.allCases.filter { $0 != .endReached }.map(\.name)

    private struct Outgoing {
        var bytes: [UInt8]
        /// The event name of a progress line, which a newer value replaces while pending.
        var progressName: String?
    }

    /// Closes a client's socket once nothing uses it: its dispatch sources are cancelled
    /// (their cancel handlers have run) and the server forgot it. Closing it earlier could
    /// let a new client's socket reuse the number under a source still registered.
    private final class SocketCloser: Sendable {
        private let fd: Int32
        private let users = Guarded(1)

        init(fd: Int32) { self.fd = fd }

        func retain() { users.withLock { $0 += 1 } }

        func release() {
            let last = users.withLock { users in
                users -= 1
                return users == 0
            }
            if last { close(fd) }
        }
    }

    private final class Client {
        let id: Int
        let fd: Int32
        let closer: SocketCloser
        var writeSource: (any DispatchSourceWrite)?
        var waitingForWritable = false
        var flushScheduled = false
        /// One of its requests is being answered on the poller's thread, which sends what is
        /// queued meanwhile once it is done: no flush is scheduled.
        var flushesInline = false
        var splitter = LineSplitter(maximumBytes: ControlServer.maximumLineBytes)
        /// Changed only through push, popFirst, remove(at:) and replaceOutbox.
        private(set) var outbox: [Outgoing] = []
        /// How many progress lines `outbox` holds: a client that keeps up (none pending) costs
        /// no scan per progress event.
        private var progressPending = 0
        /// Bytes of `outbox[0]` already sent: that line is no longer replaced or dropped.
        var sentOffset = 0
        var subscribed = false
        /// Names subscribed to; empty while subscribed means every event.
        var names: Set<String> = []
        var delivered = 0
        var coalesced = 0
        var dropped = 0
        /// Dropped for being over the bound: only its last line is left to send.
        var closing = false
        /// The client shut its side down: closed once its replies are sent.
        var readClosed = false
        /// It sent a request of mpv's form: it receives mpv's events.
        var speaksMpv = false
        /// mpv's events it turned off (`disable_event`).
        var disabledMpvEvents: Set<String> = []
        /// Its `observe_property` calls.
        var observers: [MpvObserver] = []
        /// When it last sent a line (or connected).
        var lastActivity = DispatchTime.now()
        /// Accepted beyond the client limit: one reply, then closed.
        let isOperator: Bool
        /// Lines replayed by a catch-up, allowed above the outbox bound until sent.
        var replayAllowance = 0
        /// Event lines that came while one of its requests ran, queued after its reply.
        var held: [Outgoing]?
        /// A catch-up replayed the held log lines already.
        var dropsHeldLogLines = false

        init(id: Int, fd: Int32, isOperator: Bool) {
            self.id = id
            self.fd = fd
            self.isOperator = isOperator
            closer = SocketCloser(fd: fd)
        }

        /// Takes events: subscribed to the log's lines, or speaking mpv's form (whose events
        /// every such connection receives). Such a client is never idle.
        var takesEvents: Bool { (subscribed || speaksMpv) && !closing }

        /// A watch on this client's socket, counted by its closer.
        func watch(_ poller: ClientPoller) {
            closer.retain()
            let closer = closer
            poller.watch(fd, id: id) { closer.release() }
        }

        /// A source on this client's socket, counted by its closer.
        func watch<Source: DispatchSourceProtocol>(_ source: Source) -> Source {
            closer.retain()
            let closer = closer
            source.setCancelHandler { closer.release() }
            return source
        }

        func push(_ item: Outgoing) {
            outbox.append(item)
            if item.progressName != nil { progressPending += 1 }
        }

        func popFirst() {
            if outbox.removeFirst().progressName != nil { progressPending -= 1 }
        }

        func remove(at index: Int) {
            if outbox.remove(at: index).progressName != nil { progressPending -= 1 }
        }

        func replaceOutbox(_ items: [Outgoing]) {
            outbox = items
            progressPending = items.filter { $0.progressName != nil }.count
        }

        /// The index of the pending line of progress event `name`, if any.
        func pendingProgress(_ name: String) -> Int? {
            guard progressPending > 0 else { return nil }
            return outbox.lastIndex { $0.progressName == name }
        }

        func wants(_ name: String) -> Bool {
            subscribed && !closing && (names.isEmpty || names.contains(name))
        }
    }

    /// One `observe_property` of a client.
    private struct MpvObserver {
        let id: Int64
        let name: String
        let asString: Bool
        /// The value last queued for it (`nil`: unavailable); none before the first.
        var last: JSONValue??
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var accepted = 0
        var refused = 0
        var disconnectedSlow = 0
        var disconnectedIdle = 0
        var operatorAccepted = 0
        var dropped = 0
        var coalesced = 0
        var stopped = false
        var ring: CatchUpRing
        /// How many clients observe a property (no value is read while none does).
        var observing = 0

        /// The clients counted against the limit: all but the operator's connection.
        var ordinaryClients: Int { clients.values.reduce(0) { $0 + ($1.isOperator ? 0 : 1) } }
    }

    let path: String
    let queue: DispatchQueue
    /// Seconds a client may send nothing while it takes no events.
    let clientTimeout: Double
    private let listenFD: Int32
    private let state: Guarded<State>
    private let idleTimer: Guarded<(any DispatchSourceTimer)?> = Guarded(nil)
    private let listenSource: Guarded<(any DispatchSourceRead)?> = Guarded(nil)
    private let poller: Guarded<ClientPoller?> = Guarded(nil)
    /// What `readFrom` reads into, on `queue` only: one buffer for the server's life (a new
    /// zeroed 64 KiB per request was a tenth of the time spent answering one).
    nonisolated(unsafe) private let readBuffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: 65536, alignment: 16)
    private let commands: Guarded<(any ControlCommands)?> = Guarded(nil)

    /// Creates the socket at `path` with mode 0600, replacing a stale socket there (one
    /// nobody listens on); refuses any other existing file, and a socket in use.
    init(path: String, queue: DispatchQueue, catchUpLines: Int = 1000, clientTimeout: Double = 300) throws {
        self.path = path
        self.queue = queue
        self.clientTimeout = clientTimeout
        state = Guarded(State(ring: CatchUpRing(capacity: catchUpLines, lastSeq: 0)))
        guard !path.isEmpty, path.utf8.count <= UnixSocket.maximumPathBytes, !path.hasPrefix("@") else {
            throw UnixSocket.Failure(
                "\(path): not a usable socket path (at most \(UnixSocket.maximumPathBytes) bytes)",
                code: ENAMETOOLONG)
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw UnixSocket.Failure("\(path) exists and is not a socket: not replaced", code: EEXIST)
            }
            do {
                close(try UnixSocket.connect(to: path, timeout: 1))
                throw UnixSocket.Failure("\(path): another process is listening on it", code: EADDRINUSE)
            } catch let failure as UnixSocket.Failure where failure.code == ECONNREFUSED {
                // Nobody listens: left behind by a daemon that was killed.
                unlink(path)
            } catch let failure as UnixSocket.Failure where failure.code == EAGAIN {
                throw UnixSocket.Failure(
                    "\(path): another process is listening on it (not accepting)", code: EADDRINUSE)
            }
        }
        let fd = try UnixSocket.stream(nonBlocking: true)
        // 0600 from the start: no moment where another user could connect.
        let oldMask = umask(0o177)
        var code: Int32 = 0
        let bound =
            UnixSocket.withAddress(path) { address, length in
                let result = bind(fd, address, length)
                code = errno
                return result == 0
            } ?? false
        umask(oldMask)
        guard bound, listen(fd, 64) == 0 else {
            if !bound { errno = code }
            let failure = UnixSocket.Failure("\(path): cannot listen")
            close(fd)
            throw failure
        }
        listenFD = fd
    }

    deinit { readBuffer.deallocate() }

    /// Starts accepting clients; `commands` answers their commands.
    func start(commands: any ControlCommands) {
        self.commands.withLock { $0 = commands }
        do {
            let poller = try ClientPoller(queue: queue) { [weak self] id in self?.readFrom(id) }
            self.poller.withLock { $0 = poller }
        } catch {
            printError("media-daemon: --control: \(error)")
            exit(1)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: listenFD, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptClients() }
        listenSource.withLock { $0 = source }
        source.resume()
        // The idle check: a few times per timeout, at most once a second.
        let interval = min(1, clientTimeout / 4)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(
            deadline: .now() + interval, repeating: .milliseconds(max(10, Int((interval * 1000).rounded()))))
        timer.setEventHandler { [weak self] in self?.disconnectIdleClients() }
        idleTimer.withLock { $0 = timer }
        timer.resume()
    }

    /// Runs `answer` once the thread reading the clients' requests has come round (see
    /// `ClientPoller.probe`); at once before `start`.
    func probeReader(_ answer: @escaping @Sendable () -> Void) {
        guard let poller = poller.withLock({ $0 }) else { return answer() }
        poller.probe(answer)
    }

    // MARK: Events

    /// Queues the log's `line` of `record` for every client subscribed to it. Called under
    /// the log's lock on the thread that wrote it: only appends and schedules.
    func publish(_ record: EventRecord, line: String) {
        let bytes = Array(line.utf8) + [UInt8(ascii: "\n")]
        let seq = Self.seq(of: bytes)
        state.withLock { state in
            if let seq {
                state.ring.add(
                    CatchUpRing.Line(seq: seq, name: record.name, isProgress: record.isProgress, bytes: bytes))
            }
            guard !state.stopped else { return }
            for client in Array(state.clients.values) where client.wants(record.name) {
                deliver(
                    Outgoing(bytes: bytes, progressName: record.isProgress ? record.name : nil),
                    to: client, state: &state)
            }
        }
    }

    /// The `seq` a log line starts with (`{"seq":12,…`).
    private static func seq(of bytes: [UInt8]) -> Int? {
        let prefix = Array(#"{"seq":"#.utf8)
        guard bytes.starts(with: prefix) else { return nil }
        let digits = bytes.dropFirst(prefix.count).prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    /// Queues mpv's event `name` for every connection that speaks mpv's form and did not turn
    /// it off; `seq` is the log line it comes from, if any. Only appends and schedules.
    func publishMpv(_ name: String, _ fields: [(String, JSONValue)], seq: Int?) {
        publishMpv([(name, fields, seq)])
    }

    /// Publishes `events` in order under one lock: they are queued together, so one flush
    /// sends them back to back (mpv's `end-file` and the next `start-file`).
    func publishMpv(_ events: [(name: String, fields: [(String, JSONValue)], seq: Int?)]) {
        let lines = events.map { event in
            let line = MpvEvents.line(event.name, event.fields + (event.seq.map { [("seq", .int(Int64($0)))] } ?? []))
            return (name: event.name, bytes: Array(line.utf8) + [UInt8(ascii: "\n")])
        }
        state.withLock { state in
            guard !state.stopped else { return }
            for client in Array(state.clients.values) where client.speaksMpv && !client.closing {
                for line in lines where !client.disabledMpvEvents.contains(line.name) {
                    deliver(Outgoing(bytes: line.bytes, progressName: nil), to: client, state: &state)
                }
            }
        }
    }

    /// The daemon's facts changed: each observed property whose value differs from the one
    /// last queued for its observer gets a `property-change`, coalesced while it waits (one
    /// pending value per observer, as progress events). Values are read under the lock (the
    /// daemon's reads take only locks of their own), so observers see changes in order.
    func propertiesChanged() {
        state.withLock { state in
            guard !state.stopped, state.observing > 0, let commands = commands.withLock({ $0 }) else { return }
            var values: [String: JSONValue?] = [:]
            for client in Array(state.clients.values) where !client.observers.isEmpty && !client.closing {
                for index in client.observers.indices {
                    let name = client.observers[index].name
                    if values[name] == nil {
                        values[name] = .some(try? commands.mpvProperty(name).get())
                    }
                    queueChange(client, observer: index, value: values[name]!, state: &state)
                }
            }
        }
    }

    /// Queues observer `index`'s `property-change` when `value` differs from its last.
    private func queueChange(_ client: Client, observer index: Int, value: JSONValue?, state: inout State) {
        let observer = client.observers[index]
        if let last = observer.last, last == value { return }
        client.observers[index].last = .some(value)
        let data = observer.asString ? value.map(MpvLine.string) : value
        let line = MpvLine.propertyChange(id: observer.id, name: observer.name, value: data)
        deliver(
            Outgoing(
                bytes: Array(line.utf8) + [UInt8(ascii: "\n")],
                progressName: "property-change \(observer.id) \(observer.name)"),
            to: client, state: &state)
    }

    /// Appends `item` to `client`'s outbox (replacing a pending value of the same progress
    /// event), or disconnects the client when it is over the bound.
    private func enqueue(_ item: Outgoing, to client: Client, state: inout State) {
        guard !client.closing else { return }
        // A line partly sent (the head, when sentOffset > 0) is never replaced.
        if let name = item.progressName, let index = client.pendingProgress(name),
            index > 0 || client.sentOffset == 0
        {
            client.remove(at: index)
            client.coalesced += 1
            state.coalesced += 1
        }
        client.push(item)
        if client.outbox.count > Self.maximumPending + client.replayAllowance {
            disconnectSlow(client, state: &state)
        }
        scheduleFlush(client)
    }

    /// Replaces the outbox by one last line saying why, and closes the connection once it is
    /// sent, or after `closingGrace` seconds.
    private func disconnectSlow(_ client: Client, state: inout State) {
        let kept = client.sentOffset > 0 ? [client.outbox[0]] : []
        let lost = client.outbox.count - kept.count
        client.dropped += lost
        state.dropped += lost
        state.disconnectedSlow += 1
        let reason = "more than \(Self.maximumPending) lines waiting: the client does not read fast enough"
        let last = JSON.line([
            ("event", .string("Disconnected")), ("reason", .string(reason)),
            ("dropped", .int(Int64(client.dropped))), ("coalesced", .int(Int64(client.coalesced))),
        ])
        client.replaceOutbox(kept + [Outgoing(bytes: Array(last.utf8) + [UInt8(ascii: "\n")], progressName: nil)])
        client.closing = true
        stopReading(client)
        let id = client.id
        queue.asyncAfter(deadline: .now() + Self.closingGrace) { [weak self] in
            self?.state.withLock { state in
                if let client = state.clients[id] { self?.remove(client, state: &state) }
            }
        }
    }

    private func scheduleFlush(_ client: Client) {
        guard !client.flushScheduled, !client.waitingForWritable, !client.flushesInline else { return }
        client.flushScheduled = true
        let id = client.id
        queue.async { [weak self] in
            self?.state.withLock { state in
                guard let client = state.clients[id] else { return }
                client.flushScheduled = false
                self?.flush(client, state: &state)
            }
        }
    }

    /// Sends what the socket takes now; waits for it to be writable for the rest. The lines
    /// pending go out together, up to `flushBytes` per `send`: lines queued together (an
    /// `end-file` and the next `start-file`) reach the client in one read, as mpv's do, where
    /// a `send` per line let the client wake between them.
    private func flush(_ client: Client, state: inout State) {
        var bytes: [UInt8] = []
        while let head = client.outbox.first {
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: head.bytes[client.sentOffset...])
            for item in client.outbox.dropFirst() {
                guard bytes.count + item.bytes.count <= Self.flushBytes else { break }
                bytes.append(contentsOf: item.bytes)
            }
            let sent = bytes.withUnsafeBytes { raw in
                send(client.fd, raw.baseAddress!, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    waitForWritable(client)
                    return
                }
                // EPIPE, ECONNRESET: the client went away, mid-line or not.
                remove(client, state: &state)
                return
            }
            var unaccounted = sent
            while unaccounted > 0, let line = client.outbox.first {
                let left = line.bytes.count - client.sentOffset
                guard unaccounted >= left else {
                    client.sentOffset += unaccounted
                    break
                }
                unaccounted -= left
                client.popFirst()
                client.sentOffset = 0
                client.delivered += 1
                if client.replayAllowance > 0 { client.replayAllowance -= 1 }
            }
        }
        if client.waitingForWritable {
            client.waitingForWritable = false
            client.writeSource?.suspend()
        }
        if client.closing || client.readClosed { remove(client, state: &state) }
    }

    /// Says why on the client's connection, then closes it once that line is sent (or after
    /// `closingGrace` seconds).
    private func disconnect(_ client: Client, reason: String, state: inout State) {
        guard !client.closing else { return }
        let last = JSON.line([("event", .string("Disconnected")), ("reason", .string(reason))])
        client.push(Outgoing(bytes: Array(last.utf8) + [UInt8(ascii: "\n")], progressName: nil))
        client.closing = true
        state.observing -= client.observers.isEmpty ? 0 : 1
        client.observers = []
        stopReading(client)
        scheduleFlush(client)
        let id = client.id
        queue.asyncAfter(deadline: .now() + Self.closingGrace) { [weak self] in
            self?.state.withLock { state in
                if let client = state.clients[id] { self?.remove(client, state: &state) }
            }
        }
    }

    /// Disconnects every client that has sent nothing for `clientTimeout` seconds and takes no
    /// events; the operator's connection after `operatorTimeout`.
    private func disconnectIdleClients() {
        state.withLock { state in
            // Read under the lock, after every `lastActivity` stored there.
            let now = DispatchTime.now().uptimeNanoseconds
            for client in Array(state.clients.values) where !client.closing {
                guard
                    let limit = Self.idleLimitPassed(
                        lastActivity: client.lastActivity.uptimeNanoseconds, now: now,
                        isOperator: client.isOperator, takesEvents: client.takesEvents, clientTimeout: clientTimeout)
                else { continue }
                state.disconnectedIdle += 1
                disconnect(
                    client,
                    reason: "idle: no request for \(TextFormat.seconds(limit)) s (--client-timeout)",
                    state: &state)
            }
        }
    }

    /// The limit, in seconds, that a client last active at `lastActivity` (uptime
    /// nanoseconds) has passed at `now`, if it has: `clientTimeout`, or for the operator's
    /// connection at most `operatorTimeout`; never for a client that takes events (it may
    /// wait for them without end). A `now` before `lastActivity` (read by another thread
    /// first) counts as no time idle.
    static func idleLimitPassed(
        lastActivity: UInt64, now: UInt64, isOperator: Bool, takesEvents: Bool, clientTimeout: Double
    ) -> Double? {
        guard !takesEvents else { return nil }
        let idle = Double(now >= lastActivity ? now - lastActivity : 0) / 1e9
        let limit = isOperator ? min(clientTimeout, operatorTimeout) : clientTimeout
        return idle >= limit ? limit : nil
    }

    private func waitForWritable(_ client: Client) {
        guard !client.waitingForWritable else { return }
        client.waitingForWritable = true
        if let source = client.writeSource {
            source.resume()
            return
        }
        let id = client.id
        let source = client.watch(DispatchSource.makeWriteSource(fileDescriptor: client.fd, queue: queue))
        source.setEventHandler { [weak self] in
            self?.state.withLock { state in
                guard let client = state.clients[id] else { return }
                self?.flush(client, state: &state)
            }
        }
        client.writeSource = source
        source.resume()
    }

    /// Forgets `client` and closes its socket (once both its sources are cancelled).
    private func remove(_ client: Client, state: inout State) {
        guard state.clients.removeValue(forKey: client.id) != nil else { return }
        if !client.observers.isEmpty {
            state.observing -= 1
            client.observers = []
        }
        if !client.outbox.isEmpty {
            let lost = client.outbox.count - (client.closing ? 1 : 0)
            client.dropped += lost
            state.dropped += lost
        }
        client.replaceOutbox([])
        stopReading(client)
        if let writer = client.writeSource {
            // A suspended source cannot be cancelled to completion: resumed first.
            if !client.waitingForWritable { writer.resume() }
            writer.cancel()
        }
        client.closer.release()
    }

    // MARK: Clients

    private func acceptClients() {
        while true {
            // accept4 is not visible from Swift's Glibc: the flags are set after accept.
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                // EAGAIN: all accepted; EMFILE and the like: try again on the next event.
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // The kernel's share of a client's backlog, bounded like the outbox.
            var bufferBytes = Int32(Self.socketBufferBytes)
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
            if state.withLock({ $0.ordinaryClients >= Self.maximumClients }) {
                reapHungUpClients()
            }
            let accepted = state.withLock { state -> Client? in
                guard !state.stopped else { return nil }
                let clients = state.ordinaryClients
                let operatorBusy = state.clients.values.contains { $0.isOperator }
                // Beyond the limit, one connection for the operator (`ctl status` always gets in).
                guard clients < Self.maximumClients || !operatorBusy else {
                    state.refused += 1
                    return nil
                }
                let isOperator = clients >= Self.maximumClients
                if isOperator { state.operatorAccepted += 1 } else { state.accepted += 1 }
                let client = Client(id: state.nextID, fd: fd, isOperator: isOperator)
                state.nextID += 1
                state.clients[client.id] = client
                return client
            }
            guard let client = accepted else {
                let line =
                    JSON.line([
                        ("event", .string("Disconnected")),
                        (
                            "reason",
                            .string(
                                "too many clients (at most \(Self.maximumClients)); the operator's connection is in use too"
                            )
                        ),
                    ]) + "\n"
                _ = Array(line.utf8).withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                close(fd)
                continue
            }
            if let poller = poller.withLock({ $0 }) { client.watch(poller) }
        }
    }

    /// Carries out what clients that have hung up sent last, and forgets them, before a newcomer
    /// is counted at the limit: a place freed before the newcomer connected is free for it,
    /// whether or not the poller has seen the hang-up yet.
    private func reapHungUpClients() {
        let open = state.withLock { state in
            state.clients.values.filter { !$0.closing && !$0.readClosed }.map { (id: $0.id, fd: $0.fd) }
        }
        var fds = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        guard poll(&fds, nfds_t(fds.count), 0) > 0 else { return }
        for (index, client) in open.enumerated() where fds[index].revents & Int16(POLLHUP) != 0 {
            // A socket whose peer is gone reads its last bytes, then its end: a few turns at most.
            for _ in 0..<16 {
                guard state.withLock({ $0.clients[client.id].map { !$0.readClosed && !$0.closing } ?? false })
                else { break }
                readFrom(client.id)
            }
        }
    }

    /// Reads no more from `client`'s socket.
    private func stopReading(_ client: Client) {
        poller.withLock { $0 }?.unwatch(client.fd)
    }

    /// Reads what the client sent, at most 64 KiB per turn (other clients get theirs), and
    /// answers its complete lines in order.
    private func readFrom(_ id: Int) {
        let buffer = readBuffer
        let pieces = state.withLock { state -> [LineSplitter.Piece]? in
            guard let client = state.clients[id], !client.closing, !client.readClosed else { return nil }
            let count = recv(client.fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return [] }
                remove(client, state: &state)
                return nil
            }
            if count == 0 {
                // The client closed (or shut down) its side: its replies are still sent.
                client.readClosed = true
                stopReading(client)
                if client.outbox.isEmpty { remove(client, state: &state) }
                return nil
            }
            let pieces = client.splitter.add(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if !pieces.isEmpty { client.flushesInline = true }
            return pieces
        }
        // The replies go out from this thread once every line is answered.
        defer {
            state.withLock { state in
                guard let client = state.clients[id], client.flushesInline else { return }
                client.flushesInline = false
                if !client.waitingForWritable { flush(client, state: &state) }
            }
        }
        // Answered outside the lock: a command may write to the log, whose tap takes it.
        for piece in pieces ?? [] {
            let answer: Answer
            switch piece {
            case .line(let bytes):
                if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") })
                {
                    continue
                }
                // mpv skips comment lines.
                if bytes.first(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) == UInt8(ascii: "#") {
                    continue
                }
                // The events that come while a request runs wait behind its reply (as in mpv).
                state.withLock { $0.clients[id]?.held = $0.clients[id]?.held ?? [] }
                answer = self.answer(bytes, client: id)
            case .tooLong:
                answer = .reply(
                    JSON.line([
                        ("request_id", .null), ("ok", .bool(false)),
                        ("error", .string("line longer than \(Self.maximumLineBytes) bytes: skipped to its end")),
                    ]))
            }
            state.withLock { state in
                guard let client = state.clients[id] else { return }
                client.lastActivity = .now()
                let held = client.held ?? []
                client.held = nil
                switch answer {
                case .reply(let line):
                    enqueue(
                        Outgoing(bytes: Array(line.utf8) + [UInt8(ascii: "\n")], progressName: nil), to: client,
                        state: &state)
                case .withClient(let body):
                    body(client, &state)
                }
                for item in held where !(client.dropsHeldLogLines && Self.seq(of: item.bytes) != nil) {
                    enqueue(item, to: client, state: &state)
                }
                client.dropsHeldLogLines = false
                if client.isOperator && !client.closing {
                    // The operator's connection: one reply, then closed (the slot is free again).
                    client.closing = true
                    stopReading(client)
                    scheduleFlush(client)
                }
            }
        }
    }

    /// Queues an event line for `client`, or holds it while one of its requests runs.
    private func deliver(_ item: Outgoing, to client: Client, state: inout State) {
        if client.held != nil {
            client.held!.append(item)
        } else {
            enqueue(item, to: client, state: &state)
        }
    }

    // MARK: Commands

    /// What a request line gets.
    private enum Answer {
        /// This reply line.
        case reply(String)
        /// A reply made under the lock with the client's state (subscriptions, observers),
        /// queued by the closure with what follows it.
        case withClient((Client, inout State) -> Void)
    }

    /// The answer to one request line: mpv's form when "command" is an array, else the
    /// daemon's.
    private func answer(_ bytes: [UInt8], client id: Int) -> Answer {
        let request: [String: Any]
        switch Self.request(bytes) {
        case .success(let parsed): request = parsed
        case .failure(let error): return .reply(error.line)
        }
        let requestID = Self.jsonValue(request["request_id"])
        if let array = request["command"] as? [Any] {
            return answerMpv(array, requestID: request["request_id"] == nil ? .int(0) : requestID, client: id)
        }
        guard let command = request["command"] as? String else {
            return .reply(Self.nativeReply(requestID, .error("no \"command\" (a string, or mpv's array)")))
        }
        switch command {
        case "subscribe", "unsubscribe":
            return .withClient { [self] client, state in
                let reply = subscription(command, request, client: client, state: &state)
                enqueue(
                    Outgoing(bytes: Array((Self.nativeReply(requestID, reply.reply) + "\n").utf8), progressName: nil),
                    to: client, state: &state)
                for line in reply.follow { enqueue(line, to: client, state: &state) }
            }
        case "status":
            guard let commands = commands.withLock({ $0 }) else {
                return .reply(Self.nativeReply(requestID, .error("not ready")))
            }
            let fields = commands.statusFields()
            return .withClient { [self] client, state in
                let reply = CommandReply.ok(fields + [("control", .object(controlStatus(client, state: state)))])
                enqueue(
                    Outgoing(bytes: Array((Self.nativeReply(requestID, reply) + "\n").utf8), progressName: nil),
                    to: client, state: &state)
            }
        default:
            guard let commands = commands.withLock({ $0 }) else {
                return .reply(Self.nativeReply(requestID, .error("not ready")))
            }
            return .reply(Self.nativeReply(requestID, commands.perform(command, request)))
        }
    }

    /// A request line that is not a request: its error reply.
    struct RequestError: Error {
        let line: String
    }

    /// The JSON object of a request line, or the error reply to a line that is not one.
    static func request(_ bytes: [UInt8]) -> Result<[String: Any], RequestError> {
        // Fragments allowed: a lone string or number is valid JSON, only not a request.
        let parsed = try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
        guard let request = parsed as? [String: Any] else {
            let what = parsed == nil ? "malformed JSON" : "a request is a JSON object"
            return .failure(
                RequestError(line: JSON.line([("request_id", .null), ("ok", .bool(false)), ("error", .string(what))])))
        }
        return .success(request)
    }

    /// The reply to one request line from a peer without a connection of its own (the MQTT
    /// front end): the same commands in the same two forms, except what needs a connection
    /// (subscriptions, mpv's observers and event switches), answered with an error saying so.
    /// `status` has no "control" member. Runs where `commands` runs: the control queue.
    static func answerWithoutConnection(
        _ bytes: [UInt8], commands: any ControlCommands, clientName: String, unsupported: String
    ) -> String {
        let request: [String: Any]
        switch Self.request(bytes) {
        case .success(let parsed): request = parsed
        case .failure(let error): return error.line
        }
        let requestID = Self.jsonValue(request["request_id"])
        if let array = request["command"] as? [Any] {
            let mpvID = request["request_id"] == nil ? .int(0) : requestID
            let result: Result<JSONValue?, MpvError>
            switch MpvRequest.parse(array) {
            case .failure(let error): result = .failure(error)
            case .success(let parsed):
                result = mpvResult(parsed, commands: commands, clientName: clientName) ?? .failure(.command)
            }
            return MpvLine.reply(requestID: mpvID, result: result)
        }
        guard let command = request["command"] as? String else {
            return nativeReply(requestID, .error("no \"command\" (a string, or mpv's array)"))
        }
        switch command {
        case "subscribe", "unsubscribe": return nativeReply(requestID, .error(unsupported))
        case "status": return nativeReply(requestID, .ok(commands.statusFields()))
        default: return nativeReply(requestID, commands.perform(command, request))
        }
    }

    /// The result of mpv's `request`, or `nil` for one that needs a connection's state
    /// (observers, event switches).
    private static func mpvResult(_ request: MpvRequest, commands: any ControlCommands, clientName: String)
        -> Result<JSONValue?, MpvError>?
    {
        switch request {
        case .getProperty(let name, let asString):
            commands.mpvProperty(name).map { asString ? MpvLine.string($0) : $0 }
        case .setProperty(let name, let value):
            commands.mpvSetProperty(name, value).map { .failure($0) } ?? .success(nil)
        case .command(let name, let args): commands.mpvCommand(name, args)
        case .getVersion: .success(.int(MpvRequest.clientAPIVersion))
        case .clientName: .success(.string(clientName))
        case .getTimeMicroseconds: .success(.int(Int64(DispatchTime.now().uptimeNanoseconds / 1000)))
        case .enableEvent, .observe, .unobserve: nil
        }
    }

    private static func nativeReply(_ requestID: JSONValue, _ reply: CommandReply) -> String {
        switch reply {
        case .ok(let fields): JSON.line([("request_id", requestID), ("ok", .bool(true))] + fields)
        case .error(let message):
            JSON.line([("request_id", requestID), ("ok", .bool(false)), ("error", .string(message))])
        }
    }

    /// A request of mpv's form: the connection speaks it from now on (it receives mpv's events).
    private func answerMpv(_ array: [Any], requestID: JSONValue, client id: Int) -> Answer {
        state.withLock { $0.clients[id]?.speaksMpv = true }
        func reply(_ result: Result<JSONValue?, MpvError>) -> Answer {
            .reply(MpvLine.reply(requestID: requestID, result: result))
        }
        guard let commands = commands.withLock({ $0 }) else { return reply(.failure(.command)) }
        let request: MpvRequest
        switch MpvRequest.parse(array) {
        case .success(let parsed): request = parsed
        case .failure(let error): return reply(.failure(error))
        }
        if let result = Self.mpvResult(request, commands: commands, clientName: "ipc-\(id)") { return reply(result) }
        switch request {
        case .getProperty, .setProperty, .command, .getVersion, .clientName, .getTimeMicroseconds:
            return reply(.failure(.command))
        case .enableEvent(let name, let enable):
            return .withClient { [self] client, state in
                let names = name == "all" ? MpvEvents.names : [name]
                if enable {
                    client.disabledMpvEvents.subtract(names)
                } else {
                    client.disabledMpvEvents.formUnion(names)
                }
                enqueue(
                    Self.outgoing(MpvLine.reply(requestID: requestID, result: .success(nil))), to: client, state: &state
                )
            }
        case .observe(let observerID, let name, let asString):
            return .withClient { [self] client, state in
                guard !client.isOperator else {
                    enqueue(
                        Self.outgoing(MpvLine.reply(requestID: requestID, result: .failure(.command))), to: client,
                        state: &state)
                    return
                }
                if client.observers.isEmpty { state.observing += 1 }
                client.observers.append(MpvObserver(id: observerID, name: name, asString: asString, last: nil))
                enqueue(
                    Self.outgoing(MpvLine.reply(requestID: requestID, result: .success(nil))), to: client, state: &state
                )
                // The current value at once, after the reply (mpv sends it the same way).
                let value = try? commands.mpvProperty(name).get()
                queueChange(client, observer: client.observers.count - 1, value: value, state: &state)
            }
        case .unobserve(let observerID):
            return .withClient { [self] client, state in
                let had = !client.observers.isEmpty
                client.observers.removeAll { $0.id == observerID }
                if had && client.observers.isEmpty { state.observing -= 1 }
                enqueue(
                    Self.outgoing(MpvLine.reply(requestID: requestID, result: .success(nil))), to: client, state: &state
                )
            }
        }
    }

    private static func outgoing(_ line: String) -> Outgoing {
        Outgoing(bytes: Array((line + "\n").utf8), progressName: nil)
    }

    /// `subscribe` (with `since`: the lines missed first) and `unsubscribe`, under the lock.
    private func subscription(_ command: String, _ request: [String: Any], client: Client, state: inout State) -> (
        reply: CommandReply, follow: [Outgoing]
    ) {
        var names: Set<String> = []
        if let given = request["events"] {
            guard let list = given as? [Any], list.allSatisfy({ $0 is String }) else {
                return (.error("\"events\" must be a list of event names"), [])
            }
            for case let token as String in list {
                let resolved = Self.resolve(token)
                guard !resolved.isEmpty else { return (.error("unknown event '\(token)'"), []) }
                names.formUnion(resolved)
            }
            guard !names.isEmpty else { return (.error("\"events\" needs at least one event name"), []) }
        }
        var since: Int?
        if let given = request["since"] {
            guard command == "subscribe" else { return (.error("\"since\" is an argument of subscribe only"), []) }
            guard let value = DaemonCommand.wholeNumber(given), value >= 0 else {
                return (
                    .error("\"since\" must be a whole number, the seq of the last line read (0: from the start)"), []
                )
            }
            guard value <= state.ring.lastSeq else {
                return (
                    .error(
                        "\"since\" \(value) is past the last line (seq \(state.ring.lastSeq)): the numbering started again (a restart without --log); subscribe since 0"
                    ), []
                )
            }
            since = Int(value)
        }
        if client.isOperator && command == "subscribe" {
            return (
                .error(
                    "this is the operator's connection (all \(Self.maximumClients) client connections are in use): one request, no subscription"
                ), []
            )
        }
        if command == "subscribe" {
            // Adding names to a subscription to everything keeps everything.
            if !client.subscribed || !client.names.isEmpty { client.names.formUnion(names) }
            if names.isEmpty { client.names = [] }
            client.subscribed = true
        } else if names.isEmpty {
            client.subscribed = false
            client.names = []
        } else if client.subscribed {
            if client.names.isEmpty {
                client.names = Set(Self.allEventNames).subtracting(names)
            } else {
                client.names.subtract(names)
            }
            if client.names.isEmpty { client.subscribed = false }
        }
        let current: JSONValue =
            client.subscribed
            ? (client.names.isEmpty ? .string("all") : .array(client.names.sorted().map { .string($0) }))
            : .array([])
        var fields: [(String, JSONValue)] = [("events", current), ("seq", .int(Int64(state.ring.lastSeq)))]
        var follow: [Outgoing] = []
        if let since {
            let missed = state.ring.lines(after: since)
            let lines = missed.lines.filter { client.wants($0.name) }
            if missed.lost > 0 {
                let line = JSON.line([
                    ("event", .string("LinesLost")), ("after_seq", .int(Int64(since))),
                    ("lost", .int(Int64(missed.lost))),
                    ("first_kept_seq", missed.lines.first.map { .int(Int64($0.seq)) } ?? .null),
                    ("reason", .string("the catch-up ring keeps the last \(state.ring.capacity) lines (--catch-up)")),
                ])
                follow.append(Self.outgoing(line))
            }
            follow += lines.map { Outgoing(bytes: $0.bytes, progressName: $0.isProgress ? $0.name : nil) }
            client.replayAllowance += follow.count
            // The live lines held while this ran are among those replayed.
            client.dropsHeldLogLines = true
            fields += [("replayed", .int(Int64(lines.count))), ("lost", .int(Int64(missed.lost)))]
        }
        return (.ok(fields), follow)
    }

    /// The socket's counters for `status`, and the asking client's.
    private func controlStatus(_ client: Client, state: State) -> [(String, JSONValue)] {
        [
            ("clients", .int(Int64(state.ordinaryClients))),
            ("subscribers", .int(Int64(state.clients.values.filter { $0.subscribed && !$0.closing }.count))),
            ("mpv_clients", .int(Int64(state.clients.values.filter { $0.speaksMpv && !$0.closing }.count))),
            ("clients_accepted", .int(Int64(state.accepted))),
            ("clients_refused", .int(Int64(state.refused))),
            ("clients_disconnected_slow", .int(Int64(state.disconnectedSlow))),
            ("clients_disconnected_idle", .int(Int64(state.disconnectedIdle))),
            ("operator_connections", .int(Int64(state.operatorAccepted))),
            ("events_dropped", .int(Int64(state.dropped))),
            ("events_coalesced", .int(Int64(state.coalesced))),
            ("catch_up_lines", .int(Int64(state.ring.capacity))),
            ("last_seq", .int(Int64(state.ring.lastSeq))),
            (
                "client",
                .object([
                    ("id", .int(Int64(client.id))), ("operator", .bool(client.isOperator)),
                    ("delivered", .int(Int64(client.delivered))), ("pending", .int(Int64(client.outbox.count))),
                    ("coalesced", .int(Int64(client.coalesced))), ("dropped", .int(Int64(client.dropped))),
                ])
            ),
        ]
    }

    static var allEventNames: [String] { EventCatalog.allNames + daemonEventNames }

    /// libvlc names as `--only` takes them, and the daemon's own line names.
    static func resolve(_ token: String) -> [String] {
        let daemon = daemonEventNames.filter { $0.lowercased() == token.lowercased() }
        return daemon.isEmpty ? EventCatalog.resolve(token) : daemon
    }

    /// A request member echoed back (`request_id`): strings and numbers; anything else null.
    static func jsonValue(_ value: Any?) -> JSONValue {
        switch value {
        case let text as String: return .string(text)
        case let number as NSNumber:
            // JSONSerialization gives true and false as NSNumbers of type "c".
            if String(cString: number.objCType) == "c" { return .bool(number.boolValue) }
            let type = String(cString: number.objCType)
            if type != "d" && type != "f", let whole = Int64(exactly: number.doubleValue) { return .int(whole) }
            return .double(number.doubleValue)
        default: return .null
        }
    }

    // MARK: Exit

    /// At exit: one last try to send what is pending (without waiting), then the socket file
    /// is removed. Clients see the connection close.
    func finish() {
        idleTimer.withLock { $0?.cancel() }
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            let shutdown = Self.outgoing(MpvEvents.line("shutdown"))
            for client in Array(state.clients.values) {
                if client.speaksMpv && !client.closing && !client.disabledMpvEvents.contains("shutdown") {
                    client.push(shutdown)
                }
                flush(client, state: &state)
            }
        }
        unlink(path)
    }
}
