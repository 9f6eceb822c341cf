import ExampleSupport
import Foundation
import Glibc
import MediaEvents

/// mpv's properties and input commands, read from the daemon's facts and carried out by
/// `Daemon.run(_:)`: every change a property or a command makes is a `DaemonCommand`.
extension Daemon {
    /// The properties `get_property` knows (`property-list`), in mpv's names.
    static let mpvPropertyNames = [
        "pause", "time-pos", "playback-time", "time-remaining", "duration", "percent-pos", "seekable", "volume",
        "mute", "speed", "playlist-pos", "playlist-pos-1", "playlist-count", "playlist", "filename", "path",
        "media-title", "idle-active", "eof-reached", "track-list", "aid", "vid", "sid", "pid", "property-list",
        "command-list",
    ]

    /// The value of property `name`: "property not found" for a name mpv's form does not
    /// know here, "property unavailable" when it has no value now (no file, unknown time).
    func mpvProperty(_ name: String) -> Result<JSONValue, MpvError> {
        let facts = self.facts.withLock { $0 }
        let playing = facts.running
        func available(_ value: JSONValue?) -> Result<JSONValue, MpvError> {
            value.map { .success($0) } ?? .failure(.propertyUnavailable)
        }
        switch name {
        case "pause": return .success(.bool(playing && facts.paused))
        case "time-pos", "playback-time":
            return available(playing && facts.time >= 0 ? .double(Double(facts.time) / 1000) : nil)
        case "time-remaining":
            return available(
                playing && facts.time >= 0 && facts.length > 0
                    ? .double(Double(max(0, facts.length - facts.time)) / 1000) : nil)
        case "duration": return available(playing && facts.length > 0 ? .double(Double(facts.length) / 1000) : nil)
        case "percent-pos":
            return available(playing && facts.position >= 0 ? .double(facts.position * 100) : nil)
        case "seekable": return available(playing ? .bool(facts.seekable) : nil)
        case "volume": return .success(.double(Double(facts.volume)))
        case "mute": return .success(.bool(facts.muted))
        case "speed": return .success(.double(facts.speed))
        case "playlist-pos", "playlist-pos-1":
            let index = currentIndex() ?? -1
            return .success(.int(Int64(index) + (name == "playlist-pos-1" ? 1 : 0)))
        case "playlist-count": return .success(.int(Int64(playlist?.entries.count ?? 0)))
        case "playlist": return .success(.array(mpvPlaylist(facts)))
        case "filename", "path", "media-title":
            guard playing, let entry = facts.entry, let text = given(entry) else {
                return .failure(.propertyUnavailable)
            }
            return .success(.string(name == "path" ? text : Self.fileName(text)))
        case "idle-active": return .success(.bool(!playing && !(playlist?.isActive ?? false)))
        case "eof-reached": return available(playing ? .bool(facts.eofReached) : nil)
        case "track-list": return .success(.array(playing ? mpvTracks(facts) : []))
        case "aid", "vid", "sid":
            let type = Self.trackType(name)
            guard playing else { return .success(.string("auto")) }
            guard let selected = facts.selected[type],
                let index = facts.tracks(of: type).firstIndex(where: { $0.esID == selected })
            else { return .success(.bool(false)) }
            return .success(.int(Int64(index + 1)))
        case "pid": return .success(.int(Int64(getpid())))
        case "property-list": return .success(.array(Self.mpvPropertyNames.map { .string($0) }))
        case "command-list":
            return .success(.array(MpvCommands.names.map { .object([("name", .string($0))]) }))
        default: return .failure(.propertyNotFound)
        }
    }

