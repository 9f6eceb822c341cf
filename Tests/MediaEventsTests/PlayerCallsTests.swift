import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// The player calls media tools need — tracks, chapters and titles, rate, snapshots, volume,
/// mute and audio devices — on a real movie made by ffmpeg (`TestMedia.movie`: H.264, two
/// audio tracks with languages, subtitles, three chapters), each followed by the event that
/// confirms it, in every dispatch configuration.
final class PlayerCallsTests: XCTestCase {
    /// A player playing `url`, its events recorded; returns once it is `Playing`.
    private func startPlaying(
        _ url: URL, library: VLCLibrary = TestLibrary.shared, mode: DispatchMode,
        file: StaticString = #filePath, line: UInt = #line
    )
        -> (player: VLCMediaPlayer, log: EventLog<MediaPlayerEvent>, token: EventSubscription)?
    {
        let (configuration, _) = mode.make()
        let player = VLCMediaPlayer(library: library, configuration: configuration)
        player.media = VLCMedia(path: url.path, library: library, configuration: configuration)
        let log = EventLog<MediaPlayerEvent>()
        let token = player.observe { log.record($0) }
        player.play()
        guard log.wait(for: .playing, timeout: 20) else {
            XCTFail("\(mode): the movie did not reach Playing; events: \(log.names)", file: file, line: line)
            return nil
        }
        return (player, log, token)
    }

    private func stopAndSettle(_ player: VLCMediaPlayer, _ token: EventSubscription) async {
        await player.stopAndWait()
        token.cancel()
    }

    func testTracks_whenMovieHasTwoAudioTracksAndSubtitles_listsThemAndSelectingOneSendsESSelected() async throws {
        for mode in DispatchMode.allCases {
            guard let (player, log, token) = startPlaying(SharedMedia.movie, mode: mode) else { continue }
            try await withTimeout(30) {
                let audio = await player.tracks(of: .audio)
                XCTAssertEqual(audio.map(\.language), ["eng", "fra"], "\(mode): \(audio)")
                XCTAssertTrue(audio.first?.name.contains("English") == true, "\(mode): \(audio)")
                XCTAssertTrue(audio.last?.name.contains("Français") == true, "\(mode): \(audio)")
                let video = await player.tracks(of: .video)
                XCTAssertEqual(video.count, 1, "\(mode): \(video)")
                let subtitles = await player.tracks(of: .text)
                XCTAssertEqual(subtitles.map(\.language), ["eng"], "\(mode): \(subtitles)")
                guard audio.count == 2, let subtitle = subtitles.first else { return }

                let selected = await player.selectedTrack(of: .audio)
                XCTAssertEqual(selected, audio[0].id, "\(mode): libvlc selects the first audio track")
                let other = audio[1].id
                player.selectTrack(other, of: .audio)
                XCTAssertTrue(
                    log.entries.wait(timeout: 10) { $0.event.same(as: .esSelected(type: .audio, id: other)) },
                    "\(mode): no ESSelected(audio, \(other)) after selectTrack; \(log.names)")
                let now = await player.selectedTrack(of: .audio)
                XCTAssertEqual(now, other, "\(mode)")

                let accepted = await player.selectTrackAndWait(subtitle.id, of: .text)
                XCTAssertTrue(accepted, "\(mode)")
                XCTAssertTrue(
                    log.entries.wait(timeout: 10) { $0.event.same(as: .esSelected(type: .text, id: subtitle.id)) },
                    "\(mode): no ESSelected(text, \(subtitle.id)); \(log.names)")
                let spu = await player.selectedTrack(of: .text)
                XCTAssertEqual(spu, subtitle.id, "\(mode)")
                player.selectTrack(nil, of: .text)
                let none = await player.selectedTrack(of: .text)
                XCTAssertNil(none, "\(mode): nil selects no subtitle")
                let unknown = await player.selectTrackAndWait(9999, of: .audio)
                XCTAssertFalse(unknown, "\(mode): an id libvlc does not know is refused")
            }
            await stopAndSettle(player, token)
        }
    }

