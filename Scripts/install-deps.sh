#!/usr/bin/env bash
# Installs what MediaEvents needs on Debian 12 when it is missing: libvlc and its base plugins
# (build and playback), libvlc-bin (its trigger keeps libvlc's plugin cache, plugins.dat:
# without it every libvlc_new opens each of the ~350 plugins to read what it offers, which
# under ThreadSanitizer took two thirds of the suite's CPU; libvlc5 only recommends it), sox (the tests generate Ogg/FLAC/MP3 media with it), ffmpeg (the
# example tests make a Matroska video with tagged tracks, and compare the probe with its
# ffprobe), valgrind (leak check), python3-jsonschema (the tests validate the programs'
# JSON output against Schemas/ with it), mpv (the example tests run the same mpv IPC client
# script against mpv and against media-daemon), libsystemd-dev (sd-bus: media-daemon --mpris),
# and playerctl and dbus (the MPRIS tests run a bus of their own and drive the daemon with
# playerctl, dbus-send and dbus-monitor), libmosquitto-dev (media-daemon --mqtt), and mosquitto
# and mosquitto-clients (the MQTT tests run a broker of their own and use mosquitto_sub and
# mosquitto_pub as clients), and gdb (the threads of a program that wedged in a test, or of a
# core dump). Runs apt-get only when a package is absent.
set -euo pipefail
packages=(libvlc-dev libvlc-bin vlc-plugin-base sox libsox-fmt-all ffmpeg valgrind python3-jsonschema mpv
    libsystemd-dev playerctl dbus libmosquitto-dev mosquitto mosquitto-clients gdb)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
