import CLibVLC
@testable import MediaEvents
import XCTest

/// Each typed kind must stand for the libvlc event type of the same name: the C constants
/// from libvlc's header are the ground truth, not MediaEvents' own table.
final class EventNamesTests: XCTestCase {
    /// libvlc 3.0's name table stops before the renderer discoverer's events; MediaEvents names
    /// them after their C constants.
    private static let unnamedByLibvlc: Set = ["RendererDiscovererItemAdded", "RendererDiscovererItemDeleted"]

    private func assertKinds<Kind: VLCEventKind>(
        _ expected: [(Kind, libvlc_event_e, String)], file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(expected.count, Kind.allCases.count, "every kind is listed", file: file, line: line)
        XCTAssertEqual(Set(expected.map(\.0)).count, Kind.allCases.count, "no kind twice", file: file, line: line)
        for (kind, native, name) in expected {
            XCTAssertEqual(kind.nativeType, Int32(native.rawValue), "\(kind)", file: file, line: line)
            XCTAssertEqual(kind.name, name, file: file, line: line)
            let libvlcName = NativeLibrary.eventTypeName(Int32(native.rawValue))
            if Self.unnamedByLibvlc.contains(name) {
                XCTAssertEqual(
                    libvlcName, "Unknown Event", "libvlc 3.0 has no name for \(name)", file: file, line: line)
            } else {
                XCTAssertEqual(libvlcName, name, "libvlc spells \(name) so", file: file, line: line)
            }
        }
    }

    func testMediaPlayerKinds_matchLibvlcConstantsAndNames() {
        assertKinds([
            (MediaPlayerEvent.Kind.mediaChanged, libvlc_MediaPlayerMediaChanged, "MediaPlayerMediaChanged"),
            (.nothingSpecial, libvlc_MediaPlayerNothingSpecial, "MediaPlayerNothingSpecial"),
            (.opening, libvlc_MediaPlayerOpening, "MediaPlayerOpening"),
            (.buffering, libvlc_MediaPlayerBuffering, "MediaPlayerBuffering"),
            (.playing, libvlc_MediaPlayerPlaying, "MediaPlayerPlaying"),
            (.paused, libvlc_MediaPlayerPaused, "MediaPlayerPaused"),
            (.stopped, libvlc_MediaPlayerStopped, "MediaPlayerStopped"),
            (.forward, libvlc_MediaPlayerForward, "MediaPlayerForward"),
            (.backward, libvlc_MediaPlayerBackward, "MediaPlayerBackward"),
            (.endReached, libvlc_MediaPlayerEndReached, "MediaPlayerEndReached"),
            (.encounteredError, libvlc_MediaPlayerEncounteredError, "MediaPlayerEncounteredError"),
            (.timeChanged, libvlc_MediaPlayerTimeChanged, "MediaPlayerTimeChanged"),
            (.positionChanged, libvlc_MediaPlayerPositionChanged, "MediaPlayerPositionChanged"),
            (.seekableChanged, libvlc_MediaPlayerSeekableChanged, "MediaPlayerSeekableChanged"),
            (.pausableChanged, libvlc_MediaPlayerPausableChanged, "MediaPlayerPausableChanged"),
            (.titleChanged, libvlc_MediaPlayerTitleChanged, "MediaPlayerTitleChanged"),
            (.snapshotTaken, libvlc_MediaPlayerSnapshotTaken, "MediaPlayerSnapshotTaken"),
            (.lengthChanged, libvlc_MediaPlayerLengthChanged, "MediaPlayerLengthChanged"),
            (.voutChanged, libvlc_MediaPlayerVout, "MediaPlayerVout"),
            (.scrambledChanged, libvlc_MediaPlayerScrambledChanged, "MediaPlayerScrambledChanged"),
            (.esAdded, libvlc_MediaPlayerESAdded, "MediaPlayerESAdded"),
            (.esDeleted, libvlc_MediaPlayerESDeleted, "MediaPlayerESDeleted"),
            (.esSelected, libvlc_MediaPlayerESSelected, "MediaPlayerESSelected"),
            (.corked, libvlc_MediaPlayerCorked, "MediaPlayerCorked"),
            (.uncorked, libvlc_MediaPlayerUncorked, "MediaPlayerUncorked"),
            (.muted, libvlc_MediaPlayerMuted, "MediaPlayerMuted"),
            (.unmuted, libvlc_MediaPlayerUnmuted, "MediaPlayerUnmuted"),
            (.audioVolume, libvlc_MediaPlayerAudioVolume, "MediaPlayerAudioVolume"),
            (.audioDevice, libvlc_MediaPlayerAudioDevice, "MediaPlayerAudioDevice"),
            (.chapterChanged, libvlc_MediaPlayerChapterChanged, "MediaPlayerChapterChanged"),
        ])
    }

