import CLibVLC
import Foundation

/// A media player (`libvlc_media_player_t`). Its blocking calls join the input thread or wait
/// for a running input callback (G13), so they run on the player's control queue, never on a
/// libvlc thread (rule 6); its getters take locks libvlc holds while it sends (G1–G3), so the
/// wrapper answers most of them from the player's events (rules 1 and 2).
struct NativeMediaPlayer: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    // MARK: Life

    /// Calls `libvlc_media_player_new`; `nil` when out of memory.
    /// - Sends: nothing. Locks: waits for a running `snapshot-file` callback of the instance
    ///   (P16: `var_AddCallback`), which waits for the event lock of every player it sends to.
    /// - Queue: the caller's, or, inside a handler or on a queue a synchronous delivery waits
    ///   for, the new player's control queue (rule 13).
    static func new(in library: NativeLibrary) -> NativeMediaPlayer? {
        libvlc_media_player_new(library.pointer).map(NativeMediaPlayer.init)
    }

    /// Calls `libvlc_media_player_new_from_media`; `nil` when out of memory.
    /// - Sends: nothing. Locks: as `new(in:)`.
    /// - Queue: as `new(in:)`.
    static func new(playing media: NativeMedia) -> NativeMediaPlayer? {
        libvlc_media_player_new_from_media(media.pointer).map(NativeMediaPlayer.init)
    }

    /// Calls `libvlc_media_player_release`: the last reference stops the player (G13) and waits
    /// for a running `snapshot-file` callback (P16: `var_DelCallback`).
    /// - Sends: the sends of `stop()`.
    /// - Locks: as `stop()`.
    /// - Queue: the player's control queue (its teardown), never a libvlc thread.
    func release() { libvlc_media_player_release(pointer) }

    /// Calls `libvlc_media_player_event_manager`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var eventManager: NativeEventManager {
        NativeEventManager(libvlc_media_player_event_manager(pointer))
    }

    // MARK: Playback

    /// Calls `libvlc_media_player_set_media` (`nil`: none). Stops the current input first.
    /// - Sends: M5c (the old media's `StateChanged`), M4 (its `Freed` at its last reference) and
    ///   P1 (`MediaChanged`) on the calling thread.
    /// - Locks: mp.in, then mp.obj; waits for a running input callback, joins the input (G13).
    /// - Queue: the player's control queue.
    func setMedia(_ media: NativeMedia?) { libvlc_media_player_set_media(pointer, media?.pointer) }

    /// Calls `libvlc_media_player_get_media`: the media, one reference of which the caller owns.
    /// - Sends: nothing. Locks: mp.obj (G2): deadlocks from M1b and M5c.
    /// - Queue: the player's control queue.
    var media: NativeMedia? { libvlc_media_player_get_media(pointer).map(NativeMedia.init) }

    /// Calls `libvlc_media_player_play`; 0 when an input was started or resumed.
    /// - Sends: M1b (`MetaChanged` NowPlaying, twice) on the calling thread; P3–P19 follow from
    ///   the input thread.
    /// - Locks: mp.in, mp.obj, then itemEM (G12).
    /// - Queue: the player's control queue.
    @discardableResult
    func play() -> Int32 { libvlc_media_player_play(pointer) }

    /// Calls `libvlc_media_player_stop`; a no-op when the player is stopped already.
    /// - Sends: M5b, P6b and P21c on the calling thread.
    /// - Locks: mp.in; waits for a running input callback and joins the input thread (G13).
    /// - Queue: the player's control queue.
    func stop() { libvlc_media_player_stop(pointer) }

    /// Calls `libvlc_media_player_set_pause` (`true` pauses, `false` resumes).
    /// - Sends: P5 from the input thread.
    /// - Locks: mp.obj (`is_playing`, G1), then mp.in (G3).
    /// - Queue: the player's control queue.
    func setPause(_ paused: Bool) { libvlc_media_player_set_pause(pointer, paused ? 1 : 0) }

    /// Calls `libvlc_media_player_get_state` (`libvlc_state_t` as its raw value).
    /// - Sends: nothing. Locks: mp.obj (G1): deadlocks from M1b and M5c.
    /// - Queue: the player's control queue.
    var state: Int32 { Int32(libvlc_media_player_get_state(pointer).rawValue) }

    /// Calls `libvlc_media_player_set_time` (milliseconds).
    /// - Sends: P10b (`PositionChanged`, `TimeChanged`) on the calling thread while playing.
    /// - Locks: mp.in, then waits on var(input:intf-event) (G7): deadlocks from every
    ///   intf-event delivery.
    /// - Queue: the player's control queue (rule 4).
    func setTime(_ milliseconds: Int64) { libvlc_media_player_set_time(pointer, milliseconds) }

    /// Calls `libvlc_media_player_set_position` (0 to 1).
    /// - Sends: P10a later, from the input thread.
    /// - Locks: mp.in, then an input variable (G8).
    /// - Queue: the player's control queue.
    func setPosition(_ position: Float) { libvlc_media_player_set_position(pointer, position) }

    /// Calls `libvlc_media_player_get_rate`.
    /// - Sends: nothing. Locks: a variable of the player, never held across a callback (G4).
    /// - Queue: any thread.
    var rate: Float { libvlc_media_player_get_rate(pointer) }

    /// Calls `libvlc_media_player_set_rate`; 0 when libvlc accepted it.
    /// - Sends: nothing. Locks: mp.in, then an input variable (G8).
    /// - Queue: the player's control queue.
    @discardableResult
    func setRate(_ rate: Float) -> Int32 { libvlc_media_player_set_rate(pointer, rate) }

    // MARK: Titles and chapters

    /// Calls `libvlc_media_player_get_title_count` (-1 without input).
    /// - Sends: nothing. Locks: mp.in (G3).
    /// - Queue: the player's control queue.
    var titleCount: Int32 { libvlc_media_player_get_title_count(pointer) }

    /// Calls `libvlc_media_player_get_chapter_count` (-1 without input).
    /// - Sends: nothing. Locks: mp.in (G3).
    /// - Queue: the player's control queue.
    var chapterCount: Int32 { libvlc_media_player_get_chapter_count(pointer) }

    /// Calls `libvlc_media_player_set_title`.
    /// - Sends: P13b (`TitleChanged`) on the calling thread.
    /// - Locks: mp.in, then an input variable (G8).
    /// - Queue: the player's control queue.
    func setTitle(_ index: Int32) { libvlc_media_player_set_title(pointer, index) }

    /// Calls `libvlc_media_player_set_chapter`.
    /// - Sends: P15 later, from the input thread.
    /// - Locks: as `setTitle`.
    /// - Queue: the player's control queue.
    func setChapter(_ index: Int32) { libvlc_media_player_set_chapter(pointer, index) }

    /// Calls `libvlc_media_player_next_chapter`.
    /// - Sends: P15 later. Locks: as `setTitle`.
    /// - Queue: the player's control queue.
    func nextChapter() { libvlc_media_player_next_chapter(pointer) }

    /// Calls `libvlc_media_player_previous_chapter`.
    /// - Sends: P15 later. Locks: as `setTitle`.
    /// - Queue: the player's control queue.
    func previousChapter() { libvlc_media_player_previous_chapter(pointer) }

    /// Calls `libvlc_media_player_get_full_title_descriptions` and
    /// `libvlc_title_descriptions_release`: the titles of the current input, copied.
    /// - Sends: nothing. Locks: mp.in, then item (G10): deadlocks from P13a. Copies the input's
    ///   title array, which an ending input frees without that lock (rule 15).
    /// - Queue: the player's control queue, through the title read gate.
    var titles: [TitleDescription] {
        var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_title_description_t>?>?
        let count = libvlc_media_player_get_full_title_descriptions(pointer, &array)
        guard count > 0, let array else { return [] }
        defer { libvlc_title_descriptions_release(array, UInt32(count)) }
        return (0..<Int(count)).compactMap { index in
            array[index].map { entry in
                let flags = entry.pointee.i_flags
                return TitleDescription(
                    name: Self.trimmedName(entry.pointee.psz_name), duration: entry.pointee.i_duration,
                    isMenu: flags & UInt32(libvlc_title_menu) != 0,
                    isInteractive: flags & UInt32(libvlc_title_interactive) != 0)
            }
        }
    }

    /// Calls `libvlc_media_player_get_full_chapter_descriptions` for `title` (-1: the current
    /// one) and `libvlc_chapter_descriptions_release`: its chapters, copied.
    /// - Sends: nothing. Locks: as `titles` (G10).
    /// - Queue: as `titles`.
    func chapters(ofTitle title: Int32) -> [ChapterDescription] {
        var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_chapter_description_t>?>?
        let count = libvlc_media_player_get_full_chapter_descriptions(pointer, title, &array)
        guard count > 0, let array else { return [] }
        defer { libvlc_chapter_descriptions_release(array, UInt32(count)) }
        return (0..<Int(count)).compactMap { index in
            array[index].map { entry in
                ChapterDescription(
                    name: Self.trimmedName(entry.pointee.psz_name),
                    offset: entry.pointee.i_time_offset, duration: entry.pointee.i_duration)
            }
        }
    }

    /// libvlc prefixes Matroska chapter names with a space; an empty name is no name.
    private static func trimmedName(_ name: UnsafeMutablePointer<CChar>?) -> String? {
        guard let name else { return nil }
        let text = String(cString: name).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }

    // MARK: Tracks

    /// Calls `libvlc_audio_get_track_description`, `libvlc_video_get_track_description` or
    /// `libvlc_video_get_spu_description` (by `type`, a `libvlc_track_type_t` value), and
    /// `libvlc_track_description_list_release`: (id, name) of each track, libvlc's "Disable"
    /// entry (id -1) included.
    /// - Sends: nothing. Locks: mp.in (G3).
    /// - Queue: the player's control queue.
    func trackDescriptions(of type: Int32) -> [(id: Int, name: String)] {
        let list: UnsafeMutablePointer<libvlc_track_description_t>? =
            switch type {
            case 0: libvlc_audio_get_track_description(pointer)
            case 1: libvlc_video_get_track_description(pointer)
            case 2: libvlc_video_get_spu_description(pointer)
            default: nil
            }
        guard let list else { return [] }
        defer { libvlc_track_description_list_release(list) }
        var tracks: [(id: Int, name: String)] = []
        var next: UnsafeMutablePointer<libvlc_track_description_t>? = list
        while let entry = next {
            tracks.append((Int(entry.pointee.i_id), entry.pointee.psz_name.map { String(cString: $0) } ?? ""))
            next = entry.pointee.p_next
        }
        return tracks
    }

    /// Calls `libvlc_audio_get_track`, `libvlc_video_get_track` or `libvlc_video_get_spu` (by
    /// `type`): the selected track's id, -1 for none.
    /// - Sends: nothing. Locks: mp.in (G3).
    /// - Queue: the player's control queue.
    func selectedTrack(of type: Int32) -> Int32 {
        switch type {
        case 0: libvlc_audio_get_track(pointer)
        case 1: libvlc_video_get_track(pointer)
        case 2: libvlc_video_get_spu(pointer)
        default: -1
        }
    }

    /// Calls `libvlc_audio_set_track`, `libvlc_video_set_track` or `libvlc_video_set_spu` (by
    /// `type`; -1 selects none); 0 when libvlc accepted it.
    /// - Sends: P19 (`ESSelected`) from the input thread.
    /// - Locks: mp.in, then waits on var(input:\<type\>-es) (G9): deadlocks from P18 of that type.
    /// - Queue: the player's control queue.
    func selectTrack(_ id: Int32, of type: Int32) -> Int32 {
        switch type {
        case 0: libvlc_audio_set_track(pointer, id)
        case 1: libvlc_video_set_track(pointer, id)
        case 2: libvlc_video_set_spu(pointer, id)
        default: -1
        }
    }

    // MARK: Video

    /// Calls `libvlc_video_take_snapshot` of video output 0 into `path` (`width` and `height`
    /// 0 keep the video's size); 0 once a video output was found, whatever happened after.
    /// - Sends: P16 (`SnapshotTaken`, to every player of the instance) on the calling thread,
    ///   from inside the instance's `snapshot-file` callback, once the file is written.
    /// - Locks: mp.in, the resource lock, var(vout:video-snapshot), waits up to 500 ms for a
    ///   picture, then var(instance:snapshot-file) (G11).
    /// - Queue: the player's control queue, through the snapshot capture (rule 19).
    func takeSnapshot(to path: String, width: UInt32, height: UInt32) -> Int32 {
        path.withCString { libvlc_video_take_snapshot(pointer, 0, $0, width, height) }
    }

    // MARK: Audio

    /// Calls `libvlc_audio_get_volume`: percent, -1 without an audio output.
    /// - Sends: nothing. Locks: the resource's `lock_hold`, briefly (G5).
    /// - Queue: any thread.
    var volume: Int32 { libvlc_audio_get_volume(pointer) }

    /// Calls `libvlc_audio_set_volume`; 0 when libvlc took it.
    /// - Sends: P21a (`AudioVolume`) on the calling thread when it wins the output's lock.
    /// - Locks: `lock_hold`, aout req.lock, a trylock of the aout lock (G6).
    /// - Queue: the player's control queue.
    @discardableResult
    func setVolume(_ percent: Int32) -> Int32 { libvlc_audio_set_volume(pointer, percent) }

    /// Calls `libvlc_audio_get_mute`: 1 muted, 0 not, -1 without an audio output.
    /// - Sends: nothing. Locks: as `volume` (G5).
    /// - Queue: any thread.
    var mute: Int32 { libvlc_audio_get_mute(pointer) }

    /// Calls `libvlc_audio_set_mute`.
    /// - Sends: P21a (`Muted`, `Unmuted`) on the calling thread when it wins the output's lock.
    /// - Locks: as `setVolume` (G6).
    /// - Queue: the player's control queue.
    func setMute(_ muted: Bool) { libvlc_audio_set_mute(pointer, muted ? 1 : 0) }

    /// Calls `libvlc_audio_output_device_enum` and `libvlc_audio_output_device_list_release`:
    /// (id, description) of each device of the current audio output.
    /// - Sends: nothing. Locks: the resource lock and the output's device list, briefly.
    /// - Queue: the player's control queue.
    var audioOutputDevices: [(id: String, description: String)] {
        guard let list = libvlc_audio_output_device_enum(pointer) else { return [] }
        defer { libvlc_audio_output_device_list_release(list) }
        var devices: [(id: String, description: String)] = []
        var next: UnsafeMutablePointer<libvlc_audio_output_device_t>? = list
        while let entry = next {
            devices.append(
                (
                    entry.pointee.psz_device.map { String(cString: $0) } ?? "",
                    entry.pointee.psz_description.map { String(cString: $0) } ?? ""
                ))
            next = entry.pointee.p_next
        }
        return devices
    }

    /// Calls `libvlc_audio_output_device_get`: the current device's id, `nil` when libvlc
    /// cannot tell.
    /// - Sends: nothing. Locks: the resource lock, briefly.
    /// - Queue: the player's control queue.
    var audioOutputDevice: String? { takeCString(libvlc_audio_output_device_get(pointer)) }

    /// Calls `libvlc_audio_output_device_set` on the current output.
    /// - Sends: P22 (`AudioDevice`) on the calling thread when it wins the output's lock.
    /// - Locks: as `setVolume` (G6).
    /// - Queue: the player's control queue.
    func setAudioOutputDevice(_ id: String) {
        id.withCString { libvlc_audio_output_device_set(pointer, nil, $0) }
    }
}
