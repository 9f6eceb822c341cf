import Glibc
import ExampleSupport
import MediaEvents

/// The options of `media-events log`.
struct LogOptions {
    var json = false
    var filter = EventFilter()
    var dispatch = DispatchMode.inline
    /// Seconds after which each media is stopped.
    var limit: Double?
    /// Seconds a media may take to start playing before it fails (libvlc has no such limit).
    var openTimeout = 30.0
    var repeatCount = 1
    var audio = false
    var summary = false
    /// At most one progress event of each kind per this many milliseconds; `nil`: the
    /// format's default (JSON every one, it is a recording; text `textProgressIntervalMs`).
    var progressIntervalMs: Int?
    /// The text output's default progress interval: a rate a person can read.
    static let textProgressIntervalMs = 1000
    /// libvlc's log messages of this level and above are printed (`--verbose`, `--log-level`).
    var logLevel: LogLevel?
    var inputs: [String] = []

    static func parse(_ arguments: [String]) throws -> LogOptions {
        var options = LogOptions()
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextOption(positional: { options.inputs.append($0) }) {
            switch argument {
            case "--json": options.json = true
            case "--only": options.filter.include.formUnion(try reader.eventNames(for: argument))
            case "--exclude": options.filter.exclude.formUnion(try reader.eventNames(for: argument))
            case "--no-progress": options.filter.dropProgress = true
            case "--dispatch": options.dispatch = try reader.dispatchMode(for: argument)
            case "--limit": options.limit = try reader.number(for: argument)
            case "--open-timeout": options.openTimeout = try reader.number(for: argument)
            case "--repeat":
                let value = try reader.value(for: argument)
                guard let count = Int(value), count > 0 else {
                    throw UsageError("--repeat needs a positive whole number, not '\(value)'")
                }
                options.repeatCount = count
            case "--audio": options.audio = true
            case "--summary": options.summary = true
            case "--progress-interval":
                let value = try reader.value(for: argument)
                guard let ms = Int(value), ms >= 0 else {
                    throw UsageError("--progress-interval needs a whole number of milliseconds, not '\(value)'")
                }
                options.progressIntervalMs = ms
            case "--verbose": options.logLevel = .debug
            case "--log-level": options.logLevel = try reader.logLevel(for: argument)
            case "-h", "--help":
                printOutput(Usage.log)
                exit(0)
            default: throw UsageError("unknown option \(argument)")
            }
            if reader.hasAttachedValue { throw UsageError("\(argument) takes no value") }
        }
        return options
    }
}
