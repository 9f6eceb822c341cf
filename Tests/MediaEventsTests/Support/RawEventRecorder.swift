// Swift face of the C ground-truth listener in CVLCTestSupport (rawrec), plus a headless
// libvlc instance for tests. It uses no wrapper of MediaEvents: only its Native/ layer, the thin
// C calls through which every libvlc call of the package goes.

import CLibVLC
import CVLCTestSupport
import Foundation
@testable import MediaEvents

/// The arguments every test instance uses: no sound card, no display, no noise.
let testVLCArguments = ["--quiet", "--aout=adummy", "--vout=dummy", "--no-video-title-show"]

/// A new headless libvlc instance (release it with `release()`), or nil if libvlc could not
/// start (e.g. plugins missing: install `vlc-plugin-base`).
func makeTestVLCInstance(extraArguments: [String] = []) -> NativeLibrary? {
    NativeLibrary.new(arguments: testVLCArguments + extraArguments)
}

/// One event exactly as libvlc delivered it to the raw C callback (payload mapping: see
/// CVLCTestSupport.h).
struct RawEvent: Sendable, Equatable, CustomStringConvertible {
    let seq: Int
    let sourceTag: Int32
    let type: Int32
    let i1: Int64
    let i2: Int64
    let f: Double
    let s: String?

    var name: String { RawEventRecorder.name(of: type) }
    var description: String {
        var text = "#\(seq) [\(sourceTag)] \(name)"
        if i1 != 0 || i2 != 0 { text += " i1=\(i1) i2=\(i2)" }
        if f != 0 { text += " f=\(f)" }
        if let s { text += " s=\"\(s)\"" }
        return text
    }
}

/// Thread-safe wrapper over `rawrec_t` (the C side locks every access).
/// `@unchecked Sendable`: the only state is the rawrec pointer, owned for the object's life,
/// and every rawrec function is safe to call from any thread.
final class RawEventRecorder: @unchecked Sendable {
    private let rec: OpaquePointer

    init() {
        guard let rec = rawrec_create() else { fatalError("rawrec_create failed (out of memory)") }
        self.rec = rec
    }

    /// Detaches whatever is still attached: the attached objects must still be alive.
    deinit {
        rawrec_destroy(rec)
    }

    /// Attaches one raw callback per type to `eventManager`; events are tagged with `tag`.
    @discardableResult
    func attach(_ eventManager: OpaquePointer, tag: Int32 = 0, types: [Int32]) -> Bool {
        types.withUnsafeBufferPointer {
            rawrec_attach(rec, eventManager, tag, $0.baseAddress, Int32($0.count)) == Int32(types.count)
        }
    }

    @discardableResult
    func attach(_ eventManager: OpaquePointer, tag: Int32 = 0, types: [libvlc_event_e]) -> Bool {
        attach(eventManager, tag: tag, types: types.map { Int32(bitPattern: $0.rawValue) })
    }

    @discardableResult
    func attach(_ eventManager: NativeEventManager, tag: Int32 = 0, types: [libvlc_event_e]) -> Bool {
        attach(eventManager.pointer, tag: tag, types: types)
    }

    /// Detaches every attachment exactly once (idempotent). Call before releasing the objects.
    func detachAll() {
        rawrec_detach_all(rec)
    }

    var count: Int { Int(rawrec_count(rec)) }

    /// A snapshot of all records so far, in delivery order.
    var events: [RawEvent] {
        var out: [RawEvent] = []
        var raw = rawrec_event_t()
        var index: Int32 = 0
        while rawrec_get(rec, index, &raw) == 0 {
            out.append(
                RawEvent(
                    seq: Int(raw.seq), sourceTag: raw.source_tag, type: raw.type,
                    i1: raw.i1, i2: raw.i2, f: raw.f,
                    s: raw.s.map { String(cString: $0) }))
            index += 1
        }
        return out
    }

    /// Event type names in delivery order, e.g. ["MediaPlayerOpening", ...].
    var names: [String] { events.map(\.name) }

    func clear() {
        rawrec_clear(rec)
    }

    /// Polls until an event of `type` was recorded.
    func wait(for type: libvlc_event_e, timeout: Double) -> Bool {
        let wanted = Int32(bitPattern: type.rawValue)
        return waitUntil(timeout) { self.events.contains { $0.type == wanted } }
    }

    static func name(of type: Int32) -> String {
        rawrec_type_name(type).map { String(cString: $0) } ?? "?\(type)"
    }

    // Every event type each object can send (libvlc 3.0).
    static let mediaEventTypes: [libvlc_event_e] = [
        libvlc_MediaMetaChanged, libvlc_MediaSubItemAdded, libvlc_MediaDurationChanged,
        libvlc_MediaParsedChanged, libvlc_MediaFreed, libvlc_MediaStateChanged,
        libvlc_MediaSubItemTreeAdded,
    ]
    static let playerEventTypes: [libvlc_event_e] = [
        libvlc_MediaPlayerMediaChanged, libvlc_MediaPlayerNothingSpecial, libvlc_MediaPlayerOpening,
        libvlc_MediaPlayerBuffering, libvlc_MediaPlayerPlaying, libvlc_MediaPlayerPaused,
        libvlc_MediaPlayerStopped, libvlc_MediaPlayerForward, libvlc_MediaPlayerBackward,
        libvlc_MediaPlayerEndReached, libvlc_MediaPlayerEncounteredError,
        libvlc_MediaPlayerTimeChanged, libvlc_MediaPlayerPositionChanged,
        libvlc_MediaPlayerSeekableChanged, libvlc_MediaPlayerPausableChanged,
        libvlc_MediaPlayerTitleChanged, libvlc_MediaPlayerSnapshotTaken,
        libvlc_MediaPlayerLengthChanged, libvlc_MediaPlayerVout, libvlc_MediaPlayerScrambledChanged,
        libvlc_MediaPlayerESAdded, libvlc_MediaPlayerESDeleted, libvlc_MediaPlayerESSelected,
        libvlc_MediaPlayerCorked, libvlc_MediaPlayerUncorked, libvlc_MediaPlayerMuted,
        libvlc_MediaPlayerUnmuted, libvlc_MediaPlayerAudioVolume, libvlc_MediaPlayerAudioDevice,
        libvlc_MediaPlayerChapterChanged,
    ]
    static let mediaListEventTypes: [libvlc_event_e] = [
        libvlc_MediaListItemAdded, libvlc_MediaListWillAddItem, libvlc_MediaListItemDeleted,
        libvlc_MediaListWillDeleteItem, libvlc_MediaListEndReached,
    ]
    static let mediaListPlayerEventTypes: [libvlc_event_e] = [
        libvlc_MediaListPlayerPlayed, libvlc_MediaListPlayerNextItemSet, libvlc_MediaListPlayerStopped,
    ]
}
