import ExampleSupport

/// The help texts of `media-events`: one per command (`media-events COMMAND --help`), and
/// the overview (`media-events --help`).
enum Usage {
    static let overview = """
        usage: media-events log [options] [MEDIA...]
               media-events probe [--json] [--timeout SECONDS] [--play MS] [--parse-only] MEDIA...
               media-events events
               media-events ctl --socket PATH COMMAND [ARGS...]
               media-events replay [--json] [--pace recorded|fast] [--convert] FILE
               media-events help | --help | --version

        log    plays each MEDIA headless and prints every event of the player and its media
        probe  parses and briefly plays each MEDIA: format, meta, duration, tracks, chapters
        events lists the event names --only and --exclude accept
        ctl    drives a media-daemon started with --control PATH, or prints its events
        replay plays a recording (or a log --json output) back and prints it as log did
        'media-events COMMAND --help' shows a command's options and exit statuses.
        """

    static let log = """
        usage: media-events log [options] [MEDIA...]

        Plays each MEDIA (a path or URL; the bundled sample when none is given) headless and
        prints every event of the player and its media in libvlc's delivery order. A playlist
        or a directory is played entry by entry ("sub_item":1, 2, …).
          --json                 JSON Lines: {"seq","t","ts","source","event","item",payload
                                 fields...}, each line valid against Schemas/log.schema.json
          --only NAMES           print only these events (comma-separated libvlc names; the
                                 prefix may be left out: EndReached = MediaPlayerEndReached)
          --exclude NAMES        leave these events out
          --no-progress          leave out TimeChanged, PositionChanged, Buffering,
                                 AudioVolume, and a DurationChanged or LengthChanged that
                                 repeats the value before it
          --progress-interval MS at most one progress event of each kind per MS milliseconds
                                 (default: 1000 for text; 0, every one, for --json)
          --dispatch MODE        where handlers run: inline (libvlc's thread, default),
                                 queue-async or queue-sync (a private serial queue)
          --limit SECONDS        stop each media after this much time (counts as played if
                                 it was playing by then)
          --open-timeout SECONDS a media not playing after this long fails (default 30)
          --repeat N             play the whole list N times
          --audio                real audio output. Without it there is none: media with
                                 video still play in real time (the video clock paces
                                 them), audio-only media play faster than real time
          --summary              at the end, or on SIGINT or SIGTERM, counts per event,
                                 failures and wall time on stderr
          --verbose              print libvlc's log messages too, as "libvlc" LogMessage
                                 lines (level, module, object, text); = --log-level debug
          --log-level LEVEL      only libvlc's messages of LEVEL and above: debug, notice,
                                 warning or error (default: none printed)

        Exit status: 0 every media played to its end (or to --limit); 1 a media failed:
        libvlc reported EncounteredError (missing or empty file, unsupported URL scheme,
        connection refused), it ended without any audio or video track (random bytes, an
        empty directory) or it was not playing after --open-timeout; 1 also when the output
        cannot be written (a message says why); 130 SIGINT, 143 SIGTERM (the last line is
        "Interrupted"); 141 the output pipe was closed (| head); 2 usage error. Each failure
        is one line on stderr, "media-events: MEDIA: why", and one "ItemFailed" line in the
        output ("error", "message", and "cause": libvlc's own error messages for it, such as
        "cannot open file … (No such file or directory)", null when it logged none). A
        stream cut short (a server closing mid-stream, a truncated file) ends with
        EndReached in libvlc and counts as played.
        """

