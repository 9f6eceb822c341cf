import ExampleSupport
import Foundation
import Glibc

/// `media-events ctl`: one command to a `media-daemon --control PATH`, or its event stream.
struct CtlCommand {
    struct Options {
        var socket: String?
        var timeout = 10.0
        var command = ""
        var request: [(String, JSONValue)] = []
        /// `watch`: the event names subscribed to (empty: all); `observe`: the properties.
        var names: [String] = []
        /// `get`, `set`, `observe`: the request in mpv's form ("command" an array).
        var mpvCommands: [[JSONValue]] = []
    }

    let options: Options

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var words: [String] = []
        var append = false
        var entry: Int64?
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextOption(positional: { words.append($0) }) {
            switch argument {
            case "--socket": options.socket = try reader.value(for: argument)
            case "--timeout": options.timeout = try reader.number(for: argument)
            case "--append": append = true
            case "--entry":
                let text = try reader.value(for: argument)
                guard let id = Int64(text), id >= 1 else {
                    throw UsageError("--entry needs an entry id (from 1), not '\(text)'")
                }
                entry = id
            case "-h", "--help":
                printOutput(Usage.ctl)
                exit(0)
            default: throw UsageError("unknown option \(argument)")
            }
            if reader.hasAttachedValue { throw UsageError("\(argument) takes no value") }
        }
        guard options.socket != nil else { throw UsageError("ctl needs --socket PATH") }
        guard !words.isEmpty else { throw UsageError("ctl needs a command (see 'media-events ctl --help')") }
        let command = words.removeFirst()
        options.command = command
        func noArguments() throws {
            guard words.isEmpty else { throw UsageError("\(command) takes no arguments, not '\(words[0])'") }
        }
        if append && command != "load" { throw UsageError("--append is an option of load only") }
        if entry != nil && command != "play" { throw UsageError("--entry is an option of play only") }
        switch command {
        case "pause", "resume", "stop", "next", "previous", "playlist", "status":
            try noArguments()
        case "play":
            guard words.count <= 1 else { throw UsageError("play takes at most one item number") }
            if let entry {
                guard words.isEmpty else { throw UsageError("play takes an item number or --entry ID, not both") }
                options.request.append(("entry_id", .int(entry)))
            }
            if let word = words.first {
                guard let item = Int(word), item > 0 else { throw UsageError("play: an item number, not '\(word)'") }
                options.request.append(("item", .int(Int64(item))))
            }
        case "seek":
            guard words.count == 1 else { throw UsageError("seek takes one value: MS or FRACTION") }
            if let ms = Int64(words[0]), ms >= 0 {
                options.request.append(("ms", .int(ms)))
            } else if words[0].contains("."), let fraction = Double(words[0]), (0...1).contains(fraction) {
                options.request.append(("fraction", .double(fraction)))
            } else {
                throw UsageError("seek: milliseconds (5000) or a fraction from 0 to 1 (0.5), not '\(words[0])'")
            }
        case "volume":
            guard words.count == 1, let volume = Int64(words[0]), (0...200).contains(volume) else {
                throw UsageError("volume takes one whole number from 0 to 200")
            }
            options.request.append(("volume", .int(volume)))
        case "load":
            guard !words.isEmpty else { throw UsageError("load needs at least one MEDIA") }
            // The daemon runs elsewhere: relative paths are made absolute here.
            let entries = words.map { word -> JSONValue in
                word.contains("://") || word.hasPrefix("/") ? .string(word) : .string(URL(fileURLWithPath: word).path)
            }
            options.request += [("entries", .array(entries)), ("mode", .string(append ? "append" : "replace"))]
        case "get":
            guard words.count == 1 else {
                throw UsageError("get takes one property name (mpv's: volume, time-pos, ...)")
            }
            options.mpvCommands = [[.string("get_property"), .string(words[0])]]
        case "set":
            guard words.count == 2 else { throw UsageError("set takes a property name and a value") }
            options.mpvCommands = [[.string("set_property"), .string(words[0]), Self.value(words[1])]]
        case "observe":
            guard words.count == 1 else { throw UsageError("observe takes one comma-separated list of property names") }
            options.names = words[0].split(separator: ",").map(String.init)
            guard !options.names.isEmpty else { throw UsageError("observe: no property names in ''") }
            options.mpvCommands = options.names.enumerated().map { index, name in
                [.string("observe_property"), .int(Int64(index + 1)), .string(name)]
            }
        case "watch":
            guard words.count <= 1 else { throw UsageError("watch takes one comma-separated list of event names") }
            options.names = words.first.map { $0.split(separator: ",").map(String.init) } ?? []
            if words.first != nil && options.names.isEmpty { throw UsageError("watch: no event names in ''") }
        default:
            throw UsageError("unknown ctl command '\(command)'")
        }
        return options
    }

    /// A value given on the command line: JSON when it reads as JSON (`true`, `50`, `"a b"`),
    /// otherwise the text itself.
    static func value(_ text: String) -> JSONValue {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed),
            !(parsed is [Any]), !(parsed is [String: Any])
        else { return .string(text) }
        return JSONValue(parsed: parsed)
    }

    /// Runs the command; returns the exit status.
    func run() -> Int32 {
        let path = options.socket ?? ""
        let fd: Int32
        do {
            fd = try UnixSocket.connect(to: path, timeout: options.timeout)
        } catch {
            printError("media-events: ctl: \(error)")
            return 1
        }
        defer { close(fd) }
        var reader = LineReader(fd: fd)
        var requests: [[(String, JSONValue)]] = []
        if !options.mpvCommands.isEmpty {
            // mpv's form: "command" an array.
            requests = options.mpvCommands.enumerated().map { index, command in
                [("command", .array(command)), ("request_id", .int(Int64(index + 1)))]
            }
        } else if options.command == "watch" {
            var request: [(String, JSONValue)] = [("request_id", .int(1)), ("command", .string("subscribe"))]
            if !options.names.isEmpty { request.append(("events", .array(options.names.map { .string($0) }))) }
            requests = [request]
        } else {
            requests = [[("request_id", .int(1)), ("command", .string(options.command))] + options.request]
        }
        let bytes = requests.map { JSON.line($0) + "\n" }.joined()
        if let error = UnixSocket.sendAll(fd, Array(bytes.utf8)) {
            // A daemon that refused the connection said why before closing it.
            let why = Self.refusal(&reader)
            printError(
                "media-events: ctl: \(path): "
                    + (why.map { "the daemon refused the connection: \($0)" }
                        ?? "cannot send (\(String(cString: strerror(error))))"))
            return 1
        }
        let deadline = Date().addingTimeInterval(options.timeout)
        let streams = options.command == "watch" || options.command == "observe"
        // The replies; event lines before them (none before a subscribe) are skipped.
        var pending = Set(1...requests.count)
        while !pending.isEmpty {
            guard let line = reader.next(until: deadline) else {
                printError(
                    "media-events: ctl: \(path): "
                        + (reader.timedOut
                            ? "no reply within \(options.timeout) s"
                            : "the daemon closed the connection without a reply"))
                return 1
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                continue
            }
            if object["request_id"] == nil, object["event"] as? String == "Disconnected" {
                printError(
                    "media-events: ctl: \(path): the daemon closed the connection: \(object["reason"] as? String ?? line)"
                )
                return 1
            }
            if options.command == "observe", object["event"] as? String == "property-change" {
                printOutput(line)
                continue
            }
            guard let id = object["request_id"] as? Int, pending.contains(id) else { continue }
            pending.remove(id)
            // The daemon's replies say "ok"; mpv's form says "error":"success".
            let ok = object["ok"] as? Bool == true || object["error"] as? String == "success"
            if streams {
                guard ok else {
                    printError("media-events: ctl: \(options.command): \(object["error"] as? String ?? line)")
                    return 1
                }
                continue
            }
            printOutput(line)
            return ok ? 0 : 1
        }
        // watch, observe: every line until the daemon closes the connection (observe: the
        // property changes only).
        var last = ""
        while let line = reader.next(until: nil) {
            if options.command == "observe", !line.contains(#""event":"property-change""#),
                !line.contains(#""event":"Disconnected""#)
            {
                continue
            }
            printOutput(line)
            last = line
        }
        if last.contains(#""event":"Disconnected""#) { return 1 }
        return 0
    }

    /// The reason of a `Disconnected` line the daemon sent before closing, if any.
    private static func refusal(_ reader: inout LineReader) -> String? {
        let deadline = Date().addingTimeInterval(1)
        while let line = reader.next(until: deadline) {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String == "Disconnected"
            {
                return object["reason"] as? String
            }
        }
        return nil
    }
}

/// Lines read from a blocking socket, each wait bounded by a deadline.
struct LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var timedOut = false

    init(fd: Int32) { self.fd = fd }

    /// The next line (without its newline); `nil` at the end of the stream or the deadline.
    mutating func next(until deadline: Date?) -> String? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = deadline.map { Int32(max(0, min(60_000, $0.timeIntervalSinceNow * 1000))) } ?? -1
            let ready = poll(&poller, 1, wait)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                if let deadline, Date() >= deadline {
                    timedOut = true
                    return nil
                }
                continue
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer += chunk[0..<count]
        }
    }
}
