// What the media-daemon tests share: the daemon's log read back by playback, and waits with a
// deadline.

import Foundation
import Glibc
import XCTest

/// Waits until `condition` holds, checking every 20 ms; returns whether it did within
/// `timeout` seconds.
func waitUntil(_ timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

/// A media-daemon log read back: its lines parsed, by playback.
struct DaemonLog {
    let lines: [[String: Any]]

    init(_ lines: [[String: Any]]) { self.lines = lines }

    init(text: String) throws {
        lines = try text.split(separator: "\n").map { try parseJSONObject(String($0)) }
    }

    /// The lines of event `name`.
    func events(_ name: String) -> [[String: Any]] { lines.filter { eventName($0) == name } }

    /// The playback's lines of event `name`, by playback id.
    func byPlayback(_ name: String) -> [Int: [[String: Any]]] {
        Dictionary(grouping: events(name).filter { $0["playback"] is Int }, by: { $0["playback"] as! Int })
    }

    /// The times (`t`) of the lines of event `name`.
    func times(_ name: String) -> [Double] { events(name).compactMap { $0["t"] as? Double } }

    /// Checks the playbacks: every `PlaybackBegan` has exactly one `PlaybackEnded` and the
    /// other way round, ids go 1, 2, 3 … in the order they began, and every line of a playback
    /// comes after its `PlaybackBegan` and before the next one's, with its entry. Returns the
    /// failures, empty when all hold.
    func playbackViolations() -> [String] {
        var failures: [String] = []
        var entryOf: [Int: Int] = [:]
        var endings: [Int: Int] = [:]
        var latest = 0
        for line in lines {
            guard let playback = line["playback"] as? Int else { continue }
            let seq = line["seq"] as? Int ?? -1
            switch eventName(line) {
            case "PlaybackBegan":
                if playback != latest + 1 { failures.append("seq \(seq): playback \(playback) began after \(latest)") }
                latest = max(latest, playback)
                entryOf[playback] = line["entry_id"] as? Int
            case "PlaybackEnded":
                endings[playback, default: 0] += 1
            default:
                break
            }
            if playback != latest {
                failures.append("seq \(seq): a line of playback \(playback) while \(latest) is the latest: \(line)")
            }
            if entryOf[playback] == nil || line["entry_id"] as? Int != entryOf[playback] {
                failures.append("seq \(seq): entry \(line["entry_id"] ?? "none") for playback \(playback)")
            }
        }
        for playback in 1..<(latest + 1) where endings[playback] != 1 {
            failures.append("playback \(playback) ended \(endings[playback] ?? 0) times")
        }
        for playback in endings.keys where playback > latest {
            failures.append("playback \(playback) ended without beginning")
        }
        return failures
    }

    /// The longest time (s) between consecutive lines of event `name` from `start` to `end`
    /// (the log's `t`), those ends included as if they were such lines.
    func longestStretch(_ name: String, from start: Double, to end: Double) -> Double {
        let times = [start] + self.times(name).filter { $0 > start && $0 < end } + [end]
        return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
    }
}

/// The value at `fraction` (0 to 1) of `values` sorted.
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}
