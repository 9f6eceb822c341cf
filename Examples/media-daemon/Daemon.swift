import Dispatch
import ExampleSupport
import Foundation
import Glibc
import MediaEvents

/// The playback daemon: one playlist player, the log and the counters.
///
/// The playlist is MediaEvents' `VLCPlaylistPlayer`: its calls decide at once and queue
/// libvlc's work on the player's control queue, so no command and no handler here ever waits
/// for libvlc. Every line about a playback comes from `player.playbacks`, which tags each event
/// with the playback whose input sent it and ends each playback once.
final class Daemon: Sendable {
    /// A held `end-file`: its fields, its line's seq, and whether it waits for the next start.
    private typealias HeldEndFile = (fields: [(String, JSONValue)], seq: Int?, untilStart: Bool)

    private struct State {
        /// Each entry's location as the playlist, an argument or a client gave it; entries
        /// read from a playlist file or a directory are known by their MRL only.
        var given: [PlaylistEntryID: String] = [:]
        /// The playback that runs or ran last, and its entry.
        var playback: (id: PlaybackID, entry: PlaylistEntryID?)?
        var started = 0
        var ended = 0
        var failed = 0
        /// The playlist reached its end; its line waits for the last playback's end.
        var playlistEndPending = false
        /// The last playback whose `PlaybackEnded` line was written.
        var lastEnded: PlaybackID?
        /// mpv's `end-file` of a playback that ended while the playlist goes on, held until
        /// the playlist has moved (see `publishEndFile`): its fields, its line's seq, and
        /// whether it waits for the next start (an entry that played to its end).
        var heldEndFile: HeldEndFile?
        var stopping = false
        /// The exit status (`quit` gives one).
        var exitStatus: Int32 = 0
    }

    private let options: DaemonOptions
    private let log: EventLog
    private let library: VLCLibrary
    /// The playlist; `nil` once the daemon exits: dropping it ends a running playback as
    /// `quit` and releases libvlc's player.
    private let playlistBox: Guarded<VLCPlaylistPlayer?>
    private let state = Guarded(State())
    /// Whether the log is closing: taken around each `PlaybackEnded` line and by the exit, so
    /// that the exit knows whether the running playback's end was written.
    private let endLines = Guarded(false)
    private let subscriptions = Guarded<[EventSubscription]>([])
    /// Signalled when the player's subscription (the first of `subscriptions`) ends, in the
    /// player's `deinit`.
    private let playerReleased = DispatchSemaphore(value: 0)
    /// Lines written so far, counted by the log's tap: read without taking the log's lock,
    /// which stays held while a write to an output that takes nothing blocks (`status` must
    /// answer meanwhile).
    private let lineCount = Guarded(0)
    /// `--control`'s socket, flushed and removed at exit.
    private let control: ControlServer?
    /// systemd's notifications (`$NOTIFY_SOCKET`).
    private let notifier: SystemdNotifier?
    /// Where commands and signals run.
    private let controlQueue: DispatchQueue
    /// Whether every control call returns in time and no playback is stalled.
    let liveness: Liveness
    /// Writes the `Unhealthy`/`Healthy` lines, so that the watchdog never waits for the log.
    private let healthLines = DispatchQueue(label: "media-daemon.health-lines")
    /// Told of every playback and playlist event (`setEventTap`).
    private let eventTap = Guarded<(@Sendable (DaemonEvent) -> Void)?>(nil)
    /// Told of every log line (`setLineTap`).
    private let lineTap = Guarded<(@Sendable (EventRecord, String) -> Void)?>(nil)
    /// Run at the exit, after the last line (`addExitHook`).
    private let exitHooks = Guarded<[@Sendable () -> Void]>([])
    /// What the player's events said last: mpv's properties (`MpvProperties.swift`).
    let facts = Guarded(PlayerFacts())
    /// The player's events outside any playback, found among its own events.
    private let outside: OutsidePlaybackEvents

