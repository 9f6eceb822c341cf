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
    /// `--control`'s socket, flushed and removed at exit.
    private let control: ControlServer?
    /// systemd's notifications (`$NOTIFY_SOCKET`).
    private let notifier: SystemdNotifier?

    init(
        options: DaemonOptions, log: EventLog, library: VLCLibrary, configuration: any EventsConfiguring,
        control: ControlServer? = nil, notifier: SystemdNotifier? = nil
    ) {
        self.options = options
        self.log = log
        self.library = library
        self.configuration = configuration
        self.control = control
        self.notifier = notifier
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
        note(
            "Started",
            [
                ("items", .int(Int64(playlist.entries.count))), ("loop", .bool(options.loop)),
                ("pid", .int(Int64(getpid()))),
            ])
        install(playlist)
        notifier?.send("READY=1")
    }

    // MARK: Signals

    /// Takes the signals of `SignalPipe` as ordinary code on `queue`, the control queue: a
    /// SIGHUP reload and a client's `load` never run at the same time. Keep the source.
    func installSignalHandlers(on queue: DispatchQueue) -> any DispatchSourceRead {
        SignalPipe.source(on: queue) { [weak self] number in
            switch number {
            case SIGHUP: self?.reload()
            case SIGUSR1: self?.writeStatus()
            default: self?.shutdown(reason: number == SIGINT ? "SIGINT" : "SIGTERM")
            }
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
        note("Status", statusFields())
    }

    /// The current item, state, time and counts (the Status line, the `status` reply).
    func statusFields() -> [(String, JSONValue)] {
        let player = listPlayer.mediaPlayer
        let counts = state.withLock { ($0.entries.count, $0.started, $0.ended, $0.failed) }
        var fields = itemContext()
        fields.append(("state", .string(player.state.description)))
        // -1 until the first TimeChanged of the media (and after it): unknown, left out.
        let time = player.time
        if time >= 0 { fields.append(("time_ms", .int(time))) }
        fields += [
            ("items", .int(Int64(counts.0))), ("started", .int(Int64(counts.1))),
            ("ended", .int(Int64(counts.2))), ("failed", .int(Int64(counts.3))),
            ("events", .int(Int64(log.lineCount))),
        ]
        return fields
    }

    /// SIGTERM, SIGINT, `--exit-at-end`: stops playback and exits 0, within 2 s whatever
    /// libvlc does.
    func shutdown(reason: String) {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        notifier?.send("STOPPING=1")
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
        let closing = EventRecord(
            source: "daemon", name: "Exited",
            fields: [
                ("stopped", .bool(stopped)), ("started", .int(Int64(counts.0))), ("ended", .int(Int64(counts.1))),
                ("failed", .int(Int64(counts.2))), ("events", .int(Int64(log.lineCount + 1))),
            ])
        guard log.close(with: closing) else { return }
        // The Exited line too, if the clients' sockets take it now; the socket file goes.
        control?.finish()
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
        let (media, mediaTokens) = makeMedia(playlist.entries, firstIndex: 0)
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

    /// Adds `entries` to the end of the playlist being played (`load` with `"append"`).
    private func append(_ entries: [String]) {
        let (list, firstIndex) = state.withLock { ($0.list, $0.mrls.count) }
        guard let list else { return }
        let (media, mediaTokens) = makeMedia(entries, firstIndex: firstIndex)
        state.withLock { state in
            state.entries += entries
            state.mrls += media.map(\.mrl)
            state.mediaSubscriptions += mediaTokens
        }
        list.append(contentsOf: media)
    }

    /// The media of `entries`, observed, the first one being item `firstIndex` of the list;
    /// an entry that is no valid URL is logged as failed and left out.
    private func makeMedia(_ entries: [String], firstIndex: Int) -> ([VLCMedia], [EventSubscription]) {
        var media: [VLCMedia] = []
        var mediaTokens: [EventSubscription] = []
        for entry in entries {
            guard let item = MediaInput.media(entry, library: library, configuration: configuration) else {
                note("ItemFailed", [("entry", .string(entry))] + PlaybackFailure(.invalidURL).fields)
                continue
            }
            let index = firstIndex + media.count
            mediaTokens.append(
                item.observe { [weak self] event in
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
        return (media, mediaTokens)
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
        if let notifier {
            let item = itemContext()
            if item.count == 2, case .int(let number) = item[0].1, case .string(let entry) = item[1].1 {
                let count = state.withLock { $0.entries.count }
                notifier.status("playing item \(number) of \(count): \(entry)")
            }
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
        notifier?.status("playlist ended")
        if options.exitAtEnd { shutdown(reason: "end of playlist") }
    }

    // MARK: Log lines

    private func note(_ name: String, _ fields: [(String, JSONValue)]) {
        log.writeAlways(EventRecord(source: "daemon", name: name, fields: fields))
    }

    private func counts() -> [(String, JSONValue)] {
        state.withLock { state in
            [
                ("started", .int(Int64(state.started))), ("ended", .int(Int64(state.ended))),
                ("failed", .int(Int64(state.failed))),
            ]
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

// MARK: Control commands

extension Daemon: ControlCommands {
    /// A `--control` command. Playback changes go through the list player's queued control
    /// calls: the reply says the command was accepted, its effect arrives as events.
    func perform(_ command: String, _ request: [String: Any]) -> CommandReply {
        switch command {
        case "play":
            if let item = request["item"] {
                let count = state.withLock { $0.mrls.count }
                guard let number = Self.wholeNumber(item).map(Int.init), number >= 1, number <= count else {
                    return .error("\"item\" must be a whole number from 1 to \(count)")
                }
                listPlayer.play(at: number - 1)
            } else {
                listPlayer.play()
            }
        case "pause": listPlayer.pause()
        case "resume": listPlayer.resume()
        case "stop": listPlayer.stop()
        case "next": listPlayer.next()
        case "previous": listPlayer.previous()
        case "seek":
            let player = listPlayer.mediaPlayer
            switch (request["ms"], request["fraction"]) {
            case (let ms?, nil):
                guard let value = Self.wholeNumber(ms), value >= 0 else {
                    return .error("\"ms\" must be a whole number of milliseconds, 0 or more")
                }
                guard player.isSeekable else { return .error("the current item cannot seek") }
                player.time = value
            case (nil, let fraction?):
                guard let value = Self.number(fraction), value >= 0, value <= 1 else {
                    return .error("\"fraction\" must be a number from 0 to 1")
                }
                guard player.isSeekable else { return .error("the current item cannot seek") }
                player.position = Float(value)
            default:
                return .error("seek takes \"ms\" or \"fraction\" (one of them)")
            }
        case "volume":
            guard let given = request["volume"], let volume = Self.wholeNumber(given), (0...200).contains(volume) else {
                return .error("\"volume\" must be a whole number from 0 to 200 (percent)")
            }
            listPlayer.mediaPlayer.volume = Int(volume)
            return .ok([("volume", .int(volume))])
        case "load":
            guard let list = request["entries"] as? [Any], !list.isEmpty, list.allSatisfy({ $0 is String }) else {
                return .error("\"entries\" must be a non-empty list of paths or URLs")
            }
            let entries = list.compactMap { $0 as? String }
            let mode = request["mode"] as? String ?? "replace"
            let current = state.withLock { $0.entries.count }
            let total = mode == "append" ? current + entries.count : entries.count
            guard total <= MediaInput.maximumEntries else {
                return .error("more than \(MediaInput.maximumEntries) entries: not loaded")
            }
            switch mode {
            case "replace":
                listPlayer.stop()
                install(Playlist(entries: entries))
            case "append":
                append(entries)
            default:
                return .error("\"mode\" must be \"replace\" or \"append\", not '\(mode)'")
            }
            let items = state.withLock { $0.entries.count }
            note(
                "Loaded",
                [("mode", .string(mode)), ("entries", .int(Int64(entries.count))), ("items", .int(Int64(items)))])
            return .ok([("items", .int(Int64(items)))])
        case "playlist":
            let (entries, current) = state.withLock { ($0.entries, $0.currentIndex) }
            var fields: [(String, JSONValue)] = [("entries", .array(entries.map { .string($0) }))]
            if let current { fields.append(("item", .int(Int64(current + 1)))) }
            return .ok(fields)
        case "status":
            return .ok(statusFields())
        default:
            return .error("unknown command '\(command)'")
        }
        return .ok([])
    }

    /// A JSON number that is a whole number (not a boolean).
    private static func wholeNumber(_ value: Any) -> Int64? {
        guard let number = Self.number(value), number.rounded() == number, abs(number) < 1e15 else { return nil }
        return Int64(number)
    }

    /// A JSON number (not a boolean, not a string).
    private static func number(_ value: Any) -> Double? {
        // JSONSerialization gives true and false as NSNumbers of type "c".
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }
}