    func testChapters_whenMovieHasThreeChapters_describesThemAndSetChapterSendsChapterChanged() async throws {
        for mode in DispatchMode.allCases {
            guard let (player, log, token) = startPlaying(SharedMedia.movie, mode: mode) else { continue }
            try await withTimeout(30) {
                let titles = await player.titles()
                XCTAssertEqual(titles.count, 1, "\(mode): \(titles)")
                XCTAssertEqual(Double(titles.first?.duration ?? 0), 6000, accuracy: 100, "\(mode): \(titles)")
                let titleCount = await player.titleCount()
                XCTAssertEqual(titleCount, 1, "\(mode)")
                let chapters = await player.chapters()
                XCTAssertEqual(chapters.map(\.name), ["Chapter 1", "Chapter 2", "Chapter 3"], "\(mode): \(chapters)")
                XCTAssertEqual(chapters.map(\.offset), [0, 2000, 4000], "\(mode): \(chapters)")
                // The last chapter lasts to the end of the file (the audio runs a few ms longer).
                XCTAssertEqual(chapters.prefix(2).map(\.duration), [2000, 2000], "\(mode): \(chapters)")
                XCTAssertEqual(Double(chapters.last?.duration ?? 0), 2000, accuracy: 100, "\(mode): \(chapters)")
                let ofTitle0 = await player.chapters(ofTitle: 0)
                XCTAssertEqual(ofTitle0, chapters, "\(mode)")
                let count = await player.chapterCount()
                XCTAssertEqual(count, 3, "\(mode)")
                XCTAssertTrue(
                    log.entries.wait(timeout: 10) { $0.event.same(as: .titleChanged(0)) }, "\(mode): \(log.names)")
                XCTAssertEqual(player.title, 0, "\(mode): the cached title")

                // Chapter 3 starts at 4 s: before that, only setChapter sends ChapterChanged(2).
                player.setChapter(2)
                XCTAssertTrue(
                    log.entries.wait(timeout: 3) { $0.event.same(as: .chapterChanged(2)) },
                    "\(mode): no ChapterChanged(2) after setChapter(2); \(log.names)")
                XCTAssertTrue(waitUntil(5) { player.chapter == 2 }, "\(mode): the cached chapter is \(player.chapter)")
                log.entries.removeAll()
                player.previousChapter()
                XCTAssertTrue(
                    log.entries.wait(timeout: 3) { $0.event.same(as: .chapterChanged(1)) },
                    "\(mode): no ChapterChanged(1) after previousChapter; \(log.names)")
                log.entries.removeAll()
                player.nextChapter()
                XCTAssertTrue(
                    log.entries.wait(timeout: 3) { $0.event.same(as: .chapterChanged(2)) },
                    "\(mode): no ChapterChanged(2) after nextChapter; \(log.names)")
                player.setTitle(0)
                XCTAssertTrue(
                    log.entries.wait(timeout: 5) { $0.event.same(as: .titleChanged(0)) }, "\(mode): \(log.names)")
            }
            await stopAndSettle(player, token)
            XCTAssertEqual(player.chapter, -1, "\(mode): no chapter once stopped")
            let after = await player.chapters()
            XCTAssertEqual(after, [], "\(mode): no chapters without input")
        }
    }