    /// Sets property `name` to `value` (a native JSON value, or a string as mpv also takes),
    /// through `run(_:)`.
    func mpvSetProperty(_ name: String, _ value: Any) -> MpvError? {
        guard Self.mpvPropertyNames.contains(name) else { return .propertyNotFound }
        let facts = self.facts.withLock { $0 }
        let command: DaemonCommand
        switch name {
        case "pause":
            guard let flag = Self.flag(value) else { return .propertyFormat }
            guard facts.running else { return .propertyUnavailable }
            command = flag ? .pause : .resume
        case "mute":
            guard let flag = Self.flag(value) else { return .propertyFormat }
            command = .mute(flag)
        case "volume":
            guard let volume = Self.number(value) else { return .propertyFormat }
            guard (0...200).contains(volume) else { return .propertyError }
            command = .volume(Int64(volume.rounded()))
        case "speed":
            guard let speed = Self.number(value) else { return .propertyFormat }
            guard (0.01...100).contains(speed) else { return .propertyError }
            command = .speed(speed)
        case "time-pos", "playback-time":
            guard let seconds = Self.number(value) else { return .propertyFormat }
            guard facts.running else { return .propertyUnavailable }
            command = .seek(
                seconds < 0
                    ? .fromEnd(milliseconds: Int64((-seconds * 1000).rounded()))
                    : .milliseconds(Int64((seconds * 1000).rounded())))
        case "percent-pos":
            guard let percent = Self.number(value) else { return .propertyFormat }
            guard facts.running else { return .propertyUnavailable }
            command = .seek(.fraction(min(max(percent, 0), 100) / 100))
        case "playlist-pos", "playlist-pos-1":
            guard let number = Self.number(value), number == number.rounded() else { return .propertyFormat }
            let index = Int64(number) - (name == "playlist-pos-1" ? 1 : 0)
            let count = Int64(playlist?.entries.count ?? 0)
            command = index >= 0 && index < count ? .play(.item(index + 1)) : .stop
        case "aid", "vid", "sid":
            let choice: DaemonCommand.TrackChoice
            if let flag = value as? Bool, JSONValue(parsed: value) == .bool(flag) {
                guard !flag else { return .propertyFormat }
                choice = .none
            } else if let text = value as? String {
                switch text {
                case "no": choice = .none
                case "auto": choice = .first
                default:
                    guard let number = Int(text), number >= 1 else { return .propertyFormat }
                    choice = .number(number)
                }
            } else if let number = Self.number(value), number == number.rounded(), number >= 1 {
                choice = .number(Int(number))
            } else {
                return .propertyFormat
            }
            guard facts.running else { return .propertyUnavailable }
            command = .selectTrack(Self.trackType(name), choice)
        default:
            return .propertyUnavailable
        }
        if case .error = run(command) { return .propertyError }
        return nil
    }

    /// Carries out an input command of mpv's form: its arguments as mpv reads them, its effect
    /// through `run(_:)`. A command that changes nothing (`playlist-next` at the end, a seek
    /// with nothing playing) is "error running command", as in mpv.
    func mpvCommand(_ name: String, _ args: [Any]) -> Result<JSONValue?, MpvError> {
        func string(_ index: Int) -> String? { index < args.count ? args[index] as? String : nil }
        func perform(_ command: DaemonCommand) -> Result<JSONValue?, MpvError> {
            if case .error = run(command) { return .failure(.command) }
            return .success(.null)
        }
        switch name {
        case "loadfile", "loadlist":
            guard let url = string(0), !url.isEmpty else { return .failure(.invalidParameter) }
            let mode: DaemonCommand.LoadMode
            switch string(1) ?? "replace" {
            case "replace": mode = .replace
            case "append": mode = .append(playWhenIdle: false)
            case "append-play": mode = .append(playWhenIdle: true)
            case "insert-next": mode = .insertNext(playWhenIdle: false)
            case "insert-next-play": mode = .insertNext(playWhenIdle: true)
            default: return .failure(.invalidParameter)
            }
            // Per-file options (mpv's third argument) have no equivalent here.
            if args.count > 2, !(string(2)?.isEmpty ?? false) { return .failure(.notImplemented) }
            guard case .ok(let fields) = run(.load([url], mode: mode)) else { return .failure(.command) }
            let ids = fields.first { $0.0 == "entry_ids" }?.1
            guard case .array(let list)? = ids, let id = list.first else { return .failure(.command) }
            return .success(.object([("playlist_entry_id", id)]))
        case "playlist-next", "playlist-prev":
            let flag = string(0) ?? "weak"
            guard flag == "weak" || flag == "force" else { return .failure(.invalidParameter) }
            if case .ok = run(name == "playlist-next" ? .next : .previous) { return .success(.null) }
            // force: at the end (or the start), playback stops.
            return flag == "force" ? perform(.stop) : .failure(.command)
        case "playlist-play-index":
            guard args.count == 1 else { return .failure(.invalidParameter) }
            switch string(0) {
            case "current": return perform(.play(.current))
            case "none": return perform(.stop)
            default:
                guard let index = DaemonCommand.wholeNumber(args[0]) ?? string(0).flatMap({ Int64($0) }) else {
                    return .failure(.invalidParameter)
                }
                if index == -1 { return perform(.stop) }
                return perform(.play(.item(index + 1)))
            }
        case "playlist-clear": return perform(.clear(keepingPlaying: true))
        case "playlist-remove":
            guard args.count == 1 else { return .failure(.invalidParameter) }
            if string(0) == "current" { return perform(.remove(.current)) }
            guard let index = DaemonCommand.wholeNumber(args[0]) ?? string(0).flatMap({ Int64($0) }) else {
                return .failure(.invalidParameter)
            }
            return perform(.remove(.item(index + 1)))
        case "playlist-move":
            guard args.count == 2,
                let from = DaemonCommand.wholeNumber(args[0]) ?? string(0).flatMap({ Int64($0) }),
                let to = DaemonCommand.wholeNumber(args[1]) ?? string(1).flatMap({ Int64($0) })
            else { return .failure(.invalidParameter) }
            return perform(.move(.item(from + 1), .before(to + 1)))
        case "seek":
            guard let amount = args.first.flatMap({ Self.number($0) }) else { return .failure(.invalidParameter) }
            let flags = Set((string(1) ?? "relative").split(separator: "+").map(String.init))
            let modes = flags.subtracting(["keyframes", "exact"])
            guard modes.count <= 1 else { return .failure(.invalidParameter) }
            let target: DaemonCommand.SeekTarget
            switch modes.first ?? "relative" {
            case "relative": target = .relative(milliseconds: Int64((amount * 1000).rounded()))
            case "absolute":
                target =
                    amount < 0
                    ? .fromEnd(milliseconds: Int64((-amount * 1000).rounded()))
                    : .milliseconds(Int64((amount * 1000).rounded()))
            case "absolute-percent": target = .fraction(min(max(amount, 0), 100) / 100)
            case "relative-percent": target = .relativeFraction(amount / 100)
            default: return .failure(.invalidParameter)
            }
            return perform(.seek(target))
        case "stop":
            switch string(0) {
            case nil: return perform(.clear(keepingPlaying: false))
            case "keep-playlist": return perform(.stop)
            default: return .failure(.invalidParameter)
            }
        case "quit":
            let status = args.first.flatMap { DaemonCommand.wholeNumber($0) } ?? 0
            guard args.count <= 1, (0...255).contains(status) else { return .failure(.invalidParameter) }
            return perform(.quit(status: Int32(status)))
        case "cycle":
            guard let property = string(0) else { return .failure(.invalidParameter) }
            switch mpvProperty(property) {
            case .success(.bool(let flag)):
                return mpvSetProperty(property, !flag).map { .failure($0) } ?? .success(.null)
            case .success: return .failure(.command)
            case .failure(let error): return .failure(error)
            }
        case "set":
            guard args.count == 2, let property = string(0) else { return .failure(.invalidParameter) }
            return mpvSetProperty(property, args[1]).map { .failure($0) } ?? .success(.null)
        case "add":
            guard let property = string(0), args.count <= 2 else { return .failure(.invalidParameter) }
            let step = args.count == 2 ? Self.number(args[1]) : 1
            guard let step else { return .failure(.invalidParameter) }
            guard case .success(.double(let value)) = mpvProperty(property) else { return .failure(.command) }
            return mpvSetProperty(property, value + step).map { .failure($0) } ?? .success(.null)
        default:
            return .failure(.invalidParameter)
        }
    }

