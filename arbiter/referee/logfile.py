"""Match log files: written atomically and exclusively, read back within bounds.

A log is written to ``NAME.part`` and renamed to ``NAME`` when the match ends, so a file with
the final name is always a finished match (complete or aborted); a crash leaves only a
``.part`` file, which still verifies as far as it goes.

The writer holds a lock on its ``.part`` for as long as it writes: a second writer of the same
log is refused (its message names the file) instead of interleaving lines with the first, and a
``.part`` left by a killed writer (no lock) is simply started over. Output goes only to a regular
file or a new path (:func:`arbiter.files.output_path`), and a final log that exists is never
replaced (it is somebody's record) unless the writer is made with ``replace=True``. A log that
cannot be written (a full disk) raises LogFileError naming it, and leaves no ``.part`` behind:
the failure is the arbiter's, never a player's.

Reading is bounded (:data:`MAX_LOG_BYTES`, :data:`MAX_LINE`, :data:`MAX_DEPTH`): a device, a pipe
or a hostile file ends in one clear error, never in unbounded memory or a parser's recursion.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from arbiter.errors import LogFileError
from arbiter.files import human_size, kind_of, lock_exclusive, output_path, read_text
from arbiter.text import printable

MAX_LOG_BYTES = 64 << 20  # a real match log is well under 1 MiB
MAX_LINE = 1 << 20  # bytes (characters) of one line
MAX_DEPTH = 32  # nesting of JSON arrays and objects in one line (a log needs 3)


class AtomicLogFile:
    """A line sink for ``MatchLogWriter`` that becomes visible under its name only on close."""

    def __init__(self, path: str | os.PathLike[str], *, replace: bool = False):
        """``replace``: commit over a regular file of that name (else such a file is left as
        it is, and the commit refused)."""
        self.path = output_path(path, "match log")
        self.partial = self.path.with_name(self.path.name + ".part")
        self.replace = replace
        shown = printable(str(self.partial))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _refuse_odd_partial(self.partial)
            fd = os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except OSError as e:
            raise LogFileError(f"cannot write match log {shown}: {e.strerror}") from None
        try:
            locked = lock_exclusive(fd)
        except OSError as e:
            raise LogFileError(f"cannot lock match log {shown}: {e.strerror}") from None
        if not locked:
            raise LogFileError(f"another process is writing match log {shown}; not writing it twice")
        os.ftruncate(fd, 0)  # a killed writer's leftover (nobody holds it any more): start over
        self._file = os.fdopen(fd, "w", encoding="utf-8")

    @property
    def closed(self) -> bool:
        return self._file.closed

    def __call__(self, line: str) -> None:
        try:
            self._file.write(line + "\n")
        except OSError as e:
            self._failed(e)

    def _failed(self, error: OSError) -> None:
        """The log cannot be written (a full disk, an I/O error): nothing of it is kept."""
        self.discard()
        raise LogFileError(f"cannot write match log {printable(str(self.path))}: {error.strerror or error}") from None

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError as e:
            self._failed(e)

    def commit(self) -> Path:
        """Flush to disk and move the file to its final name (still holding the lock)."""
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            self._failed(e)
        try:
            if self.replace:
                output_path(self.path, "match log")  # still nothing or a regular file
                os.replace(self.partial, self.path)
            else:
                _link_new(self.partial, self.path)
        except BaseException:
            self.discard()
            raise
        self._file.close()
        return self.path

    def discard(self) -> None:
        if not self._file.closed:
            self.partial.unlink(missing_ok=True)  # while still holding the lock
            with contextlib.suppress(OSError):  # what the buffer still held cannot be written either: it is gone
                self._file.close()


def _refuse_odd_partial(partial: Path) -> None:
    """A leftover ``.part`` link is removed; anything but a regular file there is refused (never
    written through). A regular one is kept: whoever holds its lock still writes it."""
    try:
        st = os.lstat(partial)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        partial.unlink(missing_ok=True)
    elif not stat.S_ISREG(st.st_mode):
        raise LogFileError(f"match log: {printable(str(partial))} is {kind_of(st.st_mode)}; remove it first")


def _link_new(partial: Path, final: Path) -> None:
    """Give ``partial`` the name ``final`` unless that name is taken (then LogFileError)."""
    try:
        os.link(partial, final)
    except FileExistsError:
        raise LogFileError(
            f"match log {printable(str(final))} already exists and was not written by this run; it is left as it is"
        ) from None
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(final):  # a file system without hard links: check, then rename
            raise LogFileError(
                f"match log {printable(str(final))} already exists and was not written by this run; it is left as it is"
            ) from None
        os.rename(partial, final)
        return
    partial.unlink()


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def json_too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON text nests arrays and objects more than ``limit`` deep (outside strings)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for ch in _BRACKET.findall(_STRING.sub('""', text)):
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(0, depth - 1)
    return False


def line_problem(text: str) -> str | None:
    """Why one line of a log or a deal file cannot be parsed safely, or None."""
    if len(text) > MAX_LINE:
        return f"a line longer than {human_size(MAX_LINE)}"
    if "\0" in text:  # never in JSON text: a binary file such as /proc/self/environ
        return "a NUL byte (binary data)"
    if json_too_deep(text):
        return f"a line nested more than {MAX_DEPTH} levels deep"
    return None


def read_log_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """The lines of a log file, keeping line ends (the verifier needs them to spot a cut)."""
    shown = printable(os.fspath(path))
    text = read_text(path, MAX_LOG_BYTES, "match log", LogFileError)
    lines = io.StringIO(text, newline="").readlines()
    for number, line in enumerate(lines, start=1):
        problem = line_problem(line)
        if problem:
            raise LogFileError(f"{shown}:{number}: {problem}: not a match log")
    return iter(lines)
