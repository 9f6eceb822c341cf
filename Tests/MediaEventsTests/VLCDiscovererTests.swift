import Foundation
import MediaEvents
import TestSupport
import XCTest

final class VLCDiscovererTests: XCTestCase {
    /// The one file in the music folder the local-folders services scan here.
    nonisolated(unsafe) private static var musicFile: URL?

    /// libvlc 3's `audio_dir`, `video_dir` and `picture_dir` scan the folders named in
    /// `$XDG_CONFIG_HOME/user-dirs.dirs` and, without that file, the whole of `$HOME`,
    /// recursively, reading tags with taglib: what they find would depend on the machine, and
    /// a home full of toolchains takes long to scan. The tests give them a folder of their own
    /// holding one file, set before any libvlc thread reads the environment.
    override class func setUp() {
        super.setUp()
        do {
            let music = try TestMedia.directory(name: "Music")
            let file = music.appendingPathComponent("tone.wav")
            try TestMedia.wavData(seconds: 0.2).write(to: file)
            musicFile = file
            let config = try TestMedia.directory(name: "config")
            let dirs = ["MUSIC", "VIDEOS", "PICTURES"].map { "XDG_\($0)_DIR=\"\(music.path)\"\n" }.joined()
            try dirs.write(to: config.appendingPathComponent("user-dirs.dirs"), atomically: true, encoding: .utf8)
            setenv("XDG_CONFIG_HOME", config.path, 1)
        } catch {
            fatalError("cannot make the discoverers' music folder: \(error)")
        }
    }

    /// The local-folders services are installed with vlc-plugin-base; starting one sends
    /// Started, its list reports what it finds, stopping sends Ended; a stop from the
    /// discoverer's own handler does not hang.
    func testStartStop_whenLocalDirectoriesService() async throws {
        let library = try VLCLibrary()
        let services = VLCMediaDiscoverer.available(category: .localDirectories, library: library)
        XCTAssertTrue(services.contains { $0.name == "audio_dir" }, "\(services)")
        XCTAssertFalse(VLCMediaDiscoverer.available(library: library).isEmpty)
        let discoverer = try VLCMediaDiscoverer(name: "audio_dir", library: library)
        let events = Recorder<MediaDiscovererEvent.Kind>()
        let listEvents = Recorder<MediaListEvent>()
        let token = discoverer.observe { [weak discoverer] event in
            events.record(event.kind)
            // Stopping from the discoverer's own event (joins the service thread) is queued.
            if event.kind == .started { discoverer?.stop() }
        }
        let listToken = discoverer.mediaList.observe { event in
            listEvents.record(event)
            _ = discoverer.mediaList.count
        }
        XCTAssertTrue(discoverer.mediaList.isReadOnly)
        try await withTimeout(30) { try await discoverer.start() }
        XCTAssertTrue(events.wait(timeout: 30) { $0 == .ended }, "\(events.values)")
        XCTAssertEqual(events.values, [.started, .ended])
        XCTAssertEqual(events.values.map(\.name), ["MediaDiscovererStarted", "MediaDiscovererEnded"])
        // libvlc sends Ended just before it marks the service stopped.
        XCTAssertTrue(waitUntil(10) { !discoverer.isRunning })
        // Stopping waits for the scan, so the one file of the music folder has been found.
        let found = discoverer.mediaList.items.map(\.mrl)
        XCTAssertEqual(
            found.map { URL(string: $0)?.lastPathComponent }, [Self.musicFile?.lastPathComponent], "\(found)")
        token.cancel()
        listToken.cancel()
    }

    /// libvlc 3's media discoverer `stop` destroys its service without checking that it has
    /// one (a stop before `start`, or a second one, dereferences a null service in
    /// libvlccore), and both discoverers' `start` replace a running service (the renderer's
    /// only asserts against it). Here a stop of a stopped discoverer and a start of a running
    /// one change nothing: one Started and one Ended for start, start, stop, stop.
    /// Workaround: `DiscovererServiceGuard` (rule 18 of SendSites.md) — this test fails without it.
    func testStartAndStop_whenRepeatedOrOutOfOrder_changeNothing() async throws {
        let library = try VLCLibrary()
        let discoverer = try VLCMediaDiscoverer(name: "audio_dir", library: library)
        let events = Recorder<MediaDiscovererEvent.Kind>()
        let token = discoverer.observe { events.record($0.kind) }
        try await withTimeout(30) {
            discoverer.stop()
            await discoverer.stopAndWait()
            try await discoverer.start()
            try await discoverer.start()
            XCTAssertTrue(discoverer.isRunning)
            await discoverer.stopAndWait()
            await discoverer.stopAndWait()
            discoverer.stop()
            await discoverer.stopAndWait()
        }
        XCTAssertFalse(discoverer.isRunning)
        XCTAssertEqual(events.values, [.started, .ended])
        token.cancel()

        // The renderer discoverer: no renderer answers here, so only that nothing breaks.
        for service in VLCRendererDiscoverer.available(library: library) {
            let renderers = try VLCRendererDiscoverer(name: service.name, library: library)
            try await withTimeout(30) {
                renderers.stop()
                await renderers.stopAndWait()
                guard (try? await renderers.start()) != nil else { return }  // its daemon is missing
                try await renderers.start()
                await renderers.stopAndWait()
                await renderers.stopAndWait()
            }
        }
    }

    /// libvlc 3 accepts any name at creation and refuses to start an unknown service.
    func testStart_whenServiceUnknown() async throws {
        let library = try VLCLibrary()
        let media = try VLCMediaDiscoverer(name: "no-such-service", library: library)
        let renderers = try VLCRendererDiscoverer(name: "no-such-renderer", library: library)
        do {
            try await withTimeout(30) { try await media.start() }
            XCTFail("an unknown media discovery service started")
        } catch VLCError.invalidState {}
        do {
            try await withTimeout(30) { try await renderers.start() }
            XCTFail("an unknown renderer discovery service started")
        } catch VLCError.invalidState {}
    }

    /// Every renderer service the installed libvlc offers starts (or, without its daemon,
    /// refuses to) and stops cleanly. No renderer is on the test network, so no ItemAdded is
    /// expected. Debian 12 offers avahi_renderer, which needs avahi-daemon to start.
    func testStartStop_whenRendererServicesInstalled() async throws {
        let library = try VLCLibrary()
        let services = VLCRendererDiscoverer.available(library: library)
        print("renderer services: \(services)")
        for service in services {
            let discoverer = try VLCRendererDiscoverer(name: service.name, library: library)
            let token = discoverer.observe { event in print("renderer event: \(event)") }
            do {
                try await withTimeout(30) { try await discoverer.start() }
            } catch VLCError.invalidState(let message) {
                print("renderer service \(service.name) did not start: \(message)")
            }
            try await withTimeout(30) { await discoverer.stopAndWait() }
            token.cancel()
        }
    }

    /// Discoverers dropped right after start: every subscription completes once.
    func testTeardown_whenRunning() async throws {
        let library = try VLCLibrary()
        let completions = Counter()
        var tokens: [EventSubscription] = []
        for _ in 0..<5 {
            let discoverer = try VLCMediaDiscoverer(name: "audio_dir", library: library)
            tokens.append(discoverer.observe(onCompletion: { completions.increment() }) { _ in })
            tokens.append(discoverer.mediaList.observe(onCompletion: { completions.increment() }) { _ in })
            try await withTimeout(30) { try await discoverer.start() }
        }
        XCTAssertTrue(completions.wait(forAtLeast: 10, timeout: 30), "\(completions.count)")
        XCTAssertEqual(completions.count, 10)
        _ = tokens
    }
}
