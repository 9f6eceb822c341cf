import ExampleSupport
import Glibc
import MediaEvents

// media-events: plays media headless and prints every event of the player and its media in
// libvlc's delivery order (`log`), or parses media without playing them (`probe`).

func exitWithUsage(_ error: UsageError) -> Never {
    printError("media-events: \(error.description)\n\(usage)")
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
    case "events":
        printOutput(EventCatalog.allNames.joined(separator: "\n"))
    case "help", "-h", "--help":
        printOutput(usage)
    case "":
        throw UsageError("expected a command")
    default:
        throw UsageError("unknown command '\(command)'")
    }
} catch let error as UsageError {
    exitWithUsage(error)
}
