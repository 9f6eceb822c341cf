import Dispatch
import ExampleSupport
import Foundation
import MediaEvents

/// `media-events log`: plays each media to its end and prints every event on the way.
struct LogCommand {
    let options: LogOptions

    /// How one media's playback ended.
    enum Outcome: Equatable {
        case ended
        case stoppedAtLimit
        /// EndReached without a single elementary stream: libvlc opened the input but found
        /// nothing to play in it (random bytes).
        case endedWithoutTracks
        case encounteredError
        case invalidInput

        var isFailure: Bool {
            switch self {
            case .ended, .stoppedAtLimit: false
            case .endedWithoutTracks, .encounteredError, .invalidInput: true
            }
        }

        var message: String {
            switch self {
            case .ended: "played to its end"
            case .stoppedAtLimit: "stopped at the play-time limit"
            case .endedWithoutTracks: "no audio or video track found (libvlc played nothing and reported EndReached)"
            case .encounteredError: "libvlc reported EncounteredError (could not open or play it)"
            case .invalidInput: "not a valid URL"
            }
        }
    }

    /// Runs the command; returns the exit status.
    func run() async -> Int32 {
        var inputs = options.inputs
        if inputs.isEmpty {
            guard let sample = Bundle.module.url(forResource: "sample", withExtension: "wav") else {
                printError("media-events: the bundled sample is missing")
                return 1
            }
            inputs = [sample.path]
        }
        let library: VLCLibrary
        do {
            library = try VLCLibrary(arguments: MediaInput.libraryArguments(audio: options.audio))
        } catch {
            printError("media-events: \(error)")
            return 1
        }
        let log = EventLog(format: options.json ? .json : .text, filter: options.filter)
        // One serial queue for every object of the run: async deliveries of the player and of
        // its media stay in the order libvlc sent them.
        let queue = DispatchQueue(label: "media-events.events")
        var outcomes: [Outcome] = []
        for pass in 1...options.repeatCount {
            for (index, input) in inputs.enumerated() {
                var context: [(String, JSONValue)] = [("item", .int(Int64(index + 1)))]
                if options.repeatCount > 1 { context.append(("pass", .int(Int64(pass)))) }
                let outcome = await play(input, library: library, log: log, queue: queue, context: context)
                if outcome.isFailure { printError("media-events: \(input): \(outcome.message)") }
                outcomes.append(outcome)
            }
        }
        if options.summary { printSummary(outcomes, log: log) }
        return outcomes.contains(where: \.isFailure) ? 1 : 0
    }

    private func play(_ input: String, library: VLCLibrary, log: EventLog, queue: DispatchQueue,
                      context: [(String, JSONValue)]) async -> Outcome {
        let configuration = options.dispatch.configuration(queue: queue)
        guard let media = MediaInput.media(input, library: library, configuration: configuration) else {
            return .invalidInput
        }
        let player = VLCMediaPlayer(library: library, configuration: configuration)
        let watch = PlaybackWatch()
        let mediaToken = media.observe { event in
            log.write(EventRecord(event), context: context)
        }
        let playerToken = player.observe { event in
            log.write(EventRecord(event), context: context)
            watch.note(event)
        }
        player.media = media
        player.play()
        var outcome = await watch.outcome(limit: options.limit)
        if outcome == nil { outcome = .stoppedAtLimit }
        // Stopping from here, not from the EndReached handler: that handler may run on
        // libvlc's input thread, which stop joins. The Stopped it sends is still logged.
        await player.stopAndWait()
        if options.dispatch == .queueAsync {
            // Events queued before the stop are printed before the next media starts.
            await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        }
        playerToken.cancel()
        mediaToken.cancel()
        return outcome!
    }

    private func printSummary(_ outcomes: [Outcome], log: EventLog) {
        let failed = outcomes.filter(\.isFailure).count
        var lines = ["summary: \(outcomes.count) played, \(outcomes.count - failed) ok, \(failed) failed, "
                     + "\(log.lineCount) events printed in \(String(log.elapsed, decimals: 3)) s"]
        for (name, count) in log.counts.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(name) \(count)")
        }
        printError(lines.joined(separator: "\n"))
    }
}

/// Follows one playback until it ends, fails or reaches the time limit.
final class PlaybackWatch: Sendable {
    private struct State {
        var sawTrack = false
        var outcome: LogCommand.Outcome?
        var waiter: CheckedContinuation<LogCommand.Outcome?, Never>?
        var finished = false
    }

    private let state = Guarded(State())

    func note(_ event: MediaPlayerEvent) {
        switch event {
        case .esAdded: state.withLock { $0.sawTrack = true }
        case .endReached:
            let tracks = state.withLock { $0.sawTrack }
            finish(tracks ? .ended : .endedWithoutTracks)
        case .encounteredError: finish(.encounteredError)
        default: break
        }
    }

    /// The outcome, or `nil` when `limit` seconds passed first.
    func outcome(limit: Double?) async -> LogCommand.Outcome? {
        if let limit {
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) { [weak self] in
                self?.finish(nil)
            }
        }
        return await withCheckedContinuation { continuation in
            let ready: LogCommand.Outcome?? = state.withLock { state in
                if state.finished { return .some(state.outcome) }
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func finish(_ outcome: LogCommand.Outcome?) {
        let waiter = state.withLock { state -> CheckedContinuation<LogCommand.Outcome?, Never>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }
}
