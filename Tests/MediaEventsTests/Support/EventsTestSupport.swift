// Helpers shared by the tests of the MediaEvents API: one headless library per process, the
// three dispatch configurations every re-entrancy/fidelity test runs in, queue and thread
// identity probes, and small playback helpers built on `observe`.

import CVLCTestSupport
import Foundation
import Glibc
@testable import MediaEvents
import TestSupport
import XCTest

/// One libvlc instance for the whole test process: libvlc loads its plugins once per
/// instance, which is slow on a loaded 2-core machine.
enum TestLibrary {
    static let shared: VLCLibrary = {
        do { return try VLCLibrary() } catch { fatalError("VLCLibrary() failed: \(error)") }
    }()

    /// Headless with an audio output that has a volume: ALSA's `null` device (discards the
    /// samples; no sound card needed), so that `AudioVolume`, `Muted`, `Unmuted` and
    /// `AudioDevice` are sent (`adummy` has no volume and sends none of them). ALSA reads the
    /// tests' own configuration (`alsaConfigured`).
    static let withMixer: VLCLibrary = {
        _ = alsaConfigured
        let arguments =
            VLCLibrary.headlessArguments.map { $0 == "--aout=adummy" ? "--aout=alsa" : $0 }
            + ["--alsa-audio-device=null"]
        do { return try VLCLibrary(arguments: arguments) } catch {
            fatalError("VLCLibrary(ALSA null) failed: \(error)")
        }
    }()

    /// Points ALSA at a configuration that defines its `null` device and nothing else, before
    /// anything in this process opens ALSA. Every player libvlc makes opens its audio output
    /// and lists ALSA's devices, which evaluates the whole configuration: with the system's,
    /// dozens of `@func` lookups, each a `dlopen` that ThreadSanitizer answers by walking every
    /// loaded library, all under ALSA's one configuration lock. A player took 0.7 s to make
    /// under ThreadSanitizer on a quiet machine (2 ms with this file), and the re-entrancy
    /// matrix's dozens of players made in handlers then queued for that lock for longer than
    /// its no-progress bound. The file also keeps the tests from depending on the machine's
    /// ALSA setup (a sound server's plugins).
    private static let alsaConfigured: Void = {
        let text = """
            pcm.null {
                type null
                hint {
                    show on
                    description "Discard all samples"
                }
            }

            """
        do {
            let file = try TestMedia.directory(name: "alsa").appendingPathComponent("asound.conf")
            try Data(text.utf8).write(to: file)
            setenv("ALSA_CONFIG_PATH", file.path, 1)
        } catch {
            fatalError("the tests' ALSA configuration: \(error)")
        }
    }()
}

/// A short WAV generated once per process, for tests that only need "something that plays".
enum SharedMedia {
    static let shortWAV: URL = {
        do { return try TestMedia.wav(seconds: 0.3) } catch { fatalError("\(error)") }
    }()
    /// A 6-second movie: video, two audio tracks, subtitles, three chapters (`TestMedia.movie`).
    static let movie: URL = {
        do { return try TestMedia.movie() } catch { fatalError("\(error)") }
    }()
    /// A 1.5-second movie of the same kind, for the matrix.
    static let shortMovie: URL = {
        do { return try TestMedia.movie(seconds: 1.5, name: "short-movie.mkv") } catch { fatalError("\(error)") }
    }()
    static let twoSecondWAV: URL = {
        do { return try TestMedia.wav(seconds: 2) } catch { fatalError("\(error)") }
    }()
}

/// The dispatch configurations the guarantees must hold in.
enum DispatchMode: String, CaseIterable, Sendable {
    case inline, queueSync, queueAsync

    /// A configuration of this mode; queue modes get a fresh serial queue, marked so a test
    /// can tell whether it runs on it.
    func make(label: String = "test.events") -> (configuration: any EventsConfiguring, queue: MarkedQueue?) {
        switch self {
        case .inline:
            return (EventsDefaultConfiguration(), nil)
        case .queueSync:
            let queue = MarkedQueue(label: label)
            return (EventsQueueConfiguration(queue: queue.queue, isAsync: false), queue)
        case .queueAsync:
            let queue = MarkedQueue(label: label)
            return (EventsQueueConfiguration(queue: queue.queue, isAsync: true), queue)
        }
    }
}

/// A serial queue that knows whether the current thread runs one of its blocks
/// (a queue-specific marker: `dispatchPrecondition` would trap instead of failing a test).
final class MarkedQueue: Sendable {
    private static let key = DispatchSpecificKey<Int>()
    private static let nextID = Counter()

    let queue: DispatchQueue
    let id: Int

    init(label: String, target: DispatchQueue? = nil) {
        id = Self.nextID.increment()
        queue = DispatchQueue(label: "\(label).\(id)", target: target)
        queue.setSpecific(key: Self.key, value: id)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == id }
}

/// The calling thread's identity, comparable across threads: the kernel's thread id, which
/// is not handed to a new thread soon after one ends. `pthread_self()` is the thread's stack
/// address, which glibc gives to the next thread it creates once a thread is joined, so a
/// deinit on a new Dispatch worker could have "the ID" of a libvlc thread that had ended.
func currentThreadID() -> UInt { UInt(testsupport_thread_id()) }

/// Events seen by a subscription, with the thread each was delivered on.
final class EventLog<Event: VLCEvent>: Sendable {
    struct Entry: Sendable {
        let event: Event
        let thread: UInt
    }
    let entries = Recorder<Entry>()

    func record(_ event: Event) { entries.record(Entry(event: event, thread: currentThreadID())) }
    var events: [Event] { entries.values.map(\.event) }
    var names: [String] { events.map(\.name) }
    func count(of kind: Event.Kind) -> Int { events.filter { $0.kind == kind }.count }
    /// Waits until `kind` was seen `times` times.
    func wait(for kind: Event.Kind, times: Int = 1, timeout: Double = 30) -> Bool {
        waitUntil(timeout) { self.count(of: kind) >= times }
    }
    /// Waits until one of `kinds` was seen.
    func wait(forAnyOf kinds: [Event.Kind], timeout: Double = 30) -> Event.Kind? {
        var found: Event.Kind?
        _ = waitUntil(timeout) {
            found = self.events.first { kinds.contains($0.kind) }?.kind
            return found != nil
        }
        return found
    }
}

extension MediaPlayerEvent {
    var isProgressEvent: Bool { kind.isProgress }
}

/// A reference a test can drop from another thread (for example from inside a handler).
final class Box<Value: Sendable>: Sendable {
    private let value: Locked<Value?>
    init(_ value: Value?) { self.value = Locked(value) }
    var current: Value? { value.withLock { $0 } }
    /// Drops the reference (outside the lock, so a deinit never runs with it held).
    func clear() {
        let old = value.withLock { v -> Value? in
            defer { v = nil }; return v
        }
        _ = old
    }
    func set(_ newValue: Value?) {
        let old = value.withLock { v -> Value? in
            defer { v = newValue }; return v
        }
        _ = old
    }
}

/// Resident memory of this process in bytes (from /proc/self/statm).
func residentMemoryBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A media for `url` in the shared library (file URLs by path so non-ASCII paths go through
/// libvlc's own path handling).
func makeMedia(_ url: URL, configuration: (any EventsConfiguring)? = nil) -> VLCMedia {
    url.isFileURL
        ? VLCMedia(path: url.path, library: TestLibrary.shared, configuration: configuration)
        : VLCMedia(url: url, library: TestLibrary.shared, configuration: configuration)
}
