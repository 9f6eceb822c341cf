import CRawBaseline
import Foundation
import Glibc
import MediaEvents

/// The results of one run of the benchmark, printed as text or as the README's Markdown.
struct Report {
    let options: Options
    var throughput: [VariantResult] = []
    // `nil`: not measured in this run (`--only`); printed as such, never as a zero.
    var latencyQueued: [UInt64]?
    var latencyStream: [UInt64]?
    var latencyDispatch: [UInt64]?
    var subscribeCancelNanoseconds: Double?
    var manySubscriptions: ManySubscriptions?
    var perSubscription: (heap: Double, resident: Double)?
    var perPlayer: (wrapped: Double, raw: Double)?
    var cycles: MemoryReading?

    static let notMeasured = "not measured"

    private var rawNanoseconds: Double {
        row("(a)")?.total ?? .nan
    }

    private func row(_ label: String) -> VariantResult? {
        throughput.first { $0.variant.label == label }
    }

    /// Rows of the throughput table: label, name, events/s, ns/event, ratio to (a),
    /// ns/event on libvlc's thread, of which beyond (a).
    private var throughputRows: [[String]] {
        var rows: [[String]] = []
        for result in throughput {
            let (variant, produce, total) = (result.variant, result.produce, result.total)
            rows.append([
                variant.label, variant.name,
                Self.grouped(1e9 / total), String(format: "%.0f", total),
                row("(a)") == nil ? Self.notMeasured : String(format: "%.1f %%", 100 * rawNanoseconds / total),
                String(format: "%.0f", produce),
                row("(a)") == nil ? Self.notMeasured : String(format: "%+.0f", produce - rawNanoseconds),
                Self.range(result.samples.map { $0.totalNanoseconds / Double(options.events) }),
            ])
        }
        return rows
    }

    private var otherRows: [[String]] {
        let kib = 1024.0
        func measured<T>(_ value: T?, _ text: (T) -> String) -> String { value.map(text) ?? Self.notMeasured }
        return [
            ["latency (c), p50 / p99", measured(latencyQueued, Self.latency)],
            ["latency (d), p50 / p99", measured(latencyStream, Self.latency)],
            ["latency (e), p50 / p99", measured(latencyDispatch, Self.latency)],
            ["subscribe + cancel", measured(subscribeCancelNanoseconds) { String(format: "%.0f ns", $0) }],
            [
                "\(Self.grouped(Double(options.subscriptions))) subscriptions made, then cancelled in random order",
                measured(manySubscriptions) {
                    String(format: "%.0f ms + %.0f ms", $0.subscribeSeconds * 1000, $0.cancelSeconds * 1000)
                },
            ],
            [
                "memory per subscription (heap / RSS)",
                measured(perSubscription) { String(format: "%.0f B / %.0f B", $0.heap, $0.resident) },
            ],
            [
                "memory per player (MediaEvents / raw libvlc)",
                measured(perPlayer) { String(format: "%.1f KiB / %.1f KiB", $0.wrapped / kib, $0.raw / kib) },
            ],
            [
                "\(Self.grouped(Double(options.cycles))) player create/observe/teardown cycles: growth (heap / RSS)",
                measured(cycles) {
                    String(format: "%.0f KiB / %.0f KiB", Double($0.heap) / kib, Double($0.resident) / kib)
                },
            ],
        ]
    }

    /// One target of issue #15: what it asks, what this run measured, and whether it is met
    /// (`nil`: not measured, or measured at other sizes than the target's).
    struct Target {
        let goal: String
        let result: String
        let met: Bool?

        var verdict: String {
            switch met {
            case true?: "met"
            case false?: "NOT met"
            case nil: Self.notMeasured
            }
        }

        private static var notMeasured: String { Report.notMeasured }
    }

