import CLibVLC
import Glibc

/// A libvlc instance (`libvlc_instance_t`), and the calls that belong to no object.
struct NativeLibrary: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Calls `libvlc_new` with `arguments`; `nil` when libvlc refuses them or finds no plugins
    /// (`lastError` says why).
    /// - Sends: nothing. Locks: none of <doc:SendSites>.
    /// - Queue: any thread.
    static func new(arguments: [String]) -> NativeLibrary? {
        withCStringArray(arguments) { count, argv in libvlc_new(count, argv) }.map(NativeLibrary.init)
    }

    /// Calls `libvlc_retain`.
    /// - Sends: nothing. Locks: the instance's reference count only.
    /// - Queue: any thread.
    func retain() { libvlc_retain(pointer) }

    /// Calls `libvlc_release`; the last reference stops the instance's threads.
    /// - Sends: nothing. Locks: the reference count; the last release joins libvlc's threads.
    /// - Queue: any thread that is not libvlc's (a wrapper's `deinit` run by a delivery runs on
    ///   MediaEvents' release queue).
    func release() { libvlc_release(pointer) }

    /// Calls `libvlc_get_version`: "3.0.24 Vetinari".
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    static var version: String { String(cString: libvlc_get_version()) }

    /// Calls `libvlc_errmsg`, then `libvlc_clearerr` when there was a message: libvlc's last
    /// error on this thread, `nil` for none (or an empty one).
    /// - Sends: nothing. Locks: none (a per-thread value).
    /// - Queue: the thread that made the call that failed.
    static func takeLastError() -> String? {
        guard let message = libvlc_errmsg() else { return nil }
        let text = String(cString: message)
        libvlc_clearerr()
        return text.isEmpty ? nil : text
    }

    /// Calls `libvlc_clearerr`, so that the next failure on this thread reports its own message.
    /// - Sends: nothing. Locks: none.
    /// - Queue: the thread about to make the call.
    static func clearError() { libvlc_clearerr() }

    /// Calls `libvlc_event_type_name`: libvlc's name of an event type ("Unknown Event" for one
    /// it does not know).
    /// - Sends: nothing. Locks: none (a static table).
    /// - Queue: any thread.
    static func eventTypeName(_ type: Int32) -> String { String(cString: libvlc_event_type_name(type)) }

    /// Calls `libvlc_clock`: libvlc's clock, in microseconds (the clock of `pts` values).
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread (the audio callbacks' included).
    static func clock() -> Int64 { libvlc_clock() }

    /// Calls `libvlc_media_discoverer_list_get` and `libvlc_media_discoverer_list_release`: the
    /// media discovery services of `category` (its raw value) as (name, long name).
    /// - Sends: nothing. Locks: the module bank, briefly.
    /// - Queue: any thread.
    func mediaDiscoverers(category: Int32) -> [(name: String, longName: String)] {
        var services: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_discoverer_description_t>?>?
        let count = libvlc_media_discoverer_list_get(
            pointer, libvlc_media_discoverer_category_t(UInt32(bitPattern: category)), &services)
        guard count > 0, let services else { return [] }
        defer { libvlc_media_discoverer_list_release(services, Int(count)) }
        return (0..<Int(count)).compactMap { index in
            services[index].map { (String(cString: $0.pointee.psz_name), String(cString: $0.pointee.psz_longname)) }
        }
    }

    /// Calls `libvlc_renderer_discoverer_list_get` and `libvlc_renderer_discoverer_list_release`:
    /// the renderer discovery services as (name, long name).
    /// - Sends: nothing. Locks: the module bank, briefly.
    /// - Queue: any thread.
    func rendererDiscoverers() -> [(name: String, longName: String)] {
        var services: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_rd_description_t>?>?
        let count = libvlc_renderer_discoverer_list_get(pointer, &services)
        guard count > 0, let services else { return [] }
        defer { libvlc_renderer_discoverer_list_release(services, Int(count)) }
        return (0..<Int(count)).compactMap { index in
            services[index].map { (String(cString: $0.pointee.psz_name), String(cString: $0.pointee.psz_longname)) }
        }
    }
}
