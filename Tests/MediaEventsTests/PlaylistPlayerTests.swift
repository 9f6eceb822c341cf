import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// The playlist player on real libvlc: entries, edits, next/previous, loop, expansion,
/// failures and stalls, and the storm that wedged libvlc's list player.
final class PlaylistPlayerTests: XCTestCase {
    /// Every playback event of `playlist`'s player, and the playlist's own events.
    final class Watch: Sendable {
        let playbacks = Recorder<PlaybackEvent>()
        let playlist = Recorder<PlaylistEvent>()
        /// The ends and the playlist's events in the order the handlers ran.
        let order = Recorder<String>()
        private let tokens: Locked<[EventSubscription]>

        init(_ player: VLCPlaylistPlayer) {
            let playbacks = playbacks
            let playlist = self.playlist
            let order = order
            tokens = Locked([
                player.player.playbacks.observe { event in
                    if case .ended(let summary) = event.payload {
                        order.record("ended \(summary.entry.map { "\($0.rawValue)" } ?? "-")")
                    }
                    playbacks.record(event)
                },
                player.observe { event in
                    if case .currentEntryChanged(let entry) = event {
                        order.record("current \(entry.map { "\($0.id.rawValue)" } ?? "-")")
                    } else if case .endReached = event {
                        order.record("endReached")
                    }
                    playlist.record(event)
                },
            ])
        }

        /// The summaries of the ended playbacks, in delivery order.
        var ended: [PlaybackSummary] {
            playbacks.values.compactMap { if case .ended(let summary) = $0.payload { summary } else { nil } }
        }

        func waitForEnd(timeout: Double = 30) -> Bool {
            playlist.wait(timeout: timeout) { $0.kind == .endReached }
        }

        func cancel() { tokens.withLock { $0.forEach { $0.cancel() } } }
    }

    private func media(_ urls: [URL]) -> [VLCMedia] {
        urls.map { VLCMedia(url: $0, library: TestLibrary.shared) }
    }

