import ExampleSupport
import Foundation

// mpv's JSON IPC on the control socket (mpv's DOCS/man/ipc.rst): a request whose "command" is
// an array, `{"command":["get_property","volume"],"request_id":7}`, is answered as mpv answers,
// `{"data":100.0,"request_id":7,"error":"success"}`, and the connection then receives mpv's
// events. The daemon's own requests ("command" a string) keep their protocol on the same socket.

/// mpv's error strings (`mpv_error_string`), the `error` of a reply.
enum MpvError: String, Error {
    case invalidParameter = "invalid parameter"
    case propertyNotFound = "property not found"
    case propertyUnavailable = "property unavailable"
    case propertyFormat = "unsupported format for accessing property"
    case propertyError = "error accessing property"
    case command = "error running command"
    case notImplemented = "operation not implemented"
}

/// A request of mpv's form, read from its "command" array.
enum MpvRequest {
    /// `get_property` (`asString`: `get_property_string`).
    case getProperty(String, asString: Bool)
    /// `set_property`, `set_property_string`.
    case setProperty(String, Any)
    /// `observe_property`, `observe_property_string`.
    case observe(id: Int64, name: String, asString: Bool)
    case unobserve(id: Int64)
    case getVersion
    case clientName
    case getTimeMicroseconds
    /// `enable_event`, `disable_event`: an event name or `all`.
    case enableEvent(String, Bool)
    /// An input command (`loadfile`, `seek` …) with its arguments.
    case command(String, [Any])

    /// The request of a "command" array, or why it is not one (mpv answers them all with
    /// "invalid parameter").
    static func parse(_ array: [Any]) -> Result<MpvRequest, MpvError> {
        guard let name = array.first as? String else { return .failure(.invalidParameter) }
        let args = Array(array.dropFirst())
        func string(_ index: Int) -> String? { index < args.count ? args[index] as? String : nil }
        func integer(_ index: Int) -> Int64? {
            guard index < args.count, let number = DaemonCommand.wholeNumber(args[index]) else { return nil }
            return number
        }
        switch name {
        case "get_property", "get_property_string":
            guard args.count == 1, let property = string(0) else { return .failure(.invalidParameter) }
            return .success(.getProperty(property, asString: name == "get_property_string"))
        case "set_property", "set_property_string":
            guard args.count == 2, let property = string(0) else { return .failure(.invalidParameter) }
            return .success(.setProperty(property, args[1]))
        case "observe_property", "observe_property_string":
            guard args.count == 2, let id = integer(0), let property = string(1) else {
                return .failure(.invalidParameter)
            }
            return .success(.observe(id: id, name: property, asString: name == "observe_property_string"))
        case "unobserve_property":
            guard args.count == 1, let id = integer(0) else { return .failure(.invalidParameter) }
            return .success(.unobserve(id: id))
        case "get_version": return .success(.getVersion)
        case "client_name": return .success(.clientName)
        case "get_time_us": return .success(.getTimeMicroseconds)
        case "enable_event", "disable_event":
            guard args.count == 1, let event = string(0) else { return .failure(.invalidParameter) }
            guard event == "all" || MpvEvents.names.contains(event) else { return .failure(.invalidParameter) }
            return .success(.enableEvent(event, name == "enable_event"))
        default:
            guard MpvCommands.names.contains(name) else { return .failure(.invalidParameter) }
            return .success(.command(name, args))
        }
    }

    /// The client API version `get_version` answers: mpv 0.35's (2.0), the protocol followed.
    static let clientAPIVersion: Int64 = 0x2_0000
}

/// The replies and event lines of mpv's form.
enum MpvLine {
    /// `{"data":…,"request_id":N,"error":"success"}`; no "data" when `data` is `nil` (as mpv
    /// answers set_property), `"data":null` for a command that returns nothing.
    static func reply(requestID: JSONValue, result: Result<JSONValue?, MpvError>) -> String {
        switch result {
        case .success(let data):
            return JSON.line(
                (data.map { [("data", $0)] } ?? []) + [("request_id", requestID), ("error", .string("success"))])
        case .failure(let error):
            return JSON.line([("request_id", requestID), ("error", .string(error.rawValue))])
        }
    }

    /// `{"event":"property-change","id":N,"name":…,"data":…}`; no "data" while unavailable.
    static func propertyChange(id: Int64, name: String, value: JSONValue?) -> String {
        JSON.line(
            [("event", .string("property-change")), ("id", .int(id)), ("name", .string(name))]
                + (value.map { [("data", $0)] } ?? []))
    }

    /// A property's value as `get_property_string` gives it: flags `yes`/`no`, numbers with
    /// six decimals, strings as they are, lists and maps as JSON.
    static func string(_ value: JSONValue) -> JSONValue {
        switch value {
        case .bool(let flag): return .string(flag ? "yes" : "no")
        case .double(let number): return .string(String(number, decimals: 6))
        case .int(let number): return .string(String(number))
        case .string, .null: return value
        case .object, .array: return .string(value.encoded)
        }
    }
}

/// mpv's events that the daemon sends on an mpv connection, besides `property-change`.
enum MpvEvents {
    static let names: Set<String> = [
        "start-file", "end-file", "file-loaded", "seek", "playback-restart", "idle", "shutdown", "property-change",
    ]

    /// An event line: `{"event":name, fields…}`.
    static func line(_ name: String, _ fields: [(String, JSONValue)] = []) -> String {
        JSON.line([("event", .string(name))] + fields)
    }
}

/// The input commands of mpv's form that the daemon carries out (`command-list`).
enum MpvCommands {
    static let names: [String] = [
        "loadfile", "loadlist", "playlist-next", "playlist-prev", "playlist-play-index", "playlist-clear",
        "playlist-remove", "playlist-move", "seek", "stop", "quit", "cycle", "set", "add",
    ]
}