    /// - Parameter controlQueue: where commands and signals run (its calls are probed by
    ///   `liveness`).
    init(
        options: DaemonOptions, log: EventLog, library: VLCLibrary, configuration: any EventsConfiguring,
        controlQueue: DispatchQueue, control: ControlServer? = nil, notifier: SystemdNotifier? = nil
    ) {
        self.options = options
        self.log = log
        self.library = library
        self.control = control
        self.notifier = notifier
        self.controlQueue = controlQueue
        let playlist = VLCPlaylistPlayer(
            library: library, configuration: configuration, options: options.playerOptions,
            maximumEntries: MediaInput.maximumEntries)
        playlist.loop = options.loop ? .list : .off
        let box = Guarded<VLCPlaylistPlayer?>(playlist)
        playlistBox = box
        var probeReader: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
        if let control { probeReader = { answer in control.probeReader(answer) } }
        liveness = Liveness(commandQueue: controlQueue, probeReader: probeReader) { answer in
            // Not `waitForPendingControls`: a probe waiting behind a `stop` would keep the
            // player alive past the exit's teardown wait, and the exit would cut the stop short.
            guard let playlist = box.withLock({ $0 }) else { return answer() }
            playlist.player.afterPendingControls(answer)
        }
        let lineCount = lineCount
        let facts = facts
        outside = OutsidePlaybackEvents(configuration: configuration) { [weak log, weak control] event in
            // A line without playback and entry_id.
            log?.write(EventRecord(event))
            let changed = facts.withLock { facts in
                let before = (facts.volume, facts.muted)
                _ = facts.apply(event, playback: nil)
                return before != (facts.volume, facts.muted)
            }
            if changed { control?.propertiesChanged() }
        }
        let lineTap = lineTap
        log.setTap { record, line in
            lineCount.withLock { $0 += 1 }
            control?.publish(record, line: line)
            lineTap.withLock { $0 }?(record, line)
        }
    }

    var playlist: VLCPlaylistPlayer? { playlistBox.withLock { $0 } }

    // MARK: Other front ends (--mpris)

    /// Sets the tap told of every playback and playlist event before the daemon handles it,
    /// where the event is delivered (often libvlc's thread): it must not wait.
    func setEventTap(_ tap: (@Sendable (DaemonEvent) -> Void)?) {
        eventTap.withLock { $0 = tap }
    }

    /// Sets the tap told of every log line (its record and its text), in the log's order,
    /// under the log's lock: it must queue the line and return (`EventLog.setTap`).
    func setLineTap(_ tap: (@Sendable (EventRecord, String) -> Void)?) {
        lineTap.withLock { $0 = tap }
    }

    /// Adds `hook`, run at the exit after the last line (`Exited`) is written, before the
    /// process ends: it must return within a few hundred milliseconds (the exit's 2 s promise).
    func addExitHook(_ hook: @escaping @Sendable () -> Void) {
        exitHooks.withLock { $0.append(hook) }
    }

    /// The playlist, for reading its state and for what no command covers (MPRIS's loop and
    /// rate); `nil` once the daemon exits. Every other change goes through `run(_:)`.
    var playlistPlayer: VLCPlaylistPlayer? { playlist }

