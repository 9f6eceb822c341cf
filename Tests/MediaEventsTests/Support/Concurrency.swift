// Real threads for stress tests, and thread-safe boxes for values seen in callbacks.
//
// On a 2-core machine `DispatchQueue.global()` may run "concurrent" blocks one after another,
// which hides races (and TSan sees nothing). `startThreads` starts its own `Thread`s, holds
// them at a barrier until all are running, then releases them together.

import Foundation
import TestSupport
import XCTest

/// A one-shot barrier: the first `parties - 1` callers of `arriveAndWait` block until the
/// last one arrives; then all return together.
final class ThreadBarrier: Sendable {
    let parties: Int
    private let arrived = Locked(0)
    private let gate = DispatchSemaphore(value: 0)

    init(parties: Int) {
        precondition(parties > 0)
        self.parties = parties
    }

    /// Returns false if the barrier did not open within `timeout` seconds.
    @discardableResult
    func arriveAndWait(timeout: Double = 30) -> Bool {
        let isLast = arrived.withLock { n -> Bool in
            n += 1
            return n == parties
        }
        if isLast {
            for _ in 0..<(parties - 1) { gate.signal() }
            return true
        }
        return gate.wait(timeout: .now() + timeout) == .success
    }
}

/// Starts `count` real threads that wait at a barrier and run `body(index)` all at once, then
/// joins them. Returns false (after `XCTFail`) if they did not all finish within `timeout`
/// seconds; threads still running are abandoned.
@discardableResult
func startThreads(
    count: Int, timeout: Double = 30, name: String = "stress",
    file: StaticString = #filePath, line: UInt = #line,
    body: @escaping @Sendable (_ index: Int) -> Void
) -> Bool {
    precondition(count > 0)
    let barrier = ThreadBarrier(parties: count)
    let done = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            barrier.arriveAndWait(timeout: timeout)
            body(index)
            done.signal()
        }
        thread.name = "\(name) #\(index)"
        thread.start()
    }
    let deadline = DispatchTime.now() + timeout
    for finished in 0..<count {
        if done.wait(timeout: deadline) == .timedOut {
            XCTFail(
                "\(count - finished) of \(count) '\(name)' threads did not finish within \(timeout) s (deadlock?)",
                file: file, line: line)
            return false
        }
    }
    return true
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value: Locked<Int>

    init(_ initial: Int = 0) {
        value = Locked(initial)
    }

    var count: Int { value.withLock { $0 } }

    /// Adds `amount` and returns the new value.
    @discardableResult
    func increment(by amount: Int = 1) -> Int {
        value.withLock { v -> Int in
            v += amount
            return v
        }
    }

    func reset() {
        value.withLock { $0 = 0 }
    }

    /// Waits (polling) until the count is at least `target`.
    func wait(forAtLeast target: Int, timeout: Double) -> Bool {
        waitUntil(timeout) { count >= target }
    }
}

/// A thread-safe, ordered record of values (e.g. events seen by a callback, with their thread).
final class Recorder<T: Sendable>: Sendable {
    private let items = Locked<[T]>([])

    init() {}

    func record(_ value: T) {
        items.withLock { $0.append(value) }
    }

    var values: [T] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }

    /// Returns everything recorded so far and empties the recorder.
    @discardableResult
    func removeAll() -> [T] {
        items.withLock { v -> [T] in
            let all = v
            v.removeAll()
            return all
        }
    }

    /// Waits (polling) until at least `target` values were recorded.
    func wait(forCount target: Int, timeout: Double) -> Bool {
        waitUntil(timeout) { count >= target }
    }

    /// Waits (polling) until some recorded value satisfies `predicate`.
    func wait(timeout: Double, until predicate: (T) -> Bool) -> Bool {
        waitUntil(timeout) { values.contains(where: predicate) }
    }
}

/// Carries a non-Sendable value (e.g. a libvlc `OpaquePointer`) into a `@Sendable` closure.
/// The test is responsible for using the value safely from the other thread (libvlc objects
/// are thread-safe to call; the point of many tests is doing exactly that).
struct UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
