import CLibVLC

/// A player's audio output through callbacks (libvlc's `amem`): the program receives the
/// samples instead of a device.
enum NativeAudioOutput {
    /// The callbacks (`libvlc_audio_play_cb` …), called on the audio output's thread, one at a
    /// time per player.
    typealias Play = libvlc_audio_play_cb
    typealias Pause = libvlc_audio_pause_cb
    typealias Flush = libvlc_audio_flush_cb
    typealias Drain = libvlc_audio_drain_cb
    typealias Setup = libvlc_audio_setup_cb
    typealias SetVolume = libvlc_audio_set_volume_cb

    /// Calls `libvlc_audio_set_callbacks` (no resume callback), `libvlc_audio_set_format_callbacks`
    /// (no cleanup) and `libvlc_audio_set_volume_callback` on `player`, each given `opaque`.
    /// - Sends: nothing. Locks: the player's variables, briefly.
    /// - Queue: before the player's first play: where the native player is created (its
    ///   initializer, or the first block of its control queue).
    static func install(
        on player: NativeMediaPlayer, play: Play, pause: Pause, flush: Flush, drain: Drain, setup: Setup,
        setVolume: SetVolume, opaque: UnsafeMutableRawPointer
    ) {
        libvlc_audio_set_callbacks(player.pointer, play, pause, nil, flush, drain, opaque)
        libvlc_audio_set_format_callbacks(player.pointer, setup, nil)
        libvlc_audio_set_volume_callback(player.pointer, setVolume)
    }

    /// Calls `libvlc_audio_set_callbacks` with `play` alone (no data), then
    /// `libvlc_audio_set_format`: samples of `format` at `rate` over `channels`, handed to `play`.
    /// - Sends: nothing. Locks: the player's variables, briefly.
    /// - Queue: before the player's first play.
    static func install(on player: NativeMediaPlayer, play: Play, format: String, rate: UInt32, channels: UInt32) {
        libvlc_audio_set_callbacks(player.pointer, play, nil, nil, nil, nil, nil)
        libvlc_audio_set_format(player.pointer, format, rate, channels)
    }
}