    /// Subscribes to the playlist and its playbacks, then plays `playlist` (or starts idle
    /// when it is empty).
    func start(_ playlist: Playlist) {
        guard let player = self.playlist else { return }
        let outside = outside
        let mediaPlayer = player.player
        var tokens = [
            // The player's own events first: in one delivery they come before their playback's.
            mediaPlayer.observe(onCompletion: { [playerReleased] in playerReleased.signal() }) {
                [weak mediaPlayer] event in
                if let mediaPlayer { outside.playerEvent(event, of: mediaPlayer) }
            },
            mediaPlayer.playbacks.observe { [weak self] event in
                outside.playbackEvent(event)
                self?.handle(event)
            },
            player.observe { [weak self] event in self?.handle(event) },
        ]
        if let level = options.logLevel { tokens.append(log.printLibvlcLog(of: library, minimumLevel: level)) }
        subscriptions.withLock { $0 = tokens }
        let audio =
            switch options.audio {
            case .paced: "paced"
            case .untimed: "untimed"
            case .device: "device"
            }
        note(
            "Started",
            [
                ("items", .int(Int64(playlist.entries.count))), ("loop", .bool(options.loop)),
                ("audio", .string(audio)), ("stall_timeout", .double(options.stallTimeout)),
                ("pid", .int(Int64(getpid()))),
            ])
        replace(with: playlist.entries)
        notifier?.send("READY=1")
        if playlist.entries.isEmpty, control == nil, options.exitAtEnd {
            shutdown(reason: "nothing to play")
        }
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
            let fd = LogFile.open(path, mode: options.logMode, readable: false)
            if fd >= 0 { close(log.replaceOutput(with: fd)) }
        }
        do {
            let playlist = try Playlist.load(file: options.playlistFile, arguments: options.arguments)
            replace(with: playlist.entries)
            note("Reloaded", [("items", .int(Int64(self.playlist?.entries.count ?? 0)))])
        } catch {
            note("ReloadFailed", [("error", .string("\(error)"))])
        }
    }

    /// SIGUSR1: one line with the current playback, state, time and counts.
    func writeStatus() {
        note("Status", statusFields())
    }

    /// The current playback, state, time and counts (the Status line, the `status` reply).
    /// Waits for nothing: neither libvlc nor the log.
    func statusFields() -> [(String, JSONValue)] {
        let (playback, counts) = state.withLock { ($0.playback, ($0.started, $0.ended, $0.failed)) }
        var fields: [(String, JSONValue)] = []
        if let playback {
            fields += [
                ("playback", .int(playback.id.json)), ("entry_id", playback.entry.map { .int($0.json) } ?? .null),
            ]
            fields += place(of: playback.entry)
        }
        if let playlist {
            let player = playlist.player
            let state = player.state
            fields += [
                ("state", .string(state.description)), ("paused", .bool(state == .paused)),
                ("idle", .bool(!playlist.isActive)),
            ]
            // -1 without an input, or before its first TimeChanged: unknown, left out.
            let time = player.time
            if time >= 0 { fields.append(("time_ms", .int(time))) }
            let length = player.length
            if length > 0 { fields.append(("duration_ms", .int(length))) }
            fields.append(("items", .int(Int64(playlist.entries.count))))
        }
        fields += [
            ("started", .int(Int64(counts.0))), ("ended", .int(Int64(counts.1))), ("failed", .int(Int64(counts.2))),
            ("events", .int(Int64(lineCount.withLock { $0 }))),
        ]
        let verdict = liveness.verdict
        fields.append(("live", .bool(verdict == nil)))
        if let verdict { fields.append(("unhealthy", .string(verdict))) }
        return fields
    }

    /// The watchdog found the daemon not live (`verdict` says why) or live again (`nil`).
    func livenessChanged(_ verdict: String?) {
        notifier?.status(verdict.map { "not live: \($0)" } ?? "live")
        healthLines.async { [weak self] in
            if let verdict {
                self?.note("Unhealthy", [("reason", .string(verdict))])
            } else {
                self?.note("Healthy", [])
            }
        }
    }

    /// SIGTERM, SIGINT, `--exit-at-end`: ends playback and exits 0, within 2 s whatever
    /// libvlc does. A playback still running ends as `quit`.
    func shutdown(reason: String, status: Int32 = 0) {
        guard beginStopping(status: status) else { return }
        stop(reason: reason)
    }

    /// Whether the daemon is exiting: from then on, commands that would change playback or
    /// the playlist are refused (`run(_:)`), so that nothing starts that the exit must end.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Marks the daemon as exiting with `status`; false when it already was (the first
    /// status stays).
    private func beginStopping(status: Int32) -> Bool {
        state.withLock { state in
            defer { state.stopping = true }
            if !state.stopping { state.exitStatus = status }
            return !state.stopping
        }
    }

    /// The exit itself, once `beginStopping` returned true.
    private func stop(reason: String) {
        releaseHeldEndFile()
        notifier?.send("STOPPING=1")
        note("Stopping", [("reason", .string(reason))])
        // A teardown that hangs in libvlc must not keep the daemon alive past its 2 s promise.
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { self.exitNow(stopped: false) }
        let deliveries = playlist?.configuration.dispatchQueue
        // Not on the control queue, nor in a handler: the wait below must be able to wait.
        DispatchQueue.global().async {
            // Events libvlc sent before the signal and still queued for delivery (queue-async)
            // are written first, with their entry's place in the playlist, which goes next;
            // bounded, for the 2 s promise.
            if let deliveries {
                let delivered = DispatchSemaphore(value: 0)
                deliveries.async { delivered.signal() }
                _ = delivered.wait(timeout: .now() + 0.5)
            }
            // The daemon's reference to the playlist, dropped here, outside the box's lock: the
            // player's teardown ends a running playback (`quit`, its PlaybackEnded line) and
            // releases libvlc's player after the calls queued before (a `stop`), all counted
            // by the wait. Another thread may hold the playlist a moment longer (a command, a
            // status read, MPRIS's bus thread): the teardown starts when that reference goes,
            // which the player's subscription tells (its end is queued from the `deinit`,
            // where the teardown is already counted).
            let watched = self.subscriptions.withLock { !$0.isEmpty }
            _ = self.playlistBox.withLock { box in
                defer { box = nil }
                return box
            }
            let released = !watched || self.playerReleased.wait(timeout: .now() + 1.4) == .success
            self.exitNow(stopped: released && VLCLibrary.waitForPendingTeardowns(timeout: 1.4))
        }
    }

    private func exitNow(stopped: Bool) {
        writeEndOfRunningPlayback()
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
        for hook in exitHooks.withLock({ $0 }) { hook() }
        log.sync()
        // _exit, not exit: atexit handlers and static destructors would run while libvlc's
        // threads may still be running (the teardown may have timed out).
        _exit(state.withLock { $0.exitStatus })
    }

    /// At the exit: the `PlaybackEnded` (`quit`) of a playback whose end was not written yet,
    /// because libvlc's teardown, which reports it, did not finish in the time the exit allows.
    /// Every playback keeps its one end line; the teardown's own comes too late and is dropped.
    private func writeEndOfRunningPlayback() {
        endLines.withLock { closing in
            guard !closing else { return }
            closing = true
            let running = state.withLock { state in
                state.playback.flatMap { $0.id == state.lastEnded ? nil : $0 }
            }
            guard let running else { return }
            let fields: [(String, JSONValue)] =
                [
                    ("playback", .int(running.id.json)),
                    ("entry_id", running.entry.map { .int($0.json) } ?? .null),
                ] + place(of: running.entry) + [("reason", .string("quit"))]
            log.writeAlways(EventRecord(source: "daemon", name: "PlaybackEnded", fields: fields))
        }
    }

    // MARK: Entries

    /// Replaces the playlist by `entries` and plays them from the first; returns their ids.
    @discardableResult
    private func replace(with entries: [String]) -> [PlaylistEntryID] {
        guard let playlist else { return [] }
        let media = makeMedia(entries)
        if !playlist.entries.isEmpty { playlist.clear() }
        let ids = playlist.append(media.map(\.media))
        state.withLock { state in
            state.given = Dictionary(zip(ids, media.map(\.text)), uniquingKeysWith: { first, _ in first })
        }
        if !ids.isEmpty { playlist.play() }
        return ids
    }

    /// Adds `entries` before the entry at `index` (at the end when `nil`); returns their ids.
    /// With `playWhenIdle`, when no entry is current (an idle start, or the playlist ended),
    /// the first of them plays.
    private func add(_ entries: [String], at index: Int?, playWhenIdle: Bool) -> [PlaylistEntryID] {
        guard let playlist else { return [] }
        let media = makeMedia(entries)
        let idle = playlist.currentEntry == nil && !playlist.isActive
        let ids = playlist.insert(media.map(\.media), at: index)
        state.withLock { state in
            for (id, text) in zip(ids, media.map(\.text)) { state.given[id] = text }
        }
        if playWhenIdle, idle, let first = ids.first { playlist.play(first) }
        return ids
    }

    /// The entry a command names.
    private func resolve(_ target: DaemonCommand.Target, in playlist: VLCPlaylistPlayer) -> Result<
        PlaylistEntryID, CommandError
    > {
        switch target {
        case .item(let number):
            let entries = playlist.entries
            guard !entries.isEmpty else { return .failure(CommandError("the playlist is empty")) }
            guard number >= 1, number <= entries.count else {
                return .failure(CommandError("\"item\" must be a whole number from 1 to \(entries.count)"))
            }
            return .success(entries[Int(number) - 1].id)
        case .entry(let id):
            guard playlist.entries.contains(where: { $0.id == id }) else {
                return .failure(CommandError("no entry \(id) in the playlist"))
            }
            return .success(id)
        case .current:
            guard let current = playlist.currentEntry else { return .failure(CommandError("no entry is current")) }
            return .success(current.id)
        }
    }

    /// The location entry `id` was given as (or its MRL when read from a playlist file).
    func given(_ id: PlaylistEntryID) -> String? {
        state.withLock { $0.given[id] } ?? playlist?.entries.first { $0.id == id }?.mrl
    }

    /// Every entry's location as given.
    func givenNames() -> [PlaylistEntryID: String] { state.withLock { $0.given } }

    /// The media of `entries`; an entry that is no valid URL is logged and left out.
    private func makeMedia(_ entries: [String]) -> [(text: String, media: VLCMedia)] {
        let configuration = playlist?.configuration
        return entries.compactMap { entry in
            guard let media = MediaInput.media(entry, library: library, configuration: configuration) else {
                note(
                    "EntryRejected",
                    [
                        ("entry", .string(entry)), ("error", .string("invalid_url")),
                        ("message", .string("not a valid URL")),
                    ])
                return nil
            }
            return (entry, media)
        }
    }

    /// A `next` or `previous` reply's fields: the entry it moved to (its playback begins on
    /// the player's control queue, after the reply).
    private func movedTo(_ entry: PlaylistEntry?) -> [(String, JSONValue)] {
        guard let entry else { return [] }
        return [("entry_id", .int(entry.id.json))] + place(of: entry.id)
    }

    /// `item` (the entry's position, from 1, while the playlist has it) and `entry` (its
    /// location as given, or its MRL while the playlist has it) of the entry `id`.
    private func place(of id: PlaylistEntryID?) -> [(String, JSONValue)] {
        guard let id else { return [] }
        let entries = playlist?.entries ?? []
        let index = entries.firstIndex { $0.id == id }
        var fields: [(String, JSONValue)] = []
        if let index { fields.append(("item", .int(Int64(index + 1)))) }
        if let text = state.withLock({ $0.given[id] }) ?? index.map({ entries[$0].mrl }) {
            fields.append(("entry", .string(text)))
        }
        return fields
    }

    // MARK: Events

    /// A playback's event: its line, tagged with the playback and its entry, and the counts.
    private func handle(_ event: PlaybackEvent) {
        eventTap.withLock { $0 }?(.playback(event))
        let context: [(String, JSONValue)] = [
            ("playback", .int(event.playback.json)), ("entry_id", event.entry.map { .int($0.json) } ?? .null),
        ]
        // mpv's events name the entry and the playback too.
        let mpvContext: [(String, JSONValue)] = [
            ("playlist_entry_id", event.entry.map { .int($0.json) } ?? .null), ("playback", .int(event.playback.json)),
        ]
        switch event.payload {
        case .player(let playerEvent):
            let seq = log.writeNumbered(EventRecord(event, source: "daemon", context: []), context: context)
            let implied = facts.withLock { $0.apply(playerEvent, playback: event.playback) }
            for name in implied { control?.publishMpv(name, mpvContext, seq: seq) }
            // After an end whose `end-file` is held (the player stops, the playlist moves),
            // the changes wait for its release, as in mpv they follow `end-file`.
            if state.withLock({ $0.heldEndFile == nil }) { control?.propertiesChanged() }
        case .media:
            log.write(EventRecord(event, source: "daemon", context: []), context: context)
        case .began:
            // Before anything that could wait (the log): a stall of an older playback is over.
            liveness.noteBegan(event.playback)
            state.withLock { state in
                state.started += 1
                state.playback = (event.playback, event.entry)
                state.playlistEndPending = false
            }
            facts.withLock { $0.began(event.playback, entry: event.entry) }
            let place = place(of: event.entry)
            let seq = log.writeAlways(EventRecord(event, source: "daemon", context: context + place))
            // As mpv sends them: the last entry's `end-file`, then at once this `start-file`.
            let ended = takeHeldEndFile().map { [(name: "end-file", fields: $0.fields, seq: $0.seq)] } ?? []
            control?.publishMpv(ended + [("start-file", mpvContext, seq)])
            control?.propertiesChanged()
            if let notifier, place.count == 2, case .int(let item) = place[0].1, case .string(let entry) = place[1].1 {
                notifier.status("playing item \(item) of \(playlist?.entries.count ?? 0): \(entry)")
            }
        case .stalled(let reason):
            liveness.noteStalled(event.playback, reason)
            log.writeAlways(EventRecord(event, source: "daemon", context: context))
        case .ended(let summary):
            liveness.noteEnded(event.playback)
            state.withLock { state in
                switch summary.outcome {
                case .ended: state.ended += 1
                case .failed: state.failed += 1
                default: break
                }
            }
            facts.withLock { $0.ended(event.playback) }
            let record = EventRecord(event, source: "daemon", context: context + place(of: event.entry))
            let written = endLines.withLock { closing -> Int?? in
                guard !closing else { return nil }
                let seq = log.writeAlways(record)
                state.withLock { $0.lastEnded = event.playback }
                return .some(seq)
            }
            guard let seq = written else { return }
            // Read once: the playlist may stop meanwhile, and `idle` must follow `end-file`.
            let active = playlist?.isActive
            let goesOn = summary.outcome != .quit && active == true && !isStopping
            publishEndFile(
                Self.endFileFields(summary) + mpvContext, seq: seq, holding: goesOn,
                untilStart: summary.outcome == .ended)
            // Nothing plays next: mpv's (deprecated, still sent) `idle`.
            if summary.outcome != .quit, active == false { control?.publishMpv("idle", [], seq: nil) }
            // As in mpv, the property changes of an end come after its `end-file`: a held
            // one's with its release.
            if !goesOn { control?.propertiesChanged() }
            let playlistEnded = state.withLock { state in
                defer { state.playlistEndPending = false }
                return state.playlistEndPending && state.playback?.id == event.playback
            }
            if playlistEnded { finishPlaylist() }
        }
    }

    /// A playlist event: its line; its end is the `PlaylistEnded` line, written after the
    /// last playback's `PlaybackEnded` (the playlist decides that it ended before the player
    /// reports that playback's end).
    private func handle(_ event: PlaylistEvent) {
        eventTap.withLock { $0 }?(.playlist(event))
        let isMove: Bool
        if case .currentEntryChanged(.some) = event { isMove = true } else { isMove = false }
        let endFile = releaseHeldEndFile(unlessWaitingForStart: isMove)
        // The held `end-file` of the playlist's last entry: nothing plays next (mpv's `idle`).
        if endFile == .published, playlist?.isActive == false { control?.publishMpv("idle", [], seq: nil) }
        guard case .endReached = event else {
            log.write(EventRecord(event))
            // mpv's property changes of the move (`playlist-pos`, `path`) follow the next
            // `start-file`, which announces them.
            if endFile != .waiting { control?.propertiesChanged() }
            return
        }
        let lastEnded = state.withLock { state in
            let ended = state.playback == nil || state.lastEnded == state.playback?.id
            state.playlistEndPending = !ended
            return ended
        }
        if lastEnded { finishPlaylist() }
    }

    /// mpv's `end-file`, which mpv sends once the file is unloaded. A playback that ended by
    /// itself (or failed) while the playlist goes on is reported before libvlc has closed its
    /// input: the playlist's move to the next entry does that (libvlc's `set_media` joins the
    /// ended input), and only then publishes its own events. So its `end-file` is held until
    /// the playlist's next event or the next playback's start, whichever comes first; both
    /// come after the join. That of an entry that played to its end (`untilStart`) is held
    /// through the playlist's move to the next entry, which that entry's start follows at
    /// once, so that `start-file` comes right after it, as mpv sends them; a failed entry's is
    /// not (after a run of failures the next start waits for a back-off). One that nothing
    /// follows (the playlist ends, a `stop`, the exit) goes at once.
    private func publishEndFile(_ fields: [(String, JSONValue)], seq: Int?, holding: Bool, untilStart: Bool) {
        let line = (fields: fields, seq: seq, untilStart: untilStart)
        let earlier = state.withLock { state in
            defer { state.heldEndFile = holding ? line : nil }
            return state.heldEndFile
        }
        if let earlier { control?.publishMpv("end-file", earlier.fields, seq: earlier.seq) }
        if !holding { control?.publishMpv("end-file", fields, seq: seq) }
    }

    /// Takes the held `end-file`, if any, for its caller to publish.
    private func takeHeldEndFile() -> HeldEndFile? {
        state.withLock { state in
            defer { state.heldEndFile = nil }
            return state.heldEndFile
        }
    }

    /// What `releaseHeldEndFile` did.
    private enum EndFileRelease { case noneHeld, published, waiting }

    /// Publishes the held `end-file`, if any, unless it waits for the next start and
    /// `unlessWaitingForStart` lets it go on waiting.
    @discardableResult
    private func releaseHeldEndFile(unlessWaitingForStart: Bool = false) -> EndFileRelease {
        let held = state.withLock { state -> HeldEndFile?? in
            if unlessWaitingForStart, state.heldEndFile?.untilStart == true { return .none }
            defer { state.heldEndFile = nil }
            return .some(state.heldEndFile)
        }
        guard let held else { return .waiting }
        guard let held else { return .noneHeld }
        control?.publishMpv("end-file", held.fields, seq: held.seq)
        return .published
    }

    /// `end-file`'s `reason` (mpv's), `file_error` (mpv's words) for a failure, and this
    /// daemon's own: `daemon_reason` (`PlaybackEnded`'s reason), `error` and `cause`.
    private static func endFileFields(_ summary: PlaybackSummary) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("reason", .string(summary.outcome.mpvReason))]
        if let failure = summary.outcome.failure {
            let fileError: String
            switch failure.reason {
            case .noTracks: fileError = "unrecognized file format"
            case .encounteredError, .stalled, .streamError: fileError = "loading failed"
            }
            fields += [("file_error", .string(fileError))]
        }
        fields.append(("daemon_reason", .string(summary.outcome.code)))
        if let failure = summary.outcome.failure {
            fields += [("error", .string(failure.code)), ("cause", .string(failure.cause ?? failure.summary))]
        }
        return fields
    }

    private func finishPlaylist() {
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
}

