import Foundation
@testable import MediaEvents
import XCTest

/// The recording format: every event of every source written as a line and made again with the
/// same payload, the text read back as written, logs read as recordings, and broken lines
/// refused with their line number. Pure logic (libvlc makes the media of media payloads only).
final class RecordingFormatTests: XCTestCase {
    private let materials = ReplayMaterials { mrl in VLCMedia(url: URL(string: mrl)!, library: TestLibrary.shared) }

    private func media(_ name: String) -> VLCMedia { materials.media("file:///tmp/\(name)") }

    // MARK: Every event, every payload

    func testCodec_whenEveryPlayerEvent_makesTheSameEventFromItsLine() throws {
        let events: [MediaPlayerEvent] = [
            .mediaChanged(media("a%20b%20%C3%BC.mkv")), .mediaChanged(nil), .nothingSpecial, .opening,
            .buffering(percent: 42.5), .playing, .paused, .stopped, .forward, .backward, .endReached,
            .encounteredError, .timeChanged(milliseconds: 1234), .positionChanged(0.123_456_789),
            .positionChanged(.nan), .seekableChanged(true), .pausableChanged(false), .titleChanged(2),
            .snapshotTaken(path: "/tmp/a \"b\"\n.png"), .lengthChanged(milliseconds: 6000), .voutChanged(count: 1),
            .scrambledChanged(true), .esAdded(type: .audio, id: 1), .esAdded(type: .unknown, id: 0),
            .esDeleted(type: .video, id: -1), .esSelected(type: .text, id: 3), .corked, .uncorked, .muted,
            .unmuted, .audioVolume(-1), .audioVolume(0.7), .audioVolume(-.infinity), .audioDevice(nil),
            .audioDevice("hw:0"), .chapterChanged(1),
        ]
        XCTAssertEqual(Set(events.map(\.kind)), Set(MediaPlayerEvent.Kind.allCases), "every kind is covered")
        try assertRoundTrips(events)
    }

    func testCodec_whenEveryMediaEvent_makesTheSameEventFromItsLine() throws {
        let events: [MediaEvent] = [
            .metaChanged(.title), .metaChanged(.discTotal), .metaChanged(MetaKey(rawValue: 30)),
            .subItemAdded(media("list/1.wav")), .durationChanged(milliseconds: 6000), .parsedChanged(.done),
            .parsedChanged(.none), .freed, .stateChanged(.playing), .stateChanged(.error),
            .subItemTreeAdded(media("list.m3u")),
        ]
        XCTAssertEqual(Set(events.map(\.kind)), Set(MediaEvent.Kind.allCases))
        try assertRoundTrips(events)
    }

    func testCodec_whenEveryListAndDiscovererEvent_makesTheSameEventFromItsLine() throws {
        let list: [MediaListEvent] = [
            .itemAdded(media("1.wav"), index: 0), .willAddItem(media("2.wav"), index: 1),
            .itemDeleted(media("1.wav"), index: 0), .willDeleteItem(media("2.wav"), index: 3), .endReached,
        ]
        XCTAssertEqual(Set(list.map(\.kind)), Set(MediaListEvent.Kind.allCases))
        try assertRoundTrips(list)
        let listPlayer: [MediaListPlayerEvent] = [.played, .nextItemSet(media("3.wav")), .stopped]
        XCTAssertEqual(Set(listPlayer.map(\.kind)), Set(MediaListPlayerEvent.Kind.allCases))
        try assertRoundTrips(listPlayer)
        let discoverer: [MediaDiscovererEvent] = [.started, .ended]
        try assertRoundTrips(discoverer)
        let renderers: [RendererDiscovererEvent] = [
            .itemAdded(
                VLCRendererItem(
                    recordedName: "Living Room TV", type: "chromecast", iconURI: "http://x/icon.png", canAudio: true,
                    canVideo: true)),
            .itemDeleted(
                VLCRendererItem(
                    recordedName: "Kitchen", type: "chromecast", iconURI: nil, canAudio: true, canVideo: false)),
        ]
        XCTAssertEqual(Set(renderers.map(\.kind)), Set(RendererDiscovererEvent.Kind.allCases))
        try assertRoundTrips(renderers)
        let vlm = VLMEvent.Kind.allCases.map { kind in
            VLMEvent(kind: kind, mediaName: "broadcast", instanceName: kind.rawValue % 2 == 0 ? nil : "main")
        }
        try assertRoundTrips(vlm + [VLMEvent(kind: .mediaAdded, mediaName: nil)])
    }

