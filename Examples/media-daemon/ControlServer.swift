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
}

/// The `--control` socket: JSON Lines commands and replies, and the log's events pushed to
/// subscribed clients.
///
/// Everything about the sockets runs on one serial queue (`queue`). Events come from the
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
        var readSource: (any DispatchSourceRead)?
        var writeSource: (any DispatchSourceWrite)?
        var waitingForWritable = false
        var flushScheduled = false
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

        init(id: Int, fd: Int32) {
            self.id = id
            self.fd = fd
            closer = SocketCloser(fd: fd)
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

    private struct State {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var accepted = 0
        var refused = 0
        var disconnectedSlow = 0
        var dropped = 0
        var coalesced = 0
        var stopped = false
    }

    let path: String
    let queue: DispatchQueue
    private let listenFD: Int32
    private let state = Guarded(State())
    private let listenSource: Guarded<(any DispatchSourceRead)?> = Guarded(nil)
    private let commands: Guarded<(any ControlCommands)?> = Guarded(nil)

    /// Creates the socket at `path` with mode 0600, replacing a stale socket there (one
    /// nobody listens on); refuses any other existing file, and a socket in use.
    init(path: String, queue: DispatchQueue) throws {
        self.path = path
        self.queue = queue
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

    /// Starts accepting clients; `commands` answers their commands.
    func start(commands: any ControlCommands) {
        self.commands.withLock { $0 = commands }
        let source = DispatchSource.makeReadSource(fileDescriptor: listenFD, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptClients() }
        listenSource.withLock { $0 = source }
        source.resume()
    }

    // MARK: Events

    /// Queues the log's `line` of `record` for every client subscribed to it. Called under
    /// the log's lock on the thread that wrote it: only appends and schedules.
    func publish(_ record: EventRecord, line: String) {
        state.withLock { state in
            guard !state.stopped else { return }
            var bytes: [UInt8]?
            for client in Array(state.clients.values) where client.wants(record.name) {
                if bytes == nil { bytes = Array(line.utf8) + [UInt8(ascii: "\n")] }
                enqueue(
                    Outgoing(bytes: bytes!, progressName: record.isProgress ? record.name : nil),
                    to: client, state: &state)
            }
        }
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
        if client.outbox.count > Self.maximumPending {
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
        client.readSource?.cancel()
        client.readSource = nil
        let id = client.id
        queue.asyncAfter(deadline: .now() + Self.closingGrace) { [weak self] in
            self?.state.withLock { state in
                if let client = state.clients[id] { self?.remove(client, state: &state) }
            }
        }
    }

    private func scheduleFlush(_ client: Client) {
        guard !client.flushScheduled, !client.waitingForWritable else { return }
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

    /// Sends what the socket takes now; waits for it to be writable for the rest.
    private func flush(_ client: Client, state: inout State) {
        while let head = client.outbox.first {
            let sent = head.bytes.withUnsafeBytes { raw in
                send(
                    client.fd, raw.baseAddress! + client.sentOffset, raw.count - client.sentOffset,
                    Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
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
            client.sentOffset += sent
            if client.sentOffset == head.bytes.count {
                client.popFirst()
                client.sentOffset = 0
                client.delivered += 1
            }
        }
        if client.waitingForWritable {
            client.waitingForWritable = false
            client.writeSource?.suspend()
        }
        if client.closing || client.readClosed { remove(client, state: &state) }
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
        if !client.outbox.isEmpty {
            let lost = client.outbox.count - (client.closing ? 1 : 0)
            client.dropped += lost
            state.dropped += lost
        }
        client.replaceOutbox([])
        client.readSource?.cancel()
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
            let accepted = state.withLock { state -> Client? in
                guard !state.stopped, state.clients.count < Self.maximumClients else {
                    state.refused += 1
                    return nil
                }
                state.accepted += 1
                let client = Client(id: state.nextID, fd: fd)
                state.nextID += 1
                state.clients[client.id] = client
                return client
            }
            guard let client = accepted else {
                let line =
                    JSON.line([
                        ("event", .string("Disconnected")),
                        ("reason", .string("too many clients (at most \(Self.maximumClients))")),
                    ]) + "\n"
                _ = Array(line.utf8).withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                close(fd)
                continue
            }
            let id = client.id
            let source = client.watch(DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue))
            source.setEventHandler { [weak self] in self?.readFrom(id) }
            state.withLock { _ in client.readSource = source }
            source.resume()
        }
    }

    /// Reads what the client sent, at most 64 KiB per turn (other clients get theirs), and
    /// answers its complete lines in order.
    private func readFrom(_ id: Int) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let pieces = state.withLock { state -> [LineSplitter.Piece]? in
            guard let client = state.clients[id], !client.closing, !client.readClosed else { return nil }
            let count = recv(client.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return [] }
                remove(client, state: &state)
                return nil
            }
            if count == 0 {
                // The client closed (or shut down) its side: its replies are still sent.
                client.readClosed = true
                client.readSource?.cancel()
                client.readSource = nil
                if client.outbox.isEmpty { remove(client, state: &state) }
                return nil
            }
            return buffer.withUnsafeBytes { client.splitter.add(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        // Answered outside the lock: a command may write to the log, whose tap takes it.
        for piece in pieces ?? [] {
            let reply: [(String, JSONValue)]
            switch piece {
            case .line(let bytes):
                if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") })
                {
                    continue
                }
                reply = answer(bytes, client: id)
            case .tooLong:
                reply = [
                    ("request_id", .null), ("ok", .bool(false)),
                    ("error", .string("line longer than \(Self.maximumLineBytes) bytes: skipped to its end")),
                ]
            }
            let line = JSON.line(reply)
            state.withLock { state in
                guard let client = state.clients[id] else { return }
                enqueue(
                    Outgoing(bytes: Array(line.utf8) + [UInt8(ascii: "\n")], progressName: nil), to: client,
                    state: &state)
            }
        }
    }

    // MARK: Commands

    /// The reply to one request line.
    private func answer(_ bytes: [UInt8], client id: Int) -> [(String, JSONValue)] {
        // Fragments allowed: a lone string or number is valid JSON, only not a request.
        let parsed = try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
        guard let request = parsed as? [String: Any] else {
            let what = parsed == nil ? "malformed JSON" : "a request is a JSON object"
            return [("request_id", .null), ("ok", .bool(false)), ("error", .string(what))]
        }
        let requestID = Self.jsonValue(request["request_id"])
        let reply: CommandReply
        if let command = request["command"] as? String {
            reply = perform(command, request, client: id)
        } else {
            reply = .error("no \"command\" (a string)")
        }
        switch reply {
        case .ok(let fields): return [("request_id", requestID), ("ok", .bool(true))] + fields
        case .error(let message): return [("request_id", requestID), ("ok", .bool(false)), ("error", .string(message))]
        }
    }

    private func perform(_ command: String, _ request: [String: Any], client id: Int) -> CommandReply {
        switch command {
        case "subscribe", "unsubscribe":
            var names: Set<String> = []
            if let given = request["events"] {
                guard let list = given as? [Any], list.allSatisfy({ $0 is String }) else {
                    return .error("\"events\" must be a list of event names")
                }
                for case let token as String in list {
                    let resolved = Self.resolve(token)
                    guard !resolved.isEmpty else { return .error("unknown event '\(token)'") }
                    names.formUnion(resolved)
                }
                guard !names.isEmpty else { return .error("\"events\" needs at least one event name") }
            }
            return state.withLock { state in
                guard let client = state.clients[id] else { return .error("disconnected") }
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
                return .ok([("events", current)])
            }
        case "status":
            guard let commands = commands.withLock({ $0 }) else { return .error("not ready") }
            let fields = commands.statusFields()
            let control: [(String, JSONValue)] = state.withLock { state in
                let client = state.clients[id]
                return [
                    ("clients", .int(Int64(state.clients.count))),
                    ("subscribers", .int(Int64(state.clients.values.filter { $0.subscribed && !$0.closing }.count))),
                    ("clients_accepted", .int(Int64(state.accepted))),
                    ("clients_refused", .int(Int64(state.refused))),
                    ("clients_disconnected_slow", .int(Int64(state.disconnectedSlow))),
                    ("events_dropped", .int(Int64(state.dropped))),
                    ("events_coalesced", .int(Int64(state.coalesced))),
                    (
                        "client",
                        .object([
                            ("id", .int(Int64(id))), ("delivered", .int(Int64(client?.delivered ?? 0))),
                            ("pending", .int(Int64(client?.outbox.count ?? 0))),
                            ("coalesced", .int(Int64(client?.coalesced ?? 0))),
                            ("dropped", .int(Int64(client?.dropped ?? 0))),
                        ])
                    ),
                ]
            }
            return .ok(fields + [("control", .object(control))])
        default:
            guard let commands = commands.withLock({ $0 }) else { return .error("not ready") }
            return commands.perform(command, request)
        }
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
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            for client in Array(state.clients.values) { flush(client, state: &state) }
        }
        unlink(path)
    }
}
