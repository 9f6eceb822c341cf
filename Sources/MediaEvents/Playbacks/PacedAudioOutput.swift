import Glibc
import Synchronization

/// Audio that goes nowhere at the speed a sound card would take it (`PlayerOptions.Audio
/// .discardInRealTime`).
///
/// libvlc's `adummy` output drops samples as fast as they are decoded, so audio-only media play
/// faster than real time with no sound card, and the playback time jumps. A real device makes
/// the decoder wait: its write blocks until there is room. These callbacks (libvlc's `amem`
/// output) do the same: each block of samples is let go when its play time comes
/// (when libvlc's clock reaches `pts`), and the drain at the end waits for the last block's end. The
/// decoder's thread waits, as it would on a device; nothing else does.
enum PacedAudioOutput {
    /// The longest one block may be held: a stop waits for the decoder's thread, so a clock
    /// jump must not hold it for long.
    static let longestWait: Int64 = 500_000

    /// One player's output: its sample rate and when the last block queued ends.
    final class State: @unchecked Sendable {
        // @unchecked: libvlc calls one player's audio callbacks from one thread at a time
        // (its audio output's), and `volume` is atomic.
        var rate: Int64 = 48_000
        var lastEnd: Int64 = 0
        let volume = Atomic<UInt32>(0)
    }

    /// Sets the player's audio callbacks; before its first `play`. The state lives as long as
    /// the process (one small object per player made with this option): libvlc may call the
    /// callbacks until the player is released, which happens on a queue after the wrapper is
    /// gone.
    static func install(on player: NativeMediaPlayer) {
        NativeAudioOutput.install(
            on: player, play: play, pause: pause, flush: flush, drain: drain, setup: setup, setVolume: setVolume,
            opaque: Unmanaged.passRetained(State()).toOpaque())
    }

    private static func state(_ data: UnsafeMutableRawPointer?) -> State {
        Unmanaged<State>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Sleeps until libvlc's clock reaches `pts` (at most `longestWait`).
    private static func wait(until pts: Int64) {
        let delay = min(pts - NativeLibrary.clock(), longestWait)
        guard delay > 0 else { return }
        var request = timespec(tv_sec: Int(delay / 1_000_000), tv_nsec: Int(delay % 1_000_000) * 1000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }

    private static let setup: NativeAudioOutput.Setup = { data, format, rate, channels in
        // Signed 16-bit samples at the media's own rate and channels: the cheapest conversion.
        if let format { "S16N".withCString { _ = strncpy(format, $0, 4) } }
        if let data, let rate { state(data.pointee).rate = Int64(max(rate.pointee, 1)) }
        _ = channels
        return 0
    }

    private static let play: NativeAudioOutput.Play = { data, _, count, pts in
        let state = state(data)
        wait(until: pts)
        state.lastEnd = pts + Int64(count) * 1_000_000 / state.rate
    }

    private static let pause: NativeAudioOutput.Pause = { _, _ in }

    private static let flush: NativeAudioOutput.Flush = { data, _ in
        state(data).lastEnd = 0
    }

    private static let drain: NativeAudioOutput.Drain = { data in
        let state = state(data)
        if state.lastEnd > 0 { wait(until: state.lastEnd) }
    }

    private static let setVolume: NativeAudioOutput.SetVolume = { data, volume, _ in
        state(data).volume.store(volume.bitPattern, ordering: .relaxed)
    }
}
