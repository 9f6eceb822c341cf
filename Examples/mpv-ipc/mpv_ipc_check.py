#!/usr/bin/env python3
"""A client of mpv's JSON IPC, written against mpv's documentation (DOCS/man/ipc.rst and
input.rst) with mpv's command, property and event names only. It drives a player through a
session and checks what mpv promises; it passes against mpv itself
(mpv --idle --ao=null --vo=null --input-ipc-server=SOCKET) and against
media-daemon --control SOCKET.

usage: mpv_ipc_check.py SOCKET LONG_MEDIA BROKEN_FILE OTHER_MEDIA

LONG_MEDIA and OTHER_MEDIA play for at least 20 s; BROKEN_FILE is not media. Prints one line
per check; exit status 0 when every check passed, 1 at the first that failed (saying why), 2
on a usage error. Every wait has a deadline.
"""

import collections
import json
import select
import socket
import sys
import time

TIMEOUT = 20.0


class Failed(Exception):
    pass


class MpvClient:
    """One IPC connection: commands with request ids, events kept in order until taken."""

    def __init__(self, path, timeout):
        deadline = time.monotonic() + timeout
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(path)
                break
            except OSError as error:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise Failed(f"cannot connect to {path}: {error}")
                time.sleep(0.05)
        self.buffer = b""
        self.events = collections.deque()
        self.next_id = 1
        self.closed = False

    def _line(self, deadline):
        """The next line as an object; None at the deadline or when the player closed."""
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return None
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                continue
            chunk = self.sock.recv(65536)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def command(self, *args):
        """Sends {"command": args, "request_id": N}; returns the reply (events before it kept)."""
        request_id = self.next_id
        self.next_id += 1
        message = json.dumps({"command": list(args), "request_id": request_id}) + "\n"
        self.sock.sendall(message.encode())
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._line(deadline)
            if message is None:
                raise Failed(f"no reply to {list(args)} (closed: {self.closed})")
            if "event" in message:
                self.events.append(message)
            elif message.get("request_id") == request_id:
                return message

    def ok(self, *args):
        """A command that must succeed; returns its data."""
        reply = self.command(*args)
        if reply.get("error") != "success":
            raise Failed(f"{list(args)} answered {reply}")
        return reply.get("data")

    def wait_event(self, event_name, timeout=TIMEOUT, **fields):
        """The first event `name` with these fields, events before it dropped."""
        deadline = time.monotonic() + timeout
        while True:
            while self.events:
                event = self.events.popleft()
                if event.get("event") == event_name and all(event.get(k) == v for k, v in fields.items()):
                    return event
            message = self._line(deadline)
            if message is None:
                raise Failed(f"no {event_name} event with {fields} (closed: {self.closed})")
            if "event" in message:
                self.events.append(message)

    def wait_eof(self, timeout):
        deadline = time.monotonic() + timeout
        while not self.closed:
            if self._line(deadline) is None and not self.closed:
                return False
        return True


def check(condition, what):
    if not condition:
        raise Failed(what)
    print(f"ok: {what}", flush=True)


