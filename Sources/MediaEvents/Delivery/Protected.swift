import Glibc

/// A value behind a pthread mutex: the lock MediaEvents uses for all its state.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with raw futex system calls that
/// ThreadSanitizer does not see, so every correctly locked access is reported as a race
/// (reproduced with a ten-line program under `swift build --sanitize=thread`). A pthread
/// mutex is intercepted by ThreadSanitizer, so its reports stay meaningful.
///
/// The mutex is glibc's adaptive kind: a thread that finds it taken spins briefly before it
/// sleeps in the kernel. The sections it guards are a few dozen instructions, and when
/// libvlc's thread and a stream's consumer met at one, the sleep and the wake-up cost more
/// than the section (benchmark (d): 170–310 ns per event on libvlc's thread with it, 170–510
/// ns without, same machine, three runs each).
final class Protected<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside withLock, under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Out of line rather than a stored `var`: the mutex already makes access exclusive, and a
    // class's stored `var` passed `inout` costs a dynamic exclusivity check per lock
    // (swift_beginAccess/endAccess, seen in perf on libvlc's thread).
    private let value: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Never call user code, resume a
    /// continuation or call libvlc inside `body`.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
