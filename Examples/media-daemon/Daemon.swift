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
        var started = 0
        var ended = 0
        var failed = 0
        var consecutiveFailures = 0
        /// Bumped by each reload, so that a delayed skip of the old playlist is dropped.
        var generation = 0
        var stopping = false
    }

    private let options: DaemonOptions
    private let log: EventLog
    private let library: VLCLibrary
    private let listPlayer: VLCMediaListPlayer
    private let configuration: any EventsConfiguring
    private let state = Guarded(State())
    private let subscriptions = Guarded<[EventSubscription]>([])

    init(options: DaemonOptions, log: EventLog, library: VLCLibrary) {
        self.options = options
        self.log = log
        self.library = library
        configuration = options.dispatch.configuration(queue: DispatchQueue(label: "media-daemon.events"))
        listPlayer = VLCMediaListPlayer(library: library, configuration: configuration)
        listPlayer.playbackMode = options.loop ? .loop : .default
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
            self.log.write(EventRecord(event), context: self.itemContext())
            self.handle(event)
        }
        subscriptions.withLock { $0 = [listToken, playerToken] }
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
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
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
        fields += [
            ("state", .string(player.state.description)), ("time_ms", .int(player.time)),
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
                note("ItemFailed", [("entry", .string(entry)), ("error", .string("not a valid URL"))])
                continue
            }
            mediaTokens.append(item.observe { [weak self] event in
                guard let self else { return }
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
                let expected = state.currentIndex.map { $0 + 1 } ?? 0
                if expected < state.mrls.count, state.mrls[expected] == mrl {
                    state.currentIndex = expected
                } else {
                    state.currentIndex = state.mrls.firstIndex(of: mrl)
                }
            }
        case .played:
            playlistEnded()
        case .stopped:
            break
        }
    }

    private func handle(_ event: MediaPlayerEvent) {
        switch event {
        case .endReached:
            state.withLock { state in
                state.ended += 1
                state.consecutiveFailures = 0
            }
        case .encounteredError:
            let (index, isLast, allFailing, generation) = state.withLock { state in
                state.failed += 1
                state.consecutiveFailures += 1
                let isLast = state.currentIndex.map { $0 >= state.mrls.count - 1 } ?? false
                return (state.currentIndex, isLast, state.consecutiveFailures >= state.mrls.count,
                        state.generation)
            }
            note("ItemFailed", itemContext(index) + [("error", .string("EncounteredError"))])
            // libvlc's list player goes on by itself after EndReached only; after an error it
            // would stay on the broken item.
            if isLast && !options.loop {
                playlistEnded()
            } else if allFailing {
                // Every item failed in a row: wait a little instead of spinning through them.
                DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [weak self] in
                    guard let self, self.state.withLock({ $0.generation }) == generation else { return }
                    self.listPlayer.next()
                }
            } else {
                listPlayer.next()
            }
        default:
            break
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