    /// Three WAVs: each plays once, in order, as a playback of its entry, then the playlist
    /// ends and is idle; in every configuration.
    func testPlay_whenThreeEntries_eachPlaysOnceInOrderThenThePlaylistEnds() throws {
        let wavs = try (0..<3).map { try TestMedia.wav(seconds: 0.2, name: "entry-\($0).wav") }
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let playlist = VLCPlaylistPlayer(library: TestLibrary.shared, configuration: configuration)
            let watch = Watch(playlist)
            let ids = playlist.append(media(wavs))
            XCTAssertEqual(ids.map(\.rawValue), [1, 2, 3])
            playlist.play()
            XCTAssertTrue(watch.waitForEnd(), "\(mode): \(watch.playlist.values)")
            // The player was stopped before the end was announced.
            XCTAssertEqual(playlist.player.state, .stopped, "\(mode)")
            XCTAssertEqual(playlist.player.time, -1, "\(mode)")
            let ended = watch.ended
            XCTAssertEqual(ended.map(\.entry), ids, "\(mode)")
            XCTAssertEqual(ended.map(\.outcome), [.ended, .ended, .ended], "\(mode)")
            XCTAssertEqual(ended.map(\.playback.rawValue), [1, 2, 3], "\(mode)")
            // Each end is dispatched before the playlist's move it caused.
            XCTAssertEqual(
                watch.order.values,
                ["current 1", "ended 1", "current 2", "ended 2", "current 3", "ended 3", "current -", "endReached"],
                "\(mode)")
            XCTAssertNil(playlist.currentEntry)
            XCTAssertFalse(playlist.isActive)
            XCTAssertEqual(playlist.entries.map(\.id), ids)
            watch.cancel()
        }
    }

    /// `next()` while an entry plays: the `skipped` end of its playback is dispatched before
    /// the playlist's move to the next entry, as a natural end is; in every configuration.
    func testNext_whileAnEntryPlays_itsSkippedEndComesBeforeTheMove() throws {
        let wavs = try (0..<2).map { try TestMedia.wav(seconds: 5, name: "skip-\($0).wav") }
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let playlist = VLCPlaylistPlayer(
                library: TestLibrary.shared, configuration: configuration,
                options: PlayerOptions(audio: .discardInRealTime))
            let watch = Watch(playlist)
            let ids = playlist.append(media(wavs))
            playlist.play()
            XCTAssertTrue(watch.playbacks.wait(timeout: 20) { $0.kind == .player(.playing) }, "\(mode)")
            XCTAssertTrue(playlist.next(), "\(mode)")
            XCTAssertTrue(
                watch.playbacks.wait(timeout: 20) { $0.kind == .player(.playing) && $0.entry == ids[1] }, "\(mode)")
            XCTAssertEqual(watch.order.values, ["current 1", "ended 1", "current 2"], "\(mode)")
            XCTAssertEqual(watch.ended.map(\.outcome), [.skipped], "\(mode)")
            playlist.stop()
            watch.cancel()
        }
    }

    /// `play()` called while the end of the playback a `stop()` ended is delivered (inline, on
    /// the control queue, before the playlist hears of that end): that end moves nothing and
    /// the entry plays again.
    func testPlay_whenCalledAsTheStopsEndIsDelivered_playsTheEntryAgain() throws {
        let wav = try TestMedia.wav(seconds: 5, name: "restart.wav")
        let playlist = VLCPlaylistPlayer(
            library: TestLibrary.shared, configuration: EventsDefaultConfiguration(),
            options: PlayerOptions(audio: .discardInRealTime))
        let watch = Watch(playlist)
        let restart = playlist.player.playbacks.observe(.ended) { event in
            if case .ended(let summary) = event.payload, summary.outcome == .stopped { playlist.play() }
        }
        let ids = playlist.append(media([wav]))
        playlist.play()
        XCTAssertTrue(watch.playbacks.wait(timeout: 20) { $0.kind == .player(.playing) })
        playlist.stop()
        XCTAssertTrue(
            watch.playbacks.wait(timeout: 20) { $0.kind == .player(.playing) && $0.playback.rawValue == 2 },
            "\(watch.order.values)")
        XCTAssertTrue(playlist.isActive)
        XCTAssertEqual(playlist.currentEntry?.id, ids[0])
        XCTAssertFalse(watch.playlist.values.contains { $0.kind == .endReached }, "\(watch.order.values)")
        restart.cancel()
        playlist.stop()
        watch.cancel()
    }

    /// `next()` after the last entry and `previous()` before the first say that nothing changed,
    /// and change nothing; with `loop == .list` they wrap.
    func testNextAndPrevious_atTheEnds_reportThatNothingChangedUnlessTheListLoops() throws {
        let wavs = try (0..<2).map { try TestMedia.wav(seconds: 5, name: "long-\($0).wav") }
        let playlist = VLCPlaylistPlayer(
            library: TestLibrary.shared, options: PlayerOptions(audio: .discardInRealTime))
        let ids = playlist.append(media(wavs))
        XCTAssertFalse(playlist.next(), "no current entry yet")
        playlist.play()
        XCTAssertEqual(playlist.currentEntry?.id, ids[0])
        XCTAssertFalse(playlist.previous())
        XCTAssertEqual(playlist.currentEntry?.id, ids[0])
        XCTAssertTrue(playlist.next())
        XCTAssertEqual(playlist.currentEntry?.id, ids[1])
        XCTAssertFalse(playlist.next())
        XCTAssertEqual(playlist.currentEntry?.id, ids[1])
        playlist.loop = .list
        XCTAssertTrue(playlist.next())
        XCTAssertEqual(playlist.currentEntry?.id, ids[0])
        XCTAssertTrue(playlist.previous())
        XCTAssertEqual(playlist.currentEntry?.id, ids[1])
        playlist.stop()
    }

    /// The next entry's preparation (a parse started when an entry starts) is pending work
    /// until libvlc's preparser has ended it: a program that waits for the teardowns and
    /// exits must not find TagLib still reading in libvlc's thread (seen as a SIGSEGV in
    /// `TagLib::FileRef::parse` at exit, 1 in 60 runs of a playlist test with two busy loops).
    /// libvlc 3's preparser takes one media at a time: a parse of a FIFO that nothing writes
    /// holds it, so the preparation waits behind it until the test lets it go.
    ///
    /// The hold starts when libvlc's file access has read the FIFO's one byte, not when the FIFO
    /// was first opened: the dvdnav and vdr access modules open and close the path before the
    /// file access keeps it. A test that went on after such a probe could close its writer before
    /// the file access opened the FIFO, and Linux reports no hang-up to a reader that has never
    /// seen a writer: the parse then waited out its 60 s timeout (1 failure in 10 runs with both
    /// cores busy).
    func testPreparation_whenThePlaylistIsDropped_isPendingUntilLibvlcEndsIt() throws {
        let wavs = try (0..<2).map { try TestMedia.wav(seconds: 5, name: "prepared-\($0).wav") }
        let fifo = try TestMedia.directory(name: "fifo").appendingPathComponent("holds-the-preparser").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        defer { unlink(fifo) }
        // Read and write: libvlc's reads wait for data instead of seeing the end.
        let writer = open(fifo, O_RDWR)
        XCTAssertGreaterThanOrEqual(writer, 0)
        let held = VLCMedia(path: fifo, library: TestLibrary.shared)
        XCTAssertEqual(write(writer, [0], 1), 1)
        let holding = Task.detached { try? await held.parse(options: .local, timeout: .seconds(60)) }
        XCTAssertTrue(waitUntil(20) { unreadBytes(writer) == 0 }, "libvlc's file access read the FIFO")

        var playlist: VLCPlaylistPlayer? = VLCPlaylistPlayer(
            library: TestLibrary.shared, options: PlayerOptions(audio: .discardInRealTime))
        let entries = media(wavs)
        playlist?.append(entries)
        let driver = try XCTUnwrap(playlist?.player.driver)
        let control = try XCTUnwrap(playlist?.player.control.queue)
        playlist?.play()  // starts the first entry and prepares the second
        playlist = nil
        XCTAssertTrue(waitUntil(20) { driver.tracker.isTornDown }, "the player is torn down")
        control.sync {}  // and its teardown has run
        XCTAssertEqual(entries[1].parsedStatus, .none, "the preparser is still held")

        close(writer)  // the FIFO ends: the held parse fails, the preparation runs
        XCTAssertTrue(VLCLibrary.waitForPendingTeardowns(timeout: 30))
        XCTAssertEqual(entries[1].parsedStatus, .done, "the preparation had ended when nothing was pending")
        _ = holding
    }

    /// `loop == .entry` plays the same entry again; `.list` goes back to the first.
    func testLoop_whenEntryOrList_playsAgainAsAsked() throws {
        let wavs = try (0..<2).map { try TestMedia.wav(seconds: 0.2, name: "loop-\($0).wav") }
        for loop in [PlaylistLoop.entry, .list] {
            let playlist = VLCPlaylistPlayer(library: TestLibrary.shared)
            let watch = Watch(playlist)
            let ids = playlist.append(media(wavs))
            playlist.loop = loop
            playlist.play()
            XCTAssertTrue(watch.playbacks.wait(timeout: 30) { _ in watch.ended.count >= 5 }, "\(loop)")
            playlist.stop()
            let entries = Array(watch.ended.prefix(5).map(\.entry))
            switch loop {
            case .entry: XCTAssertEqual(entries, Array(repeating: ids[0], count: 5))
            default: XCTAssertEqual(entries, [ids[0], ids[1], ids[0], ids[1], ids[0]])
            }
            watch.cancel()
        }
    }

    /// A playlist file and a directory play as entries and are replaced by their entries,
    /// which name them as their parent and then play in order.
    func testExpansion_whenPlaylistFileAndDirectory_theirEntriesNameTheirParentAndPlay() throws {
        let inner = try (0..<2).map { try TestMedia.wav(seconds: 0.2, name: "inner-\($0).wav") }
        let m3u = try TestMedia.m3u(entries: inner)
        let directory = try TestMedia.directory(name: "folder")
        try TestMedia.wavData(seconds: 0.2).write(to: directory.appendingPathComponent("a.wav"))
        let playlist = VLCPlaylistPlayer(library: TestLibrary.shared)
        let watch = Watch(playlist)
        let ids = playlist.append(media([m3u, directory]))
        playlist.play()
        XCTAssertTrue(watch.waitForEnd(), "\(watch.playlist.values)")
        let expansions = watch.playlist.values.compactMap { event -> (PlaylistEntry, [PlaylistEntry])? in
            if case .expanded(let parent, let children) = event { return (parent, children) }
            return nil
        }
        XCTAssertEqual(expansions.map(\.0.id), ids)
        XCTAssertEqual(expansions.map(\.1.count), [2, 1], "\(expansions.map { $0.1.map(\.mrl) })")
        let children = expansions.flatMap(\.1)
        XCTAssertEqual(children.map(\.parent), [ids[0], ids[0], ids[1]])
        let outcomes = watch.ended.map { ($0.entry, $0.outcome) }
        XCTAssertEqual(outcomes.map(\.0), [ids[0]] + children.prefix(2).map(\.id) + [ids[1], children[2].id])
        XCTAssertEqual(outcomes.map(\.1), [.expanded(entries: 2), .ended, .ended, .expanded(entries: 1), .ended])
        XCTAssertEqual(playlist.entries.map(\.id), children.map(\.id), "the parents were replaced")
        watch.cancel()
    }

    /// A missing file fails with libvlc's cause, `/dev/zero` and a server that never answers
    /// fail as stalled within the stall timeout, and the entry after each plays.
    func testFailures_whenMissingStalledOrTrackless_failWithTheirCauseAndTheNextPlays() throws {
        let server = try StalledServer()
        let good = try TestMedia.wav(seconds: 0.2)
        let playlist = VLCPlaylistPlayer(
            library: TestLibrary.shared,
            options: PlayerOptions(stallTimeout: .seconds(2), recordsFailureCauses: true))
        let watch = Watch(playlist)
        let missing = VLCMedia(url: try TestMedia.missing(), library: TestLibrary.shared)
        let zero = VLCMedia(path: "/dev/zero", library: TestLibrary.shared)
        let stalled = VLCMedia(url: URL(string: server.url)!, library: TestLibrary.shared)
        let ids = playlist.append([missing] + media([good]) + [zero] + media([good]) + [stalled] + media([good]))
        let started = Date()
        playlist.play()
        XCTAssertTrue(watch.waitForEnd(timeout: 60), "\(watch.ended)")
        let took = Date().timeIntervalSince(started)
        let ended = watch.ended
        XCTAssertEqual(ended.map(\.entry), ids)
        XCTAssertEqual(ended[0].outcome.failure?.reason, .encounteredError)
        XCTAssertTrue(ended[0].outcome.failure?.cause?.contains("No such file") ?? false, "\(ended[0].outcome)")
        XCTAssertEqual(ended[2].outcome.failure?.reason, .stalled(.noTrack, seconds: 2))
        XCTAssertEqual(ended[4].outcome.failure?.reason, .stalled(.opening, seconds: 2))
        for index in [1, 3, 5] { XCTAssertEqual(ended[index].outcome, .ended, "\(index)") }
        XCTAssertLessThan(took, 20, "two stalls of 2 s and four short entries")
        XCTAssertTrue(watch.playbacks.values.contains { $0.kind == .stalled && $0.entry == ids[4] })
        watch.cancel()
    }

    /// Removing the current entry plays the next; moving and inserting keep the ids; clear
    /// stops and empties.
    func testEdits_whenRemovingMovingInsertingAndClearing_theIdsStayAndTheCurrentMovesOn() async throws {
        let wavs = try (0..<3).map { try TestMedia.wav(seconds: 10, name: "edit-\($0).wav") }
        let playlist = VLCPlaylistPlayer(
            library: TestLibrary.shared, options: PlayerOptions(audio: .discardInRealTime))
        let watch = Watch(playlist)
        let ids = playlist.append(media(wavs))
        playlist.play()
        XCTAssertTrue(watch.playbacks.wait(timeout: 20) { $0.entry == ids[0] && $0.kind == .player(.playing) })
        XCTAssertTrue(playlist.remove(ids[0]))
        XCTAssertEqual(playlist.currentEntry?.id, ids[1])
        XCTAssertFalse(playlist.remove(ids[0]), "already removed")
        XCTAssertTrue(playlist.move(ids[2], to: 0))
        XCTAssertEqual(playlist.entries.map(\.id), [ids[2], ids[1]])
        let inserted = playlist.insert(media([wavs[0]]), at: 1)
        XCTAssertEqual(inserted.map(\.rawValue), [4], "ids are never reused")
        XCTAssertEqual(playlist.entries.map(\.id), [ids[2], inserted[0], ids[1]])
        await playlist.waitForPendingControls()
        XCTAssertTrue(watch.playbacks.wait(timeout: 20) { $0.entry == ids[1] && $0.kind == .player(.playing) })
        playlist.clear()
        XCTAssertEqual(playlist.entries, [])
        XCTAssertNil(playlist.currentEntry)
        XCTAssertTrue(watch.playbacks.wait(timeout: 20) { $0.kind == .ended && $0.entry == ids[1] })
        let byEntry = Dictionary(grouping: watch.ended, by: { $0.entry })
        XCTAssertEqual(byEntry[ids[0]]?.map(\.outcome), [.skipped])
        XCTAssertEqual(byEntry[ids[1]]?.map(\.outcome), [.stopped])
        watch.cancel()
    }
}