def session(path, long_media, broken, other):
    mpv = MpvClient(path, TIMEOUT)
    # What a client written for mpv asks first.
    properties = mpv.ok("get_property", "property-list")
    wanted = ["pause", "time-pos", "duration", "volume", "playlist", "playlist-count", "playlist-pos", "idle-active"]
    check(all(name in properties for name in wanted), f"property-list has {', '.join(wanted)}")
    check(isinstance(mpv.ok("get_version"), int), "get_version answers a number")
    check(mpv.ok("get_property", "idle-active") is True, "idle before anything is loaded")
    check(mpv.command("get_property", "no-such-property")["error"] == "property not found",
          "an unknown property is 'property not found'")
    check(mpv.command("no-such-command")["error"] == "invalid parameter",
          "an unknown command is 'invalid parameter'")

    mpv.ok("observe_property", 1, "pause")
    check(mpv.wait_event("property-change", id=1, name="pause").get("data") is False,
          "observe_property sends the current value of pause at once")

    first = mpv.ok("loadfile", long_media)
    first_id = first["playlist_entry_id"] if isinstance(first, dict) else None
    started = mpv.wait_event("start-file")
    check(first_id is None or started["playlist_entry_id"] == first_id,
          "loadfile starts the file: start-file with its playlist_entry_id")
    mpv.wait_event("file-loaded")
    check(mpv.ok("get_property", "idle-active") is False, "not idle while a file plays")
    mpv.ok("loadfile", broken, "append")
    mpv.ok("loadfile", other, "append")
    check(mpv.ok("get_property", "playlist-count") == 3, "append adds to the playlist: 3 entries")
    playlist = mpv.ok("get_property", "playlist")
    check([entry["filename"] for entry in playlist] == [long_media, broken, other],
          "playlist lists the filenames as given")
    check(playlist[0].get("current") is True and all("id" in entry for entry in playlist),
          "the first entry is current; every entry has an id")
    check(mpv.ok("get_property", "playlist-pos") == 0, "playlist-pos is 0")
    check(mpv.ok("get_property", "filename") == long_media.rsplit("/", 1)[-1], "filename is the path stripped")
    duration = mpv.ok("get_property", "duration")
    check(isinstance(duration, (int, float)) and duration >= 20, f"duration in seconds ({duration})")

    mpv.ok("cycle", "pause")
    check(mpv.wait_event("property-change", id=1, name="pause").get("data") is True, "cycle pause pauses")
    mpv.ok("cycle", "pause")
    check(mpv.wait_event("property-change", id=1, name="pause").get("data") is False, "cycle pause resumes")

    mpv.ok("set_property", "volume", 50)
    check(mpv.ok("get_property", "volume") == 50, "set_property volume 50: volume reads 50")
    check(mpv.command("set_property", "volume", "loud")["error"] != "success", "a volume that is no number is refused")

    mpv.ok("seek", 10, "absolute")
    mpv.wait_event("seek")
    mpv.wait_event("playback-restart")
    position = mpv.ok("get_property", "time-pos")
    check(9.5 <= position < 15, f"seek 10 absolute: time-pos {position:.2f} after playback-restart")
    mpv.ok("seek", -5)
    mpv.wait_event("playback-restart")
    position = mpv.ok("get_property", "time-pos")
    check(4.5 <= position < 10, f"seek -5 (relative): time-pos {position:.2f}")

    mpv.ok("playlist-next")
    ended = mpv.wait_event("end-file", playlist_entry_id=playlist[0]["id"])
    check(ended["reason"] == "stop", "playlist-next ends the first file with reason stop")
    failed = mpv.wait_event("end-file", playlist_entry_id=playlist[1]["id"])
    check(failed["reason"] == "error" and isinstance(failed.get("file_error"), str),
          f"the broken file ends with reason error, file_error '{failed.get('file_error')}'")
    mpv.wait_event("start-file", playlist_entry_id=playlist[2]["id"])
    mpv.wait_event("file-loaded")
    check(mpv.ok("get_property", "playlist-pos") == 2, "the next entry plays: playlist-pos 2")
    check(mpv.command("playlist-next")["error"] == "error running command",
          "playlist-next at the last entry is an error and changes nothing")

    mpv.ok("playlist-remove", 0)
    check(mpv.ok("get_property", "playlist-count") == 2, "playlist-remove 0: 2 entries left")

    mpv.command("quit")
    check(mpv.wait_eof(TIMEOUT), "quit: the player closes the connection")


def main():
    if len(sys.argv) != 5:
        print("usage: mpv_ipc_check.py SOCKET LONG_MEDIA BROKEN_FILE OTHER_MEDIA", file=sys.stderr)
        return 2
    try:
        session(*sys.argv[1:])
    except Failed as failure:
        print(f"FAILED: {failure}", flush=True)
        return 1
    print("mpv_ipc_check: every check passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
