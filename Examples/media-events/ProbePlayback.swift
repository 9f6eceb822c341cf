import Dispatch
import ExampleSupport
import MediaEvents

/// What libvlc knows of a media only while it plays, read by opening it in a silent player:
/// titles and chapters, the tracks as the decoders report them, the length the demuxer
/// measures as it reads, the facts of libvlc's debug log (`PlaybackLogFacts`), and, when it
/// cannot be opened, libvlc's error messages for it (`FailureCauseRecorder`).
struct ProbePlayback {
    /// Playing was reached.
    var played = false
    /// How the input ended within the window, with its cause; `nil` when it was stopped.
    var end: PlaybackEnd?
    /// Neither Playing nor an end came within the timeout.
    var timedOut = false
    var titles: [ProbeReport.Title]?
    /// The media's tracks after the window: updated by libvlc from the decoders' output.
    var tracks: [MediaTrack] = []
    /// The media's duration after the window (the input's last length), 0 when unknown.
    var durationMs: Int64 = 0
    var facts = PlaybackLogFacts()
    /// The ids of the tracks that were decoded (the selected ones).
    var decodedAudio: Int?
    var decodedVideo: Int?
    /// The wait for the window's end timed out.
    var windowTimedOut = false
    /// How the window ended (the end, the time reached, or the timeout) and libvlc's debug
    /// messages meanwhile, for `MEDIA_EVENTS_PROBE_TRACE`; empty unless asked for.
    var trace: [String] = []

    /// Plays `media` until it plays, reads its titles and chapters (paused, so that a short
    /// input cannot end meanwhile), plays on until `windowMs` of it have played or it ends,
    /// and stops. Each wait is bounded by `timeout` seconds.
    static func run(
        _ media: VLCMedia, library: VLCLibrary, timeout: Double, windowMs: Int64, tracing: Bool = false
    ) async -> ProbePlayback {
        var result = ProbePlayback()
        let messages = Guarded([LogMessage]())
        let logToken = library.logs.observe(minimumLevel: .debug) { message in
            messages.withLock { $0.append(message) }
        }
        let player = VLCMediaPlayer(media: media, library: library)
        let watch = ProbeWatch()
        let playerToken = player.observe { event in
            switch event {
            case .playing: watch.update { $0.playing = true }
            case .timeChanged(let ms): watch.update { $0.timeMs = max($0.timeMs, ms) }
            default: break
            }
        }
        // Created before play(), so that it sees the input's Opening.
        let causes = FailureCauseRecorder(player: player)
        let endToken = causes.observe { end in watch.update { $0.end = end } }
        player.play()
        let opened = await watch.wait(timeout: timeout) { $0.playing || $0.end != nil }
        result.timedOut = opened.timedOut
        if opened.state.playing && opened.state.end == nil {
            result.played = true
            // Paused first (queued before the reads): an input that ends has no titles left.
            // Not when it cannot pause: libvlc 3 stops such an input instead.
            let pausable = player.isPausable
            if pausable { player.pause() }
            var titles: [ProbeReport.Title] = []
            for (index, title) in await player.titles().enumerated() {
                titles.append(
                    ProbeReport.Title(
                        name: title.name, durationMs: title.duration,
                        chapters: await player.chapters(ofTitle: index)))
            }
            result.titles = titles
            if pausable { player.resume() }
            let window = await watch.wait(timeout: timeout) { $0.end != nil || $0.timeMs >= windowMs }
            result.windowTimedOut = window.timedOut
            if tracing {
                result.trace.append(
                    "window: end \(window.state.end.map { "\($0.kind)" } ?? "none"), time \(window.state.timeMs) ms, "
                        + "timed out \(window.timedOut)")
            }
            result.decodedAudio = await player.selectedTrack(of: .audio)
            result.decodedVideo = await player.selectedTrack(of: .video)
        } else if opened.state.end?.kind == .endReached {
            result.played = false
        }
        result.end = watch.state.end
        result.tracks = media.tracks
        await player.stopAndWait()
        result.durationMs = media.duration ?? 0
        playerToken.cancel()
        withExtendedLifetime(causes) { endToken.cancel() }
        logToken.cancel()
        let logged = messages.withLock { $0 }
        result.facts = PlaybackLogFacts(logged)
        if tracing {
            result.trace.append("selected audio \(result.decodedAudio ?? -1), video \(result.decodedVideo ?? -1)")
            result.trace += logged.map { "\($0.objectType) \($0.module ?? "-"): \($0.text)" }
        }
        return result
    }
}

/// The state of one probe playback, fed by the player's events and its recorder's end, and
/// one waiter for a condition on it.
final class ProbeWatch: Sendable {
    struct State: Sendable {
        var playing = false
        var timeMs: Int64 = 0
        var end: PlaybackEnd?
    }

    private struct Waiter {
        let generation: Int
        let condition: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<(state: State, timedOut: Bool), Never>
    }

    private struct Inner {
        var state = State()
        var waiter: Waiter?
        var generation = 0
    }

    private let inner = Guarded(Inner())

    var state: State { inner.withLock { $0.state } }

    /// Changes the state; resumes the waiter (after unlocking) when its condition now holds.
    func update(_ change: (inout State) -> Void) {
        let ready = inner.withLock { inner -> (Waiter, State)? in
            change(&inner.state)
            guard let waiter = inner.waiter, waiter.condition(inner.state) else { return nil }
            inner.waiter = nil
            return (waiter, inner.state)
        }
        if let (waiter, state) = ready { waiter.continuation.resume(returning: (state, false)) }
    }

    /// Waits until `condition` holds, at most `timeout` seconds; the state then.
    func wait(timeout: Double, until condition: @escaping @Sendable (State) -> Bool) async -> (
        state: State, timedOut: Bool
    ) {
        await withCheckedContinuation { continuation in
            let ready = inner.withLock { inner -> State? in
                if condition(inner.state) { return inner.state }
                inner.generation += 1
                inner.waiter = Waiter(generation: inner.generation, condition: condition, continuation: continuation)
                let generation = inner.generation
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                    let expired = self.inner.withLock { inner -> (Waiter, State)? in
                        guard let waiter = inner.waiter, waiter.generation == generation else { return nil }
                        inner.waiter = nil
                        return (waiter, inner.state)
                    }
                    if let (waiter, state) = expired { waiter.continuation.resume(returning: (state, true)) }
                }
                return nil
            }
            if let ready { continuation.resume(returning: (ready, false)) }
        }
    }
}
