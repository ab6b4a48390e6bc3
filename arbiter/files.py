"""The files a user names: written whole or not at all, only where a file belongs; read within bounds.

**Writing.** Every command that writes a file (``selfplay --out``, ``match --log``, ``replay --html``,
``report --html``, ``check-bot --logs``, a tournament's logs) asks :func:`output_path` (or
:func:`output_folder`) first: output goes only to a regular file or to a new path. An empty
name, a folder, a device, a pipe or a socket is refused with one line, before any work is done
(an atomic rename over ``/dev/full`` would otherwise replace the device node with a file). A page
or a report is written to ``NAME.part`` beside its target and renamed over it, so a reader never
sees half a file and a failed write leaves the old one in place.

**Reading.** :func:`read_text` (on :func:`read_bounded`) reads at most a given number of bytes, whatever the file is: a
pipe or a device (``/dev/zero``) ends in a clear error instead of growing without limit, and a
named pipe nobody writes to does not block the open.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

from arbiter.errors import ArbiterError, ConfigError
from arbiter.text import printable


class FileTooLarge(Exception):
    """A file (or a pipe, or a device) holds more than the reader accepts."""

    def __init__(self, path: str | os.PathLike[str], limit: int):
        super().__init__(f"{printable(os.fspath(path))} is larger than {human_size(limit)}")
        self.path = path
        self.limit = limit


def human_size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _name(path: str | os.PathLike[str] | None) -> str:
    text = "" if path is None else os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    return text


def output_path(path: str | os.PathLike[str] | None, what: str = "output file") -> Path:
    """``path`` as a Path if output may go there (a regular file, or a new name in a folder that
    exists or can be made); else a ConfigError naming ``what`` and the problem."""
    text = _name(path)
    if not text.strip():
        raise ConfigError(f"{what}: the file name is empty")
    shown = printable(text)
    out = Path(text)
    if text.endswith("/") or out.name in ("", ".", ".."):
        raise ConfigError(f"{what} {shown} is a folder, not a file")
    st = _existing(out, what, shown)
    if st is None:
        return out
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"{what} {shown} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(
            f"{what} {shown} is {kind_of(st.st_mode)}, not a regular file: output goes only to a regular file or a new path"
        )
    return out


def output_folder(path: str | os.PathLike[str] | None, what: str = "output folder") -> Path:
    """``path`` as a Path if it is a folder or a new name (made later); else a ConfigError."""
    text = _name(path)
    if not text.strip():
        raise ConfigError(f"{what}: the folder name is empty")
    shown = printable(text)
    out = Path(text)
    st = _existing(out, what, shown)
    if st is None:
        return out
    if not stat.S_ISDIR(st.st_mode):
        kind = "a file" if stat.S_ISREG(st.st_mode) else kind_of(st.st_mode)
        raise ConfigError(f"{what} {shown} is {kind}, not a folder")
    return out


def _existing(out: Path, what: str, shown: str) -> os.stat_result | None:
    """What stands at ``out``, or None for a new path that can be made there."""
    try:
        return os.stat(out)
    except (FileNotFoundError, NotADirectoryError):
        _check_parent(out, what, shown)
        return None
    except OSError as e:
        raise ConfigError(f"{what} {shown} cannot be used: {e.strerror}") from None


def _check_parent(out: Path, what: str, shown: str) -> None:
    """Every existing folder on the way to a new path must be a folder (so the path can be made)."""
    for parent in reversed(out.absolute().parents):  # from the root down
        try:
            st = os.stat(parent)
        except FileNotFoundError:
            return  # made when written
        except OSError as e:
            raise ConfigError(f"{what} {shown} cannot be used: {printable(str(parent))}: {e.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"{what} {shown} cannot be made: {printable(str(parent))} is not a folder")


def clear_partial(tmp: Path, what: str = "output file") -> None:
    """Remove a leftover ``NAME.part`` (a regular file or a link); anything else there is an error."""
    try:
        st = os.lstat(tmp)
    except FileNotFoundError:
        return
    if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
        tmp.unlink(missing_ok=True)
        return
    raise ConfigError(f"{what}: {printable(str(tmp))} is {kind_of(st.st_mode)}; remove it first")


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename; returns the path."""
    out = output_path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    clear_partial(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        output_path(out)  # still a regular file or nothing (a rename would replace a device node)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them (else :class:`FileTooLarge`).

    Raises the OSError of a failed open or read (FileNotFoundError, IsADirectoryError, ...)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a pipe without a writer: no wait
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(st.st_mode):  # a pipe or a device: read it as it comes
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise FileTooLarge(path, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], limit: int, what: str, error: type[ArbiterError] = ConfigError) -> str:
    """The UTF-8 text of the ``what`` (e.g. "match log") at ``path``, at most ``limit`` bytes;
    else ``error`` with one line saying why."""
    shown = printable(os.fspath(path))
    try:
        return read_bounded(path, limit).decode("utf-8")
    except FileNotFoundError:
        raise error(f"no such {what}: {shown}") from None
    except IsADirectoryError:
        raise error(f"{shown} is a folder, not a {what}") from None
    except FileTooLarge:
        raise error(f"{shown} is larger than {human_size(limit)}: not a {what}") from None
    except UnicodeDecodeError:
        raise error(f"{shown} is not a UTF-8 text file, so not a {what}") from None
    except OSError as e:
        raise error(f"cannot read {what} {shown}: {e.strerror}") from None


def lock_exclusive(fd: int) -> bool:
    """An exclusive ``flock`` on ``fd``, without waiting: False when another process holds it.
    Unless it is taken, ``fd`` is closed (and a failure other than "held" is raised)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
