import ExampleSupport
import Glibc
import MediaEvents

/// The help text of `media-daemon`.
let usage = """
    usage: media-daemon [options] [MEDIA...]
       media-daemon --help | --version

    Plays a playlist headless and logs every event of its playbacks as JSON Lines. Each start
    of an entry is a playback with an id ("playback", increasing from 1); every line about it
    carries that id and its entry's id ("entry_id", never reused), and each playback ends with
    exactly one PlaybackEnded line saying why. An entry that fails is logged and skipped.
      --playlist FILE    read the playlist from FILE: one path or URL per line (.m3u: lines
                         starting with # are skipped; relative paths are relative to FILE);
                         MEDIA arguments are played after its entries. An empty playlist (or
                         none, with --control) starts idle, waiting for a client's load
      --loop             start again at the first entry after the last one
      --exit-at-end      exit 0 once the playlist has been played (default: stay idle until
                         a signal or a command; SIGHUP plays the playlist again)
      --log FILE         append the log to FILE instead of standard output (reopened on SIGHUP;
                         created with mode 0600)
      --log-mode MODE    the mode (octal) a new --log file is created with, e.g. 0640
      --no-progress      leave out TimeChanged, PositionChanged, Buffering, AudioVolume
      --dispatch MODE    inline (default), queue-async or queue-sync
      --untimed          decode audio as fast as possible, with no output (for tests and batch
                         work); default: audio goes nowhere at its own speed, as on speakers
      --audio            real audio output (the system's default device)
      --stall-timeout S  a playback that makes no progress for S seconds (opening, buffering,
                         time not advancing, no track) fails and the next entry plays
                         (default 30); --open-timeout S is the same option
      --verbose          log libvlc's messages too ("source":"libvlc","event":"LogMessage",
                         "level", "module", "object", "text"); = --log-level debug
      --log-level LEVEL  only libvlc's messages of LEVEL and above: debug, notice, warning
                         or error (default: none logged)
      --control PATH     listen on a Unix socket at PATH (mode 0600; a stale socket there is
                         replaced, any other file refused; removed at exit) for JSON Lines
                         commands: play, pause, resume, stop, next, previous, seek, volume,
                         mute, speed, load, remove, move, clear, playlist, status, quit,
                         subscribe (since a seq: the lines missed first), unsubscribe;
                         subscribed clients get the log's lines; see 'media-events ctl
                         --help'. The same socket
                         speaks mpv's JSON IPC ({"command":["loadfile","a.wav"]}): mpv's
                         commands, properties and events (see DaemonControl.md)
      --catch-up LINES   keep the last LINES log lines for clients that subscribe "since" a
                         seq after a reconnect (default 1000; 0 keeps none)
      --client-timeout S disconnect a client that has sent nothing for S seconds and takes no
                         events (default 300); one connection beyond the 64 clients is kept
                         for the operator: it gets one reply, then is closed
      --mpris            appear on the session bus as an MPRIS media player, for playerctl,
                         desktop media keys and widgets: the name
                         org.mpris.MediaPlayer2.media_daemon (".instance<PID>" added when
                         another process has it), the interfaces org.mpris.MediaPlayer2 and
                         org.mpris.MediaPlayer2.Player; with no entries it starts idle and
                         plays what OpenUri (playerctl open URI) gives
      --mpris-name NAME  org.mpris.MediaPlayer2.NAME instead (playerctl -p NAME)
      --mpris-bus BUS    session (default) or system (needs the D-Bus policy of
                         Examples/media-daemon/media-daemon-mpris.conf installed)
      --mqtt URL         also appear on an MQTT broker (mqtt://host[:port], default port 1883;
                         mqtts:// for TLS, default 8883), under media-daemon/ID/: every log
                         line on events, a retained status ({"state":"online"|"offline",...}),
                         commands (the control socket's forms) on command, replies on reply;
                         reconnects with backoff, keeping up to 1000 lines meanwhile (see
                         DaemonFleet.md)
      --mqtt-id ID       the ID in the topics (default: the host's name)
      --mqtt-password-file FILE
                         the user and password for the broker: FILE's first line, USER:PASSWORD
      --mqtt-cafile FILE verify an mqtts:// broker with these CA certificates (PEM; default:
                         the system's)

    Lines: every line has "seq" (continued from the last line of an existing --log file), "t"
    (seconds since start), "ts" (UTC wall-clock time), "source" and "event". Lines of a
    playback (libvlc's player and media events, "source":"player" or "media") add "playback"
    and "entry_id"; player events outside any playback (MediaChanged, a volume change while
    idle) have neither. The daemon's own lines have "source":"daemon":
      PlaybackBegan   playback, entry_id, item (the entry's position, from 1), entry (its path
                      or URL as given, or the MRL of an entry read from a playlist file), mrl
      PlaybackStalled playback, entry_id, stall (opening, buffering, no_track, no_progress)
      PlaybackEnded   playback, entry_id, item, entry, reason: eof (played to its end),
                      stopped (stop), skipped (next, previous, play, load), failed, quit (the
                      daemon exited), expanded (a playlist file or directory, replaced by its
                      "entries" entries; mpv calls it redirect); time_ms, position, length_ms
                      when known, seconds; when failed: error (encountered_error, no_tracks,
                      stalled), message, cause (libvlc's error messages, or the stall), stall
      Started, Loaded, Reloaded, ReloadFailed, EntryRejected (not a valid URL), PlaylistEnded,
      Status, Unhealthy, Healthy, Stopping, Exited.
    The playlist's own events have "source":"playlist" (PlaylistEntriesAdded, ...Removed,
    ...Moved, ...Cleared, ...Expanded, ...CurrentEntryChanged).

    systemd: with $NOTIFY_SOCKET set (Type=notify) it sends READY=1 once the playlist is
    loaded, STATUS= per playback, STOPPING=1, and WATCHDOG=1 every half $WATCHDOG_USEC while
    the daemon is live: no ping while a control call (a command, a signal, or a libvlc call
    queued on the player) has not returned within 5 s, or while a playback is stalled.

    Signals: SIGTERM, SIGINT  stop playback, write the last line, exit 0 (within 2 s)
             SIGHUP           re-read the playlist (and reopen the log), play from the start
             SIGUSR1          write a "Status" line: playback, entry, state, time, counts
    Exit status: 0 after a signal or --exit-at-end (a client's quit: the status it gave, 0 by
    default); 1 the playlist or log could not be
    opened at start, the playlist is not text, the control socket cannot be created (its
    path exists and is not a stale socket, or another daemon listens on it), or the log
    cannot be written (a message says why), --mpris cannot connect to its bus or take its
    name (no bus, or the bus's policy refuses it), --mqtt's URL is not a usable mqtt:// or
    mqtts:// URL, or its password file cannot be read; 141 the output pipe was closed; 2 usage error.
    """

