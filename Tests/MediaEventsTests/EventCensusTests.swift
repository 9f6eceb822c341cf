import Foundation
@testable import MediaEvents
import TestSupport
import XCTest

/// Every player and media event of libvlc 3, provoked on real media in every configuration:
/// each is either seen, or is one of the few this machine cannot produce (and then must not
/// be seen either, so the README's reasons stay true). Prints the count of each.
final class EventCensusTests: XCTestCase {
    /// Never sent by libvlc 3.0 (declared only), or needing what a headless machine lacks.
    static let unseeable: [MediaPlayerEvent.Kind: String] = [
        .nothingSpecial: "declared, never sent by libvlc 3.0",
        .forward: "declared, never sent by libvlc 3.0",
        .backward: "declared, never sent by libvlc 3.0",
        .corked: "sent by the PulseAudio output when another stream takes the device: needs a sound server",
        .uncorked: "sent by the PulseAudio output when another stream takes the device: needs a sound server",
    ]

    func testCensus_whenMoviePlaylistAndCallsAreProvoked_everyPlayerAndMediaEventIsSeen() async throws {
        let snapshots = try TestMedia.directory(name: "census")
        let playlist = try TestMedia.m3u(entries: [SharedMedia.shortWAV, SharedMedia.shortWAV])
        var report: [String] = []
        for mode in DispatchMode.allCases {
            let (configuration, _) = mode.make()
            let library = TestLibrary.withMixer
            let playerLog = EventLog<MediaPlayerEvent>()
            let mediaLog = EventLog<MediaEvent>()
            let listLog = EventLog<MediaListEvent>()
            var tokens: [EventSubscription] = []
            do {
                let player = VLCMediaPlayer(library: library, configuration: configuration)
                tokens.append(player.observe { playerLog.record($0) })
                let movie = VLCMedia(path: SharedMedia.movie.path, library: library, configuration: configuration)
                tokens.append(movie.observe { mediaLog.record($0) })
                player.media = movie
                player.play()
                try await withTimeout(60) {
                    XCTAssertTrue(playerLog.wait(for: .voutChanged, timeout: 20), "\(mode): \(playerLog.names)")
                    XCTAssertTrue(waitUntil(10) { player.volume >= 0 }, "\(mode): no audio output")
                    player.selectTrack(2, of: .audio)
                    player.setChapter(1)
                    _ = try await player.takeSnapshot(to: snapshots.appendingPathComponent("\(mode).png").path)
                    _ = await player.setVolumeAndWait(60)
                    // The output may report a mute from its decoder thread later: one at a time.
                    await player.setMutedAndWait(true)
                    XCTAssertTrue(playerLog.wait(for: .muted, timeout: 10), "\(mode)")
                    await player.setMutedAndWait(false)
                    XCTAssertTrue(playerLog.wait(for: .unmuted, timeout: 10), "\(mode)")
                    player.setAudioOutputDevice("null")
                    player.pause()
                    XCTAssertTrue(playerLog.wait(for: .paused, timeout: 10), "\(mode)")
                    player.resume()
                    player.setChapter(2)
                    XCTAssertTrue(playerLog.wait(for: .endReached, timeout: 20), "\(mode): \(playerLog.names)")
                    await player.stopAndWait()
                    // A failure: a missing file.
                    player.media = VLCMedia(
                        path: try TestMedia.missing().path, library: library, configuration: configuration)
                    let failed = try await player.playToEnd(timeout: .seconds(20))
                    XCTAssertEqual(failed.kind, .encounteredError, "\(mode)")
                    await player.stopAndWait()
                    // A playlist's parse: sub-items.
                    let list = VLCMedia(path: playlist.path, library: library, configuration: configuration)
                    let token = list.observe { mediaLog.record($0) }
                    let itemsToken = list.subItemList.observe { listLog.record($0) }
                    _ = try await list.parse(timeout: .seconds(10))
                    XCTAssertTrue(listLog.wait(for: .endReached, timeout: 10), "\(mode): \(listLog.names)")
                    token.cancel()
                    itemsToken.cancel()
                }
                player.media = nil
            }
            tokens.forEach { $0.cancel() }
            // `.freed` comes when a wrapper goes; the last one went above.
            let freedLog = EventLog<MediaEvent>()
            do {
                let media = VLCMedia(path: SharedMedia.shortWAV.path, library: library, configuration: configuration)
                tokens = [media.observe(.freed) { freedLog.record($0) }]
            }
            XCTAssertTrue(freedLog.wait(for: .freed, timeout: 10), "\(mode)")
            XCTAssertTrue(waitUntil(20) { VLCLibrary.waitForPendingTeardowns(timeout: 0.05) }, "\(mode)")

            var counts: [String: Int] = [:]
            for kind in MediaPlayerEvent.Kind.allCases {
                let count = playerLog.count(of: kind)
                counts[kind.name] = count
                if let reason = Self.unseeable[kind] {
                    XCTAssertEqual(count, 0, "\(mode): \(kind.name) was seen; the README says: \(reason)")
                } else {
                    XCTAssertGreaterThan(count, 0, "\(mode): \(kind.name) never seen")
                }
            }
            for kind in MediaEvent.Kind.allCases {
                let count = mediaLog.count(of: kind) + freedLog.count(of: kind)
                counts[kind.name] = count
                XCTAssertGreaterThan(count, 0, "\(mode): \(kind.name) never seen")
            }
            for kind in [MediaListEvent.Kind.willAddItem, .itemAdded, .endReached] {
                counts["sub-items " + kind.name] = listLog.count(of: kind)
                XCTAssertGreaterThan(listLog.count(of: kind), 0, "\(mode): the sub-item list's \(kind.name) never seen")
            }
            report.append(
                "\(mode): " + counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
        print("Event census:\n" + report.joined(separator: "\n"))
    }
}
