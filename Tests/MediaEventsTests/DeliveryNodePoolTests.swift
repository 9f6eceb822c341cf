import CDeliveryNodes
import Dispatch
import Glibc
@testable import MediaEvents
import XCTest

/// The memory of queued deliveries (`CDeliveryNodes`): nodes a drain gives back are reused by
/// the next thread that allocates, a thread's own nodes go back when it exits, the pool keeps
/// a bounded number, and a payload too large for a node still travels whole.
final class DeliveryNodePoolTests: XCTestCase {
    private var limit: Int { Int(MEDIAEVENTS_NODE_POOL_LIMIT) }

    private func requirePool() throws {
        try XCTSkipUnless(
            mediaevents_nodes_are_pooled() != 0, "built with AddressSanitizer: every node is malloc'ed and freed")
    }

    func testNodesGivenBack_areReusedByTheNextThreadThatAllocates() throws {
        try requirePool()
        emptyPool()
        let nodes = onFreshThread { (0..<100).map { _ in UInt(bitPattern: mediaevents_node_allocate()) } }
        giveBack(nodes)
        let missing = onFreshThread { allocate(untilSeeing: Set(nodes)) }
        XCTAssertEqual(missing, 0, "nodes given back were not handed out again")
    }

    /// Two nodes never share a cache line: the sending thread writes one while the drain runs
    /// the one before it.
    func testNodes_fillWholeCacheLines() throws {
        try requirePool()
        XCTAssertEqual(Int(MEDIAEVENTS_NODE_SIZE) % 64, 0)
        let nodes = onFreshThread { (0..<200).map { _ in UInt(bitPattern: mediaevents_node_allocate()) } }
        XCTAssertEqual(nodes.filter { $0 % 64 != 0 }.count, 0, "nodes not aligned on a cache line")
        giveBack(nodes)
    }

    func testNodesAThreadTookButDidNotUse_goBackWhenItExits() throws {
        try requirePool()
        emptyPool()
        let nodes = onFreshThread { (0..<100).map { _ in UInt(bitPattern: mediaevents_node_allocate()) } }
        giveBack(nodes)
        // This thread takes a chain into its own list, uses one node and exits.
        let used = onFreshThread { UInt(bitPattern: mediaevents_node_allocate()) }
        XCTAssertTrue(nodes.contains(used), "the first allocation after a give-back did not reuse a node")
        let missing = onFreshThread { allocate(untilSeeing: Set(nodes).subtracting([used])) }
        XCTAssertEqual(missing, 0, "a thread's unused nodes were lost when it exited")
        free(UnsafeMutableRawPointer(bitPattern: used))
    }

    func testPool_keepsAboutItsLimit_andFreesTheRest() throws {
        try requirePool()
        emptyPool()
        let limit = limit
        let nodes = onFreshThread { (0..<(3 * limit)).map { _ in UInt(bitPattern: mediaevents_node_allocate()) } }
        giveBack(nodes)
        let pooled = mediaevents_nodes_pooled()
        // Chains of 64 are pooled while the whole chain fits.
        XCTAssertGreaterThan(pooled, limit - 64)
        XCTAssertLessThanOrEqual(pooled, limit)
        emptyPool()
    }

    /// An event sent from a thread-exit destructor that runs after the pool's own (an object
    /// kept in thread-local storage whose `deinit` sends one) gets a fresh node: were it to take
    /// the pool into the exiting thread's list, nothing would give those nodes back.
    func testAllocationAfterTheThreadsExitDestructor_doesNotTakeThePool() throws {
        try requirePool()
        emptyPool()
        let nodes = onFreshThread { (0..<100).map { _ in UInt(bitPattern: mediaevents_node_allocate()) } }
        giveBack(nodes)
        let late = LateAllocation()
        let used = onFreshThread { () -> UInt in
            // Takes the chain (registering the pool's destructor), then a destructor of its own
            // that re-arms once, so that its second round comes after the pool's.
            let node = UInt(bitPattern: mediaevents_node_allocate())
            late.arm()
            return node
        }
        XCTAssertNotEqual(late.node, 0, "the late destructor did not run")
        XCTAssertFalse(nodes.contains(late.node), "an allocation after the thread's exit took from the pool")
        let missing = onFreshThread { allocate(untilSeeing: Set(nodes).subtracting([used])) }
        XCTAssertEqual(missing, 0, "nodes were lost in an exited thread's list")
        free(UnsafeMutableRawPointer(bitPattern: used))
        free(UnsafeMutableRawPointer(bitPattern: late.node))
    }

    /// Threads that took a full pool each and exit give back only what the pool has room for.
    func testThreadsThatExit_giveBackNoMoreThanThePoolsLimit() throws {
        try requirePool()
        emptyPool()
        let limit = limit
        let holders = 6
        let release = DispatchSemaphore(value: 0)
        var threads: [pthread_t] = []
        for _ in 0..<holders {
            let nodes = onFreshThread { (0..<limit).map { _ in UInt(bitPattern: mediaevents_node_allocate()) } }
            giveBack(nodes)
            let took = DispatchSemaphore(value: 0)
            threads.append(
                startThread {
                    _ = mediaevents_node_allocate()  // takes a chain, uses one node
                    took.signal()
                    release.wait()
                })
            XCTAssertEqual(took.wait(timeout: .now() + 20), .success)
        }
        for _ in 0..<holders { release.signal() }
        for thread in threads { pthread_join(thread, nil) }
        XCTAssertLessThanOrEqual(mediaevents_nodes_pooled(), limit, "exits filled the pool past its limit")
        emptyPool()
    }

