// A value guarded by a pthread mutex.
//
// Why not `Synchronization.Mutex`: with Swift 6.3.1 on Linux, `Mutex` locks with raw futex
// calls that ThreadSanitizer does not see, so `swift test --sanitize=thread` reports every
// access inside `Mutex.withLock` from two threads as a "Swift access race" (false positive,
// reproduced with a 10-line program). pthread mutexes are intercepted by TSan, so state
// guarded by `Locked` is checked properly.

import Glibc

public final class Locked<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

// `value` is only touched between pthread_mutex_lock and unlock.
extension Locked: @unchecked Sendable where Value: Sendable {}
