import ExampleSupport
import Glibc
import MediaEvents

// media-events: plays media headless and prints every event of the player and its media in
// libvlc's delivery order (`log`), parses media and lists their tracks and chapters (`probe`), or
// plays a recording (or a log) back and prints it as `log` did (`replay`).

/// A usage error: one line saying what is wrong and where to read on, status 2.
func exitWithUsage(_ error: UsageError, command: String?) -> Never {
    printError("media-events: \(error.description); try 'media-events \(command.map { "\($0) " } ?? "")--help'")
    exit(2)
}

Output.ignoreSIGPIPE()
var arguments = RawArguments.arguments()
let command = arguments.isEmpty ? "" : arguments.removeFirst()
do {
    switch command {
    case "log":
        let options = try LogOptions.parse(arguments)
        let status = await LogCommand(options: options).run()
        // Let libvlc finish tearing the players down before the process's destructors run.
        VLCLibrary.waitForPendingTeardowns()
        exit(status)
    case "probe":
        let options = try ProbeOptions.parse(arguments)
        let status = await ProbeCommand(options: options).run()
        VLCLibrary.waitForPendingTeardowns()
        exit(status)
    case "replay":
        let options = try ReplayOptions.parse(arguments)
        let status = await ReplayCommand(options: options).run()
        // The media of replayed payloads are released on MediaEvents' queues.
        VLCLibrary.waitForPendingTeardowns()
        exit(status)
    case "ctl":
        let options = try CtlCommand.parse(arguments)
        exit(CtlCommand(options: options).run())
    case "events":
        if let argument = arguments.first {
            guard argument == "--help" || argument == "-h" else {
                throw UsageError("events takes no arguments, not '\(argument)'")
            }
            printOutput(Usage.events)
        } else {
            printOutput(EventCatalog.allNames.joined(separator: "\n"))
        }
    case "help", "-h", "--help":
        printOutput(Usage.overview)
    case "--version":
        printOutput(Usage.version)
    case "":
        throw UsageError("expected a command")
    default:
        throw UsageError("unknown command '\(command)'")
    }
} catch let error as UsageError {
    exitWithUsage(error, command: ["log", "probe", "events", "ctl", "replay"].contains(command) ? command : nil)
}