    func testMediaKinds_matchLibvlcConstantsAndNames() {
        assertKinds([
            (MediaEvent.Kind.metaChanged, libvlc_MediaMetaChanged, "MediaMetaChanged"),
            (.subItemAdded, libvlc_MediaSubItemAdded, "MediaSubItemAdded"),
            (.durationChanged, libvlc_MediaDurationChanged, "MediaDurationChanged"),
            (.parsedChanged, libvlc_MediaParsedChanged, "MediaParsedChanged"),
            (.freed, libvlc_MediaFreed, "MediaFreed"),
            (.stateChanged, libvlc_MediaStateChanged, "MediaStateChanged"),
            (.subItemTreeAdded, libvlc_MediaSubItemTreeAdded, "MediaSubItemTreeAdded"),
        ])
    }

    func testListAndDiscovererKinds_matchLibvlcConstantsAndNames() {
        assertKinds([
            (MediaListEvent.Kind.itemAdded, libvlc_MediaListItemAdded, "MediaListItemAdded"),
            (.willAddItem, libvlc_MediaListWillAddItem, "MediaListWillAddItem"),
            (.itemDeleted, libvlc_MediaListItemDeleted, "MediaListItemDeleted"),
            (.willDeleteItem, libvlc_MediaListWillDeleteItem, "MediaListWillDeleteItem"),
            (.endReached, libvlc_MediaListEndReached, "MediaListEndReached"),
        ])
        assertKinds([
            (MediaListPlayerEvent.Kind.played, libvlc_MediaListPlayerPlayed, "MediaListPlayerPlayed"),
            (.nextItemSet, libvlc_MediaListPlayerNextItemSet, "MediaListPlayerNextItemSet"),
            (.stopped, libvlc_MediaListPlayerStopped, "MediaListPlayerStopped"),
        ])
        assertKinds([
            (MediaDiscovererEvent.Kind.started, libvlc_MediaDiscovererStarted, "MediaDiscovererStarted"),
            (.ended, libvlc_MediaDiscovererEnded, "MediaDiscovererEnded"),
        ])
        assertKinds([
            (
                RendererDiscovererEvent.Kind.itemAdded, libvlc_RendererDiscovererItemAdded,
                "RendererDiscovererItemAdded"
            ),
            (.itemDeleted, libvlc_RendererDiscovererItemDeleted, "RendererDiscovererItemDeleted"),
        ])
    }

    func testVLMKinds_matchLibvlcConstantsAndNames() {
        assertKinds([
            (VLMEvent.Kind.mediaAdded, libvlc_VlmMediaAdded, "VlmMediaAdded"),
            (.mediaRemoved, libvlc_VlmMediaRemoved, "VlmMediaRemoved"),
            (.mediaChanged, libvlc_VlmMediaChanged, "VlmMediaChanged"),
            (.instanceStarted, libvlc_VlmMediaInstanceStarted, "VlmMediaInstanceStarted"),
            (.instanceStopped, libvlc_VlmMediaInstanceStopped, "VlmMediaInstanceStopped"),
            (.instanceStatusInit, libvlc_VlmMediaInstanceStatusInit, "VlmMediaInstanceStatusInit"),
            (.instanceStatusOpening, libvlc_VlmMediaInstanceStatusOpening, "VlmMediaInstanceStatusOpening"),
            (.instanceStatusPlaying, libvlc_VlmMediaInstanceStatusPlaying, "VlmMediaInstanceStatusPlaying"),
            (.instanceStatusPause, libvlc_VlmMediaInstanceStatusPause, "VlmMediaInstanceStatusPause"),
            (.instanceStatusEnd, libvlc_VlmMediaInstanceStatusEnd, "VlmMediaInstanceStatusEnd"),
            (.instanceStatusError, libvlc_VlmMediaInstanceStatusError, "VlmMediaInstanceStatusError"),
        ])
    }

    func testEventName_isItsKindsName() {
        XCTAssertEqual(MediaPlayerEvent.endReached.name, "MediaPlayerEndReached")
        XCTAssertEqual(MediaPlayerEvent.timeChanged(milliseconds: 5).name, "MediaPlayerTimeChanged")
        XCTAssertEqual(MediaEvent.parsedChanged(.done).name, "MediaParsedChanged")
    }
}
