import CSDBus
import Glibc

// The one layer between media-daemon and sd-bus (systemd's D-Bus library): every sd-bus call
// the daemon makes is in this file, so the rest speaks Swift and every C call can be read in one
// place. sd-bus is not thread-safe: a connection and its messages are used on one thread only
// (the MPRIS service's D-Bus thread), and nothing here is Sendable.

/// A failed sd-bus call: the C function and the errno it returned (negated, as sd-bus does).
struct DBusFailure: Error, CustomStringConvertible {
    let call: String
    let errno: Int32

    var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// Which message bus to connect to.
enum DBusBusKind: String, Sendable {
    /// The user's session bus: `$DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`
    /// (`sd_bus_open_user`).
    case session
    /// The system bus: `$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`
    /// (`sd_bus_open_system`).
    case system
}

/// A value of a D-Bus message, for the variants of a dictionary (MPRIS's `Metadata`).
enum DBusValue: Equatable, Sendable {
    case string(String)
    case objectPath(String)
    case int32(Int32)
    case int64(Int64)
    case double(Double)
    case bool(Bool)
    case strings([String])

    /// The D-Bus signature.
    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .int32: "i"
        case .int64: "x"
        case .double: "d"
        case .bool: "b"
        case .strings: "as"
        }
    }
}

/// One connection to a bus (`sd_bus`), open from `init` until `close()` or deinit.
final class DBusConnection {
    private var bus: OpaquePointer?

    /// Connects to `kind` (`sd_bus_open_user` or `sd_bus_open_system`): the socket is connected,
    /// the authentication and `Hello` complete with the first call that waits (`requestName`).
    init(_ kind: DBusBusKind, description: String) throws {
        var bus: OpaquePointer?
        let result = kind == .session ? sd_bus_open_user(&bus) : sd_bus_open_system(&bus)
        guard result >= 0, let bus else {
            throw DBusFailure(call: kind == .session ? "sd_bus_open_user" : "sd_bus_open_system", errno: -result)
        }
        _ = sd_bus_set_description(bus, description)
        self.bus = bus
    }

    deinit { close() }

    /// Closes the connection (`sd_bus_close_unref`: what is not sent yet is dropped; never
    /// waits). The bus then releases the names it owned.
    func close() {
        if let bus { _ = sd_bus_close_unref(bus) }
        bus = nil
    }

    private func checked(_ call: String, _ result: Int32) throws {
        if result < 0 { throw DBusFailure(call: call, errno: -result) }
    }

    private var open: OpaquePointer {
        get throws {
            guard let bus else { throw DBusFailure(call: "sd_bus", errno: ENOTCONN) }
            return bus
        }
    }

    /// The connection's unique name (`:1.42`), once `Hello` was answered.
    var uniqueName: String? {
        guard let bus else { return nil }
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Takes `name` without queueing for it and without replacing its owner
    /// (`sd_bus_request_name`, flags 0); waits for the bus's answer (the first request also
    /// waits for the authentication and `Hello`). Throws `EEXIST` when another connection owns
    /// it, `EACCES` when the bus's policy refuses it.
    func requestName(_ name: String) throws {
        let bus = try open
        try checked("sd_bus_request_name(\(name))", sd_bus_request_name(bus, name, 0))
    }

    /// Serves `interface` at `path` with the members of `vtable`, each called with `userData`
    /// (`sd_bus_add_object_vtable`; the slot belongs to the connection).
    func addObject(
        path: String, interface: String, vtable: UnsafePointer<sd_bus_vtable>, userData: UnsafeMutableRawPointer
    ) throws {
        let bus = try open
        try checked(
            "sd_bus_add_object_vtable(\(interface))",
            sd_bus_add_object_vtable(bus, nil, path, interface, vtable, userData))
    }

    /// Handles what has arrived (`sd_bus_process`): one message, and the handlers it calls.
    /// Returns whether it did something (call it again then); throws once the connection is
    /// gone (`ECONNRESET`, `ENOTCONN`).
    func process() throws -> Bool {
        let bus = try open
        let result = sd_bus_process(bus, nil)
        try checked("sd_bus_process", result)
        guard sd_bus_is_open(bus) > 0 else { throw DBusFailure(call: "sd_bus_process", errno: ECONNRESET) }
        return result > 0
    }

    /// What to wait for before the next `process()`: the socket, its `poll` events, and the
    /// milliseconds until sd-bus needs to run (`nil`: no deadline).
    func pollParameters() throws -> (fd: Int32, events: Int16, timeoutMilliseconds: Int?) {
        let bus = try open
        let fd = sd_bus_get_fd(bus)
        try checked("sd_bus_get_fd", fd)
        let events = sd_bus_get_events(bus)
        try checked("sd_bus_get_events", events)
        var deadline: UInt64 = 0
        try checked("sd_bus_get_timeout", sd_bus_get_timeout(bus, &deadline))
        guard deadline != UInt64.max else { return (fd, Int16(events), nil) }
        // An absolute CLOCK_MONOTONIC time in microseconds.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        let wait = deadline > nowMicroseconds ? (deadline - nowMicroseconds + 999) / 1000 : 0
        return (fd, Int16(events), Int(min(wait, UInt64(Int32.max))))
    }

    /// Sends `PropertiesChanged` for `names` of `interface` at `path`, their values read from
    /// the interface's getters (`sd_bus_emit_properties_changed_strv`). Queued, never waits.
    func emitPropertiesChanged(path: String, interface: String, names: [String]) throws {
        let bus = try open
        var strings = names.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        strings.append(nil)
        let result = strings.withUnsafeMutableBufferPointer { buffer in
            sd_bus_emit_properties_changed_strv(bus, path, interface, buffer.baseAddress)
        }
        try checked("sd_bus_emit_properties_changed_strv", result)
    }

    /// Sends the signal `member` of `interface` at `path` with one 64-bit argument. Queued.
    func emitSignal(path: String, interface: String, member: String, _ value: Int64) throws {
        let bus = try open
        var message: OpaquePointer?
        try checked("sd_bus_message_new_signal", sd_bus_message_new_signal(bus, &message, path, interface, member))
        guard let message else { return }
        defer { sd_bus_message_unref(message) }
        try DBusMessage(message).append(.int64(value))
        try checked("sd_bus_send", sd_bus_send(bus, message, nil))
    }

    /// Keeps `call` (a method call being handled) for a reply sent later: `replySuccess` or
    /// `replyError` releases it.
    func retain(_ call: DBusMessage) -> DBusMessage {
        DBusMessage(sd_bus_message_ref(call.raw))
    }

    /// Sends an empty method return to `call` (kept by `retain`) and releases it.
    func replySuccess(to call: DBusMessage) throws {
        defer { sd_bus_message_unref(call.raw) }
        var reply: OpaquePointer?
        try checked("sd_bus_message_new_method_return", sd_bus_message_new_method_return(call.raw, &reply))
        guard let reply else { return }
        defer { sd_bus_message_unref(reply) }
        try checked("sd_bus_send", sd_bus_send(nil, reply, nil))
    }

    /// Sends the error `name` with `message` to `call` (kept by `retain`) and releases it.
    func replyError(to call: DBusMessage, name: String, message: String) throws {
        defer { sd_bus_message_unref(call.raw) }
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        _ = sd_bus_error_set(&error, name, message)
        try checked("sd_bus_reply_method_error", sd_bus_reply_method_error(call.raw, &error))
    }

    /// Releases a call kept by `retain` without replying (the connection is closing).
    func release(_ call: DBusMessage) {
        sd_bus_message_unref(call.raw)
    }
}

/// Sets the error a handler returns (`sd_bus_error_set`); returns the negative errno to return.
func setDBusError(_ error: UnsafeMutablePointer<sd_bus_error>?, name: String, message: String) -> Int32 {
    let result = sd_bus_error_set(error, name, message)
    return result < 0 ? result : -EINVAL
}

/// A message lent to a handler (a method call, a reply being built, a property's new value):
/// reads and appends arguments. Valid only while sd-bus lends it, unless retained.
struct DBusMessage {
    let raw: OpaquePointer

