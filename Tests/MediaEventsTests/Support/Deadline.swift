// Hang protection: a deadlock in a test must fail that test, not freeze the whole run.

import Foundation
import TestSupport
import XCTest

/// Runs `body` on a new `Thread` and waits up to `seconds` for it. On timeout it records
/// `XCTFail("<what> did not finish within <seconds> s (deadlock?)")` and returns false; the
/// stuck thread is abandoned (it keeps whatever it holds, so later tests in the same process
/// may be affected — the failure message is the point).
@discardableResult
func runWithDeadline(
    _ seconds: Double, _ what: String,
    file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable () -> Void
) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.name = "runWithDeadline: \(what)"
    thread.start()
    if done.wait(timeout: .now() + seconds) == .timedOut {
        XCTFail("\(what) did not finish within \(seconds) s (deadlock?)", file: file, line: line)
        return false
    }
    return true
}

/// Polls `condition` every `poll` seconds until it is true (returns true) or `seconds` have
/// passed (returns false after one last check). Sleeps the calling thread between polls.
func waitUntil(_ seconds: Double, poll: Double = 0.005, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + seconds
    while DispatchTime.now() < deadline {
        if condition() { return true }
        usleep(useconds_t(max(0, poll) * 1_000_000))
    }
    return condition()
}

struct TimeoutError: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "operation did not finish within \(seconds) s" }
}

/// Runs `op` and returns its result, or throws `TimeoutError` after `seconds`.
///
/// On timeout `op` is cancelled and *abandoned*: this function returns without waiting for it.
/// (A plain task group racing a sleep would also cancel the loser, but leaving the group waits
/// for every child, so an `op` that ignores cancellation — e.g. stuck on a continuation that
/// is never resumed — would hang the test anyway.) Cancelling the calling task cancels `op`.
func withTimeout<T: Sendable>(
    _ seconds: Double,
    _ op: @escaping @Sendable () async throws -> T
) async throws -> T {
    let gate = ResumeOnce<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            gate.install(continuation)
            let timer = Task {
                try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
                if !Task.isCancelled, gate.resume(with: .failure(TimeoutError(seconds: seconds))) {
                    gate.cancelWork()
                }
            }
            let task = Task {
                let result: Result<T, any Error>
                do { result = .success(try await op()) } catch { result = .failure(error) }
                if gate.resume(with: result) { timer.cancel() }
            }
            gate.setWork(task)
            if gate.isFinished { timer.cancel() }
        }
    } onCancel: {
        gate.cancelWork()
        _ = gate.resume(with: .failure(CancellationError()))
    }
}

/// Resumes a continuation at most once, from whichever side gets there first.
private final class ResumeOnce<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?  // a result that arrived before install
        var finished = false
        var work: Task<Void, Never>?
        var cancelWorkRequested = false
    }
    private let state = Locked(State())

    var isFinished: Bool { state.withLock { $0.finished } }

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let pending = state.withLock { s -> Result<T, any Error>? in
            if let p = s.pending { s.pending = nil; return p }
            s.continuation = continuation
            return nil
        }
        if let pending { continuation.resume(with: pending) }
    }

    func setWork(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { s -> Bool in
            s.work = task
            return s.cancelWorkRequested
        }
        if cancelNow { task.cancel() }
    }

    func cancelWork() {
        state.withLock { s -> Task<Void, Never>? in
            s.cancelWorkRequested = true
            return s.work
        }?.cancel()
    }

    /// Returns true if this call decided the outcome.
    func resume(with result: Result<T, any Error>) -> Bool {
        let continuation = state.withLock { s -> CheckedContinuation<T, any Error>?? in
            if s.finished { return nil }
            s.finished = true
            if let c = s.continuation { s.continuation = nil; return .some(c) }
            s.pending = result
            return .some(nil)
        }
        guard let continuation else { return false }
        continuation?.resume(with: result)
        return true
    }
}