    var targets: [Target] {
        var targets: [Target] = []
        let raw = row("(a)")
        func share(_ label: String, atLeast percent: Double, _ goal: String) {
            guard let raw, let result = row(label) else {
                return targets.append(Target(goal: goal, result: Self.notMeasured, met: nil))
            }
            let value = 100 * raw.total / result.total
            let rounds = zip(raw.samples, result.samples).filter {
                100 * $0.totalNanoseconds / $1.totalNanoseconds >= percent
            }
            targets.append(
                Target(
                    goal: goal,
                    result: String(
                        format: "%.1f %% (%.0f vs %.0f ns); %d of %d rounds", value, result.total, raw.total,
                        rounds.count, result.samples.count),
                    met: value >= percent))
        }
        share("(p)", atLeast: 50, "(p) public `handleEvent` inline ≥ 50 % of (a)'s throughput")
        share("(b)", atLeast: 60, "(b) internal inline path ≥ 60 % of (a)'s throughput")
        func onLibvlcThread(_ label: String, atMost limit: Double, _ goal: String) {
            guard let result = row(label) else {
                return targets.append(Target(goal: goal, result: Self.notMeasured, met: nil))
            }
            let perRun = result.samples.map { $0.produceNanoseconds / Double(options.events) }
            // The limit is in nanoseconds, and this host's own speed moves (a) between about 42
            // and 120 ns from one minute to the next: the multiple of (a) tells the two apart.
            let scale = raw.map { String(format: " = %.1f × (a)", result.produce / $0.produce) } ?? ""
            targets.append(
                Target(
                    goal: goal,
                    result: String(
                        format: "%.0f ns (runs %.0f–%.0f ns)", result.produce, perRun.min() ?? 0, perRun.max() ?? 0)
                        + scale
                        + String(format: "; %d of %d runs", perRun.filter { $0 <= limit }.count, perRun.count),
                    met: result.produce <= limit))
        }
        onLibvlcThread("(c)", atMost: 150, "(c) ≤ 150 ns/event on libvlc's thread")
        if let queued = row("(c)"), let dispatched = row("(e)") {
            let ratios = zip(queued.samples, dispatched.samples).map { $1.totalNanoseconds / $0.totalNanoseconds }
            let ratio = dispatched.total / queued.total
            targets.append(
                Target(
                    goal: "(c) end-to-end throughput ≥ 2 × (e)'s",
                    result: String(
                        format: "%.2f × (%.0f vs %.0f ns); rounds %.2f–%.2f ×, %d of %d ≥ 2 ×", ratio,
                        queued.total, dispatched.total, ratios.min() ?? 0, ratios.max() ?? 0,
                        ratios.filter { $0 >= 2 }.count, ratios.count),
                    met: ratio >= 2))
        } else {
            targets.append(Target(goal: "(c) end-to-end throughput ≥ 2 × (e)'s", result: Self.notMeasured, met: nil))
        }
        onLibvlcThread("(d)", atMost: 300, "(d) ≤ 300 ns/event on libvlc's thread")
        func latencyWithin(_ label: String, _ values: [UInt64]?) {
            let goal = "\(label) latency p50 and p99 ≤ 2 × (e)'s"
            guard let values, let dispatched = latencyDispatch, !values.isEmpty, !dispatched.isEmpty else {
                return targets.append(Target(goal: goal, result: Self.notMeasured, met: nil))
            }
            let p50 = Double(Statistics.percentile(values, 50)) / Double(Statistics.percentile(dispatched, 50))
            let p99 = Double(Statistics.percentile(values, 99)) / Double(Statistics.percentile(dispatched, 99))
            targets.append(
                Target(
                    goal: goal, result: String(format: "p50 %.2f ×, p99 %.2f ×", p50, p99), met: p50 <= 2 && p99 <= 2))
        }
        latencyWithin("(c)", latencyQueued)
        latencyWithin("(d)", latencyStream)
        let subscriptionsGoal = "100 000 subscriptions made and cancelled in random order in < 1 s"
        if let many = manySubscriptions {
            let total = many.subscribeSeconds + many.cancelSeconds
            let atSize = options.subscriptions == 100_000
            targets.append(
                Target(
                    goal: subscriptionsGoal,
                    result: String(format: "%.0f ms", total * 1000)
                        + (atSize ? "" : " for \(Self.grouped(Double(options.subscriptions)))"),
                    met: atSize ? total < 1 : nil))
        } else {
            targets.append(Target(goal: subscriptionsGoal, result: Self.notMeasured, met: nil))
        }
        let memoryGoal = "≤ 1 KiB heap per live subscription"
        if let perSubscription {
            targets.append(
                Target(
                    goal: memoryGoal, result: String(format: "%.0f B", perSubscription.heap),
                    met: perSubscription.heap <= 1024))
        } else {
            targets.append(Target(goal: memoryGoal, result: Self.notMeasured, met: nil))
        }
        let cyclesGoal = "10 000 player cycles grow RSS < 2 MiB"
        if let cycles {
            let atSize = options.cycles == 10_000
            targets.append(
                Target(
                    goal: cyclesGoal,
                    result: String(
                        format: "%.0f KiB RSS, %.0f KiB heap", Double(cycles.resident) / 1024,
                        Double(cycles.heap) / 1024)
                        + (atSize ? "" : " over \(Self.grouped(Double(options.cycles))) cycles"),
                    met: atSize ? cycles.resident < 2 << 20 : nil))
        } else {
            targets.append(Target(goal: cyclesGoal, result: Self.notMeasured, met: nil))
        }
        return targets
    }

