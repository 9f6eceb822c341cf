import ExampleSupport
import MediaEvents

/// A method call or a property set of the MPRIS interfaces, carried out on the daemon's control
/// queue like the control socket's commands: through `Daemon.run(_:)` wherever a
/// `DaemonCommand` says the same thing, so that one place turns commands into playlist calls.
enum MPRISAction: Sendable {
    case play, pause, playPause, stop, next, previous
    /// `Seek`: microseconds from the current position.
    case seek(offset: Int64)
    /// `SetPosition`: the track id the client saw, and microseconds.
    case setPosition(trackID: String, position: Int64)
    case openURI(String)
    case quit
    case setRate(Double)
    /// 1 is 100 %.
    case setVolume(Double)
}

/// A D-Bus error to answer a call with.
struct MPRISError: Error, Sendable {
    let name: String
    let message: String

    static func notSupported(_ message: String) -> MPRISError {
        MPRISError(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }

    static func invalidArguments(_ message: String) -> MPRISError {
        MPRISError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    static func failed(_ message: String) -> MPRISError {
        MPRISError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}

/// What carrying out an action did: an error for the caller, a jump for `Seeked`.
struct MPRISOutcome: Sendable {
    var error: MPRISError?
    /// The position jumped to, in milliseconds (`Seek`, `SetPosition`).
    var seekedTo: Int64?
    /// The playback that jumped.
    var seekedPlayback: PlaybackID?
}

/// The URI schemes `OpenUri` takes (`SupportedUriSchemes`): those libvlc 3 opens with Debian's
/// vlc-plugin-base.
let mprisURISchemes = ["file", "http", "https", "ftp", "rtsp", "rtp", "udp", "mms"]

/// `SupportedMimeTypes`: common audio and video types that libvlc 3 plays.
let mprisMIMETypes = [
    "audio/mpeg", "audio/ogg", "audio/flac", "audio/x-flac", "audio/wav", "audio/x-wav", "audio/opus",
    "audio/aac", "audio/mp4", "audio/x-matroska", "audio/webm", "application/ogg", "video/mp4", "video/ogg",
    "video/webm", "video/x-matroska", "audio/x-mpegurl", "application/vnd.apple.mpegurl",
]

/// The rates `Rate` takes (`MinimumRate`, `MaximumRate`): libvlc keeps audio intelligible there.
let mprisRateRange = 0.25...4.0

extension Daemon {
    /// Carries out `action` on the control queue; never waits for libvlc.
    func carryOut(_ action: MPRISAction) -> MPRISOutcome {
        guard let playlist = playlistPlayer, !isStopping else {
            return MPRISOutcome(error: .failed("the daemon is exiting"))
        }
        let player = playlist.player
        // Commands that change nothing (no next entry, nothing to play) are not errors in MPRIS:
        // the specification asks for "no effect", and the Can* properties said so.
        switch action {
        case .play:
            _ = run(.play(nil))
        case .pause:
            _ = run(.pause)
        case .playPause:
            let state = player.state
            if playlist.isActive, state == .paused {
                _ = run(.resume)
            } else if playlist.isActive {
                guard state != .playing || player.isPausable else {
                    return MPRISOutcome(error: .notSupported("the current entry cannot pause"))
                }
                _ = run(.pause)
            } else {
                _ = run(.play(nil))
            }
        case .stop:
            _ = run(.stop)
        case .next:
            _ = run(.next)
        case .previous:
            _ = run(.previous)
        case .seek(let offset):
            guard playlist.currentEntry != nil, player.isSeekable else { break }
            let length = player.length
            let target = max(0, max(player.time, 0) + offset / 1000)
            if length > 0, target > length {
                // Past the end: as Next, which stops when there is no next entry.
                if case .error = run(.next) { _ = run(.stop) }
                break
            }
            return seek(to: target, player)
        case .setPosition(let trackID, let position):
            // A stale track id (the track changed since the client read it) is ignored.
            guard let current = playlist.currentEntry, trackID == MPRISState.trackID(of: current.id) else { break }
            let length = player.length
            guard position >= 0, length <= 0 || position / 1000 <= length, player.isSeekable else { break }
            return seek(to: position / 1000, player)
        case .openURI(let uri):
            guard let scheme = uri.split(separator: ":", maxSplits: 1).first.map({ $0.lowercased() }),
                uri.contains(":"), mprisURISchemes.contains(scheme)
            else {
                return MPRISOutcome(
                    error: .notSupported(
                        "'\(uri)' is not a URI of a supported scheme (\(mprisURISchemes.joined(separator: ", ")))"))
            }
            switch run(.load([uri], mode: .append(playWhenIdle: false))) {
            case .error(let message): return MPRISOutcome(error: .failed(message))
            case .ok(let fields):
                let ids = fields.first { $0.0 == "entry_ids" }?.1
                guard case .array(let values) = ids, case .int(let id) = values.first else {
                    return MPRISOutcome(error: .failed("'\(uri)' was not added (not a valid URL)"))
                }
                _ = run(.play(.entry(PlaylistEntryID(rawValue: UInt64(id)))))
            }
        case .quit:
            shutdown(reason: "MPRIS Quit")
        case .setRate(let rate):
            if rate == 0 {
                // The specification: a rate of 0 pauses.
                _ = run(.pause)
            } else {
                player.rate = Float(min(max(rate, mprisRateRange.lowerBound), mprisRateRange.upperBound))
            }
        case .setVolume(let volume):
            _ = run(.volume(Int64((min(max(volume, 0), 2) * 100).rounded())))
        }
        return MPRISOutcome()
    }

    private func seek(to milliseconds: Int64, _ player: VLCMediaPlayer) -> MPRISOutcome {
        if case .error(let message) = run(.seek(.milliseconds(milliseconds))) {
            return MPRISOutcome(error: .failed(message))
        }
        return MPRISOutcome(seekedTo: milliseconds, seekedPlayback: player.currentPlayback)
    }
}