/// An event the daemon handles, as its tap receives it (`Daemon.setEventTap`).
enum DaemonEvent: Sendable {
    case playback(PlaybackEvent)
    case playlist(PlaylistEvent)
}

// MARK: Control commands

extension Daemon: ControlCommands {
    /// A `--control` command of the JSON protocol.
    func perform(_ command: String, _ request: [String: Any]) -> CommandReply {
        switch DaemonCommand.parse(command, request) {
        case .success(let command): run(command)
        case .failure(let error): .error(error.message)
        }
    }

    /// Carries out `command`: the one place where commands become playlist calls. Playback
    /// changes are queued on the player: the reply says what the playlist decided (`next` at
    /// the end: nothing), their effect arrives as events. Never waits for libvlc.
    func run(_ command: DaemonCommand) -> CommandReply {
        guard let playlist, !(command.changesState && isStopping) else { return .error("the daemon is exiting") }
        switch command {
        case .play(nil):
            guard !playlist.entries.isEmpty else { return .error("the playlist is empty") }
            playlist.play()
        case .play(let target?):
            switch resolve(target, in: playlist) {
            case .success(let id):
                guard playlist.play(id) else { return .error("entry \(id) was just removed") }
            case .failure(let error): return .error(error.message)
            }
        case .pause: playlist.pause()
        case .resume: playlist.resume()
        case .togglePause:
            guard facts.withLock({ $0.running }) else { return .error("nothing plays") }
            if facts.withLock({ $0.paused }) { playlist.resume() } else { playlist.pause() }
        case .stop: playlist.stop()
        case .next:
            guard playlist.next() else { return .error("no next entry") }
            return .ok(movedTo(playlist.currentEntry))
        case .previous:
            guard playlist.previous() else { return .error("no previous entry") }
            return .ok(movedTo(playlist.currentEntry))
        case .seek(let target):
            let player = playlist.player
            let known = facts.withLock { ($0.running, $0.time, $0.position, $0.length) }
            guard known.0 else { return .error("nothing plays") }
            guard player.isSeekable else { return .error("the current entry cannot seek") }
            // Where it lands, in milliseconds when known: its playback-restart waits for it.
            // The facts learn of the seek before libvlc does (see PlayerFacts.seeking).
            let time: Int64?
            let position: Double?
            switch target {
            case .milliseconds(let ms):
                (time, position) = (ms, nil)
            case .fraction(let fraction):
                (time, position) = (nil, fraction)
            case .relative(let ms):
                guard known.1 >= 0 else { return .error("the playback time is not known yet") }
                (time, position) = (max(0, known.1 + ms), nil)
            case .relativeFraction(let fraction):
                guard known.2 >= 0 else { return .error("the position is not known yet") }
                (time, position) = (nil, min(max(known.2 + fraction, 0), 1))
            case .fromEnd(let ms):
                guard known.3 > 0 else { return .error("the length is not known yet") }
                (time, position) = (max(0, known.3 - ms), nil)
            }
            // mpv's `seek` comes before anything the seek causes (its playback-restart).
            let seek = facts.withLock { ($0.playback, $0.entry) }
            let mpvSeek: [(String, JSONValue)] = [
                ("playlist_entry_id", seek.1.map { .int($0.json) } ?? .null),
                ("playback", seek.0.map { .int($0.json) } ?? .null),
            ]
            control?.publishMpv("seek", mpvSeek, seq: nil)
            var implied: [String] = []
            if let time {
                implied = facts.withLock { $0.seeking(to: time, byTime: true) }
                player.time = time
            } else if let position {
                let landing = known.3 > 0 ? Int64(Double(known.3) * position) : nil
                implied = facts.withLock { $0.seeking(to: landing, byTime: false) }
                player.position = Float(position)
            }
            for name in implied { control?.publishMpv(name, mpvSeek, seq: nil) }
            if !implied.isEmpty { control?.propertiesChanged() }
        case .volume(let volume):
            playlist.player.volume = Int(volume)
            facts.withLock { $0.volume = Int(volume) }
            control?.propertiesChanged()
            return .ok([("volume", .int(volume))])
        case .mute(let flag):
            playlist.player.isMuted = flag
            facts.withLock { $0.muted = flag }
            control?.propertiesChanged()
            return .ok([("mute", .bool(flag))])
        case .speed(let speed):
            // libvlc sends no event for the rate: the fact is the command's.
            playlist.player.rate = Float(speed)
            facts.withLock { $0.speed = speed }
            control?.propertiesChanged()
            return .ok([("speed", .double(speed))])
        case .selectTrack(let type, let choice):
            let tracks = facts.withLock { $0.running ? $0.tracks(of: type) : [] }
            let track: Int?
            switch choice {
            case .none: track = nil
            case .first:
                guard let first = tracks.first else { return .error("no \(type) track") }
                track = first.esID
            case .number(let number):
                guard number >= 1, number <= tracks.count else {
                    return .error("no \(type) track \(number) (\(tracks.count) known)")
                }
                track = tracks[number - 1].esID
            }
            playlist.player.selectTrack(track, of: type)
            // libvlc confirms a selection with ESSelected, not a deselection: the fact is the
            // command's until an event says otherwise.
            facts.withLock { $0.selected[type] = track }
            control?.propertiesChanged()
        case .load(let entries, let mode):
            let append: Bool
            if case .replace = mode { append = false } else { append = true }
            let total = append ? playlist.entries.count + entries.count : entries.count
            guard total <= MediaInput.maximumEntries else {
                return .error("more than \(MediaInput.maximumEntries) entries: not loaded")
            }
            let ids: [PlaylistEntryID]
            let modeName: String
            switch mode {
            case .replace:
                ids = replace(with: entries)
                modeName = "replace"
            case .append(let play):
                ids = self.add(entries, at: nil, playWhenIdle: play)
                modeName = play ? "append" : "append-only"
            case .insertNext(let play):
                let current = playlist.currentEntry.flatMap { current in
                    playlist.entries.firstIndex { $0.id == current.id }
                }
                ids = self.add(entries, at: current.map { $0 + 1 }, playWhenIdle: play)
                modeName = "insert-next"
            }
            let items = Int64(playlist.entries.count)
            note(
                "Loaded",
                [("mode", .string(modeName)), ("entries", .int(Int64(entries.count))), ("items", .int(items))])
            return .ok([("items", .int(items)), ("entry_ids", .array(ids.map { .int($0.json) }))])
        case .remove(let target):
            switch resolve(target, in: playlist) {
            case .success(let id):
                guard playlist.remove(id) else { return .error("entry \(id) was just removed") }
            case .failure(let error): return .error(error.message)
            }
        case .move(let target, let destination):
            let entries = playlist.entries
            let id: PlaylistEntryID
            switch resolve(target, in: playlist) {
            case .success(let found): id = found
            case .failure(let error): return .error(error.message)
            }
            guard let from = entries.firstIndex(where: { $0.id == id }) else {
                return .error("entry \(id) was just removed")
            }
            let index: Int
            switch destination {
            case .before(let item):
                guard item >= 1, item <= entries.count + 1 else {
                    return .error("the position to move before must be from 1 to \(entries.count + 1)")
                }
                // Before the entry now at `item`: among the others, one less when it comes after.
                let before = Int(item) - 1
                index = before > from ? before - 1 : before
            case .at(let item):
                guard item >= 1, item <= entries.count else {
                    return .error("\"to_item\" must be a whole number from 1 to \(entries.count)")
                }
                index = Int(item) - 1
            }
            if index != from { playlist.move(id, to: index) }
        case .clear(let keepingPlaying):
            let playing = facts.withLock { $0.running ? $0.entry : nil }
            if keepingPlaying, let playing {
                for entry in playlist.entries where entry.id != playing { playlist.remove(entry.id) }
            } else {
                playlist.clear()
            }
        case .quit(let status):
            // Exiting from now on, so that the commands after this one are refused; the exit
            // itself after this command's reply is queued (the exit sends what is queued).
            guard beginStopping(status: status) else { return .error("the daemon is exiting") }
            controlQueue.async { self.stop(reason: "quit") }
        case .playlist:
            let entries = playlist.entries
            let given = state.withLock { $0.given }
            var fields: [(String, JSONValue)] = [
                (
                    "entries",
                    .array(
                        entries.map { entry in
                            var fields: [(String, JSONValue)] = [
                                ("id", .int(entry.id.json)), ("entry", .string(given[entry.id] ?? entry.mrl)),
                                ("mrl", .string(entry.mrl)),
                            ]
                            if let parent = entry.parent { fields.append(("parent", .int(parent.json))) }
                            return .object(fields)
                        })
                )
            ]
            if let current = playlist.currentEntry, let index = entries.firstIndex(where: { $0.id == current.id }) {
                fields += [("item", .int(Int64(index + 1))), ("entry_id", .int(current.id.json))]
            }
            return .ok(fields)
        case .status:
            return .ok(statusFields())
        }
        return .ok([])
    }
}