    /// libvlc 3's input thread sends `EndReached` and then frees its titles without the lock
    /// the title and chapter getters copy them under (`End` in src/input/input.c), so a read
    /// from an `EndReached` handler copied freed memory (a crash in libvlccore, rare; the
    /// matrix does it in every configuration). From `EndReached` until the next input opens,
    /// `titles()` and `chapters()` answer nothing without asking libvlc; the next input's
    /// titles come back. Ten reads from each `EndReached` handler, over rounds of play to the
    /// end and play again, in every configuration.
    /// Workaround: `TitleReadGate` (rule 15 of SendSites.md) — this test fails without it.
    func testTitlesAndChapters_whenReadFromEndReachedHandler_answerEmptyUntilTheNextInputOpens() async throws {
        // Long enough that the read below (through the control queue) comes while it plays, also
        // on a loaded machine under a sanitizer.
        let movie = try TestMedia.movie(seconds: 1.5, chapters: 2, name: "ending-movie.mkv")
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let player = VLCMediaPlayer(library: TestLibrary.shared, configuration: configuration)
            player.media = VLCMedia(path: movie.path, library: TestLibrary.shared, configuration: configuration)
            let fromEnd = Locked<[Int]>([])
            let reads = Locked<[Task<Void, Never>]>([])
            let log = EventLog<MediaPlayerEvent>()
            let token = player.observe { event in
                if case .endReached = event {
                    for _ in 0..<10 {
                        let task = Task {
                            let titles = await player.titles()
                            let chapters = await player.chapters()
                            fromEnd.withLock { $0.append(titles.count + chapters.count) }
                        }
                        reads.withLock { $0.append(task) }
                    }
                }
                // Logged once the reads are started: the loop below awaits the reads it finds
                // when the log has EndReached. Logged first, an async handler could still be
                // starting them (under TSan on a loaded machine, 35 of 40 reads were counted).
                log.record(event)
            }
            for round in 0..<4 {
                log.entries.removeAll()
                player.play()
                XCTAssertTrue(log.wait(for: .playing, timeout: 20), "\(mode) round \(round): \(log.names)")
                let playing = try await withTimeout(20) { await player.titles() }
                XCTAssertEqual(playing.count, 1, "\(mode) round \(round): the playing input's titles")
                XCTAssertTrue(log.wait(for: .endReached, timeout: 20), "\(mode) round \(round): \(log.names)")
                for task in reads.withLock({ $0 }) { try await withTimeout(20) { await task.value } }
                try await withTimeout(20) { await player.stopAndWait() }
            }
            token.cancel()
            let counts = fromEnd.withLock { $0 }
            XCTAssertEqual(counts.count, 40, "\(mode): reads made from the EndReached handlers")
            XCTAssertEqual(counts.filter { $0 != 0 }, [], "\(mode): titles or chapters read from an ending input")
        }
    }

    func testRate_whenSet_isReadBackAndPlaybackKeepsGoing() async throws {
        for mode in DispatchMode.allCases {
            guard let (player, log, token) = startPlaying(SharedMedia.movie, mode: mode) else { continue }
            try await withTimeout(30) {
                XCTAssertEqual(player.rate, 1, "\(mode)")
                let accepted = await player.setRateAndWait(2)
                XCTAssertTrue(accepted, "\(mode)")
                XCTAssertEqual(player.rate, 2, "\(mode)")
                player.rate = 0.5
                await player.waitForPendingControls()
                XCTAssertEqual(player.rate, 0.5, "\(mode)")
                log.entries.removeAll()
                XCTAssertTrue(log.wait(for: .timeChanged, timeout: 5), "\(mode): playback stopped after a rate change")
            }
            await stopAndSettle(player, token)
        }
    }

    /// libvlc 3's time setter sends `TimeChanged` with the new time itself, from the thread
    /// that sets it, before the input has seeked (its `TimeCallback` announces the position
    /// "for better intf behaviour"); the input's own reports come from the input's thread. A
    /// `TimeChanged` equal to the target is therefore no sign that the seek landed
    /// (media-daemon's `playback-restart` skips this echo).
    func testTimeSetter_whenTheLengthIsKnown_echoesTheTargetFromTheCallersThreadNotTheInputs() async throws {
        let wav = try TestMedia.wav(seconds: 60, sampleRate: 8000, name: "echo.wav")
        for round in 1...3 {
            guard let (player, log, token) = startPlaying(wav, mode: .inline) else { continue }
            try await withTimeout(30) {
                // Opening and the first reports of the time come from the input's thread.
                let input = try XCTUnwrap(log.entries.values.first { $0.event.kind == .opening }?.thread)
                XCTAssertTrue(log.wait(for: .lengthChanged, timeout: 10), "round \(round): \(log.names)")
                let target: Int64 = 10_000 + Int64(round) * 1_234
                log.entries.removeAll()
                player.time = target
                await player.waitForPendingControls()
                let echo = try XCTUnwrap(
                    log.entries.values.first {
                        if case .timeChanged(target) = $0.event { true } else { false }
                    },
                    "round \(round): no TimeChanged(\(target)) once the setter had run: \(log.names)")
                XCTAssertNotEqual(echo.thread, input, "round \(round): the target came from the input's thread")
            }
            await stopAndSettle(player, token)
        }
    }

    /// While paused, libvlc's player drops the input's position events (it sends them only
    /// while playing): not even the setter's echo comes; the seek is carried out all the same.
    func testTimeSetter_whilePaused_sendsNoTimeChangedButTheSeekIsMade() async throws {
        let wav = try TestMedia.wav(seconds: 60, sampleRate: 8000, name: "paused-echo.wav")
        guard let (player, log, token) = startPlaying(wav, mode: .inline) else { return }
        try await withTimeout(30) {
            XCTAssertTrue(log.wait(for: .lengthChanged, timeout: 10), "\(log.names)")
            player.pause()
            XCTAssertTrue(log.wait(for: .paused, timeout: 10), "\(log.names)")
            log.entries.removeAll()
            player.time = 40_000
            await player.waitForPendingControls()
            XCTAssertEqual(log.count(of: .timeChanged), 0, "paused: \(log.names)")
            player.play()
            // Playing again, the input reports where the seek took it.
            XCTAssertTrue(
                waitUntil(10) {
                    log.events.contains { if case .timeChanged(let ms) = $0 { ms >= 40_000 } else { false } }
                }, "\(log.events)")
        }
        await stopAndSettle(player, token)
    }

    func testSnapshot_whenVideoPlays_writesPNGAndEveryPlayerOfTheLibraryReceivesSnapshotTaken() async throws {
        let directory = try TestMedia.directory(name: "snapshots")
        for mode in DispatchMode.allCases {
            guard let (player, log, token) = startPlaying(SharedMedia.movie, mode: mode) else { continue }
            let bystander = VLCMediaPlayer(library: TestLibrary.shared, configuration: mode.make().configuration)
            let bystanderLog = EventLog<MediaPlayerEvent>()
            let bystanderToken = bystander.observe(.snapshotTaken) { bystanderLog.record($0) }
            try await withTimeout(30) {
                XCTAssertTrue(
                    log.entries.wait(timeout: 10) { $0.event.same(as: .voutChanged(count: 1)) },
                    "\(mode): no Vout(1) for a video; \(log.names)")
                let path = directory.appendingPathComponent("\(mode).png").path
                let written = try await player.takeSnapshot(to: path, width: 80, height: 0)
                XCTAssertEqual(written, path, "\(mode)")
                let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                XCTAssertEqual(Array(bytes.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "\(mode): not a PNG")
                XCTAssertTrue(log.entries.wait(timeout: 5) { $0.event.same(as: .snapshotTaken(path: path)) }, "\(mode)")
                // libvlc sends it to every player of the instance: documented, and shown here.
                XCTAssertTrue(
                    bystanderLog.entries.wait(timeout: 5) { $0.event.same(as: .snapshotTaken(path: path)) },
                    "\(mode): the other player of the library did not receive it")
            }
            bystanderToken.cancel()
            await stopAndSettle(player, token)
        }
    }

    /// libvlc sends `SnapshotTaken` to every player of the library. Two players write into
    /// one directory at the same moment, round after round: each call returns the file it
    /// wrote (libvlc names the first player's, the second gives a name; the widths differ),
    /// never the other's. Matched by path, the first player took the second's in most rounds.
    /// Workaround: `SnapshotCapture` (rule 19 of SendSites.md) — this test fails without it.
    func testSnapshot_whenTwoPlayersWriteIntoOneDirectory_eachReturnsItsOwnFile() async throws {
        let directory = try TestMedia.directory(name: "shared-snapshots")
        for mode in DispatchMode.allCases {
            guard let (first, firstLog, firstToken) = startPlaying(SharedMedia.movie, mode: mode) else { continue }
            guard let (second, secondLog, secondToken) = startPlaying(SharedMedia.movie, mode: mode) else { continue }
            for log in [firstLog, secondLog] {
                XCTAssertTrue(
                    log.entries.wait(timeout: 10) { $0.event.same(as: .voutChanged(count: 1)) },
                    "\(mode): no Vout(1); \(log.names)")
            }
            for round in 0..<8 {
                let named = directory.appendingPathComponent("second-\(mode)-\(round).png").path
                let (firstPath, secondPath) = try await withTimeout(30) {
                    async let firstPath = first.takeSnapshot(to: directory.path, width: 80)
                    async let secondPath = second.takeSnapshot(to: named, width: 48)
                    return try await (firstPath, secondPath)
                }
                XCTAssertEqual(secondPath, named, "\(mode) round \(round)")
                XCTAssertTrue(
                    URL(fileURLWithPath: firstPath).lastPathComponent.hasPrefix("vlcsnap-"),
                    "\(mode) round \(round): the first player got \(firstPath)")
                XCTAssertEqual(try pngWidth(firstPath), 80, "\(mode) round \(round): \(firstPath)")
                XCTAssertEqual(try pngWidth(secondPath), 48, "\(mode) round \(round): \(secondPath)")
            }
            await stopAndSettle(second, secondToken)
            await stopAndSettle(first, firstToken)
        }
    }

    /// libvlc's `take_snapshot` returns 0 when it cannot write the file too; it only logs why
    /// (and sends no event). That is a failure of the call, at once, not a wait for an event
    /// that never comes.
    func testSnapshot_whenThePathCannotBeWritten_throwsOperationFailed() async throws {
        for mode in DispatchMode.allCases {
            guard let (player, log, token) = startPlaying(SharedMedia.movie, mode: mode) else { continue }
            XCTAssertTrue(
                log.entries.wait(timeout: 10) { $0.event.same(as: .voutChanged(count: 1)) },
                "\(mode): no Vout(1); \(log.names)")
            let path = try TestMedia.missing(name: "no-such-directory/none.png").path
            do {
                _ = try await withTimeout(30) { try await player.takeSnapshot(to: path, timeout: .seconds(3)) }
                XCTFail("\(mode): a snapshot to \(path) was taken")
            } catch let error as VLCError {
                guard case .operationFailed = error else { return XCTFail("\(mode): \(error)") }
            } catch {
                XCTFail("\(mode): \(error)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: path))
            await stopAndSettle(player, token)
        }
    }

    /// The width of a PNG file, from its header.
    private func pngWidth(_ path: String) throws -> Int {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(24))
        guard bytes.count == 24, bytes.prefix(4) == [0x89, 0x50, 0x4E, 0x47] else { return -1 }
        return bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
    }

    func testSnapshot_whenNoVideoOutput_throwsOperationFailed() async throws {
        let player = VLCMediaPlayer(library: TestLibrary.shared)
        let path = try TestMedia.directory(name: "no-snapshot").appendingPathComponent("none.png").path
        do {
            _ = try await withTimeout(20) { try await player.takeSnapshot(to: path, timeout: .seconds(2)) }
            XCTFail("a player without video took a snapshot")
        } catch let error as VLCError {
            guard case .operationFailed = error else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testVolumeMuteAndDevice_withALSANullOutput_sendAudioVolumeMutedUnmutedAndAudioDevice() async throws {
        for mode in DispatchMode.allCases {
            guard let (player, log, token) = startPlaying(SharedMedia.movie, library: TestLibrary.withMixer, mode: mode)
            else { continue }
            try await withTimeout(30) {
                // The audio output exists once the first audio is decoded.
                XCTAssertTrue(waitUntil(10) { player.volume >= 0 }, "\(mode): no audio output")
                let accepted = await player.setVolumeAndWait(50)
                XCTAssertTrue(accepted, "\(mode)")
                XCTAssertTrue(
                    log.entries.wait(timeout: 5) { $0.event.same(as: .audioVolume(0.5)) },
                    "\(mode): no AudioVolume(0.5); \(log.names)")
                XCTAssertEqual(player.volume, 50, "\(mode)")
                player.isMuted = true
                XCTAssertTrue(log.wait(for: .muted, timeout: 5), "\(mode): no Muted; \(log.names)")
                XCTAssertTrue(player.isMuted, "\(mode)")
                await player.setMutedAndWait(false)
                XCTAssertTrue(log.wait(for: .unmuted, timeout: 5), "\(mode): no Unmuted; \(log.names)")
                XCTAssertFalse(player.isMuted, "\(mode)")

                let devices = await player.audioOutputDevices()
                XCTAssertTrue(devices.contains { $0.id == "null" }, "\(mode): \(devices)")
                // Another device would be ALSA's "default", which needs a sound card: choosing
                // the current one again is what sends the event here (libvlc does not skip it).
                let other = "null"
                log.entries.removeAll()
                player.setAudioOutputDevice(other)
                XCTAssertTrue(
                    log.entries.wait(timeout: 5) { $0.event.same(as: .audioDevice(other)) },
                    "\(mode): no AudioDevice(\(other)); \(log.names)")
                let current = await player.audioOutputDevice()
                XCTAssertEqual(current, other, "\(mode)")
            }
            await stopAndSettle(player, token)
        }
    }

    func testVolume_withDummyOutput_sendsNoEvent() async throws {
        guard let (player, log, token) = startPlaying(SharedMedia.movie, mode: .inline) else { return }
        try await withTimeout(20) {
            // adummy takes the call and reports nothing: no event, the volume stays unknown.
            _ = await player.setVolumeAndWait(50)
            await player.setMutedAndWait(true)
            try await Task.sleep(for: .milliseconds(300))
            XCTAssertEqual(log.count(of: .muted) + log.count(of: .audioVolume), 0, "\(log.names)")
        }
        await stopAndSettle(player, token)
    }
}

extension MediaPlayerEvent {
    /// Same kind and same payload (the payload as printed: the enum has a media payload,
    /// so it is not Equatable).
    func same(as other: MediaPlayerEvent) -> Bool {
        kind == other.kind && String(describing: self) == String(describing: other)
    }
}