    // MARK: Values

    /// mpv's `playlist`: `filename` (as given), `current`, `playing` (only when true), `id`.
    private func mpvPlaylist(_ facts: PlayerFacts) -> [JSONValue] {
        guard let playlist else { return [] }
        let current = playlist.currentEntry?.id
        let given = givenNames()
        return playlist.entries.map { entry in
            var fields: [(String, JSONValue)] = [("filename", .string(given[entry.id] ?? entry.mrl))]
            if entry.id == current { fields.append(("current", .bool(true))) }
            if facts.running, entry.id == facts.entry { fields.append(("playing", .bool(true))) }
            fields.append(("id", .int(entry.id.json)))
            return .object(fields)
        }
    }

    /// mpv's `track-list`: `id` (from 1 per type), `type` (`audio`, `video`, `sub`), `src-id`
    /// (libvlc's id), `selected`.
    private func mpvTracks(_ facts: PlayerFacts) -> [JSONValue] {
        var numbers: [TrackType: Int] = [:]
        return facts.tracks.compactMap { track in
            let type: String
            switch track.type {
            case .audio: type = "audio"
            case .video: type = "video"
            case .text: type = "sub"
            case .unknown: return nil
            }
            numbers[track.type, default: 0] += 1
            return .object([
                ("id", .int(Int64(numbers[track.type]!))), ("type", .string(type)),
                ("src-id", .int(Int64(track.esID))), ("selected", .bool(facts.selected[track.type] == track.esID)),
            ])
        }
    }

    private func currentIndex() -> Int? {
        guard let playlist, let current = playlist.currentEntry?.id else { return nil }
        return playlist.entries.firstIndex { $0.id == current }
    }

    static func trackType(_ property: String) -> TrackType {
        switch property {
        case "aid": .audio
        case "vid": .video
        default: .text
        }
    }

    /// mpv's `filename`: the last path component; a URL's, percent-decoded.
    static func fileName(_ text: String) -> String {
        if text.contains("://"), let url = URL(string: text) {
            return url.lastPathComponent.isEmpty ? text : url.lastPathComponent
        }
        return text.split(separator: "/").last.map(String.init) ?? text
    }

    /// A flag: a JSON boolean, or mpv's `yes`/`no`.
    static func flag(_ value: Any) -> Bool? {
        if case .bool(let flag) = JSONValue(parsed: value) { return flag }
        switch value as? String {
        case "yes": return true
        case "no": return false
        default: return nil
        }
    }

    /// A number: a JSON number (not a boolean), or a string that reads as one.
    static func number(_ value: Any) -> Double? {
        if let text = value as? String { return Double(text).flatMap { $0.isFinite ? $0 : nil } }
        return DaemonCommand.number(value)
    }
}
