// MediaEventsBenchmarks: the cost of delivering libvlc events through MediaEvents, side by side
// with raw libvlc C callbacks, in one process and one run. See Benchmarks/RESULTS.md.
import CRawBaseline
import Foundation
import MediaEvents

_ = Report.loadAverage  // before anything runs
let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
if options.logCostOnly {
    do {
        print(LogCostBench.text(try LogCostBench.measure(messages: options.events, runs: options.runs),
                                messages: options.events))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("MediaEventsBenchmarks: \(error)\n".utf8))
        exit(1)
    }
}
let bench: ThroughputBench
do {
    bench = try ThroughputBench()
} catch {
    FileHandle.standardError.write(Data("MediaEventsBenchmarks: \(error)\n".utf8))
    exit(1)
}
var report = Report(options: options)

report.throughput = bench.measure(events: options.events, runs: options.runs, only: options.only)
if options.includes("latency") {
    report.latencyQueued = bench.latencyQueued(
        events: options.latencyEvents, pauseMicroseconds: options.latencyPauseMicroseconds)
    report.latencyDispatch = bench.latencyDispatch(
        events: options.latencyEvents, pauseMicroseconds: options.latencyPauseMicroseconds)
}
if options.includes("subscriptions") {
    report.subscribeCancelNanoseconds = bench.subscribeCancel(pairs: options.subscriptions, runs: options.runs)
    report.manySubscriptions = bench.manySubscriptions(count: options.subscriptions, runs: 3)
}

let memory = MemoryBench(library: bench.library, raw: bench.raw)
if options.includes("memory") {
    report.perSubscription = memory.perSubscription(count: options.subscriptions)
    report.perPlayer = memory.perPlayer(count: options.players)
}
if options.includes("cycles") {
    report.cycles = await memory.playerCycles(options.cycles, warmUp: options.warmUpCycles)
}

print(options.markdown ? report.markdown() : report.text())
