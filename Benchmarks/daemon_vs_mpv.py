#!/usr/bin/env python3
"""media-daemon beside mpv on the same playlist, both paced with no sound card, measured by the
same client over each one's JSON IPC socket (mpv's protocol, which both speak).

usage: daemon_vs_mpv.py --daemon PATH --mpv PATH --playlist FILE --seconds S --workdir DIR
                        [--rounds R] [--requests N]

Run by Benchmarks/daemon-vs-mpv.sh, which builds media-daemon, installs mpv and makes the
playlist. Per round each player plays the playlist once (mpv, then the daemon); then each
starts R more times on a one-entry playlist for the start-up time and the round trips. Prints
a Markdown report on stdout; exit status 0, 1 when a run failed (saying why), 2 on a usage
error. Every wait has a deadline.
"""

import argparse
import json
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import time


class Failed(Exception):
    pass


class Client:
    """One IPC connection; every line is stamped with time.monotonic() as it is read."""

    def __init__(self, path, deadline):
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(path)
                break
            except OSError as error:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise Failed(f"cannot connect to {path}: {error}")
                time.sleep(0.001)
        self.buffer = b""
        self.lines = []  # (arrival, message) not taken yet
        self.closed = False
        self.next_id = 1

    def _read(self, deadline):
        """Reads what is there (waiting until deadline for something); stamps complete lines."""
        left = deadline - time.monotonic()
        if left <= 0 or self.closed:
            return False
        ready, _, _ = select.select([self.sock], [], [], left)
        if not ready:
            return False
        chunk = self.sock.recv(65536)
        now = time.monotonic()
        if not chunk:
            self.closed = True
            return False
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.strip():
                self.lines.append((now, json.loads(line)))
        return True

    def request(self, *args, timeout=10.0):
        """Sends one request; returns (reply, seconds from send to reply read)."""
        request_id = self.next_id
        self.next_id += 1
        message = (json.dumps({"command": list(args), "request_id": request_id}) + "\n").encode()
        sent = time.monotonic()
        self.sock.sendall(message)
        deadline = sent + timeout
        while True:
            for index, (arrival, line) in enumerate(self.lines):
                if "event" not in line and line.get("request_id") == request_id:
                    del self.lines[index]
                    return line, arrival - sent
            if not self._read(deadline) and (self.closed or time.monotonic() > deadline):
                raise Failed(f"no reply to {list(args)} (closed: {self.closed})")

    def event(self, names, deadline):
        """The next event among names, as (arrival, event); None when closed or at the deadline."""
        while True:
            while self.lines:
                arrival, line = self.lines.pop(0)
                if line.get("event") in names:
                    return arrival, line
            if not self._read(deadline) and (self.closed or time.monotonic() > deadline):
                return None


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def command_line(player, args, playlist, sock):
    if player == "mpv":
        return [args.mpv, "--no-config", "--no-terminal", "--ao=null", "--no-video", "--idle=no",
                f"--input-ipc-server={sock}", f"--playlist={playlist}"]
    return [args.daemon, "--exit-at-end", "--control", sock, "--log", os.path.join(args.workdir, "daemon.log"),
            "--playlist", playlist]