    /// A payload larger than a node is allocated on its own: delivered whole, in order, and
    /// destroyed once delivered, as a pooled one is.
    func testAsyncDelivery_ofAPayloadLargerThanANode_arrivesWholeAndIsReleased() {
        final class Token: Sendable {}
        struct Large: Sendable {
            let values: SIMD32<Int64>
            let token: Token
        }
        XCTAssertGreaterThan(MemoryLayout<Large>.size, Int(MEDIAEVENTS_NODE_SIZE))
        final class Target: Sendable {}
        let target = Target()
        let queue = DispatchQueue(label: "test.node-pool.large")
        let handler = EventsHandler(
            object: target, configuration: EventsQueueConfiguration(queue: queue, isAsync: true))
        let seen = Recorder<Int64>()
        let count = 500
        var kept: [Token] = []
        weak var lastToken: Token?
        for index in 0..<count {
            let token = Token()
            if index == count - 1 { lastToken = token } else { kept.append(token) }
            let values = SIMD32<Int64>(repeating: Int64(index)) &+ SIMD32((0..<32).map { Int64($0) })
            handler.handleEvent(Large(values: values, token: token)) { _, large in
                let expected = SIMD32<Int64>(repeating: large.values[0]) &+ SIMD32((0..<32).map { Int64($0) })
                seen.record(large.values == expected ? large.values[0] : -1)
            }
        }
        runWithDeadline(30, "the queued deliveries") { queue.sync {} }
        XCTAssertEqual(seen.values, (0..<count).map { Int64($0) })
        XCTAssertNil(lastToken, "the last payload was not destroyed once delivered")
        withExtendedLifetime((target, kept)) {}
    }

    // MARK: - Helpers

    /// Empties the shared pool: a fresh thread takes every node in it (and more) and frees them.
    private func emptyPool() {
        let count = 2 * limit + 256
        onFreshThread {
            let taken = (0..<count).map { _ in mediaevents_node_allocate() }
            taken.forEach { free($0) }
        }
    }

    /// Gives `nodes` back from this thread as a drain does: in chains of 64.
    private func giveBack(_ nodes: [UInt]) {
        var start = 0
        while start < nodes.count {
            let chain = nodes[start..<min(start + 64, nodes.count)].map { UnsafeMutableRawPointer(bitPattern: $0)! }
            for (node, next) in zip(chain, chain.dropFirst()) {
                node.storeBytes(of: UInt(bitPattern: next), as: UInt.self)
            }
            mediaevents_nodes_free(chain.first, chain.last, chain.count)
            start += 64
        }
    }
}

/// Allocates nodes on this thread until all of `wanted` came back (or the whole pool and
/// more were taken), frees them all, and returns how many of `wanted` never came back.
private func allocate(untilSeeing wanted: Set<UInt>) -> Int {
    var missing = wanted
    var taken: [UnsafeMutableRawPointer] = []
    let bound = wanted.count + 3 * Int(MEDIAEVENTS_NODE_POOL_LIMIT) + 256
    while !missing.isEmpty && taken.count < bound {
        let node = mediaevents_node_allocate()!
        taken.append(node)
        missing.remove(UInt(bitPattern: node))
    }
    taken.forEach { free($0) }
    return missing.count
}

/// Runs `body` on a new thread and returns its result once the thread has exited (its
/// thread-exit destructors have run).
private func onFreshThread<T>(_ body: @escaping () -> T) -> T {
    var result: T?
    pthread_join(startThread { result = body() }, nil)
    return result!
}

/// Starts a thread running `body`; join it.
private func startThread(_ body: @escaping () -> Void) -> pthread_t {
    final class Context {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let created = pthread_create(
        &thread, nil,
        { raw in
            Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Context(body)).toOpaque())
    precondition(created == 0, "pthread_create failed: \(created)")
    return thread
}

/// A thread-exit destructor that allocates a node in its second round, after the pool's own
/// destructor has run in the first.
private final class LateAllocation: @unchecked Sendable {
    // @unchecked: written by the exiting thread, read after `pthread_join` returns.
    private var key = pthread_key_t()
    private(set) var node: UInt = 0
    private var rounds = 0

    func arm() {
        let created = pthread_key_create(&key) { raw in
            let late = Unmanaged<LateAllocation>.fromOpaque(raw!).takeUnretainedValue()
            late.rounds += 1
            if late.rounds == 1 {
                pthread_setspecific(late.key, raw)
            } else {
                late.node = UInt(bitPattern: mediaevents_node_allocate())
            }
        }
        precondition(created == 0, "pthread_key_create failed: \(created)")
        pthread_setspecific(key, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { pthread_key_delete(key) }
}
