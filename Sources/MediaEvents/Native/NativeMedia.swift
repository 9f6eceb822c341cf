import CLibVLC
import Glibc

/// A media (`libvlc_media_t`). Its getters take the input item's lock (G15), which libvlc holds
/// while it sends `TitleChanged` from `InitTitle` (P13a): they must not run on a thread that
/// delivers that event (rule 3: the locked-send detour keeps such deliveries off it).
struct NativeMedia: NativeObject, @unchecked Sendable {
    // @unchecked: an immutable pointer to a thread-safe libvlc object.
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Calls `libvlc_media_new_path`; `nil` when out of memory.
    /// - Sends: nothing. Locks: none of <doc:SendSites>.
    /// - Queue: any thread.
    static func new(path: String, in library: NativeLibrary) -> NativeMedia? {
        libvlc_media_new_path(library.pointer, path).map(NativeMedia.init)
    }

    /// Calls `libvlc_media_new_location`, which keeps `location` as given; `nil` when out of
    /// memory.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    static func new(location: String, in library: NativeLibrary) -> NativeMedia? {
        libvlc_media_new_location(library.pointer, location).map(NativeMedia.init)
    }

    /// The callbacks of a media whose bytes come from the program (`libvlc_media_open_cb` …).
    typealias OpenCallback = libvlc_media_open_cb
    typealias ReadCallback = libvlc_media_read_cb
    typealias SeekCallback = libvlc_media_seek_cb
    typealias CloseCallback = libvlc_media_close_cb

    /// Calls `libvlc_media_new_callbacks`: a media libvlc reads through the callbacks, each
    /// given `opaque`; `nil` when out of memory. libvlc calls `open` and `close` on the input's
    /// thread and `read` and `seek` on the thread that reads ahead for it.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    static func new(
        in library: NativeLibrary, open: OpenCallback, read: ReadCallback, seek: SeekCallback,
        close: CloseCallback, opaque: UnsafeMutableRawPointer
    ) -> NativeMedia? {
        libvlc_media_new_callbacks(library.pointer, open, read, seek, close, opaque).map(NativeMedia.init)
    }

    /// Calls `libvlc_media_retain`: atomic in a process that links MediaEvents (rule 9).
    /// - Sends: nothing. Locks: none (G24).
    /// - Queue: any thread, libvlc's callbacks included (a lent payload is retained there).
    func retain() { libvlc_media_retain(pointer) }

    /// Calls `libvlc_media_release`. The last release detaches from the input item (waiting for
    /// an item event running elsewhere), cancels and waits for the media's parse, releases the
    /// sub-item list and sends M4 (`MediaFreed`) on the calling thread (G24).
    /// - Sends: M4 at the last release.
    /// - Locks: none for a release that is not the last; the last waits for task(md) and itemEM.
    /// - Queue: never a libvlc thread, never this media's own handler (its listener array is
    ///   freed while `libvlc_event_send` walks it): the media's control queue or the teardown
    ///   queue for the wrapper's own reference; any thread for one that is not the last.
    func release() { libvlc_media_release(pointer) }

    /// Calls `libvlc_media_event_manager`.
    /// - Sends: nothing. Locks: none.
    /// - Queue: any thread.
    var eventManager: NativeEventManager { NativeEventManager(libvlc_media_event_manager(pointer)) }

    /// Calls `libvlc_media_get_mrl`.
    /// - Sends: nothing. Locks: item (G15).
    /// - Queue: any thread but one delivering this media's player's P13a.
    var mrl: String { takeCString(libvlc_media_get_mrl(pointer)) ?? "" }

    /// Calls `libvlc_media_get_duration`: milliseconds, -1 while unknown.
    /// - Sends: nothing. Locks: item (G15).
    /// - Queue: as `mrl`.
    var duration: Int64 { libvlc_media_get_duration(pointer) }

    /// Calls `libvlc_media_get_state` (`libvlc_state_t` as its raw value).
    /// - Sends: nothing. Locks: none, a racy read (G14).
    /// - Queue: any thread.
    var state: Int32 { Int32(libvlc_media_get_state(pointer).rawValue) }

    /// Calls `libvlc_media_get_parsed_status` (`libvlc_media_parsed_status_t` as its raw value).
    /// - Sends: nothing. Locks: `parsed_lock`, never held during a send (G17).
    /// - Queue: any thread.
    var parsedStatus: Int32 { Int32(libvlc_media_get_parsed_status(pointer).rawValue) }

    /// Calls `libvlc_media_get_meta` for `key` (a `libvlc_meta_t` value).
    /// - Sends: nothing. Locks: item (G15).
    /// - Queue: as `mrl`.
    func meta(_ key: UInt32) -> String? {
        takeCString(libvlc_media_get_meta(pointer, libvlc_meta_t(rawValue: key)))
    }

    /// Calls `libvlc_media_set_meta` for `key` (a `libvlc_meta_t` value); `nil` unsets it.
    /// - Sends: M1a (`MediaMetaChanged`) on the calling thread, with itemEM held.
    /// - Locks: item, then itemEM (G16).
    /// - Queue: the media's control queue (rule 5: never the caller's thread, which may be a
    ///   queue a synchronous delivery of M1 waits for).
    func setMeta(_ key: UInt32, _ value: String?) {
        let key = libvlc_meta_t(rawValue: key)
        // withCString lends a native string's own NUL-terminated storage; passing the
        // optional String directly made a heap copy (utf8CString) per call.
        guard let value else { return libvlc_media_set_meta(pointer, key, nil) }
        value.withCString { libvlc_media_set_meta(pointer, key, $0) }
    }

    /// Calls `libvlc_media_parse_with_options` with `flags` (`libvlc_media_parse_flag_t` bits)
    /// and `timeout` in milliseconds (-1: libvlc's default); 0 when the parse was queued.
    /// - Sends: M3a3 (`ParsedChanged` skipped or failed) and then L3a on the sub-item list, on the
    ///   calling thread, when the parse is refused at once.
    /// - Locks: `parsed_lock`, item, the preparser's lock; ml of the sub-items in L3a (G18).
    /// - Queue: any thread but a handler of L1b or L3a of this media's sub-item list.
    func parse(flags: Int32, timeout: Int32) -> Int32 {
        libvlc_media_parse_with_options(
            pointer, libvlc_media_parse_flag_t(rawValue: UInt32(bitPattern: flags)), timeout)
    }

    /// Calls `libvlc_media_parse_stop`.
    /// - Sends: M3 (the parse's end), from the preparser's threads.
    /// - Locks: the worker lock, then waits until task(md) ends (G20).
    /// - Queue: the media's control queue: never the preparser's worker or preparse input
    ///   thread, nor a queue their synchronous deliveries wait for.
    func stopParsing() { libvlc_media_parse_stop(pointer) }

    /// Calls `libvlc_media_subitems`: the sub-item list, one reference of which the caller owns.
    /// - Sends: nothing. Locks: `subitems_lock`, no ml (G21).
    /// - Queue: any thread.
    var subItems: NativeMediaList? { libvlc_media_subitems(pointer).map(NativeMediaList.init) }

    /// Calls `libvlc_media_tracks_get` and `libvlc_media_tracks_release`: the tracks found by
    /// parsing or playing, copied.
    /// - Sends: nothing. Locks: item (G15).
    /// - Queue: as `mrl`.
    var tracks: [MediaTrack] {
        var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_track_t>?>?
        let count = libvlc_media_tracks_get(pointer, &array)
        guard count > 0, let array else { return [] }
        defer { libvlc_media_tracks_release(array, count) }
        return (0..<Int(count)).compactMap { array[$0].map { MediaTrack(native: $0.pointee) } }
    }

    /// The languages of the tracks, by track id (empty languages left out): what the player's
    /// track descriptions lack. Calls `libvlc_media_tracks_get` and `libvlc_media_tracks_release`.
    /// - Sends: nothing. Locks: item (G15).
    /// - Queue: as `mrl`.
    var trackLanguages: [Int: String] {
        var array: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_track_t>?>?
        let count = libvlc_media_tracks_get(pointer, &array)
        guard count > 0, let array else { return [:] }
        defer { libvlc_media_tracks_release(array, count) }
        var languages: [Int: String] = [:]
        for index in 0..<Int(count) {
            guard let track = array[index]?.pointee, let language = track.psz_language else { continue }
            let text = String(cString: language)
            if !text.isEmpty { languages[Int(track.i_id)] = text }
        }
        return languages
    }

    /// Calls `libvlc_media_add_option` (an input option such as `:prefetch-buffer-size=…`).
    /// - Sends: nothing. Locks: item.
    /// - Queue: any thread, before the media is played.
    func addOption(_ option: String) { libvlc_media_add_option(pointer, option) }

    /// Calls `libvlc_media_get_codec_description`: libvlc's name of a codec of a track type.
    /// - Sends: nothing. Locks: none (a static table).
    /// - Queue: any thread.
    static func codecDescription(type: Int32, codec: UInt32) -> String? {
        libvlc_media_get_codec_description(libvlc_track_type_t(rawValue: type), codec).map { String(cString: $0) }
    }
}

