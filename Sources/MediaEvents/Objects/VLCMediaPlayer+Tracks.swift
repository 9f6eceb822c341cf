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
        await control.performAndWait { player in Self.tracks(of: type, player) }
    }

    /// The id of the selected track of `type`, `nil` when none is (or without input).
    public func selectedTrack(of type: TrackType) async -> Int? {
        await control.performAndWait { player in
            let id = player.selectedTrack(of: type.rawValue)
            return id < 0 ? nil : Int(id)
        }
    }

    /// Selects the track `id` of `type`, or none with `nil` (queued); libvlc sends
    /// `esSelected` for it.
    public func selectTrack(_ id: Int?, of type: TrackType) {
        perform(selectTrackCall(id, of: type))
    }

    /// `selectTrack`, returning whether libvlc accepted it (`false` for an id it does not
    /// know, or without input).
    @discardableResult
    public func selectTrackAndWait(_ id: Int?, of type: TrackType) async -> Bool {
        await control.performAndWait(selectTrackCall(id, of: type))
    }

    private func selectTrackCall(_ id: Int?, of type: TrackType) -> PlayerCall<Bool> {
        PlayerCall { $0.selectTrack(Int32(clamping: id ?? -1), of: type.rawValue) == 0 }
    }

    static func tracks(of type: TrackType, _ player: NativeMediaPlayer) -> [PlayerTrack] {
        let descriptions = player.trackDescriptions(of: type.rawValue)
        guard !descriptions.isEmpty else { return [] }
        // Languages come from the media's own track list (the descriptions have none).
        let languages: [Int: String]
        if let media = player.media {
            defer { media.release() }
            languages = media.trackLanguages
        } else {
            languages = [:]
        }
        return descriptions.filter { $0.id >= 0 }.map {
            PlayerTrack(id: $0.id, name: $0.name, language: languages[$0.id])
        }
    }

    // MARK: Titles and chapters

    /// The titles of the current input; empty without input, and once the input has sent
    /// `EndReached` or `EncounteredError` (libvlc frees its titles then) until the next one
    /// opens.
    public func titles() async -> [TitleDescription] {
        let gate = titleReads
        return await control.performAndWait { player in gate.around { player.titles } ?? [] }
    }

    /// The chapters of `title` (`nil`: the current title) of the current input; empty
    /// without input, when the title has none, and once the input has sent `EndReached` or
    /// `EncounteredError` until the next one opens (as ``titles()``).
    public func chapters(ofTitle title: Int? = nil) async -> [ChapterDescription] {
        let gate = titleReads
        return await control.performAndWait { player in
            gate.around { player.chapters(ofTitle: Int32(clamping: title ?? -1)) } ?? []
        }
    }

    /// The number of titles of the current input (0 without input).
    public func titleCount() async -> Int {
        await control.performAndWait { Int(max(0, $0.titleCount)) }
    }

    /// The number of chapters of the current title (0 without input or chapters).
    public func chapterCount() async -> Int {
        await control.performAndWait { Int(max(0, $0.chapterCount)) }
    }

    /// The current title, as of the last `titleChanged` (-1 before one, and after `Stopped`).
    public var title: Int { cachedValues.title }

    /// The current chapter, as of the last `chapterChanged` (-1 before one, and after `Stopped`).
    public var chapter: Int { cachedValues.chapter }

    /// Plays title `index` (queued); libvlc sends `titleChanged`.
    public func setTitle(_ index: Int) {
        perform { $0.setTitle(Int32(clamping: index)) }
    }

    /// Jumps to chapter `index` of the current title (queued); libvlc sends `chapterChanged`.
    public func setChapter(_ index: Int) {
        perform { $0.setChapter(Int32(clamping: index)) }
    }

    /// Jumps to the next chapter (queued).
    public func nextChapter() {
        perform { $0.nextChapter() }
    }

    /// Jumps to the previous chapter (queued).
    public func previousChapter() {
        perform { $0.previousChapter() }
    }

    // MARK: Rate

    /// The playback rate (1 is normal speed). Reading it never blocks (libvlc keeps it in a
    /// variable of the player); setting it is queued, so the value read changes once the
    /// set has run (`setRateAndWait`). libvlc sends no event for it.
    public var rate: Float {
        get { native.current?.rate ?? 1 }
        set { perform(setRateCall(newValue)) }
    }

    /// Sets the rate and returns whether libvlc accepted it.
    @discardableResult
    public func setRateAndWait(_ rate: Float) async -> Bool {
        await control.performAndWait(setRateCall(rate))
    }

    private func setRateCall(_ rate: Float) -> PlayerCall<Bool> {
        PlayerCall { $0.setRate(rate) == 0 }
    }
}
