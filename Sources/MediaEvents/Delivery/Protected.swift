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

/// A value behind a pthread mutex with a condition variable: for a thread that must wait until
/// another changes the value (a gate closed while libvlc moves on, a phase another thread is
/// leaving). The state machine runs under the lock; the waiter sleeps on the condition, never
/// polls, and what a change requires (calling libvlc, user code) runs after unlocking.
final class Waitable<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched with `mutex` locked (withLock, change, wait).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    private let value: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        changed = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines are read from the monotonic clock (`MonotonicClock`), never the wall clock.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(changed)
        changed.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Reads or changes the value without waking anyone.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    /// Changes the value and wakes every waiter, which looks at it again.
    func change<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        return try body(&value.pointee)
    }

    /// Waits until `isReady` holds, or until `deadline` (`MonotonicClock.now` nanoseconds;
    /// `nil`: none) has passed, then runs `body` in the same critical section with whether it
    /// held.
    func wait<Result>(
        until isReady: (Value) -> Bool, deadline: UInt64? = nil, then body: (inout Value, Bool) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var limit = deadline.map { timespec(tv_sec: Int($0 / 1_000_000_000), tv_nsec: Int($0 % 1_000_000_000)) }
        while !isReady(value.pointee) {
            if limit == nil {
                pthread_cond_wait(changed, mutex)
            } else if pthread_cond_timedwait(changed, mutex, &limit!) == ETIMEDOUT {
                break
            }
        }
        return try body(&value.pointee, isReady(value.pointee))
    }
}

/// The monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds: what `Waitable`'s deadlines are
/// measured in.
enum MonotonicClock {
    static var now: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
