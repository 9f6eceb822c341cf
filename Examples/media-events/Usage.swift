/// The help text of `media-events`.
let usage = """
    usage: media-events log [options] [MEDIA...]
           media-events probe [--json] [--timeout SECONDS] MEDIA...
           media-events events
           media-events help

    log    Plays each MEDIA (a path or URL; the bundled sample when none is given) headless and
           prints every event of the player and its media in libvlc's delivery order.
      --json                 JSON Lines: {"seq","t","source","event","item",payload fields...}
      --only NAMES           print only these events (comma-separated libvlc names; the
                             prefix may be left out: EndReached = MediaPlayerEndReached)
      --exclude NAMES        leave these events out
      --no-progress          leave out TimeChanged, PositionChanged, Buffering, AudioVolume
      --dispatch MODE        where handlers run: inline (libvlc's thread, default),
                             queue-async or queue-sync (a private serial queue)
      --limit SECONDS        stop each media after this much time (counts as played if
                             it was playing by then)
      --open-timeout SECONDS a media not playing after this long fails (default 30)
      --repeat N             play the whole list N times
      --audio                real audio output (default: none, and no real-time pacing)
      --summary              at the end, counts per event, failures and wall time on stderr

    probe  Parses each MEDIA without playing it and prints its meta, duration, tracks and
           sub-items (a playlist's entries).
      --json                 one JSON object per media
      --timeout SECONDS      give up parsing after this long (default 10)

    events Lists the event names --only and --exclude accept.

    Exit status of log: 0 every media played to its end (or to --limit); 1 a media failed:
    libvlc reported EncounteredError (missing or empty file, unsupported URL scheme,
    connection refused) or it ended without any audio or video track (random bytes);
    2 usage error. Each failure is one line on stderr: "media-events: MEDIA: what happened".
    A stream that is cut short (a server closing mid-stream, a truncated file) ends with
    EndReached in libvlc and counts as played.
    Exit status of probe: 0 parsed; 1 parsing failed or timed out; 2 usage error.
    """
