import CLibVLC
import Foundation

/// A track of the playing media that the player can select.
public struct PlayerTrack: Sendable, Hashable, CustomStringConvertible {
    /// libvlc's elementary stream id (the `id` of `esAdded`/`esSelected`).
    public let id: Int
    /// libvlc's name for it, e.g. `English - [English]` or `Track 1`.
    public let name: String
    /// The language code the container gives (`eng`), when it gives one.
    public let language: String?

    /// The id and name, then the language in parentheses when there is one.
    public var description: String { "\(id): \(name)" + (language.map { " (\($0))" } ?? "") }
}

/// A title of the playing media (a DVD title, a Matroska segment).
public struct TitleDescription: Sendable, Hashable {
    /// The title's name, when the media gives one.
    public let name: String?
    /// Milliseconds.
    public let duration: Int64
    /// A DVD menu.
    public let isMenu: Bool
    /// An interactive title.
    public let isInteractive: Bool
}

/// A chapter of a title.
public struct ChapterDescription: Sendable, Hashable {
    /// The chapter's name, when the media gives one (leading spaces trimmed).
    public let name: String?
    /// Where it starts, in milliseconds from the start of its title.
    public let offset: Int64
    /// Milliseconds.
    public let duration: Int64
}

/// Tracks, titles, chapters and rate.
///
/// The reading calls are `async` and run on the player's control queue: libvlc's own
/// getters lock the player's input, which `stop` holds while it sends `Stopped` and joins the
/// input thread, so calling one inside a handler would wait for its own caller. From the
/// control queue they run between the control calls, in order: a `tracks(of:)` made after
/// `selectTrack` sees its result. The changing calls are queued like the other control calls
/// and return at once; the events that confirm them (`esSelected`, `chapterChanged`,
/// `titleChanged`) follow.
extension VLCMediaPlayer {
    // MARK: Tracks

    /// The selectable tracks of `type` (`.audio`, `.video` or `.text` for subtitles) of the
    /// current input; empty without input. libvlc's "Disable" entry is left out: select
    /// `nil` for none.
    public func tracks(of type: TrackType) async -> [PlayerTrack] {
        await control.performAndWait { player in Self.tracksNow(player, type) }
    }

    /// The id of the selected track of `type`, `nil` when none is (or without input).
    public func selectedTrack(of type: TrackType) async -> Int? {
        await control.performAndWait { player in
            let id: Int32 =
                switch type {
                case .audio: libvlc_audio_get_track(player)
                case .video: libvlc_video_get_track(player)
                case .text: libvlc_video_get_spu(player)
                case .unknown: -1
                }
            return id < 0 ? nil : Int(id)
        }
    }

    /// Selects the track `id` of `type`, or none with `nil` (queued); libvlc sends
    /// `esSelected` for it.
    public func selectTrack(_ id: Int?, of type: TrackType) {
        perform { player in _ = Self.selectNow(player, id, type) }
    }

    /// `selectTrack`, returning whether libvlc accepted it (`false` for an id it does not
    /// know, or without input).
    @discardableResult
    public func selectTrackAndWait(_ id: Int?, of type: TrackType) async -> Bool {
        await control.performAndWait { player in Self.selectNow(player, id, type) }
    }

    static func tracksNow(_ player: OpaquePointer, _ type: TrackType) -> [PlayerTrack] {
        let list: UnsafeMutablePointer<libvlc_track_description_t>? =
            switch type {
            case .audio: libvlc_audio_get_track_description(player)
            case .video: libvlc_video_get_track_description(player)
            case .text: libvlc_video_get_spu_description(player)
            case .unknown: nil
            }
        guard let list else { return [] }
        defer { libvlc_track_description_list_release(list) }
        // Languages come from the media's own track list (the descriptions have none).
        var languages: [Int: String] = [:]
        if let media = libvlc_media_player_get_media(player) {
            defer { libvlc_media_release(media) }
            var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_track_t>?>?
            let count = libvlc_media_tracks_get(media, &array)
            if count > 0, let array {
                defer { libvlc_media_tracks_release(array, count) }
                for index in 0..<Int(count) {
                    guard let track = array[index]?.pointee, let language = track.psz_language else { continue }
                    let text = String(cString: language)
                    if !text.isEmpty { languages[Int(track.i_id)] = text }
                }
            }
        }
        var tracks: [PlayerTrack] = []
        var next: UnsafeMutablePointer<libvlc_track_description_t>? = list
        while let entry = next {
            let id = Int(entry.pointee.i_id)
            if id >= 0 {
                let name = entry.pointee.psz_name.map { String(cString: $0) } ?? ""
                tracks.append(PlayerTrack(id: id, name: name, language: languages[id]))
            }
            next = entry.pointee.p_next
        }
        return tracks
    }

