// MediaEventsBenchmarks: the cost of delivering libvlc events through MediaEvents, side by side
// with raw libvlc C callbacks, in one process and one run. See Sources/MediaEvents/MediaEvents.docc/Benchmarks.md.
import CRawBaseline
import Foundation
import MediaEvents

_ = Report.loadAverage  // before anything runs
_ = Report.lineRoundTrip
let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
if options.logCostOnly {
    do {
        print(
            LogCostBench.text(
                try LogCostBench.measure(messages: options.events, runs: options.runs),
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
let memory = MemoryBench(library: bench.library, raw: bench.raw)
// Before the rows that keep 100 000 subscriptions and 200 players alive: measured after them,
// the cycles' growth was mostly their aftermath (3.9 MiB RSS there, 0.2-1.2 MiB on its own).
if options.includes("cycles") {
    report.cycles = await memory.playerCycles(options.cycles, warmUp: options.warmUpCycles)
}
if options.includes("latency") {
    // Unmeasured first: the first paced run in a process met its thread pool and libvlc's
    // start-up (the first few hundred events of whichever variant ran first were several
    // times slower), and a stream's first met the executor's new threads.
    let warmUp = options.latencyWarmUpEvents
    _ = bench.latencyQueued(events: warmUp, pauseMicroseconds: options.latencyPauseMicroseconds)
    _ = bench.latencyStream(events: warmUp, pauseMicroseconds: options.latencyPauseMicroseconds)
    _ = bench.latencyDispatch(events: warmUp, pauseMicroseconds: options.latencyPauseMicroseconds)
    report.latencyQueued = bench.latencyQueued(
        events: options.latencyEvents, pauseMicroseconds: options.latencyPauseMicroseconds)
    report.latencyStream = bench.latencyStream(
        events: options.latencyEvents, pauseMicroseconds: options.latencyPauseMicroseconds)
    report.latencyDispatch = bench.latencyDispatch(
        events: options.latencyEvents, pauseMicroseconds: options.latencyPauseMicroseconds)
}
if options.includes("subscriptions") {
    report.subscribeCancelNanoseconds = bench.subscribeCancel(pairs: options.subscriptions, runs: options.runs)
    report.manySubscriptions = bench.manySubscriptions(count: options.subscriptions, runs: 3)
}
if options.includes("memory") {
    report.perSubscription = memory.perSubscription(count: options.subscriptions)
    report.perPlayer = memory.perPlayer(count: options.players)
}

print(options.markdown ? report.markdown() : report.text())
