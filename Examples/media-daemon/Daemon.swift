import Dispatch
import ExampleSupport
import Foundation
import Glibc
import MediaEvents

/// The playback daemon: one list player, its playlist, the log and the counters.
///
/// Every handler only logs and updates the state; whatever changes playback (`next`,
/// `stop`, a new list) goes through the list player's queued control calls, so nothing
/// blocks on libvlc's threads, where libvlc holds the list player's locks.
final class Daemon: Sendable {
    private struct State {
        var entries: [String] = []
        var mrls: [String] = []
        var list: VLCMediaList?
        var mediaSubscriptions: [EventSubscription] = []
        var listSubscription: EventSubscription?
        var currentIndex: Int?
        /// The MediaChanged of the current media was seen, its NextItemSet not yet: libvlc's
        /// list player sets the media (MediaChanged) before it sends NextItemSet.
        var awaitingNextItemSet = false
        /// What the current media's playback has shown; its outcome once known.
        var progress = PlaybackProgress()
        var outcomeKnown = false
        /// The MRLs of the sub-items the current item expanded to (a playlist's or directory's
        /// entries), with how many of each are still to be played under it.
        var expansion: [String: Int] = [:]
        /// Bumped by every MediaChanged, so that the open timeout of an earlier media is dropped.
        var attempt = 0
        var started = 0
        var ended = 0
        var failed = 0
        var consecutiveFailures = 0
        /// Bumped by each reload, so that a delayed skip of the old playlist is dropped.
        var generation = 0
        var stopping = false

        /// Makes the item playing `mrl` current: the next item if it plays that (the same file
        /// may be listed twice), else the first that does; unchanged when none does (an entry
        /// of a playlist or directory the current item expanded to).
        mutating func locate(_ mrl: String) {
            if let pending = expansion[mrl], pending > 0 {
                expansion[mrl] = pending - 1
                return
            }
            let expected = currentIndex.map { $0 + 1 } ?? 0
            if expected < mrls.count, mrls[expected] == mrl {
                currentIndex = expected
                expansion = [:]
            } else if let index = mrls.firstIndex(of: mrl) {
                currentIndex = index
                expansion = [:]
            }
        }
    }

    private let options: DaemonOptions
    private let log: EventLog
    private let library: VLCLibrary
    private let listPlayer: VLCMediaListPlayer
    /// The end of each item comes from here, with the error messages libvlc logged for it
    /// (the `cause` of ItemFailed); created before the first play(), so that it sees the
    /// first item's Opening. Kept: its subscriptions do not keep it alive.
    private let causes: FailureCauseRecorder
    private let configuration: any EventsConfiguring
    private let state = Guarded(State())
    private let subscriptions = Guarded<[EventSubscription]>([])

    init(options: DaemonOptions, log: EventLog, library: VLCLibrary, configuration: any EventsConfiguring) {
        self.options = options
        self.log = log
        self.library = library
        self.configuration = configuration
        listPlayer = VLCMediaListPlayer(library: library, configuration: configuration)
        listPlayer.playbackMode = options.loop ? .loop : .default
        causes = FailureCauseRecorder(player: listPlayer.mediaPlayer)
    }

    /// Subscribes to the list player and its player, then plays `playlist`.
    func start(_ playlist: Playlist) {
        let listToken = listPlayer.observe { [weak self] event in
            guard let self else { return }
            // Handled first: NextItemSet moves the current item, and its line names the new one.
            self.handle(event)
            self.log.write(EventRecord(event), context: self.itemContext())
        }
        let playerToken = listPlayer.mediaPlayer.observe { [weak self] event in
            guard let self else { return }
            // MediaChanged first: it moves the current item, and its line names the new one.
            if case .mediaChanged(let media) = event { self.mediaChanged(to: media?.mrl) }
            self.log.write(EventRecord(event), context: self.itemContext())
            self.handle(event)
        }
        // Subscribed after the player: ItemFailed comes after the player's end line.
        let endToken = causes.observe { [weak self] end in
            self?.handle(end)
        }
        var tokens = [listToken, playerToken, endToken]
        if let level = options.logLevel { tokens.append(log.printLibvlcLog(of: library, minimumLevel: level)) }
        subscriptions.withLock { $0 = tokens }
        note("Started", [("items", .int(Int64(playlist.entries.count))), ("loop", .bool(options.loop)),
                         ("pid", .int(Int64(getpid())))])
        install(playlist)
    }

    // MARK: Signals

