import Foundation

/// The command line of the benchmark.
struct Options {
    /// Events per throughput run (one burst of `setMeta` calls).
    var events = 200_000
    /// Measured runs per variant, after one warm-up; the median is reported.
    var runs = 5
    /// Paced events for the latency measurement.
    var latencyEvents = 10_000
    /// Paced events of each variant run, unmeasured, before the latency measurement.
    var latencyWarmUpEvents: Int { max(latencyEvents / 10, 100) }
    /// Pause after each paced event, in microseconds.
    var latencyPauseMicroseconds: UInt32 = 50
    /// Subscribe + cancel pairs per run, and live subscriptions for the memory measurement.
    var subscriptions = 100_000
    /// Players kept alive at once for the memory-per-player measurement.
    var players = 200
    /// Create/observe/teardown cycles of a player, after `warmUpCycles`.
    var cycles = 10_000
    var warmUpCycles = 500
    /// Print the results as the README's Markdown table.
    var markdown = false
    var quick = false
    /// Measure only the cost per log message (`--log-cost`).
    var logCostOnly = false
    /// Run only the throughput variants with these labels, e.g. ["(a)", "(b)"] (for profiling),
    /// and the other measurements named among them ("(latency)", "(subscriptions)",
    /// "(memory)", "(cycles)"); the rest are reported as not measured.
    var only: [String]?

    /// Whether the measurement `name` (a variant label without parentheses, or one of the
    /// other measurements' names) runs.
    func includes(_ name: String) -> Bool { only?.contains("(\(name))") ?? true }

    static let usage = """
        usage: MediaEventsBenchmarks [--events N] [--runs R] [--cycles N] [--quick] [--markdown] [--only V,W]
          --events N   events per throughput run (default 200000)
          --runs R     measured runs per variant, median reported (default 5)
          --quick      small sizes for a CI smoke run (a few seconds)
          --markdown   print the results as a Markdown table with machine and date
          --only V,W   run only these throughput variants (a0, a, b, p, p2, p3, c, d, e), e.g. under
                       perf, and of the other measurements those named (latency, subscriptions,
                       memory, cycles); the rest print "not measured"
          --cycles N   player create/observe/teardown cycles measured (default 10000)
          --log-cost   measure only the cost per log message, with and without a listener
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var explicitEvents: Int?
        var explicitRuns: Int?
        var explicitCycles: Int?
        var rest = arguments[...]
        func number(after flag: String) -> Int {
            guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
                fail("\(flag) needs a positive integer")
            }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--events": explicitEvents = number(after: argument)
            case "--runs": explicitRuns = number(after: argument)
            case "--cycles": explicitCycles = number(after: argument)
            case "--quick": options.quick = true
            case "--log-cost": options.logCostOnly = true
            case "--markdown": options.markdown = true
            case "--only":
                guard let label = rest.popFirst() else { fail("--only needs a variant label") }
                options.only = label.split(separator: ",").map { $0.hasPrefix("(") ? String($0) : "(\($0))" }
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)")
            }
        }
        if options.quick {
            options.events = 20_000
            options.runs = 3
            options.latencyEvents = 1_000
            options.subscriptions = 10_000
            options.players = 20
            options.cycles = 300
            options.warmUpCycles = 30
        }
        if let explicitEvents { options.events = explicitEvents }
        if let explicitRuns { options.runs = explicitRuns }
        if let explicitCycles { options.cycles = explicitCycles }
        return options
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("MediaEventsBenchmarks: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
