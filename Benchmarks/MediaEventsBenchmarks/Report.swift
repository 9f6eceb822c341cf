import Foundation
import Glibc
import MediaEvents

/// The results of one run of the benchmark, printed as text or as the README's Markdown.
struct Report {
    let options: Options
    var throughput: [(Variant, produce: Double, total: Double)] = []
    var latencyQueued: [UInt64] = []
    var latencyDispatch: [UInt64] = []
    var subscribeCancelNanoseconds = 0.0
    var perSubscription = (heap: 0.0, resident: 0.0)
    var perPlayer = (wrapped: 0.0, raw: 0.0)
    var cycles = MemoryReading(heap: 0, resident: 0)

    private var rawNanoseconds: Double {
        throughput.first { $0.0.label == "(a)" }?.total ?? .nan
    }

    private func row(_ label: String) -> (Variant, produce: Double, total: Double)? {
        throughput.first { $0.0.label == label }
    }

    /// Rows of the throughput table: label, name, events/s, ns/event, ratio to (a),
    /// ns/event on libvlc's thread, of which beyond (a).
    private var throughputRows: [[String]] {
        var rows: [[String]] = []
        for (variant, produce, total) in throughput {
            rows.append([
                variant.label, variant.name,
                Self.grouped(1e9 / total), String(format: "%.0f", total),
                String(format: "%.1f %%", 100 * rawNanoseconds / total),
                String(format: "%.0f", produce),
                String(format: "%+.0f", produce - rawNanoseconds),
            ])
        }
        return rows
    }

    private var otherRows: [[String]] {
        let kib = 1024.0
        return [
            ["latency (c), p50 / p99", Self.latency(latencyQueued)],
            ["latency (e), p50 / p99", Self.latency(latencyDispatch)],
            ["subscribe + cancel", String(format: "%.0f ns", subscribeCancelNanoseconds)],
            ["memory per subscription (heap / RSS)",
             String(format: "%.0f B / %.0f B", perSubscription.heap, perSubscription.resident)],
            ["memory per player (MediaEvents / raw libvlc)",
             String(format: "%.1f KiB / %.1f KiB", perPlayer.wrapped / kib, perPlayer.raw / kib)],
            ["\(Self.grouped(Double(options.cycles))) player create/observe/teardown cycles: growth (heap / RSS)",
             String(format: "%.0f KiB / %.0f KiB", Double(cycles.heap) / kib, Double(cycles.resident) / kib)],
        ]
    }

    private static let throughputHeader = [
        "", "variant", "events/s", "ns/event", "vs (a)", "ns/event on libvlc's thread", "of which beyond (a)",
    ]

    private var parameters: String {
        "\(Self.grouped(Double(options.events))) events per run, median of \(options.runs) runs after a warm-up; "
            + "latency: \(Self.grouped(Double(options.latencyEvents))) events paced by "
            + "\(options.latencyPauseMicroseconds) µs"
    }

    func text() -> String {
        var lines = ["MediaEventsBenchmarks — \(parameters)", ""]
        lines += Self.aligned([Self.throughputHeader] + throughputRows)
        lines.append("")
        lines += Self.aligned(otherRows)
        return lines.joined(separator: "\n")
    }

    func markdown() -> String {
        var lines = [
            "Machine: \(Self.machine). Date: \(Self.today). libvlc \(VLCLibrary.version).",
            "Command: `swift run -c release MediaEventsBenchmarks \(CommandLine.arguments.dropFirst().joined(separator: " "))` "
                + "(\(parameters)).",
            "",
            "| " + Self.throughputHeader.joined(separator: " | ") + " |",
            "|" + Array(repeating: "---", count: Self.throughputHeader.count).joined(separator: "|") + "|",
        ]
        lines += throughputRows.map { "| " + $0.joined(separator: " | ") + " |" }
        lines += ["", "| measurement | result |", "|---|---|"]
        lines += otherRows.map { "| " + $0.joined(separator: " | ") + " |" }
        return lines.joined(separator: "\n")
    }

    private static func latency(_ values: [UInt64]) -> String {
        guard !values.isEmpty else { return "n/a" }
        return String(format: "%.1f µs / %.1f µs",
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
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
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
