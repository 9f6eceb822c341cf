import ExampleSupport
import Glibc
import MediaEvents

/// The help text of `media-daemon`.
let usage = """
    usage: media-daemon [options] [MEDIA...]
       media-daemon --help | --version

    Plays a playlist headless through a list player and logs every event of the list player,
    its player and the media as JSON Lines. An item that fails is logged and skipped.
      --playlist FILE    read the playlist from FILE: one path or URL per line (.m3u: lines
                         starting with # are skipped; relative paths are relative to FILE);
                         MEDIA arguments are played after its entries
      --loop             start again at the first item after the last one
      --exit-at-end      exit 0 once the playlist has been played (default: stay idle until
                         a signal, SIGHUP plays the playlist again)
      --log FILE         append the log to FILE instead of standard output (reopened on SIGHUP)
      --no-progress      leave out TimeChanged, PositionChanged, Buffering, AudioVolume
      --dispatch MODE    inline (default), queue-async or queue-sync
      --audio            real audio output (default: none, and no real-time pacing)
      --open-timeout S   an item not playing after S seconds fails and is skipped (default 30)
      --verbose          log libvlc's messages too ("source":"libvlc","event":"LogMessage",
                         "level", "module", "object", "text"); = --log-level debug
      --log-level LEVEL  only libvlc's messages of LEVEL and above: debug, notice, warning
                         or error (default: none logged)
      --control PATH     listen on a Unix socket at PATH (mode 0600; a stale socket there is
                         replaced, any other file refused; removed at exit) for JSON Lines
                         commands: play, pause, resume, stop, next, previous, seek, volume,
                         load, playlist, status, subscribe, unsubscribe; subscribed clients
                         get the log's lines; see 'media-events ctl --help'

    systemd: with $NOTIFY_SOCKET set (Type=notify) it sends READY=1 once the playlist is
    loaded, STATUS= per item, STOPPING=1, and WATCHDOG=1 every half $WATCHDOG_USEC.

    Signals: SIGTERM, SIGINT  stop playback, write the last line, exit 0 (within 2 s)
             SIGHUP           re-read the playlist (and reopen the log), play from the start
             SIGUSR1          write a "Status" line: item, state, time, counts
    Every line has "seq" (continued from the last line of an existing --log file), "t"
    (seconds since start) and "ts" (UTC wall-clock time). The daemon's own lines have
    "source":"daemon": Started, ItemFailed ("error": EncounteredError, NoTracks,
    OpenTimeout or InvalidURL, "message", and "cause": libvlc's error messages for the item,
    when it logged any), PlaylistEnded, Reloaded, ReloadFailed, Status,
    Stopping, Exited; Loaded (a control client's load).
    Exit status: 0 after a signal or --exit-at-end; 1 the playlist or log could not be
    opened at start, the playlist is not text or is empty, the control socket cannot be
    created (its path exists and is not a stale socket, or another daemon listens on it),
    or the log cannot be written (a message says why); 141 the output pipe was closed;
    2 usage error.
    """

/// The options of `media-daemon`.
struct DaemonOptions {
    var playlistFile: String?
    var arguments: [String] = []
    var loop = false
    var exitAtEnd = false
    var logFile: String?
    var filter = EventFilter()
    var dispatch = DispatchMode.inline
    var audio = false
    /// Seconds an item may take to start playing before it fails and is skipped.
    var openTimeout = 30.0
    /// libvlc's log messages of this level and above are logged (`--verbose`, `--log-level`).
    var logLevel: LogLevel?
    /// The control socket's path (`--control`).
    var controlPath: String?

    static func parse(_ arguments: [String]) throws -> DaemonOptions {
        var options = DaemonOptions()
        var reader = ArgumentReader(arguments)
        while let argument = reader.nextOption(positional: { options.arguments.append($0) }) {
            switch argument {
            case "--playlist": options.playlistFile = try reader.value(for: argument)
            case "--loop": options.loop = true
            case "--exit-at-end": options.exitAtEnd = true
            case "--log": options.logFile = try reader.value(for: argument)
            case "--no-progress": options.filter.dropProgress = true
            case "--dispatch": options.dispatch = try reader.dispatchMode(for: argument)
            case "--audio": options.audio = true
            case "--open-timeout": options.openTimeout = try reader.number(for: argument)
            case "--verbose": options.logLevel = .debug
            case "--log-level": options.logLevel = try reader.logLevel(for: argument)
            case "--control":
                let path = try reader.value(for: argument)
                guard !path.isEmpty, path.utf8.count <= UnixSocket.maximumPathBytes else {
                    throw UsageError("--control needs a socket path of 1 to \(UnixSocket.maximumPathBytes) bytes")
                }
                options.controlPath = path
            case "-h", "--help":
                printOutput(usage)
                exit(0)
            case "--version":
                printOutput("media-daemon \(ProgramVersion.text)")
                exit(0)
            default: throw UsageError("unknown option \(argument)")
            }
            if reader.hasAttachedValue { throw UsageError("\(argument) takes no value") }
        }
        guard options.playlistFile != nil || !options.arguments.isEmpty else {
            throw UsageError("nothing to play: give --playlist FILE or MEDIA arguments")
        }
        return options
    }
}
