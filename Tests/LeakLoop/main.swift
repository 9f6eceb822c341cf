// A small release executable for Scripts/leaks.sh: loops create / observe / play / teardown
// in every dispatch configuration, then waits until every object was torn down, so valgrind
// sees only what MediaEvents (or libvlc) really leaked.

import Dispatch
import Foundation
import MediaEvents
import Synchronization

/// A 0.2 s 16-bit mono PCM WAV (written here so the program needs no fixtures).
func writeWAV(to path: String) {
    let rate = 8000, frames = rate / 5
    var bytes = [UInt8]()
    func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { bytes += $0 } }
    func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { bytes += $0 } }
    bytes += Array("RIFF".utf8); u32(36 + frames * 2); bytes += Array("WAVEfmt ".utf8)
    u32(16); u16(1); u16(1); u32(rate); u32(rate * 2); u16(2); u16(16)
    bytes += Array("data".utf8); u32(frames * 2)
    for i in 0..<frames { withUnsafeBytes(of: Int16(sin(Double(i) * 0.3) * 8000).littleEndian) { bytes += $0 } }
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
        fatalError("cannot write \(path)")
    }
}

final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 12
let path = NSTemporaryDirectory() + "leak-loop-\(getpid()).wav"
writeWAV(to: path)
defer { try? FileManager.default.removeItem(atPath: path) }

let queue = DispatchQueue(label: "leak-loop.events")
let configurations: [any EventsConfiguring] = [
    EventsDefaultConfiguration(),
    EventsQueueConfiguration(queue: queue, isAsync: false),
    EventsQueueConfiguration(queue: queue, isAsync: true),
]
let completions = Counter()
var expected = 0
do {
    let library = try VLCLibrary()
    for i in 0..<iterations {
        let configuration = configurations[i % configurations.count]
        let ended = DispatchSemaphore(value: 0)
        var tokens: [EventSubscription] = []
        do {
            let media = VLCMedia(path: path, library: library, configuration: configuration)
            let player = VLCMediaPlayer(media: media, library: library, configuration: configuration)
            tokens.append(
                player.observe(.endReached, .encounteredError, onCompletion: { completions.increment() }) { _ in
                    ended.signal()
                })
            tokens.append(media.observe(onCompletion: { completions.increment() }) { _ in })
            player.observe(.timeChanged) { _ in }.cancel()
            media.setMeta(.title, "iteration \(i)")
            player.play()
            if ended.wait(timeout: .now() + 30) == .timedOut {
                print("iteration \(i): no EndReached"); exit(2)
            }
        }
        expected += 2
        let deadline = Date().addingTimeInterval(30)
        while completions.count < expected && Date() < deadline { usleep(10_000) }
        if completions.count < expected { print("iteration \(i): not torn down"); exit(3) }
        tokens.removeAll()
    }
}
// Teardown (detach + native release) runs on MediaEvents' queues after the last completion.
if !VLCLibrary.waitForPendingTeardowns(timeout: 30) {
    print("leak-loop: teardowns still pending after 30 s"); exit(4)
}
print("leak-loop: \(iterations) iterations, \(completions.count) completions")
