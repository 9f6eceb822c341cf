import Foundation
import MediaEvents

/// What a control client can ask of the daemon, one case per command, read from a request of
/// the socket's JSON protocol by `parse`. `Daemon.run(_:)` carries every case out: it is the
/// one place where commands become playlist calls, so another protocol on the same socket
/// only needs a parser of its own that makes these values.
enum DaemonCommand {
    /// Which entry a command acts on.
    enum Target {
        /// The entry at this position, counted from 1 (`"item"`).
        case item(Int64)
        /// The entry with this id (`"entry_id"`).
        case entry(PlaylistEntryID)
        /// The current entry.
        case current
    }

    /// Where `seek` goes.
    enum SeekTarget {
        case milliseconds(Int64)
        case fraction(Double)
        /// Forward (or back, negative) from the current time.
        case relative(milliseconds: Int64)
        /// Forward (or back) by a fraction of the length.
        case relativeFraction(Double)
        /// This long before the end.
        case fromEnd(milliseconds: Int64)
    }

    /// Where `load` puts its entries.
    enum LoadMode {
        /// Replaces the playlist and plays the new entries.
        case replace
        /// At the end; the first of them plays when no entry was current and `play` is set.
        case append(playWhenIdle: Bool)
        /// Right after the current entry (at the end when none is); plays as `append` does.
        case insertNext(playWhenIdle: Bool)
    }

    /// Which track `selectTrack` selects.
    enum TrackChoice {
        /// None of that type.
        case none
        /// The first of that type.
        case first
        /// The track numbered so among those of its type, from 1 (mpv's `aid`, `vid`, `sid`).
        case number(Int)
    }

    /// Starts the current entry (the first when none is), resumes a paused one, or starts
    /// the given entry.
    case play(Target?)
    case pause
    case resume
    /// Pauses a playing entry, resumes a paused one.
    case togglePause
    case stop
    /// The next entry; an error when there is none (the last one, without `--loop`).
    case next
    /// The previous entry; an error when there is none.
    case previous
    case seek(SeekTarget)
    /// Percent, 0 to 200.
    case volume(Int64)
    case mute(Bool)
    /// The playback rate, 0.01 to 100 (1: normal speed).
    case speed(Double)
    case selectTrack(TrackType, TrackChoice)
    /// Adds entries (`LoadMode`).
    case load([String], mode: LoadMode)
    /// Removes an entry; the current one gives its place to the next.
    case remove(Target)
    /// Where `move` puts an entry.
    enum Destination {
        /// Before the entry now at this position, from 1; one past the last: the end (mpv's
        /// `playlist-move`).
        case before(Int64)
        /// At this position, from 1, once moved.
        case at(Int64)
    }

    /// Moves an entry.
    case move(Target, Destination)
    /// Removes every entry, or every entry but the one playing.
    case clear(keepingPlaying: Bool)
    /// The entries, with their ids.
    case playlist
    case status
    /// Ends the daemon as SIGTERM does, with this exit status.
    case quit(status: Int32)

    /// Whether the command changes playback, the playlist or the daemon (everything but the
    /// reads): refused once the daemon is exiting.
    var changesState: Bool {
        switch self {
        case .playlist, .status: false
        default: true
        }
    }

