@_spi(Benchmarks) import MediaEvents
import CRawBaseline
import Dispatch
import Foundation

/// The cost of one log message on the thread that logs it, through the same C callback
/// libvlc calls (without libvlc's own formatting-independent cost): nobody listening, someone
/// listening at a more severe level only, an inline listener, and a listener on an async queue.
enum LogCostBench {
    static let text = "cannot open file /tmp/x.wav (No such file or directory)"

    struct Result {
        let name: String
        let nanoseconds: Double
    }

    static func measure(messages: Int, runs: Int) throws -> [Result] {
        let inline = try VLCLibrary(logsConfiguration: EventsDefaultConfiguration())
        let queued = try VLCLibrary(
            logsConfiguration: EventsQueueConfiguration(
                queue: DispatchQueue(label: "benchmark.logs"), isAsync: true))
        let counter = DeliveryCounter()
        var results: [Result] = []
        func time(_ name: String, _ logs: VLCLogSource, _ level: LogLevel, waitForCount: Bool) {
            var samples: [Double] = []
            for run in 0...runs {
                counter.reset(target: messages)
                let start = crb_now_ns()
                text.withCString { cText in
                    for _ in 0..<messages { logs._logThroughCallback(level, cText) }
                }
                if waitForCount { _ = counter.done.wait(timeout: .now() + 60) }
                let end = crb_now_ns()
                if run > 0 { samples.append(Double(end - start) / Double(messages)) }
            }
            results.append(Result(name: name, nanoseconds: Statistics.median(samples)))
        }
        // Installs the callback, then nobody listens.
        inline.logs.observe(minimumLevel: .debug) { _ in }.cancel()
        time("no listener", inline.logs, .debug, waitForCount: false)
        let errorsOnly = inline.logs.observe(minimumLevel: .error) { _ in }
        time("listener at .error, debug message", inline.logs, .debug, waitForCount: false)
        errorsOnly.cancel()
        let inlineListener = inline.logs.observe(minimumLevel: .debug) { _ in counter.hit() }
        time("inline listener", inline.logs, .debug, waitForCount: true)
        inlineListener.cancel()
        let queuedListener = queued.logs.observe(minimumLevel: .debug) { _ in counter.hit() }
        time("async-queue listener (until handled)", queued.logs, .debug, waitForCount: true)
        queuedListener.cancel()
        return results
    }

    static func text(_ results: [Result], messages: Int) -> String {
        var lines = ["Log messages (\(messages) per run, median ns per message on the logging thread):"]
        for result in results {
            lines.append(
                "  " + result.name.padding(toLength: 40, withPad: " ", startingAt: 0)
                    + String(format: "%8.1f ns", result.nanoseconds))
        }
        return lines.joined(separator: "\n")
    }
}
