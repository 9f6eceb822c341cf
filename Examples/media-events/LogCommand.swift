import Dispatch
import ExampleSupport
import Foundation
import MediaEvents

/// `media-events log`: plays each media to its end and prints every event on the way.
struct LogCommand {
    let options: LogOptions

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
        // One serial queue for every object of the run: async deliveries of the player, of
        // its media and of libvlc's log stay in the order libvlc sent them.
        let queue = DispatchQueue(label: "media-events.events")
        let library: VLCLibrary
        do {
            library = try VLCLibrary(
                arguments: MediaInput.libraryArguments(audio: options.audio),
                logsConfiguration: options.dispatch.configuration(queue: queue))
        } catch {
            printError("media-events: \(error)")
            return 1
        }
        // With --audio, a machine without a sound device plays silently: said once on stderr.
        let audioWarning = options.audio ? AudioOutputWarning.watch(library, program: "media-events") : nil
        defer { audioWarning?.cancel() }
        // JSON lines carry their UTC time (`ts`), as the daemon's do: a collector merges them.
        let log = EventLog(format: options.json ? .json : .text, filter: options.filter, wallClock: options.json)
        let logSubscription = options.logLevel.map { log.printLibvlcLog(of: library, minimumLevel: $0) }
        defer { logSubscription?.cancel() }
        let outcomes = Guarded([PlaybackOutcome]())
        let interruption = InterruptSignals.watch { signal in
            // The last line: later events (of the player still running) are dropped.
            log.close(
                with: EventRecord(
                    source: "program", name: "Interrupted", fields: [("signal", .string(signal.name))]))
            if options.summary { Self.printSummary(outcomes.withLock { $0 }, log: log, interruptedBy: signal.name) }
            return 128 + signal.number
        }
        defer { interruption.cancel() }
        var run = Run(library: library, log: log, queue: queue, outcomes: outcomes)
        for pass in 1...options.repeatCount {
            for (index, input) in inputs.enumerated() {
                var context: [(String, JSONValue)] = [("item", .int(Int64(index + 1)))]
                if options.repeatCount > 1 { context.append(("pass", .int(Int64(pass)))) }
                let media = MediaInput.media(
                    input, library: library,
                    configuration: options.dispatch.configuration(queue: queue))
                await play(media, named: input, context: context, subItem: nil, run: &run)
            }
        }
        let all = outcomes.withLock { $0 }
        if options.summary { Self.printSummary(all, log: log, interruptedBy: nil) }
        return all.allSatisfy(\.isPlayed) ? 0 : 1
    }

    /// What the items of one run share.
    private struct Run {
        let library: VLCLibrary
        let log: EventLog
        let queue: DispatchQueue
        /// The outcome of every media played, playlists and directories left out (their
        /// entries are in); read by the summary printed on SIGINT or SIGTERM too.
        let outcomes: Guarded<[PlaybackOutcome]>
        /// Media played so far, entries included: bounded like a playlist's entries.
        var played = 0
    }

    /// How deep playlists in playlists (directories in directories) are followed.
    static let maximumDepth = 8

    /// Plays `media` (`nil`: an invalid URL); a playlist or directory has no track of its
    /// own but sub-items, which are played in turn as `sub_item` 1, 2, … of its item (with
    /// `sub_item_path` [1, 1], [1, 2], … for the entries of entry 1).
    private func play(
        _ media: VLCMedia?, named input: String, context: [(String, JSONValue)], subItem: [Int]?,
        run: inout Run
    ) async {
        run.played += 1
        let name =
            subItem.map { "\(input) entry \($0.map(String.init).joined(separator: ".")) (\(media?.mrl ?? ""))" }
            ?? input
        let depth = subItem?.count ?? 0
        var outcome = PlaybackOutcome.failed(PlaybackFailure(.invalidURL))
        var entries: [VLCMedia] = []
        if let media {
            outcome = await play(media, context: context, isSubItem: depth > 0, run: run)
            // Read here, after the stop, not in the EndReached handler: the sub-items are
            // complete once the input is gone.
            entries = outcome.failure?.reason == .noTracks ? media.subItems : []
            if !entries.isEmpty { outcome = .expanded(entries: entries.count) }
        }
        if case .expanded = outcome, depth >= Self.maximumDepth {
            outcome = .failed(
                PlaybackFailure(.entriesBeyondBound(bound: "playlists nested more than \(Self.maximumDepth) deep")))
        }
        if let failure = outcome.failure { report(failure, of: name, mrl: media?.mrl, context: context, log: run.log) }
        guard case .expanded = outcome else {
            run.outcomes.withLock { $0.append(outcome) }
            return
        }
        for (index, entry) in entries.enumerated() {
            guard run.played < MediaInput.maximumEntries else {
                let failure = PlaybackFailure(
                    .entriesBeyondBound(bound: "more than \(MediaInput.maximumEntries) media in all"))
                report(failure, of: name, mrl: nil, context: context, log: run.log)
                run.outcomes.withLock { $0.append(.failed(failure)) }
                return
            }
            let path = (subItem ?? []) + [index + 1]
            var entryContext = context.filter { $0.0 != "sub_item" && $0.0 != "sub_item_path" }
            entryContext.append(("sub_item", .int(Int64(index + 1))))
            if path.count > 1 { entryContext.append(("sub_item_path", .array(path.map { .int(Int64($0)) }))) }
            await play(entry, named: input, context: entryContext, subItem: path, run: &run)
        }
    }

    /// A failure: one line on stderr for people, one `ItemFailed` line in the event stream for
    /// scripts (`error`, `message`, `cause`: libvlc's words, null when it logged none).
    private func report(
        _ failure: PlaybackFailure, of name: String, mrl: String?, context: [(String, JSONValue)], log: EventLog
    ) {
        printError("media-events: \(name): \(failure.message)")
        var fields = context + [("mrl", mrl.map { .string($0) } ?? .null)]
        fields += [
            ("error", .string(failure.code)), ("message", .string(failure.summary)),
            ("cause", failure.cause.map { .string($0) } ?? .null),
        ]
        log.writeAlways(EventRecord(source: "program", name: "ItemFailed", fields: fields))
    }

    private func play(
        _ media: VLCMedia, context: [(String, JSONValue)], isSubItem: Bool,
        run: Run
    ) async -> PlaybackOutcome {
        let log = run.log
        let gate = ProgressGate(
            dropProgress: options.filter.dropProgress,
            intervalMs: options.progressIntervalMs ?? (options.json ? 0 : LogOptions.textProgressIntervalMs))
        let queue = run.queue
        // A sub-item comes from libvlc with the default (inline) delivery: in async mode its
        // lines are queued behind the player's, as the player's own are, to keep libvlc's order.
        let requeue = isSubItem && options.dispatch == .queueAsync
        let configuration = options.dispatch.configuration(queue: run.queue)
        let player = VLCMediaPlayer(library: run.library, configuration: configuration)
        let watch = PlaybackWatch()
        let mediaToken = media.observe { event in
            let record = EventRecord(event)
            guard gate.admits(record) else { return }
            if requeue {
                queue.async { log.write(record, context: context) }
            } else {
                log.write(record, context: context)
            }
        }
        let playerToken = player.observe { event in
            let record = EventRecord(event)
            if gate.admits(record) { log.write(record, context: context) }
            watch.note(event)
        }
        // The end of the input comes from here, with the error messages libvlc logged for it:
        // created before play(), so that it sees the input's Opening.
        let causes = FailureCauseRecorder(player: player)
        let endToken = causes.observe { end in watch.note(end) }
        player.media = media
        player.play()
        let outcome = await watch.outcome(limit: options.limit, openTimeout: options.openTimeout)
        // Stopping from here, not from the EndReached handler: that handler may run on
        // libvlc's input thread, which stop joins. The Stopped it sends is still logged.
        await player.stopAndWait()
        if options.dispatch == .queueAsync {
            // Events queued before the stop are printed before the next media starts.
            await withCheckedContinuation { continuation in run.queue.async { continuation.resume() } }
        }
        playerToken.cancel()
        // Kept until here: its subscription does not keep it alive.
        withExtendedLifetime(causes) { endToken.cancel() }
        mediaToken.cancel()
        return outcome
    }

    private static func printSummary(_ outcomes: [PlaybackOutcome], log: EventLog, interruptedBy signal: String?) {
        let failed = outcomes.filter { !$0.isPlayed }.count
        var lines = [
            "summary: \(outcomes.count) played, \(outcomes.count - failed) ok, \(failed) failed, "
                + "\(log.lineCount) events printed in \(String(log.elapsed, decimals: 3)) s"
                + (signal.map { ", interrupted by \($0)" } ?? "")
        ]
        for (name, count) in log.counts.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(name) \(count)")
        }
        printError(lines.joined(separator: "\n"))
    }
}

