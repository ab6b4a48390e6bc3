"""Plays randomly after attacking what a seat could share with the arbiter and the other seats.

At its start, before it connects: renames the arbiter's socket (a socket renamer), listens in
its place (a man in the middle), fills the socket's folder (a folder filler), and leaves a
marker of its seat wherever another seat's bot might look (a colluder: the socket's folder,
/tmp, /dev/shm, its home, its folder, an abstract Unix socket). At its 12th decision it looks
for the markers of other seats and prints one line ``attack: {...}`` with what each attempt
did; ``seen: {...}`` says what it sees of its surroundings (to compare a check with a match).
"""

import json
import os
import random
import socket
import sys

from barbu.bot import Bot
from barbu.runner import run

SEAT = os.environ.get("BARBU_SEAT", "?")
SOCKET = os.environ.get("BARBU_ARBITER", "").removeprefix("unix:")
FOLDER = os.path.dirname(SOCKET)
PLACES = [FOLDER, "/tmp", "/dev/shm", os.environ.get("HOME", "/tmp"), os.getcwd()]
MARKER = "barbu-collude-"


def attempt(action) -> str:
    try:
        action()
        return "done"
    except OSError as e:
        return f"refused: {e.strerror or e}"


def listen_in_place() -> None:
    mitm = socket.socket(socket.AF_UNIX)
    try:
        mitm.bind(SOCKET)
    except OSError:
        mitm.bind(os.path.join(FOLDER, "mitm.sock"))
    mitm.listen()


def fill() -> None:
    with open(os.path.join(FOLDER, "fill"), "wb") as f:
        for _ in range(60):
            f.write(b"\0" * (1 << 20))


def leave_markers() -> dict:
    left = {}
    for place in PLACES:
        path = os.path.join(place, f"{MARKER}{SEAT}")
        left[place] = attempt(lambda path=path: open(path, "w").close())
    abstract = socket.socket(socket.AF_UNIX)
    left["abstract"] = attempt(lambda: abstract.bind(f"\0{MARKER}{SEAT}"))
    globals()["_abstract"] = abstract  # kept open while the bot plays
    return left


def others_seen() -> list[str]:
    seen = []
    for place in PLACES:
        try:
            names = os.listdir(place)
        except OSError:
            continue
        seen += [f"{place}/{n}" for n in names if n.startswith(MARKER) and n != f"{MARKER}{SEAT}"]
    for seat in "0123":
        if seat != SEAT:
            probe = socket.socket(socket.AF_UNIX)
            if attempt(lambda seat=seat, probe=probe: probe.connect(f"\0{MARKER}{seat}")) == "done":
                seen.append(f"abstract:{seat}")
            probe.close()
    return seen


ATTACKS = {
    "rename": attempt(lambda: os.rename(SOCKET, SOCKET + ".moved")),
    "listen": attempt(listen_in_place),
    "fill": attempt(fill),
}
MARKERS = leave_markers()


class AttackBot(Bot):
    name = "attack"

    def __init__(self):
        self.rng = random.Random(int(SEAT) if SEAT.isdigit() else 0)
        self.decisions = 0

    def decide(self, view):
        self.decisions += 1
        if self.decisions == 12:
            report = {**ATTACKS, "markers": MARKERS, "others_seen": others_seen()}
            print("attack: " + json.dumps(report), file=sys.stderr, flush=True)
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    surroundings = {
        "arbiter": os.environ.get("BARBU_ARBITER"),
        "cwd": os.getcwd(),
        "uid": os.getuid(),
        "home": os.environ.get("HOME"),
        "tmpdir": os.environ.get("TMPDIR"),
        "env": sorted(os.environ),
        "root": sorted(os.listdir("/")),
        "run": sorted(os.listdir(FOLDER)) if os.path.isdir(FOLDER) else None,
    }
    print("seen: " + json.dumps(surroundings), file=sys.stderr, flush=True)
    raise SystemExit(run(AttackBot()))