/// The options of `media-daemon`.
struct DaemonOptions {
    /// Where the player's audio goes.
    enum Audio {
        /// Nowhere, at its own speed (`PlayerOptions.Audio.discardInRealTime`).
        case paced
        /// Nowhere, as fast as it is decoded (libvlc's `adummy`): `--untimed`.
        case untimed
        /// The system's audio device: `--audio`.
        case device
    }

    var playlistFile: String?
    var arguments: [String] = []
    var loop = false
    var exitAtEnd = false
    var logFile: String?
    var filter = EventFilter()
    var dispatch = DispatchMode.inline
    var audio = Audio.paced
    /// Seconds a playback may make no progress before it fails and the next entry plays.
    var stallTimeout = 30.0
    /// libvlc's log messages of this level and above are logged (`--verbose`, `--log-level`).
    var logLevel: LogLevel?
    /// The control socket's path (`--control`).
    var controlPath: String?
    /// Where to appear on D-Bus (`--mpris`); `nil` without.
    var mpris: MPRISOptions?
    /// Where to appear on an MQTT broker (`--mqtt`); `nil` without.
    var mqtt: MQTTOptions?
    /// The mode a new `--log` file is created with (`--log-mode`).
    var logMode: mode_t = 0o600
    /// Log lines kept for clients that catch up (`--catch-up`).
    var catchUpLines = 1000
    /// Seconds a client may send nothing while it takes no events (`--client-timeout`).
    var clientTimeout = 300.0

    /// The player's options for these.
    var playerOptions: PlayerOptions {
        PlayerOptions(
            stallTimeout: .milliseconds(Int64((stallTimeout * 1000).rounded())), recordsFailureCauses: true,
            audio: audio == .paced ? .discardInRealTime : .libraryOutput)
    }

