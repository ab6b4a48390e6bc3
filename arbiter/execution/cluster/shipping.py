"""What travels between the coordinator and a cluster's workers, and what both must share.

Plain, picklable values: an entrant's command as a worker writes it (:class:`RemoteBot`, its
words pointing into the entrant's bundle), a match's job and its result. Both sides compute
:func:`project_identity` and :func:`program_version` to check that a worker plays with the
coordinator's Barbu Arena and programs.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from arbiter.errors import ConfigError
from arbiter.execution import bundle as bundles
from arbiter.model import BotSpec, MatchOutcome, MatchTask
from arbiter.process.command import INTERPRETERS, BotCommand
from arbiter.text import printable

RESOURCE = "arena"  # the Dask worker resource a match takes one unit of
VERSION_SECONDS = 10.0


# ---- what travels: plain, picklable values ----------------------------------------------------
@dataclass(frozen=True)
class Word:
    """One word of a bot's command line as a worker writes it."""

    text: str
    kind: str = "text"  # "text": as is; "file": a path inside the bundle; "python": the worker's interpreter


@dataclass(frozen=True)
class Program:
    """A program a bot needs that its bundle does not hold: the same path and version on a worker."""

    name: str  # as the command names it
    path: str  # where the coordinator finds it
    version: str  # its --version line, or sha256:<digest> of the file


@dataclass(frozen=True)
class RemoteBot:
    name: str
    argv: tuple[Word, ...]
    bundle: str  # the digest of the entrant's folder
    program: Program | None = None


@dataclass(frozen=True)
class ClusterJob:
    task: MatchTask  # as the local pool gets it (its bots and log path are the coordinator's)
    bots: tuple[RemoteBot, ...]  # seat order
    project: str  # the coordinator's project_identity()
    run: str  # this run's id: the bundles' Dask variables are named after it


@dataclass(frozen=True)
class ClusterResult:
    outcome: MatchOutcome
    log: bytes  # the match log, zlib
    outputs: tuple[bytes, ...]  # each seat's captured output, zlib
    worker: str  # the Dask worker's address
    overhead: float  # seconds of the task spent beyond the match (bundles, compressing)


def variable_name(digest: str, run: str) -> str:
    return f"barbu-bundle-{digest}-{run}"


# ---- both sides: what a worker must share with the coordinator --------------------------------
@functools.cache
def project_identity() -> str:
    """This installation of Barbu Arena: its version, the Python version, and a digest of the
    sources that decide a match: the SDK (the rules engine, the match log, the bots' library) and
    the referee. Cached: ``project_identity.cache_clear()`` reads the sources again."""
    import barbu

    import arbiter.referee

    h = hashlib.sha256()
    for package in (barbu, arbiter.referee):
        base = Path(package.__file__ or "").parent
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            h.update(path.relative_to(base).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    try:
        version = importlib.metadata.version("barbu-arena")
    except importlib.metadata.PackageNotFoundError:
        version = "(not installed)"
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return f"Barbu Arena {version} (sources {h.hexdigest()[:12]}) on Python {python}"


def program_version(path: str) -> str:
    """What identifies a system program's version: an interpreter's ``--version`` line, else the
    file's SHA-256."""
    if INTERPRETERS.match(os.path.basename(path)):
        try:
            r = subprocess.run(
                [path, "--version"], capture_output=True, timeout=VERSION_SECONDS, stdin=subprocess.DEVNULL
            )
            lines = [line.strip() for line in (r.stdout + r.stderr).decode("utf-8", "replace").splitlines()]
            first = next((line for line in lines if line), "")
            if r.returncode == 0 and first:
                return first[:200]
        except (OSError, subprocess.SubprocessError):
            pass
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        return f"unreadable ({e.strerror})"
    return "sha256:" + h.hexdigest()[:16]


# ---- the coordinator: entrants to bundles -----------------------------------------------------
def entrant_bots(entrants: Iterable[BotSpec]) -> tuple[dict[str, RemoteBot], dict[str, bundles.Bundle]]:
    """Each entrant's command as a worker runs it, and the bundles of their folders by digest."""
    bots: dict[str, RemoteBot] = {}
    by_folder: dict[str, bundles.Bundle] = {}
    for e in (e for e in entrants if not e.remote):  # remote ones play on the coordinator
        try:
            command = BotCommand.parse(e.command)
        except ValueError as error:
            raise ConfigError(f"entrant {e.name!r} has no command to run on a cluster worker: {error}") from None
        argv, i = list(command.launch_words), command.at
        cwd = Path(e.cwd or ".").resolve()
        program = argv[i]
        scripts = command.scripts
        if scripts:
            folder = (cwd / scripts[0]).resolve().parent
        elif "/" in program:
            folder = (cwd / program).resolve().parent
        else:
            folder = cwd
        pack = by_folder.get(str(folder))
        if pack is None:
            pack = by_folder[str(folder)] = bundles.pack(folder, e.name)
        words: list[Word] = [Word(w) for w in argv[:i]]
        needs: Program | None = None
        if program == sys.executable:
            words.append(Word("python", "python"))
        elif (inside := _inside(cwd / program, folder)) is not None and "/" in program:
            words.append(Word(inside, "file"))
        else:
            found = program if "/" in program else shutil.which(program)
            if found is None:
                raise ConfigError(f"entrant {e.name!r}: program {printable(program)!r} is not on PATH")
            found = os.path.abspath(found)
            needs = Program(program, found, program_version(found))
            words.append(Word(program))
        for w in argv[i + 1 :]:
            candidate = cwd / w
            if w.startswith("-") or os.path.isabs(w) or not os.path.lexists(candidate):
                words.append(Word(w))
                continue
            inside = _inside(candidate, folder)
            if inside is None:
                raise ConfigError(
                    f"entrant {e.name!r}: its command names {printable(w)}, outside its folder {printable(str(folder))}; "
                    "only that folder travels to the cluster's workers: move the file into it"
                )
            words.append(Word(inside, "file"))
        bots[e.name] = RemoteBot(e.name, tuple(words), pack.digest, needs)
    return bots, {b.digest: b for b in by_folder.values()}


def _inside(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (POSIX), or None if it is not inside it."""
    resolved = path.resolve()
    if resolved == folder:
        return "."
    if folder not in resolved.parents:
        return None
    return resolved.relative_to(folder).as_posix()
