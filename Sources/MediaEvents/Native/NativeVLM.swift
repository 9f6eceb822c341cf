import CLibVLC
import Glibc

/// The VLM of a libvlc instance (its `libvlc_vlm_*` calls take the instance). Every call takes
/// the VLM's lock, and those that change a media send V1–V3 with it held and wait on
/// var(vlm:intf-event); `stop`, `del` and `release` join instance input threads with it held
/// (G29). So every call runs on the library's VLM control queue (rule 10). Each returns 0 on
/// success; `NativeLibrary.takeLastError` on that queue says why not.
struct NativeVLM: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object (the instance).
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    init(of library: NativeLibrary) { pointer = library.pointer }

    /// Calls `libvlc_vlm_get_event_manager`, which creates the VLM on first use; `nil` when the
    /// installed libvlc has none.
    /// - Sends: nothing. Locks: the instance's VLM creation lock.
    /// - Queue: the VLM control queue.
    var eventManager: NativeEventManager? { libvlc_vlm_get_event_manager(pointer).map(NativeEventManager.init) }

    /// Calls `libvlc_vlm_release`: deletes every media (V1 `MediaRemoved`, V3 for their running
    /// instances) and frees the VLM and its event manager.
    /// - Sends: V1, V3 on the calling thread. Locks: vlm; joins instance input threads (G29).
    /// - Queue: the VLM control queue, after the last `VLCVLM` of the library.
    func release() { libvlc_vlm_release(pointer) }

    /// Calls `libvlc_vlm_add_broadcast`.
    /// - Sends: V1 (`MediaAdded`, `MediaChanged`) on the calling thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func addBroadcast(
        name: String, input: String, output: String, options: [String], enabled: Bool, loop: Bool
    ) -> Int32 {
        withCStringArray(options) { count, array in
            libvlc_vlm_add_broadcast(pointer, name, input, output, count, array, enabled ? 1 : 0, loop ? 1 : 0)
        }
    }

    /// Calls `libvlc_vlm_add_vod`.
    /// - Sends: V1 on the calling thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func addVOD(name: String, input: String, options: [String], enabled: Bool, mux: String?) -> Int32 {
        withCStringArray(options) { count, array in
            libvlc_vlm_add_vod(pointer, name, input, count, array, enabled ? 1 : 0, mux)
        }
    }

    /// Calls `libvlc_vlm_del_media`, stopping the media's instances.
    /// - Sends: V3, then V1 (`MediaRemoved`), on the calling thread. Locks: vlm; joins the
    ///   instances' input threads (G29).
    /// - Queue: the VLM control queue.
    func deleteMedia(_ name: String) -> Int32 { libvlc_vlm_del_media(pointer, name) }

    /// Calls `libvlc_vlm_set_enabled`.
    /// - Sends: V1 (`MediaChanged`) on the calling thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func setEnabled(_ name: String, _ enabled: Bool) -> Int32 { libvlc_vlm_set_enabled(pointer, name, enabled ? 1 : 0) }

    /// Calls `libvlc_vlm_set_output`.
    /// - Sends: V1 on the calling thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func setOutput(_ name: String, _ output: String) -> Int32 { libvlc_vlm_set_output(pointer, name, output) }

    /// Calls `libvlc_vlm_set_input`.
    /// - Sends: V1 on the calling thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func setInput(_ name: String, _ input: String) -> Int32 { libvlc_vlm_set_input(pointer, name, input) }

    /// Calls `libvlc_vlm_set_loop`.
    /// - Sends: V1 on the calling thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func setLoop(_ name: String, _ loop: Bool) -> Int32 { libvlc_vlm_set_loop(pointer, name, loop ? 1 : 0) }

    /// Calls `libvlc_vlm_play_media`.
    /// - Sends: V2 (`InstanceStarted`; V3 when it restarts one) on the calling thread, then V4
    ///   from the instance's input thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func play(_ name: String) -> Int32 { libvlc_vlm_play_media(pointer, name) }

    /// Calls `libvlc_vlm_stop_media`.
    /// - Sends: V3 on the calling thread. Locks: vlm; joins the instance's input thread (G29).
    /// - Queue: the VLM control queue.
    func stop(_ name: String) -> Int32 { libvlc_vlm_stop_media(pointer, name) }

    /// Calls `libvlc_vlm_pause_media`.
    /// - Sends: V4 (`InstanceStatusPause`) from the input thread. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func pause(_ name: String) -> Int32 { libvlc_vlm_pause_media(pointer, name) }

    /// Calls `libvlc_vlm_seek_media` (percent).
    /// - Sends: nothing. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func seek(_ name: String, toPercentage percentage: Float) -> Int32 {
        libvlc_vlm_seek_media(pointer, name, percentage)
    }

    /// Calls `libvlc_vlm_show_media`: libvlc's JSON description of `name` (of every media for
    /// ""), `nil` when there is no such media.
    /// - Sends: nothing. Locks: vlm (G29).
    /// - Queue: the VLM control queue.
    func describe(_ name: String) -> String? {
        guard let text = libvlc_vlm_show_media(pointer, name) else { return nil }
        // libvlc hands over a malloc'd string despite the const in its signature.
        defer { free(UnsafeMutableRawPointer(mutating: text)) }
        return String(cString: text)
    }
}