    static let probe = """
        usage: media-events probe [--json] [--timeout SECONDS] [--play MS] [--parse-only] MEDIA...

        Parses each MEDIA, then opens it in a silent player and lets the first MS of it play
        (default 1000), since libvlc knows some facts only while a media plays: titles and
        chapters, the container (demuxer), the pixel format and bit depth, and the decoders'
        own channel counts and rates, which correct the preparser's (a FLAC's channels). Prints
        one report per MEDIA: status, error, duration, format (name as ffprobe says it,
        demuxer, size, overall bit rate), meta, tracks (codec_name as ffprobe says it beside
        libvlc's FourCC as codec_tag, language, title, channels, sample rate, bits per sample,
        size, pixel format, frame rate as a fraction, bit rate), sub-items, titles, chapters.
          --json                 one JSON object per MEDIA, every key always present (null
                                 when unknown): Schemas/probe.schema.json
          --timeout SECONDS      give up parsing, or opening, after this long (default 10)
          --play MS              how much of each media plays before its facts are read
                                 (default 1000; 0: read them as soon as it plays)
          --parse-only           the preparser only: no titles, chapters, container, pixel
                                 format or bit depth (--no-chapters is the same)

        Exit status: 0 every MEDIA gave a report; 1 a MEDIA failed (JSON "error" {"code",
        "message","cause"}; one line on stderr, "media-events: MEDIA: why", in libvlc's words
        when it logged any, such as "Connection refused"): not a valid URL, libvlc could not
        open it, parsing timed out, or it has neither a track nor a sub-item; 1 also when the
        output cannot be written; 141 the output pipe was closed; 2 usage error.
        """

    static let ctl = """
        usage: media-events ctl --socket PATH [--timeout SECONDS] COMMAND [ARGS...]

        Sends COMMAND to the media-daemon listening on PATH (--control PATH) and prints its
        reply, one JSON line: {"request_id":1,"ok":true,...} or {...,"ok":false,"error":"..."}.
          play [ITEM] | play --entry ID  play (the item numbered ITEM, from 1; the entry with
                                 id ID, as "entry_id" in the playlist and the log)
          pause | resume | stop | next | previous
          seek MS | seek FRACTION  to MS milliseconds (5000), or a fraction of the length
                                 written with a point (0.5)
          volume PERCENT         0 to 200
          load [--append] MEDIA...  replace the playlist (or add to its end); relative paths
                                 are made absolute here
          playlist | status      the entries and current item; the state, counts, clients
          get PROPERTY           mpv's property (volume, time-pos, playlist, track-list, ...;
                                 get property-list lists them), in mpv's form:
                                 {"data":...,"request_id":1,"error":"success"}
          set PROPERTY VALUE     sets mpv's property (VALUE as JSON when it reads as JSON:
                                 true, 50, 0.5; otherwise the text)
          observe PROPERTIES     prints mpv's property-change lines of the comma-separated
                                 properties, the current values first, until the daemon
                                 closes the connection
          watch [NAMES]          print the daemon's event lines as it writes them (NAMES:
                                 comma-separated, as --only takes them, or the daemon's own:
                                 PlaybackBegan, PlaybackEnded, PlaylistEnded, ...) until it
                                 closes the connection
          --timeout SECONDS      wait this long to connect and for the reply (default 10)

        Exit status: 0 the daemon answered "ok":true or "error":"success" (watch, observe: it
        closed the connection, as at its exit); 1 it answered an error, the socket cannot be
        reached, the daemon refused the connection (the reason it gave is printed: too many
        clients, idle), no reply came within the timeout, watch or observe was disconnected
        for not reading fast enough, or the output cannot be written; 141 the output pipe was
        closed; 2 usage error.
        """

    static let replay = """
        usage: media-events replay [--json] [--pace recorded|fast] [--convert] FILE

        Plays FILE back through MediaEvents' replay (nothing is opened or played) and prints
        each replayed event as `log` prints it: the lines `log` printed when FILE was
        recorded, but for their times, so a recording can be read by eye and compared with
        diff. FILE is a recording (JSON Lines with a header, written by MediaEvents'
        EventRecorder) or a `media-events log --json` output or media-daemon log, which reads
        as a recording: each line's source and context (item, pass, sub_item) is an object,
        and the other lines (ItemFailed, libvlc's LogMessage) come back in their place.
          --json                 JSON Lines, as `log --json` prints them (t and ts are
                                 this run's)
          --pace PACE            fast (the default): one event after another; recorded: each
                                 event at its recorded time from the start
          --convert              print FILE as a recording (a header, then one line per
                                 event, call or mark) instead of replaying it: how a log
                                 becomes a test's recording

        Exit status: 0 FILE was replayed (or converted); 1 FILE cannot be read, a line is not
        a recording's or a log's (the message says which line and why), or the output cannot
        be written; 141 the output pipe was closed; 2 usage error.
        """

    static let events = """
        usage: media-events events

        Lists the event names --only and --exclude accept, one per line.
        """

    static let version = "media-events \(ProgramVersion.text)"
}