/// Follows one playback until it ends, fails, or a time limit is up.
final class PlaybackWatch: Sendable {
    private struct State {
        var progress = PlaybackProgress()
        var outcome: PlaybackOutcome?
        var waiter: CheckedContinuation<PlaybackOutcome, Never>?
    }

    private let state = Guarded(State())

    func note(_ event: MediaPlayerEvent) {
        state.withLock { $0.progress.note(event) }
    }

    /// The input ended: the outcome, with its cause when it failed.
    func note(_ end: PlaybackEnd) {
        finish(state.withLock { $0.progress.note(end) })
    }

    /// The outcome: the end or failure libvlc reported, or what the progress gives when the
    /// `limit` (stopped there) or the `openTimeout` (not playing by then) is up first.
    func outcome(limit: Double?, openTimeout: Double) async -> PlaybackOutcome {
        if let limit {
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) { [weak self] in
                guard let self else { return }
                self.finish(self.state.withLock { $0.progress.outcomeAtLimit(limit) })
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + openTimeout) { [weak self] in
            guard let self, let outcome = self.state.withLock({ $0.progress.outcomeAtOpenTimeout(openTimeout) }) else {
                return
            }
            self.finish(outcome)
        }
        return await withCheckedContinuation { continuation in
            let ready: PlaybackOutcome? = state.withLock { state in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The first outcome wins; later ones (the limit after the end) are dropped.
    private func finish(_ outcome: PlaybackOutcome) {
        let waiter = state.withLock { state -> CheckedContinuation<PlaybackOutcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }
}