    private static func selectNow(_ player: OpaquePointer, _ id: Int?, _ type: TrackType) -> Bool {
        let id = Int32(clamping: id ?? -1)
        let status: Int32 =
            switch type {
            case .audio: libvlc_audio_set_track(player, id)
            case .video: libvlc_video_set_track(player, id)
            case .text: libvlc_video_set_spu(player, id)
            case .unknown: -1
            }
        return status == 0
    }

    // MARK: Titles and chapters

    /// The titles of the current input; empty without input, and once the input has sent
    /// `EndReached` or `EncounteredError` (libvlc frees its titles then) until the next one
    /// opens.
    public func titles() async -> [TitleDescription] {
        let gate = titleReads
        return await control.performAndWait { player in gate.read { Self.titlesNow(player) } ?? [] }
    }

    private static func titlesNow(_ player: OpaquePointer) -> [TitleDescription] {
        var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_title_description_t>?>?
        let count = libvlc_media_player_get_full_title_descriptions(player, &array)
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

    /// The chapters of `title` (`nil`: the current title) of the current input; empty
    /// without input, when the title has none, and once the input has sent `EndReached` or
    /// `EncounteredError` until the next one opens (as ``titles()``).
    public func chapters(ofTitle title: Int? = nil) async -> [ChapterDescription] {
        let gate = titleReads
        return await control.performAndWait { player in gate.read { Self.chaptersNow(player, title) } ?? [] }
    }

    private static func chaptersNow(_ player: OpaquePointer, _ title: Int?) -> [ChapterDescription] {
        var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_chapter_description_t>?>?
        let count = libvlc_media_player_get_full_chapter_descriptions(player, Int32(clamping: title ?? -1), &array)
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

    /// The number of titles of the current input (0 without input).
    public func titleCount() async -> Int {
        await control.performAndWait { Int(max(0, libvlc_media_player_get_title_count($0))) }
    }

    /// The number of chapters of the current title (0 without input or chapters).
    public func chapterCount() async -> Int {
        await control.performAndWait { Int(max(0, libvlc_media_player_get_chapter_count($0))) }
    }

    /// The current title, as of the last `titleChanged` (-1 before one, and after `Stopped`).
    public var title: Int { cachedValues.title }

    /// The current chapter, as of the last `chapterChanged` (-1 before one, and after `Stopped`).
    public var chapter: Int { cachedValues.chapter }

    /// Plays title `index` (queued); libvlc sends `titleChanged`.
    public func setTitle(_ index: Int) {
        perform { libvlc_media_player_set_title($0, Int32(clamping: index)) }
    }

    /// Jumps to chapter `index` of the current title (queued); libvlc sends `chapterChanged`.
    public func setChapter(_ index: Int) {
        perform { libvlc_media_player_set_chapter($0, Int32(clamping: index)) }
    }

    /// Jumps to the next chapter (queued).
    public func nextChapter() {
        perform { libvlc_media_player_next_chapter($0) }
    }

    /// Jumps to the previous chapter (queued).
    public func previousChapter() {
        perform { libvlc_media_player_previous_chapter($0) }
    }

    /// libvlc prefixes Matroska chapter names with a space; an empty name is no name.
    private static func trimmedName(_ name: UnsafeMutablePointer<CChar>?) -> String? {
        guard let name else { return nil }
        let text = String(cString: name).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }

    // MARK: Rate

    /// The playback rate (1 is normal speed). Reading it never blocks (libvlc keeps it in a
    /// variable of the player); setting it is queued, so the value read changes once the
    /// set has run (`setRateAndWait`). libvlc sends no event for it.
    public var rate: Float {
        get { native.raw.map(libvlc_media_player_get_rate) ?? 1 }
        set { perform { _ = libvlc_media_player_set_rate($0, newValue) } }
    }

    /// Sets the rate and returns whether libvlc accepted it.
    @discardableResult
    public func setRateAndWait(_ rate: Float) async -> Bool {
        await control.performAndWait { libvlc_media_player_set_rate($0, rate) == 0 }
    }
}