    init(_ raw: OpaquePointer) { self.raw = raw }

    private func checked(_ call: String, _ result: Int32) throws {
        if result < 0 { throw DBusFailure(call: call, errno: -result) }
    }

    private static func code(_ type: String) -> CChar { CChar(bitPattern: type.utf8.first!) }

    /// The method's name (`sd_bus_message_get_member`).
    var member: String { sd_bus_message_get_member(raw).map { String(cString: $0) } ?? "" }

    /// The sender's unique name.
    var sender: String { sd_bus_message_get_sender(raw).map { String(cString: $0) } ?? "" }

    // MARK: Reading

    func readInt64() throws -> Int64 {
        var value: Int64 = 0
        try checked("sd_bus_message_read_basic(x)", sd_bus_message_read_basic(raw, Self.code("x"), &value))
        return value
    }

    func readDouble() throws -> Double {
        var value: Double = 0
        try checked("sd_bus_message_read_basic(d)", sd_bus_message_read_basic(raw, Self.code("d"), &value))
        return value
    }

    /// A string (`s`) or an object path (`o`).
    func readString(_ type: String = "s") throws -> String {
        var value: UnsafePointer<CChar>?
        try checked("sd_bus_message_read_basic(\(type))", sd_bus_message_read_basic(raw, Self.code(type), &value))
        return value.map { String(cString: $0) } ?? ""
    }

    // MARK: Appending

    func append(_ value: DBusValue) throws {
        switch value {
        case .string(let text): try appendString(text, type: "s")
        case .objectPath(let path): try appendString(path, type: "o")
        case .int32(var number):
            try checked("sd_bus_message_append_basic(i)", sd_bus_message_append_basic(raw, Self.code("i"), &number))
        case .int64(var number):
            try checked("sd_bus_message_append_basic(x)", sd_bus_message_append_basic(raw, Self.code("x"), &number))
        case .double(var number):
            try checked("sd_bus_message_append_basic(d)", sd_bus_message_append_basic(raw, Self.code("d"), &number))
        case .bool(let flag):
            // D-Bus booleans are 32-bit in sd-bus.
            var number: Int32 = flag ? 1 : 0
            try checked("sd_bus_message_append_basic(b)", sd_bus_message_append_basic(raw, Self.code("b"), &number))
        case .strings(let texts):
            try container("a", "s") {
                for text in texts { try appendString(text, type: "s") }
            }
        }
    }

    /// A dictionary of variants, `a{sv}`.
    func appendDictionary(_ entries: [(String, DBusValue)]) throws {
        try container("a", "{sv}") {
            for (key, value) in entries {
                try container("e", "sv") {
                    try appendString(key, type: "s")
                    try container("v", value.signature) { try append(value) }
                }
            }
        }
    }

    private func appendString(_ text: String, type: String) throws {
        let result = text.withCString { sd_bus_message_append_basic(raw, Self.code(type), $0) }
        try checked("sd_bus_message_append_basic(\(type))", result)
    }

    private func container(_ type: String, _ contents: String, _ body: () throws -> Void) throws {
        try checked(
            "sd_bus_message_open_container(\(type)\(contents))",
            sd_bus_message_open_container(raw, Self.code(type), contents))
        try body()
        try checked("sd_bus_message_close_container", sd_bus_message_close_container(raw))
    }
}
