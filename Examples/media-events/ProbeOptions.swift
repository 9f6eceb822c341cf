import ExampleSupport
import Glibc

/// The options of `media-events probe`.
struct ProbeOptions {
    var json = false
    var timeout = 10.0
    /// Only the preparser: no playback, so no titles, chapters, decoder facts or container.
    var parseOnly = false
    /// How much of a media (milliseconds of it) plays before its facts are read.
    var windowMs: Int64 = 1000
    var inputs: [String] = []

    static func parse(_ arguments: [String]) throws -> ProbeOptions {
        var options = ProbeOptions()
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextOption(positional: { options.inputs.append($0) }) {
            switch argument {
            case "--json": options.json = true
            case "--timeout": options.timeout = try reader.number(for: argument)
            case "--parse-only", "--no-chapters": options.parseOnly = true
            case "--play":
                let value = try reader.value(for: argument)
                guard let ms = Int64(value), ms >= 0 else {
                    throw UsageError("--play needs a whole number of milliseconds, not '\(value)'")
                }
                options.windowMs = ms
            case "-h", "--help":
                printOutput(Usage.probe)
                exit(0)
            default: throw UsageError("unknown option \(argument)")
            }
            if reader.hasAttachedValue { throw UsageError("\(argument) takes no value") }
        }
        guard !options.inputs.isEmpty else { throw UsageError("probe needs at least one MEDIA") }
        return options
    }
}