    func testCodec_whenEveryPlaybackEventOutcomeAndFailure_makesTheSameEventFromItsLine() throws {
        let one = PlaybackID(rawValue: 1)
        let entry = PlaylistEntryID(rawValue: 7)
        // A summary is of the playback its event is tagged with (the line holds them once).
        func summary(_ outcome: PlaybackOutcome, _ playback: PlaybackID, _ entry: PlaylistEntryID?) -> PlaybackSummary {
            PlaybackSummary(
                playback: playback, entry: entry, mrl: "file:///tmp/a.mkv", outcome: outcome, time: 5960,
                position: 0.993_333_3, length: 6000, seconds: 6.123_456_789)
        }
        let outcomes: [PlaybackOutcome] = [
            .ended, .expanded(entries: 3), .stopped, .skipped, .quit,
            .failed(PlaybackFailure(.encounteredError, cause: "cannot open file (No such file or directory)")),
            .failed(PlaybackFailure(.noTracks)), .failed(PlaybackFailure(.streamError, cause: "read failed")),
            .failed(PlaybackFailure(.stalled(.opening, seconds: 2.5))),
            .failed(PlaybackFailure(.stalled(.noProgress, seconds: 20))),
        ]
        var payloads: [PlaybackEvent.Payload] = [
            .began(mrl: "file:///tmp/a.mkv"), .player(.timeChanged(milliseconds: 80)),
            .player(.mediaChanged(media("b.mkv"))), .player(.esAdded(type: .audio, id: 2)),
            .media(.stateChanged(.ended)), .media(.subItemAdded(media("list/2.wav"))),
        ]
        payloads += [StallReason.opening, .buffering, .noTrack, .noProgress].map { .stalled($0) }
        var events = payloads.flatMap { payload in
            [PlaybackEvent(playback: one, entry: entry, payload: payload)]
                + [PlaybackEvent(playback: PlaybackID(rawValue: 12), entry: nil, payload: payload)]
        }
        for (playback, tag) in [(one, entry), (PlaybackID(rawValue: 12), nil)] {
            events += outcomes.map {
                PlaybackEvent(playback: playback, entry: tag, payload: .ended(summary($0, playback, tag)))
            }
        }
        try assertRoundTrips(events)
    }

    func testCodec_whenEveryPlaylistEvent_makesTheSameEventFromItsLine() throws {
        let first = PlaylistEntry(id: PlaylistEntryID(rawValue: 1), mrl: "file:///tmp/list.m3u", parent: nil)
        let children = [2, 3].map {
            PlaylistEntry(id: PlaylistEntryID(rawValue: $0), mrl: "file:///tmp/\($0).wav", parent: first.id)
        }
        let events: [PlaylistEvent] = [
            .entriesAdded([first], index: 0), .entriesAdded(children, index: 1), .entryRemoved(children[0], index: 1),
            .entryMoved(children[1], from: 1, to: 0), .cleared, .expanded(parent: first, children: children),
            .expanded(parent: first, children: []), .currentEntryChanged(children[1]), .currentEntryChanged(nil),
            .endReached,
        ]
        XCTAssertEqual(Set(events.map(\.kind)), Set(PlaylistEvent.Kind.allCases))
        try assertRoundTrips(events)
    }

    /// Writes each event as a recording's line, reads the text back, and makes the event again
    /// from the line read: the same case and payload (compared with `Mirror`, not the codec).
    private func assertRoundTrips<Event: RecordingCodable>(
        _ events: [Event], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        for (index, event) in events.enumerated() {
            let object = RecordedObject(id: RecordedObject.ID(rawValue: 1), kind: Event.recordedKind)
            let tags = event.recordedTags
            let recorded = RecordedEntry(
                seq: index + 1, time: .microseconds(1500 + index), kind: .event, name: event.name, object: object.id,
                source: object.kind.rawValue, playback: tags?.playback, entry: tags?.entry, fields: event.recordedFields
            )
            let recording = Recording(libvlcVersion: VLCLibrary.version, objects: [object], entries: [recorded])
            let read = try Recording(jsonLines: recording.jsonLines)
            XCTAssertEqual(read, recording, "\(event) did not read back as written", file: file, line: line)
            let made = try Event.prepare(read.entries[0]).make(materials)
            XCTAssertEqual(structure(of: made), structure(of: event), "\(recorded)", file: file, line: line)
        }
    }

