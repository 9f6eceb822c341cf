// MediaEventsBenchmarks: the cost of delivering libvlc events through MediaEvents, side by side
// with raw libvlc C callbacks, in one process and one run. See Benchmarks/README-section.md.
import CRawBaseline
import Foundation
import MediaEvents

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
if options.only != nil {
    print(report.text())
    exit(0)
}
report.latencyQueued = bench.latencyQueued(
    events: options.latencyEvents, pauseMicroseconds: options.latencyPauseMicroseconds)
report.latencyDispatch = bench.latencyDispatch(
    events: options.latencyEvents, pauseMicroseconds: options.latencyPauseMicroseconds)
report.subscribeCancelNanoseconds = bench.subscribeCancel(pairs: options.subscriptions, runs: options.runs)

let memory = MemoryBench(library: bench.library, raw: bench.raw)
report.perSubscription = memory.perSubscription(count: options.subscriptions)
report.perPlayer = memory.perPlayer(count: options.players)
report.cycles = await memory.playerCycles(options.cycles, warmUp: options.warmUpCycles)

print(options.markdown ? report.markdown() : report.text())