def run(player, args, playlist, index, requests):
    """Starts the player on playlist; returns what the client saw and the process's rusage."""
    sock = os.path.join(args.workdir, f"{player}-{index}.sock")
    started = time.monotonic()
    process = subprocess.Popen(command_line(player, args, playlist, sock), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = started + args.seconds + 60
        client = Client(sock, started + 20)
        # The daemon sends mpv's events to a connection from its first request of mpv's form;
        # when time-pos is known already, the first start has been missed: the run is not counted
        # for the start-up time. The playlist runs count only gaps, which come later.
        reply, _ = client.request("get_property", "time-pos")
        missed_start = reply.get("error") == "success"
        first_playing = None
        if requests > 0:
            # A start-up run (one entry): a start missed all the same shows as no
            # playback-restart within a few seconds.
            first = client.event({"playback-restart"}, started + 4)
            if first is not None and not missed_start:
                first_playing = first[0] - started
        round_trips = []
        for _ in range(requests):
            reply, seconds = client.request("get_property", "playlist-pos")
            if reply.get("error") != "success":
                raise Failed(f"{player}: get_property playlist-pos answered {reply}")
            round_trips.append(seconds)
        if requests > 0:
            client.sock.sendall(b'{"command":["quit"]}\n')
            while client.event(set(), deadline) is not None:
                pass
        # Gaps: from an entry's end-file to the next entry's start-file and playback-restart.
        gaps_start, gaps_restart, ended_at, ends = [], [], None, 0
        while True:
            got = client.event({"end-file", "start-file", "playback-restart"}, deadline)
            if got is None:
                break
            arrival, event = got
            if event["event"] == "end-file":
                if event.get("reason") != "eof":
                    raise Failed(f"{player}: an entry ended with {event}")
                ends += 1
                ended_at = arrival
            elif ended_at is not None and event["event"] == "start-file":
                gaps_start.append(arrival - ended_at)
            elif ended_at is not None and event["event"] == "playback-restart":
                gaps_restart.append(arrival - ended_at)
                ended_at = None
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise Failed(f"{player} exited with {process.returncode}: {process.stderr.read().decode()[-500:]}")
        return {
            "first_playing": first_playing, "round_trips": round_trips, "gaps_start": gaps_start,
            "gaps_restart": gaps_restart, "ends": ends, "cpu": usage.ru_utime + usage.ru_stime,
            "maxrss_kib": usage.ru_maxrss,
        }
    finally:
        if process.poll() is None and process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/loadavg") as loadavg:
        load = " ".join(loadavg.read().split()[:3])
    return f"{os.cpu_count()} cores, {model}", load


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", required=True)
    parser.add_argument("--mpv", required=True)
    parser.add_argument("--playlist", required=True)
    parser.add_argument("--short", required=True, help="a one-entry playlist for the start-up runs")
    parser.add_argument("--seconds", type=float, required=True, help="the playlist's length")
    parser.add_argument("--entries", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()

    cpu, load_before = machine()
    results = {"mpv": [], "daemon": []}
    starts = {"mpv": [], "daemon": []}
    try:
        for index in range(args.rounds):
            for player in ("mpv", "daemon"):
                result = run(player, args, args.playlist, index, 0)
                if result["ends"] != args.entries or len(result["gaps_restart"]) != args.entries - 1:
                    raise Failed(f"{player}: {result['ends']} entries ended, {len(result['gaps_restart'])} gaps "
                                 f"(expected {args.entries}, {args.entries - 1})")
                results[player].append(result)
                print(f"round {index + 1}: {player} played the playlist", file=sys.stderr, flush=True)
        for index in range(args.starts):
            for player in ("mpv", "daemon"):
                starts[player].append(run(player, args, args.short, 100 + index, args.requests))
        print(f"{args.starts} starts each with {args.requests} round trips done", file=sys.stderr, flush=True)
    except Failed as failure:
        print(f"daemon_vs_mpv: FAILED: {failure}", file=sys.stderr)
        return 1
    _, load_after = machine()

    minutes = args.seconds / 60.0

    def figures(player):
        gaps_start = [g for r in results[player] for g in r["gaps_start"]]
        gaps_restart = [g for r in results[player] for g in r["gaps_restart"]]
        trips = [t for r in starts[player] for t in r["round_trips"]]
        firsts = [r["first_playing"] for r in starts[player] if r["first_playing"] is not None]
        return [
            ("gap end-file → playback-restart, p50 (ms)", statistics.median(gaps_restart) * 1e3),
            ("gap end-file → playback-restart, max (ms)", max(gaps_restart) * 1e3),
            ("gap end-file → start-file, p50 (ms)", statistics.median(gaps_start) * 1e3),
            ("gap end-file → start-file, max (ms)", max(gaps_start) * 1e3),
            ("CPU per minute of playback (s)", statistics.median(r["cpu"] for r in results[player]) / minutes),
            ("peak RSS (MiB)", max(r["maxrss_kib"] for r in results[player]) / 1024.0),
            ("get_property round trip, p50 (µs)", percentile(trips, 0.50) * 1e6),
            ("get_property round trip, p99 (µs)", percentile(trips, 0.99) * 1e6),
            (f"start to first playback-restart, median of {len(firsts)} (ms)",
             statistics.median(firsts) * 1e3 if firsts else float("nan")),
        ]

    mpv, daemon = figures("mpv"), figures("daemon")
    print("# media-daemon beside mpv\n")
    print(f"Machine: {cpu}; load average {load_before} at the start, {load_after} at the end. "
          f"Playlist: {args.entries} WAVs, {args.seconds:.1f} s in all, played {args.rounds} time(s) by each, "
          f"paced with no sound card (mpv `--ao=null --no-video`; media-daemon's default). "
          f"Start-up and round trips: {args.starts} starts each on one entry, {args.requests} "
          f"`get_property playlist-pos` per start. Every time is taken by the same client, "
          f"as each line arrives on the player's IPC socket.\n")
    print("| | mpv | media-daemon | daemon / mpv |")
    print("|---|---:|---:|---:|")
    for (name, m), (_, d) in zip(mpv, daemon):
        # mpv's start-file often arrives in the same read as the end-file before it: 0.
        ratio = f"{d / m:.2f}" if m > 0 else "—"
        print(f"| {name} | {m:.3g} | {d:.3g} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