    static func parse(_ arguments: [String]) throws -> DaemonOptions {
        var options = DaemonOptions()
        var reader = ArgumentReader(arguments)
        var audioFlags: [String] = []
        var mprisFlags: [String] = []
        var mprisGiven = false
        var mqttFlags: [String] = []
        var mqttURL: String?
        var mqttID: String?
        var mqttPasswordFile: String?
        var mqttCAFile: String?
        while let argument = reader.nextOption(positional: { options.arguments.append($0) }) {
            switch argument {
            case "--playlist": options.playlistFile = try reader.value(for: argument)
            case "--loop": options.loop = true
            case "--exit-at-end": options.exitAtEnd = true
            case "--log": options.logFile = try reader.value(for: argument)
            case "--no-progress": options.filter.dropProgress = true
            case "--dispatch": options.dispatch = try reader.dispatchMode(for: argument)
            case "--audio":
                options.audio = .device
                audioFlags.append(argument)
            case "--untimed":
                options.audio = .untimed
                audioFlags.append(argument)
            case "--stall-timeout", "--open-timeout": options.stallTimeout = try reader.number(for: argument)
            case "--verbose": options.logLevel = .debug
            case "--log-level": options.logLevel = try reader.logLevel(for: argument)
            case "--control":
                let path = try reader.value(for: argument)
                guard !path.isEmpty, path.utf8.count <= UnixSocket.maximumPathBytes else {
                    throw UsageError("--control needs a socket path of 1 to \(UnixSocket.maximumPathBytes) bytes")
                }
                options.controlPath = path
            case "--mpris":
                mprisGiven = true
                options.mpris = options.mpris ?? MPRISOptions()
            case "--mpris-name":
                mprisFlags.append(argument)
                options.mpris = options.mpris ?? MPRISOptions()
                options.mpris?.name = try MPRISOptions.validated(name: try reader.value(for: argument))
            case "--mpris-bus":
                mprisFlags.append(argument)
                options.mpris = options.mpris ?? MPRISOptions()
                options.mpris?.bus = try MPRISOptions.bus(try reader.value(for: argument))
            case "--mqtt": mqttURL = try reader.value(for: argument)
            case "--mqtt-id":
                mqttFlags.append(argument)
                mqttID = try MQTTOptions.validated(id: try reader.value(for: argument))
            case "--mqtt-password-file":
                mqttFlags.append(argument)
                mqttPasswordFile = try reader.value(for: argument)
            case "--mqtt-cafile":
                mqttFlags.append(argument)
                mqttCAFile = try reader.value(for: argument)
            case "--log-mode":
                let text = try reader.value(for: argument)
                guard let mode = mode_t(text, radix: 8), mode <= 0o777, mode & 0o600 == 0o600 else {
                    throw UsageError(
                        "--log-mode needs an octal mode from 0600 to 0777 that the daemon can read and write, not '\(text)'"
                    )
                }
                options.logMode = mode
            case "--catch-up":
                let text = try reader.value(for: argument)
                guard let lines = Int(text), (0...1_000_000).contains(lines) else {
                    throw UsageError("--catch-up needs a number of lines from 0 to 1000000, not '\(text)'")
                }
                options.catchUpLines = lines
            case "--client-timeout": options.clientTimeout = try reader.number(for: argument)
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
        if Set(audioFlags).count > 1 { throw UsageError("--audio and --untimed cannot be combined") }
        if let flag = mprisFlags.first, !mprisGiven { throw UsageError("\(flag) needs --mpris") }
        if let url = mqttURL {
            options.mqtt = MQTTOptions(
                url: url, id: mqttID ?? MQTTOptions.hostName, passwordFile: mqttPasswordFile, cafile: mqttCAFile)
        } else if let flag = mqttFlags.first {
            throw UsageError("\(flag) needs --mqtt")
        }
        guard
            options.playlistFile != nil || !options.arguments.isEmpty || options.controlPath != nil
                || options.mpris != nil || options.mqtt != nil
        else {
            throw UsageError(
                "nothing to play: give --playlist FILE, MEDIA arguments, --control PATH, --mpris or --mqtt")
        }
        return options
    }
}
