"""A bot's build step (``build: CMD`` in its entrant.yaml, ``arbiter check-bot --build CMD``): run
once, before the check, in a copy of the bot's folder, as a bot runs (its isolation: no network in
bubblewrap, where the host's toolchains under ``/usr`` and ``/etc/java-*`` are shown; its limits;
a wall-clock limit of its own), with that folder alone writable. What it printed is kept, the
last :data:`OUTPUT_LINES` lines shown to the author. The built copy is then made read-only: the
check and the matches run there.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arbiter.errors import ConfigError
from arbiter.process.bot import BotProcess
from arbiter.process.limits import Limits

DEFAULT_BUILD_SECONDS = 600.0  # wall clock for a build, whatever its CPU limit
OUTPUT_LINES = 200  # of a build's or a bot's output, shown to its author


@dataclass(frozen=True)
class BuildResult:
    command: str
    ok: bool
    detail: str  # how it ended: "exit code 0 in 12.3s", or why not
    seconds: float
    output: str  # its last OUTPUT_LINES lines

    def to_json(self) -> dict[str, object]:
        return {"command": self.command, "ok": self.ok, "detail": self.detail, "output": self.output}

    def render(self) -> str:
        head = f"build: {self.command}: {'ok' if self.ok else 'FAILED'}, {self.detail}"
        if self.ok or not self.output:
            return head
        return f"{head}\nthe build's output (its last {OUTPUT_LINES} lines):\n{self.output}"


def last_lines(path: Path, count: int = OUTPUT_LINES) -> str:
    """The last ``count`` lines of the text file ``path`` (bounded: it reads at most 1 MiB)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - (1 << 20)))
            data = f.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-count:])


def copy_for_build(source: Path, destination: Path) -> None:
    """``source``'s files at ``destination``, writable by whoever the build runs as (a root
    arbiter's sandboxed build runs as a uid of its own); its parents are the arbiter's, private."""
    shutil.copytree(source, destination, symlinks=True)
    _chmod_tree(destination, stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO, 0o666)


def seal(folder: Path) -> None:
    """The built folder read-only for everyone, readable (and its programs runnable) by any bot."""
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555, follow_symlinks=False)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o555 if os.stat(path).st_mode & 0o111 else 0o444)
    os.chmod(folder, 0o555)


def _chmod_tree(folder: Path, dir_mode: int, file_mode: int) -> None:
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(root, name), dir_mode)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                executable = os.stat(path).st_mode & 0o111
                os.chmod(path, file_mode | (0o111 if executable else 0))
    os.chmod(folder, dir_mode)


def run_build(
    command: str, folder: Path, *, isolation: str, limits: Limits, seconds: float = DEFAULT_BUILD_SECONDS
) -> BuildResult:
    """Run the build ``command`` in ``folder`` (writable) as a bot of ``isolation`` and ``limits``
    runs, for at most ``seconds``; what it came to, with the end of its output."""
    output = Path(tempfile.mkstemp(prefix="barbu-build-", suffix=".out")[1])
    started = time.monotonic()
    try:
        env = {"BARBU_TOKEN": f"build-{secrets.token_hex(8)}"}  # what finds its processes, as a bot's
        try:
            process = BotProcess(
                command, env, output, cwd=str(folder), limits=limits, isolation=isolation, writable=True
            )
        except ConfigError as e:
            return BuildResult(command, False, str(e), 0.0, "")
        try:
            while process.exit_code() is None and time.monotonic() - started < seconds:
                time.sleep(0.1)
            timed_out = process.exit_code() is None
        finally:
            process.kill()
        took = time.monotonic() - started
        if timed_out:
            detail = f"stopped after {seconds:g}s (the build's time limit)"
        elif process.exit_code() == 0:
            detail = f"exit code 0 in {took:.1f}s"
        else:
            detail = process.describe_exit()
        ok = not timed_out and process.exit_code() == 0
        return BuildResult(command, ok, detail, took, last_lines(output))
    finally:
        output.unlink(missing_ok=True)


def build_copy(
    source: Path,
    destination: Path,
    command: str,
    *,
    isolation: str,
    limits: Limits,
    seconds: float = DEFAULT_BUILD_SECONDS,
) -> BuildResult:
    """``source`` copied to ``destination`` (which must not exist) and built there with ``command``
    (:func:`run_build`); a build that passed leaves the copy sealed read-only (:func:`seal`)."""
    copy_for_build(source, destination)
    result = run_build(command, destination, isolation=isolation, limits=limits, seconds=seconds)
    if result.ok:
        seal(destination)
    return result


def remove_built(folder: Path) -> None:
    """Remove ``folder`` and a sealed build inside it (read-only folders made writable first)."""
    for root, dirs, _files in os.walk(folder):
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
    shutil.rmtree(folder, ignore_errors=True)
