import ExampleSupport

/// `media-events probe`: parses media without playing them.
struct ProbeCommand {
    let options: ProbeOptions

    func run() async -> Int32 {
        printError("media-events: probe is not available yet")
        return 1
    }
}
