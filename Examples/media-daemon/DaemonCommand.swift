import Foundation
import MediaEvents

/// What a control client can ask of the daemon, one case per command, read from a request of
/// the socket's JSON protocol by `parse`. `Daemon.run(_:)` carries every case out: it is the
/// one place where commands become playlist calls, so another protocol on the same socket
/// only needs a parser of its own that makes these values.
enum DaemonCommand {
    /// Which entry `play` starts.
    enum Target {
        /// The entry at this position, counted from 1 (`"item"`).
        case item(Int64)
        /// The entry with this id (`"entry_id"`).
        case entry(PlaylistEntryID)
    }

    /// Where `seek` goes.
    enum SeekTarget {
        case milliseconds(Int64)
        case fraction(Double)
    }

    /// Starts the current entry (the first when none is), resumes a paused one, or starts
    /// the given entry.
    case play(Target?)
    case pause
    case resume
    case stop
    /// The next entry; an error when there is none (the last one, without `--loop`).
    case next
    /// The previous entry; an error when there is none.
    case previous
    case seek(SeekTarget)
    /// Percent, 0 to 200.
    case volume(Int64)
    /// Replaces the playlist (and plays it), or appends to it.
    case load([String], append: Bool)
    /// The entries, with their ids.
    case playlist
    case status

    /// The command `name` of a JSON request with its other members; an error reply's message
    /// when a member is missing or wrong, or the command is unknown.
    static func parse(_ name: String, _ request: [String: Any]) -> Result<DaemonCommand, CommandError> {
        func fail(_ message: String) -> Result<DaemonCommand, CommandError> { .failure(CommandError(message)) }
        switch name {
        case "play":
            switch (request["item"], request["entry_id"]) {
            case (nil, nil): return .success(.play(nil))
            case (let item?, nil):
                guard let number = wholeNumber(item) else { return fail("\"item\" must be a whole number") }
                return .success(.play(.item(number)))
            case (nil, let id?):
                guard let number = wholeNumber(id), number >= 1 else {
                    return fail("\"entry_id\" must be a whole number from 1")
                }
                return .success(.play(.entry(PlaylistEntryID(rawValue: UInt64(number)))))
            default:
                return fail("play takes \"item\" or \"entry_id\" (one of them)")
            }
        case "pause": return .success(.pause)
        case "resume": return .success(.resume)
        case "stop": return .success(.stop)
        case "next": return .success(.next)
        case "previous": return .success(.previous)
        case "seek":
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
            return .success(.load(list.compactMap { $0 as? String }, append: mode == "append"))
        case "playlist": return .success(.playlist)
        case "status": return .success(.status)
        default: return fail("unknown command '\(name)'")
        }
    }

    /// A JSON number that is a whole number (not a boolean).
    private static func wholeNumber(_ value: Any) -> Int64? {
        guard let number = number(value), number.rounded() == number, abs(number) < 1e15 else { return nil }
        return Int64(number)
    }

    /// A JSON number (not a boolean, not a string).
    private static func number(_ value: Any) -> Double? {
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
