import Glibc

/// Records, per thread, which objects' events the thread is delivering while libvlc waits
/// with that object's lock held.
///
/// libvlc sends media list item events with the list's non-recursive lock held and list
/// player events with the list player's locks held; a handler that calls back into such an
/// object must neither take that lock again nor wait for a queue that is waiting for the
/// lock. The object's wrapper asks `DeliveryScope.isDelivering(self)` and then reads without
/// locking (the lock is held for this thread, or by the thread that waits for it) and queues
/// edits instead of waiting.
///
/// A thread-local stack, because a handler of one object may synchronously drive another
/// object's events (nested scopes).
enum DeliveryScope {
    /// One thread's stack of objects being delivered for; owned by that thread only.
    private final class Frames {
        var objects: [ObjectIdentifier] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { frames in
            if let frames { Unmanaged<AnyObject>.fromOpaque(frames).release() }
        }
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
        return key
    }()

    private static var frames: Frames {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Frames>.fromOpaque(raw).takeUnretainedValue()
        }
        let frames = Frames()
        pthread_setspecific(key, Unmanaged.passRetained(frames).toOpaque())
        return frames
    }

    /// Runs `body` marked as a synchronous delivery of `object`'s events on this thread.
    static func delivering<R>(_ object: AnyObject, _ body: () throws -> R) rethrows -> R {
        let frames = frames
        frames.objects.append(ObjectIdentifier(object))
        defer { frames.objects.removeLast() }
        return try body()
    }

    /// Whether this thread is inside a synchronous delivery of `object`'s events.
    static func isDelivering(_ object: AnyObject) -> Bool {
        guard let raw = pthread_getspecific(key) else { return false }
        return Unmanaged<Frames>.fromOpaque(raw).takeUnretainedValue().objects
            .contains(ObjectIdentifier(object))
    }
}
