import Glibc

/// A value behind a pthread mutex, for the example programs' shared state.
///
/// The library's own lock is internal; a pthread mutex (not `Synchronization.Mutex`) keeps
/// ThreadSanitizer reports meaningful on Linux.
public final class Guarded<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside withLock, under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Wraps `value`.
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