    /// The command `name` of a JSON request with its other members; an error reply's message
    /// when a member is missing or wrong, or the command is unknown.
    static func parse(_ name: String, _ request: [String: Any]) -> Result<DaemonCommand, CommandError> {
        func fail(_ message: String) -> Result<DaemonCommand, CommandError> { .failure(CommandError(message)) }
        switch name {
        case "play":
            if request["item"] == nil && request["entry_id"] == nil { return .success(.play(nil)) }
            return target(request, command: name).map { .play($0) }
        case "pause": return .success(.pause)
        case "resume": return .success(.resume)
        case "stop": return .success(.stop)
        case "next": return .success(.next)
        case "previous": return .success(.previous)
        case "seek":
            if let relative = request["relative_ms"] {
                guard request["ms"] == nil, request["fraction"] == nil, let value = wholeNumber(relative) else {
                    return fail("seek takes \"ms\", \"fraction\" or \"relative_ms\" (one of them, whole milliseconds)")
                }
                return .success(.seek(.relative(milliseconds: value)))
            }
            switch (request["ms"], request["fraction"]) {
            case (let ms?, nil):
                guard let value = wholeNumber(ms), value >= 0 else {
                    return fail("\"ms\" must be a whole number of milliseconds, 0 or more")
                }
                return .success(.seek(.milliseconds(value)))
            case (nil, let fraction?):
                guard let value = number(fraction), value >= 0, value <= 1 else {
                    return fail("\"fraction\" must be a number from 0 to 1")
                }
                return .success(.seek(.fraction(value)))
            default:
                return fail("seek takes \"ms\" or \"fraction\" (one of them)")
            }
        case "volume":
            guard let given = request["volume"], let volume = wholeNumber(given), (0...200).contains(volume) else {
                return fail("\"volume\" must be a whole number from 0 to 200 (percent)")
            }
            return .success(.volume(volume))
        case "load":
            guard let list = request["entries"] as? [Any], !list.isEmpty, list.allSatisfy({ $0 is String }) else {
                return fail("\"entries\" must be a non-empty list of paths or URLs")
            }
            let mode = request["mode"] as? String ?? "replace"
            guard mode == "replace" || mode == "append" else {
                return fail("\"mode\" must be \"replace\" or \"append\", not '\(mode)'")
            }
            return .success(
                .load(
                    list.compactMap { $0 as? String }, mode: mode == "append" ? .append(playWhenIdle: true) : .replace))
        case "remove":
            return target(request, command: name).map { .remove($0) }
        case "move":
            guard let given = request["to_item"], let before = wholeNumber(given), before >= 1 else {
                return fail("\"to_item\" must be a whole number from 1 (the position the entry takes)")
            }
            return target(request, command: name).map { .move($0, .at(before)) }
        case "clear": return .success(.clear(keepingPlaying: false))
        case "mute":
            guard let flag = request["mute"] as? Bool else { return fail("\"mute\" must be true or false") }
            return .success(.mute(flag))
        case "speed":
            guard let given = request["speed"], let speed = number(given), (0.01...100).contains(speed) else {
                return fail("\"speed\" must be a number from 0.01 to 100")
            }
            return .success(.speed(speed))
        case "quit": return .success(.quit(status: 0))
        case "playlist": return .success(.playlist)
        case "status": return .success(.status)
        default: return fail("unknown command '\(name)'")
        }
    }

    /// The entry named by `"item"` or `"entry_id"` (one of them).
    private static func target(_ request: [String: Any], command: String) -> Result<Target, CommandError> {
        switch (request["item"], request["entry_id"]) {
        case (let item?, nil):
            guard let number = wholeNumber(item) else {
                return .failure(CommandError("\"item\" must be a whole number"))
            }
            return .success(.item(number))
        case (nil, let id?):
            guard let number = wholeNumber(id), number >= 1 else {
                return .failure(CommandError("\"entry_id\" must be a whole number from 1"))
            }
            return .success(.entry(PlaylistEntryID(rawValue: UInt64(number))))
        default:
            return .failure(CommandError("\(command) takes \"item\" or \"entry_id\" (one of them)"))
        }
    }

    /// A JSON number that is a whole number (not a boolean).
    static func wholeNumber(_ value: Any) -> Int64? {
        guard let number = number(value), number.rounded() == number, abs(number) < 1e15 else { return nil }
        return Int64(number)
    }

    /// A JSON number (not a boolean, not a string).
    static func number(_ value: Any) -> Double? {
        // JSONSerialization gives true and false as NSNumbers of type "c".
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }
}

/// Why a command was refused: the `error` of its reply.
struct CommandError: Error {
    let message: String

    init(_ message: String) { self.message = message }
}
