import CRawBaseline
import Foundation
import Glibc
import MediaEvents

/// Heap (mallinfo2) and resident memory, in bytes.
struct MemoryReading {
    var heap: Int
    var resident: Int

    static func now() -> MemoryReading {
        MemoryReading(heap: crb_heap_in_use(), resident: crb_rss_bytes())
    }

    static func - (lhs: MemoryReading, rhs: MemoryReading) -> MemoryReading {
        MemoryReading(heap: lhs.heap - rhs.heap, resident: lhs.resident - rhs.resident)
    }

    /// Waits until teardowns queued on MediaEvents' queues have run: the heap stops
    /// changing for a few polls in a row (at most `limit` seconds).
    static func settled(limit: Double = 10) -> MemoryReading {
        let deadline = Date().addingTimeInterval(limit)
        var last = now()
        var stable = 0
        while stable < 3 && Date() < deadline {
            usleep(100_000)
            let current = now()
            stable = abs(current.heap - last.heap) < 4096 ? stable + 1 : 0
            last = current
        }
        return last
    }
}

/// Memory costs of subscriptions and players.
struct MemoryBench {
    let library: VLCLibrary
    let raw: OpaquePointer

    /// Heap and RSS growth per live subscription, over `count` closure subscriptions (each
    /// closure captures one object, as real handlers do) on one media.
    func perSubscription(count: Int) -> (heap: Double, resident: Double) {
        let media = VLCMedia(
            url: URL(fileURLWithPath: ThroughputBench.mediaPath), library: library,
            configuration: EventsDefaultConfiguration())
        let counter = DeliveryCounter()
        // The first subscription attaches the native listeners; it is not counted.
        let first = media.observe(.metaChanged) { _ in counter.hit() }
        var tokens: [EventSubscription] = []
        tokens.reserveCapacity(count)
        let before = MemoryReading.now()
        for _ in 0..<count {
            tokens.append(media.observe(.metaChanged) { _ in counter.hit() })
        }
        let grown = MemoryReading.now() - before
        // The media goes first: its teardown finishes every sink in one pass.
        withExtendedLifetime(media) {}
        withExtendedLifetime(first) {}
        withExtendedLifetime(tokens) {}
        return (Double(grown.heap) / Double(count), Double(grown.resident) / Double(count))
    }

    /// Heap growth per live player: MediaEvents' `VLCMediaPlayer` and a raw libvlc player.
    func perPlayer(count: Int) -> (wrapped: Double, raw: Double) {
        var before = MemoryReading.settled(limit: 3)
        var players: [VLCMediaPlayer] = []
        players.reserveCapacity(count)
        for _ in 0..<count { players.append(VLCMediaPlayer(library: library)) }
        let wrapped = Double((MemoryReading.now() - before).heap) / Double(count)
        players.removeAll()
        before = MemoryReading.settled(limit: 5)
        var rawPlayers: [UnsafeMutableRawPointer?] = []
        rawPlayers.reserveCapacity(count)
        for _ in 0..<count { rawPlayers.append(crb_player_new(raw)) }
        let rawBytes = Double((MemoryReading.now() - before).heap) / Double(count)
        rawPlayers.forEach { crb_player_release($0) }
        return (wrapped, rawBytes)
    }

    /// Growth of heap and RSS over `cycles` create/observe/stop/teardown cycles of a player,
    /// after `warmUp` cycles, once the teardown queues have drained.
    func playerCycles(_ cycles: Int, warmUp: Int) async -> MemoryReading {
        let counter = DeliveryCounter()
        for _ in 0..<warmUp { await cycle(counter) }
        let before = MemoryReading.settled()
        for _ in 0..<cycles { await cycle(counter) }
        return MemoryReading.settled() - before
    }

    private func cycle(_ counter: DeliveryCounter) async {
        let player = VLCMediaPlayer(library: library)
        let subscription = player.observe(.stopped, .mediaChanged) { _ in counter.hit() }
        await player.stopAndWait()
        subscription.cancel()
    }
}