extension MediaTrack {
    /// Copies one entry of `libvlc_media_tracks_get`; its strings are lent until the list is
    /// released.
    init(native track: libvlc_media_track_t) {
        let type = TrackType(native: track.i_type.rawValue)
        let audio = type == .audio ? track.audio?.pointee : nil
        let video = type == .video ? track.video?.pointee : nil
        self.init(
            type: type, codec: track.i_codec, originalFourCC: track.i_original_fourcc, id: Int(track.i_id),
            profile: Int(track.i_profile), level: Int(track.i_level), bitrate: Int(track.i_bitrate),
            language: track.psz_language.map { String(cString: $0) },
            trackDescription: track.psz_description.map { String(cString: $0) },
            audioChannels: audio.map { Int($0.i_channels) }, audioRate: audio.map { Int($0.i_rate) },
            videoWidth: video.map { Int($0.i_width) }, videoHeight: video.map { Int($0.i_height) },
            frameRateFraction: video.flatMap { video in
                video.i_frame_rate_num > 0 && video.i_frame_rate_den > 0
                    ? FrameRate(numerator: Int(video.i_frame_rate_num), denominator: Int(video.i_frame_rate_den))
                    : nil
            },
            subtitleEncoding: type == .text ? track.subtitle?.pointee.psz_encoding.map { String(cString: $0) } : nil)
    }
}