    private static let throughputHeader = [
        "", "variant", "events/s", "ns/event", "vs (a)", "ns/event on libvlc's thread", "of which beyond (a)",
        "ns/event, each run",
    ]

    /// The lowest and highest of the runs: how noisy the machine was.
    private static func range(_ values: [Double]) -> String {
        String(format: "%.0f–%.0f", values.min() ?? 0, values.max() ?? 0)
    }

    private var parameters: String {
        "\(Self.grouped(Double(options.events))) events per run, median of \(options.runs) runs after a warm-up; "
            + "latency: \(Self.grouped(Double(options.latencyEvents))) events paced by "
            + "\(options.latencyPauseMicroseconds) µs after \(Self.grouped(Double(options.latencyWarmUpEvents))) unmeasured"
    }

    func text() -> String {
        var lines = ["MediaEventsBenchmarks — \(parameters)", Self.machineState, ""]
        lines += Self.aligned([Self.throughputHeader] + throughputRows)
        lines.append("")
        lines += Self.aligned(otherRows)
        lines.append("")
        lines += Self.aligned([["target", "this run", ""]] + targets.map { [$0.goal, $0.result, $0.verdict] })
        return lines.joined(separator: "\n")
    }

    func markdown() -> String {
        var lines = [
            "Machine: \(Self.machine). Date: \(Self.today). libvlc \(VLCLibrary.version). \(Self.machineState)",
            "Command: `swift run -c release MediaEventsBenchmarks \(CommandLine.arguments.dropFirst().joined(separator: " "))` "
                + "(\(parameters)).",
            "",
            "| " + Self.throughputHeader.joined(separator: " | ") + " |",
            "|" + Array(repeating: "---", count: Self.throughputHeader.count).joined(separator: "|") + "|",
        ]
        lines += throughputRows.map { "| " + $0.joined(separator: " | ") + " |" }
        lines += ["", "| measurement | result |", "|---|---|"]
        lines += otherRows.map { "| " + $0.joined(separator: " | ") + " |" }
        lines += ["", "| target | this run | met? |", "|---|---|---|"]
        lines += targets.map { "| \($0.goal) | \($0.result) | \($0.verdict) |" }
        if targets.contains(where: { $0.met == false }) {
            lines += [
                "",
                "For each target not met, what was tried and what it measured: "
                    + "the dated files Notes/Benchmarks-*.md.",
            ]
        }
        return lines.joined(separator: "\n")
    }

    /// `/proc/loadavg`'s three averages when the benchmark started (read first in main).
    static let loadAverage = currentLoadAverage

    /// A cache line's round trip between CPUs 0 and 1 when the benchmark started (measured
    /// first in main).
    static let lineRoundTrip = currentLineRoundTrip

    static var currentLineRoundTrip: String {
        let nanoseconds = crb_line_round_trip_ns(200_000)
        return nanoseconds < 0 ? "not measured" : String(format: "%.0f ns", nanoseconds)
    }

    /// The machine's state at the start and now: load, and what the cores pay to pass a line.
    private static var machineState: String {
        "Load average: \(loadAverage) at start, \(currentLoadAverage) at the end. "
            + "A cache line from CPU 0 to CPU 1 and back: \(lineRoundTrip) at start, \(currentLineRoundTrip) at the end."
    }

    static var currentLoadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func latency(_ values: [UInt64]) -> String {
        guard !values.isEmpty else { return notMeasured }
        return String(
            format: "%.1f µs / %.1f µs",
            Double(Statistics.percentile(values, 50)) / 1000,
            Double(Statistics.percentile(values, 99)) / 1000)
    }

    private static func grouped(_ value: Double) -> String {
        let digits = String(Int(value.rounded()))
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(" ") }
            out.append(character)
        }
        return out
    }

    private static func aligned(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in
            rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.map { row in
            row.enumerated().map { column, cell in
                cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }

    private static var machine: String {
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(cpu), \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores, Linux \(kernel)"
    }

    private static var today: String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date())
    }
}