    func testFloatValues_whenWrittenAndReadBack_areTheSameBits() {
        var generator = SystemRandomNumberGenerator()
        var values: [Float] = [0, -0.0, 1, 0.1, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1e-30, 16.3]
        for _ in 0..<100_000 { values.append(Float(bitPattern: UInt32.random(in: .min ... .max, using: &generator))) }
        for value in values where value.isFinite {
            let text = RecordedValue.float(value).description
            XCTAssertEqual(RecordedValue.float(value).floatValue?.bitPattern, value.bitPattern, text)
            let parsed = try? RecordingJSON.parseObject("{\"v\":\(text)}")
            XCTAssertEqual(parsed?[field: "v"]?.floatValue?.bitPattern, value.bitPattern, text)
        }
    }

    // MARK: The text

    func testRecording_whenWrittenAndRead_isTheSameWithEveryKindOfLine() throws {
        let player = RecordedObject(id: RecordedObject.ID(rawValue: 1), kind: .player, name: "main")
        let playbacks = RecordedObject(id: RecordedObject.ID(rawValue: 2), kind: .playbacks, parent: player.id)
        let media = RecordedObject(
            id: RecordedObject.ID(rawValue: 3), kind: .media, context: [RecordedField("item", .integer(1))])
        let recording = Recording(
            libvlcVersion: "3.0.24 Vetinari", started: "2026-12-01T10:40:00.123Z", objects: [player, playbacks, media],
            entries: [
                RecordedEntry(seq: 1, time: .zero, kind: .call, name: "play", object: player.id, source: "player"),
                RecordedEntry(
                    seq: 2, time: .microseconds(1_000_001), kind: .event, name: "PlaybackBegan", object: playbacks.id,
                    source: "playbacks", playback: PlaybackID(rawValue: 1), entry: PlaylistEntryID(rawValue: 4),
                    fields: [RecordedField("mrl", .string("file:///t\u{1}mp/\"x\" ♫.mkv"))]),
                RecordedEntry(
                    seq: 3, time: .seconds(3600), kind: .mark, name: "UserPressedNext", source: "ui",
                    fields: [
                        RecordedField("object", .string("not an id in a mark")),
                        RecordedField("nested", .object([RecordedField("a", .array([.null, .bool(false)]))])),
                    ]),
            ])
        let text = recording.jsonLines
        XCTAssertEqual(
            text.split(separator: "\n").first,
            #"{"format":"media-events-recording","version":1,"libvlc":"3.0.24 Vetinari","started":"2026-12-01T10:40:00.123Z","objects":[{"object":1,"source":"player","name":"main"},{"object":2,"source":"playbacks","of":1},{"object":3,"source":"media","context":{"item":1}}]}"#
        )
        XCTAssertEqual(
            text.split(separator: "\n").dropFirst().first,
            #"{"seq":1,"t":0.000000,"object":1,"source":"player","call":"play"}"#)
        let read = try Recording(jsonLines: text)
        XCTAssertEqual(read, recording)
        XCTAssertEqual(read.jsonLines, text)
        XCTAssertEqual(read.segment(after: "play")?.entries.map(\.seq), [2, 3])
    }

    func testRecording_whenGivenALog_readsObjectsBySourceAndContextAndOtherLinesAsMarks() throws {
        let log = """
            {"seq":1,"t":0.009,"ts":"2026-12-01T10:40:00.001Z","source":"player","event":"MediaPlayerMediaChanged","item":1,"mrl":"file:///dev/zero"}
            {"seq":2,"t":0.01,"ts":"2026-12-01T10:40:00.002Z","source":"media","event":"MediaStateChanged","item":1,"state":"opening"}
            {"seq":3,"t":0.5,"ts":"2026-12-01T10:40:00.500Z","source":"player","event":"MediaPlayerPositionChanged","item":1,"position":0.0416667}
            {"seq":4,"t":0.6,"ts":"2026-12-01T10:40:00.600Z","source":"program","event":"ItemFailed","item":1,"mrl":"file:///dev/zero","error":"stalled","message":"stalled","cause":null}
            {"seq":5,"t":0.7,"ts":"2026-12-01T10:40:00.700Z","source":"player","event":"MediaPlayerMediaChanged","item":2,"pass":1,"mrl":"file:///a.wav"}
            {"seq":6,"t":0.8,"ts":"2026-12-01T10:40:00.800Z","source":"libvlc","event":"LogMessage","level":"error","module":"x","object":"main input","text":"gone"}
            """
        let recording = try Recording(jsonLines: log)
        XCTAssertEqual(recording.version, 0)
        XCTAssertEqual(recording.objects.map(\.kind), [.player, .media, .player])
        XCTAssertEqual(
            recording.objects.map { RecordingJSON.line($0.context) },
            [
                #"{"item":1}"#, #"{"item":1}"#, #"{"item":2,"pass":1}"#,
            ])
        XCTAssertEqual(recording.entries.map(\.kind), [.event, .event, .event, .mark, .event, .mark])
        XCTAssertEqual(recording.entries.map(\.object?.rawValue), [1, 2, 1, nil, 3, nil])
        XCTAssertEqual(recording.entries[2].fields, [RecordedField("position", .number("0.0416667"))])
        XCTAssertEqual(recording.entries[3].source, "program")
        XCTAssertEqual(recording.entries[3].fields.map(\.name), ["item", "mrl", "error", "message", "cause"])
        XCTAssertEqual(recording.entries[5].fields.map(\.name), ["level", "module", "object", "text"])
        XCTAssertEqual(
            recording.entries.map(\.time),
            [0.009, 0.01, 0.5, 0.6, 0.7, 0.8].map { .nanoseconds(Int64(($0 * 1e9).rounded())) })
        // Written out it is a recording of the current version, with the same objects and entries.
        let converted = try Recording(jsonLines: recording.jsonLines)
        XCTAssertEqual(converted.version, Recording.formatVersion)
        XCTAssertEqual(converted.objects, recording.objects)
        XCTAssertEqual(converted.entries, recording.entries)
    }

    func testRecording_whenALineIsWrong_throwsWithItsNumber() {
        let header =
            #"{"format":"media-events-recording","version":1,"libvlc":null,"objects":[{"object":1,"source":"player"}]}"#
        let cases: [(String, Int, String)] = [
            (header + "\n\n" + #"{"seq":1,"t":0,"object":1,"event":"MediaPlayerPlaying""#, 3, "not JSON"),
            (header + "\n" + #"{"seq":1,"t":0,"object":2,"event":"MediaPlayerPlaying"}"#, 2, "not in the header"),
            (header + "\n" + #"{"seq":1,"object":1,"event":"MediaPlayerPlaying"}"#, 2, "no time"),
            (header + "\n" + #"{"seq":1,"t":0,"object":1,"event":"A","call":"play"}"#, 2, "exactly one"),
            (header.replacingOccurrences(of: #""version":1"#, with: #""version":2"#), 1, "version 2"),
            (#"["not","an","object"]"#, 1, "JSON object"),
            (#"{"seq":1,"t":0.1,"event":"MediaPlayerPlaying"}"#, 1, "source and event"),
        ]
        for (text, line, words) in cases {
            XCTAssertThrowsError(try Recording(jsonLines: text), text) { error in
                let error = error as? RecordingError
                XCTAssertEqual(error?.line, line, "\(String(describing: error))")
                XCTAssertTrue(error?.message.contains(words) == true, "\(String(describing: error)) lacks '\(words)'")
            }
        }
    }

    func testJSON_whenEscapesAndNesting_readsAsJSONSays() throws {
        let fields = try RecordingJSON.parseObject(
            #"{ "s" : "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83c\udfb5" , "n":[-1.5e+3,0,{"x":true}] }"#)
        XCTAssertEqual(fields[field: "s"], .string("a\"b\\c/d\u{8}\u{c}\n\r\té🎵"))
        XCTAssertEqual(
            fields[field: "n"],
            .array([.number("-1.5e+3"), .number("0"), .object([RecordedField("x", .bool(true))])]))
        for broken in [#"{"a":1,}"#, #"{"a":"\ud83c"}"#, #"{"a":1.}"#, #"{"a":-}"#, #"{"a":tru}"#, #"{"a":1} x"#] {
            XCTAssertThrowsError(try RecordingJSON.parseObject(Substring(broken)), broken)
        }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        XCTAssertThrowsError(try RecordingJSON.parseObject(Substring(#"{"a":"# + deep + "}")), "nesting is bounded")
    }
}
