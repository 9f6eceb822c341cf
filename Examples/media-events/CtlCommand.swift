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
        /// `watch`: the event names subscribed to (empty: all).
        var names: [String] = []
    }

    let options: Options

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var words: [String] = []
        var append = false
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextOption(positional: { words.append($0) }) {
            switch argument {
            case "--socket": options.socket = try reader.value(for: argument)
            case "--timeout": options.timeout = try reader.number(for: argument)
            case "--append": append = true
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
        switch command {
        case "pause", "resume", "stop", "next", "previous", "playlist", "status":
            try noArguments()
        case "play":
            guard words.count <= 1 else { throw UsageError("play takes at most one item number") }
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
        case "watch":
            guard words.count <= 1 else { throw UsageError("watch takes one comma-separated list of event names") }
            options.names = words.first.map { $0.split(separator: ",").map(String.init) } ?? []
            if words.first != nil && options.names.isEmpty { throw UsageError("watch: no event names in ''") }
        default:
            throw UsageError("unknown ctl command '\(command)'")
        }
        return options
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
        var request: [(String, JSONValue)] = [("request_id", .int(1))]
        if options.command == "watch" {
            request.append(("command", .string("subscribe")))
            if !options.names.isEmpty { request.append(("events", .array(options.names.map { .string($0) }))) }
        } else {
            request.append(("command", .string(options.command)))
            request += options.request
        }
        if let error = UnixSocket.sendAll(fd, Array((JSON.line(request) + "\n").utf8)) {
            printError("media-events: ctl: \(path): cannot send (\(String(cString: strerror(error))))")
            return 1
        }
        let deadline = Date().addingTimeInterval(options.timeout)
        // The reply; event lines before it (none before a subscribe) are skipped.
        while true {
            guard let line = reader.next(until: deadline) else {
                printError(
                    "media-events: ctl: \(path): "
                        + (reader.timedOut
                            ? "no reply within \(options.timeout) s"
                            : "the daemon closed the connection without a reply"))
                return 1
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["request_id"] as? Int == 1
            else { continue }
            let ok = object["ok"] as? Bool == true
            if options.command == "watch" {
                guard ok else {
                    printError("media-events: ctl: watch: \(object["error"] as? String ?? line)")
                    return 1
                }
                break
            }
            printOutput(line)
            return ok ? 0 : 1
        }
        // watch: every line until the daemon closes the connection.
        var last = ""
        while let line = reader.next(until: nil) {
            printOutput(line)
            last = line
        }
        if last.contains(#""event":"Disconnected""#) { return 1 }
        return 0
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