    /// Takes SIGTERM, SIGINT, SIGHUP and SIGUSR1 from their default actions and delivers them
    /// as dispatch events, so the handlers run as ordinary code, not in a signal context.
    /// Keep the returned sources.
    func installSignalHandlers() -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: "media-daemon.signals")
        return [SIGTERM, SIGINT, SIGHUP, SIGUSR1].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in
                switch number {
                case SIGHUP: self?.reload()
                case SIGUSR1: self?.writeStatus()
                default: self?.shutdown(reason: number == SIGINT ? "SIGINT" : "SIGTERM")
                }
            }
            source.resume()
            return source
        }
    }

    /// SIGHUP: reopens the log file, re-reads the playlist and plays it from the start.
    func reload() {
        if let path = options.logFile {
            let fd = open(MediaInput.localPathBytes(path), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            if fd >= 0 { close(log.replaceOutput(with: fd)) }
        }
        do {
            let playlist = try Playlist.load(file: options.playlistFile, arguments: options.arguments)
            listPlayer.stop()
            install(playlist)
            note("Reloaded", [("items", .int(Int64(playlist.entries.count)))])
        } catch {
            note("ReloadFailed", [("error", .string("\(error)"))])
        }
    }

    /// SIGUSR1: one line with the current item, state, time and counts.
    func writeStatus() {
        let player = listPlayer.mediaPlayer
        let snapshot = state.withLock { $0 }
        var fields = itemContext()
        fields.append(("state", .string(player.state.description)))
        // -1 until the first TimeChanged of the media (and after it): unknown, left out.
        let time = player.time
        if time >= 0 { fields.append(("time_ms", .int(time))) }
        fields += [
            ("items", .int(Int64(snapshot.entries.count))), ("started", .int(Int64(snapshot.started))),
            ("ended", .int(Int64(snapshot.ended))), ("failed", .int(Int64(snapshot.failed))),
            ("events", .int(Int64(log.lineCount))),
        ]
        note("Status", fields)
    }

    /// SIGTERM, SIGINT, `--exit-at-end`: stops playback and exits 0, within 2 s whatever
    /// libvlc does.
    func shutdown(reason: String) {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        note("Stopping", [("reason", .string(reason))])
        // A stop that hangs must not keep the daemon alive past its 2 s promise.
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { self.exitNow(stopped: false) }
        Task {
            await self.listPlayer.stopAndWait()
            self.exitNow(stopped: true)
        }
    }

    private func exitNow(stopped: Bool) {
        let counts = state.withLock { ($0.started, $0.ended, $0.failed) }
        let closing = EventRecord(source: "daemon", name: "Exited", fields: [
            ("stopped", .bool(stopped)), ("started", .int(Int64(counts.0))), ("ended", .int(Int64(counts.1))),
            ("failed", .int(Int64(counts.2))), ("events", .int(Int64(log.lineCount + 1))),
        ])
        guard log.close(with: closing) else { return }
        log.sync()
        // _exit, not exit: atexit handlers and static destructors would run while libvlc's
        // threads may still be running (the stop may have timed out).
        _exit(0)
    }

    // MARK: Playlist

    private func install(_ playlist: Playlist) {
        let list = VLCMediaList(library: library, configuration: configuration)
        let listToken = list.observe { [weak self] event in
            self?.log.write(EventRecord(event))
        }
        var media: [VLCMedia] = []
        var mediaTokens: [EventSubscription] = []
        for entry in playlist.entries {
            guard let item = MediaInput.media(entry, library: library, configuration: configuration) else {
                note("ItemFailed", [("entry", .string(entry))] + PlaybackFailure(.invalidURL).fields)
                continue
            }
            let index = media.count
            mediaTokens.append(item.observe { [weak self] event in
                guard let self else { return }
                if case .subItemAdded(let child) = event {
                    // A playlist's or directory's entries: the list player plays them next,
                    // as parts of this item.
                    let mrl = child.mrl
                    self.state.withLock { state in
                        guard state.currentIndex == index else { return }
                        state.progress.subItems += 1
                        state.expansion[mrl, default: 0] += 1
                    }
                }
                self.log.write(EventRecord(event), context: self.itemContext())
            })
            media.append(item)
        }
        let (oldList, oldTokens, oldListToken) = state.withLock { state in
            defer {
                state.entries = playlist.entries
                state.mrls = media.map(\.mrl)
                state.list = list
                state.mediaSubscriptions = mediaTokens
                state.listSubscription = listToken
                state.currentIndex = nil
                state.expansion = [:]
                state.consecutiveFailures = 0
                state.generation += 1
            }
            return (state.list, state.mediaSubscriptions, state.listSubscription)
        }
        // Dropped outside the lock: their teardown may run completions.
        _ = (oldList, oldTokens, oldListToken)
        list.append(contentsOf: media)
        listPlayer.mediaList = list
        if media.isEmpty {
            note("PlaylistEnded", counts())
            return
        }
        listPlayer.play()
    }

    // MARK: Events

    private func handle(_ event: MediaListPlayerEvent) {
        switch event {
        case .nextItemSet(let media):
            let mrl = media.mrl
            state.withLock { state in
                state.started += 1
                if state.awaitingNextItemSet {
                    state.awaitingNextItemSet = false
                } else {
                    state.locate(mrl)
                }
            }
        case .played:
            playlistEnded()
        case .stopped:
            break
        }
    }

    /// The player got a new media: the current item moves to it (a playlist's entry played by
    /// the list player stays on its playlist's item), its progress starts over and its open
    /// timeout runs.
    private func mediaChanged(to mrl: String?) {
        let attempt = state.withLock { state in
            if let mrl {
                state.locate(mrl)
                state.awaitingNextItemSet = true
            }
            state.progress = PlaybackProgress()
            state.outcomeKnown = false
            state.attempt += 1
            return state.attempt
        }
        let seconds = options.openTimeout
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self else { return }
            let outcome = self.state.withLock { state -> PlaybackOutcome? in
                guard state.attempt == attempt, !state.outcomeKnown, !state.stopping else { return nil }
                return state.progress.outcomeAtOpenTimeout(seconds)
            }
            if let outcome { self.finish(outcome, attempt: attempt) }
        }
    }

    private func handle(_ event: MediaPlayerEvent) {
        state.withLock { state in
            if !state.outcomeKnown { state.progress.note(event) }
        }
    }

    /// The current media ended (EndReached or EncounteredError), with its cause.
    private func handle(_ end: PlaybackEnd) {
        let (outcome, attempt) = state.withLock { state in
            (state.outcomeKnown ? nil : state.progress.note(end), state.attempt)
        }
        if let outcome { finish(outcome, attempt: attempt) }
    }

    /// Counts the outcome of the media of `attempt` once; a failure is logged, and the list
    /// player moved on where it would not by itself.
    private func finish(_ outcome: PlaybackOutcome, attempt: Int) {
        let decision = state.withLock { state -> (index: Int?, isLast: Bool, allFailing: Bool, generation: Int)? in
            guard state.attempt == attempt, !state.outcomeKnown else { return nil }
            state.outcomeKnown = true
            guard !outcome.isPlayed else {
                state.ended += 1
                state.consecutiveFailures = 0
                return nil
            }
            state.failed += 1
            state.consecutiveFailures += 1
            let isLast = state.currentIndex.map { $0 >= state.mrls.count - 1 } ?? false
            return (state.currentIndex, isLast, state.consecutiveFailures >= state.mrls.count, state.generation)
        }
        guard let decision, let failure = outcome.failure else { return }
        note("ItemFailed", itemContext(decision.index) + failure.fields)
        // libvlc's list player goes on by itself after EndReached only; after an error (or a
        // media that never opened) it would stay on the broken item.
        if failure.reason == .noTracks { return }
        if decision.isLast && !options.loop {
            playlistEnded()
        } else if decision.allFailing {
            // Every item failed in a row: wait a little instead of spinning through them.
            DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [weak self] in
                guard let self, self.state.withLock({ $0.generation }) == decision.generation else { return }
                self.listPlayer.next()
            }
        } else {
            listPlayer.next()
        }
    }

    private func playlistEnded() {
        note("PlaylistEnded", counts())
        if options.exitAtEnd { shutdown(reason: "end of playlist") }
    }

    // MARK: Log lines

    private func note(_ name: String, _ fields: [(String, JSONValue)]) {
        log.writeAlways(EventRecord(source: "daemon", name: name, fields: fields))
    }

    private func counts() -> [(String, JSONValue)] {
        state.withLock { state in
            [("started", .int(Int64(state.started))), ("ended", .int(Int64(state.ended))),
             ("failed", .int(Int64(state.failed)))]
        }
    }

    /// The 1-based item number and entry of the current item.
    private func itemContext(_ index: Int?? = .none) -> [(String, JSONValue)] {
        state.withLock { state in
            guard let current = index ?? state.currentIndex, current < state.entries.count else { return [] }
            return [("item", .int(Int64(current + 1))), ("entry", .string(state.entries[current]))]
        }
    }
}
