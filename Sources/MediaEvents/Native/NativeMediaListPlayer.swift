import CLibVLC

/// A list player (`libvlc_media_list_player_t`). Every call takes its object and callback
/// locks (mlp.obj, mlp.cb) and its events are sent with them held (LP1, LP3), so every call
/// runs on the list player's control queue, which is its player's (G26, rule 6).
struct NativeMediaListPlayer: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Calls `libvlc_media_list_player_new`, which makes a player of its own; `nil` when out of
    /// memory.
    /// - Sends: nothing. Locks: as `NativeMediaPlayer.new(in:)` (P16).
    /// - Queue: the caller's, or the control queue when made in a handler (rule 13).
    static func new(in library: NativeLibrary) -> NativeMediaListPlayer? {
        libvlc_media_list_player_new(library.pointer).map(NativeMediaListPlayer.init)
    }

    /// Calls `libvlc_media_list_player_release`: the last reference stops it and joins its
    /// thread.
    /// - Sends: the sends of `stop()`. Locks: mlp.obj + mlp.cb (G26).
    /// - Queue: the control queue (the teardown), never a libvlc thread.
    func release() { libvlc_media_list_player_release(pointer) }

    /// Calls `libvlc_media_list_player_event_manager`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var eventManager: NativeEventManager {
        NativeEventManager(libvlc_media_list_player_event_manager(pointer))
    }

    /// Calls `libvlc_media_list_player_set_media_player`: attaches to the player's event manager.
    /// - Sends: nothing. Locks: mlp.obj + mlp.cb, then the player's EM (waits for a running
    ///   player callback, G26, G30).
    /// - Queue: the control queue, first of the list player's blocks.
    func setMediaPlayer(_ player: NativeMediaPlayer) {
        libvlc_media_list_player_set_media_player(pointer, player.pointer)
    }

    /// Calls `libvlc_media_list_player_set_media_list`.
    /// - Sends: nothing. Locks: mlp.obj + mlp.cb (G26).
    /// - Queue: the control queue.
    func setMediaList(_ list: NativeMediaList) {
        libvlc_media_list_player_set_media_list(pointer, list.pointer)
    }

    /// Calls `libvlc_media_list_player_set_playback_mode` (`libvlc_playback_mode_t` raw value).
    /// - Sends: nothing. Locks: mlp.obj + mlp.cb (G26).
    /// - Queue: the control queue.
    func setPlaybackMode(_ mode: Int32) {
        libvlc_media_list_player_set_playback_mode(pointer, libvlc_playback_mode_t(UInt32(bitPattern: mode)))
    }

    /// Calls `libvlc_media_list_player_play`.
    /// - Sends: LP1b or LP2a, and the player's P1, M5c and M1b, on the calling thread.
    /// - Locks: mlp.obj + mlp.cb, ml, then the player's G12/G13 (G26).
    /// - Queue: the control queue, through the advance gate (rule 16).
    func play() { libvlc_media_list_player_play(pointer) }

    /// Calls `libvlc_media_list_player_set_pause` (`true` pauses).
    /// - Sends: the player's P5 later. Locks: mlp.obj + mlp.cb, then the player's mp.in (G26).
    /// - Queue: the control queue, through the advance gate.
    func setPause(_ paused: Bool) { libvlc_media_list_player_set_pause(pointer, paused ? 1 : 0) }

    /// Calls `libvlc_media_list_player_stop`.
    /// - Sends: LP3 (`Stopped`), and inside it the player's P6b and M5b, on the calling thread.
    /// - Locks: mlp.obj + mlp.cb, then the player's G13 (G26).
    /// - Queue: the control queue, through the advance gate.
    func stop() { libvlc_media_list_player_stop(pointer) }

    /// Calls `libvlc_media_list_player_next`; 0 when there was a next item.
    /// - Sends: as `play()`. Locks: as `play()`.
    /// - Queue: as `play()`.
    @discardableResult
    func next() -> Int32 { libvlc_media_list_player_next(pointer) }

    /// Calls `libvlc_media_list_player_previous`; 0 when there was a previous item.
    /// - Sends: as `play()`. Locks: as `play()`.
    /// - Queue: as `play()`.
    @discardableResult
    func previous() -> Int32 { libvlc_media_list_player_previous(pointer) }

    /// Calls `libvlc_media_list_player_play_item_at_index`, which checks neither the index nor
    /// that there is a list (a missing list's count is read: SIGSEGV).
    /// - Sends: the player's P1, M5c and M1b on the calling thread, then LP2b with no lock.
    /// - Locks: mlp.obj + mlp.cb, then the player's G12/G13 (G26).
    /// - Queue: the control queue, through the advance gate and the list guard (rule 17).
    @discardableResult
    func play(at index: Int32) -> Int32 { libvlc_media_list_player_play_item_at_index(pointer, index) }

    /// Calls `libvlc_media_list_player_play_item`, which does not check that there is a list.
    /// - Sends: as `play(at:)`, without LP2. Locks: as `play(at:)`.
    /// - Queue: as `play(at:)`.
    @discardableResult
    func play(_ media: NativeMedia) -> Int32 { libvlc_media_list_player_play_item(pointer, media.pointer) }
}
