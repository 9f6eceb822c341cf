import ExampleSupport
import Glibc

/// The options of `media-events probe`.
struct ProbeOptions {
    var json = false
    var timeout = 10.0
    /// Whether titles and chapters are read (by opening the media in a player).
    var chapters = true
    var inputs: [String] = []

    static func parse(_ arguments: [String]) throws -> ProbeOptions {
        var options = ProbeOptions()
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextOption(positional: { options.inputs.append($0) }) {
            switch argument {
            case "--json": options.json = true
            case "--timeout": options.timeout = try reader.number(for: argument)
            case "--no-chapters": options.chapters = false
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
