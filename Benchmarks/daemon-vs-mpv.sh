#!/usr/bin/env bash
# media-daemon beside mpv: one command. Installs what is missing (Scripts/install-deps.sh: mpv,
# sox, libvlc), builds media-daemon and media-events in release, makes a playlist of 20 WAVs
# (1 to 2 s each) in a private temporary directory, and has Benchmarks/daemon_vs_mpv.py run both
# players on it, paced with no sound card. Prints a Markdown table on stdout (progress on
# stderr); exit status 0, non-zero when a step failed (the message says which).
#
# usage: Benchmarks/daemon-vs-mpv.sh [--rounds R] [--starts S] [--requests N]
#   --rounds R    times each player plays the playlist (default 2)
#   --starts S    start-ups of each on a one-entry playlist, for the start-up time and the
#                 round trips (default 5)
#   --requests N  get_property round trips per start-up (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/install-deps.sh
echo "building media-daemon and media-events (release)" >&2
swift build -c release --product media-daemon >&2
swift build -c release --product media-events >&2
bin=$(swift build -c release --show-bin-path)

work=$(mktemp -d "${TMPDIR:-/tmp}/daemon-vs-mpv.XXXXXX")
trap 'rm -rf "$work"' EXIT

entries=20
seconds=0
: >"$work/playlist.m3u"
for i in $(seq 1 "$entries"); do
    # 1.00 to 1.95 s, in steps of 50 ms: every length differs.
    length=$(printf '%d.%02d' $(((i - 1) * 5 / 100 + 1)) $(((i - 1) * 5 % 100)))
    sox -q -n -r 44100 -c 2 -b 16 "$work/entry$i.wav" synth "$length" sine $((200 + 20 * i)) vol 0.3
    echo "$work/entry$i.wav" >>"$work/playlist.m3u"
    seconds=$(python3 -c "print($seconds + $length)")
done
sox -q -n -r 44100 -c 2 -b 16 "$work/short.wav" synth 8 sine 440 vol 0.3
echo "$work/short.wav" >"$work/short.m3u"

python3 Benchmarks/daemon_vs_mpv.py --daemon "$bin/media-daemon" --mpv "$(command -v mpv)" \
    --playlist "$work/playlist.m3u" --short "$work/short.m3u" --seconds "$seconds" \
    --entries "$entries" --workdir "$work" "$@"
