"""Running bots as other, unprivileged users (``limits.user``).

The only way to make the process limit real, and to keep a bot from lifting its own limits, when
the arbiter runs as root: util-linux ``setpriv`` in the exec chain, else ``subprocess``'s
``user=``/``group=``. A uid range gives every bot a uid of its own (:class:`UidReservation`, one lock
file per uid shared by every arbiter process). Also: whether such a user can reach a path.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import pwd
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arbiter.errors import ConfigError
from arbiter.process.procfs import uids_in_use
from arbiter.text import printable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BotUser:
    uid: int
    gid: int
    name: str
    pool: tuple[int, int] | None = None  # a range of uids: each bot gets one of its own

    @property
    def is_other(self) -> bool:
        """Another user than the arbiter's (what makes the process limit mean something)."""
        return self.pool is not None or self.uid != os.geteuid()


UID_RANGE_RE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
MAX_UID_DIGITS = 10  # 2**32 - 2 has 10: longer digits are never converted


MAX_UID = 2**32 - 2


def resolve_user(user: str | int | None) -> BotUser:
    """The uid/gid the bots run as: a user name, a numeric uid (it need not exist in
    /etc/passwd; its group is then the same number), a range ``FIRST-LAST`` of unused uids
    (every bot gets one of its own, see :class:`UidReservation`), or None for the arbiter's own user."""
    if user is None:
        uid = os.geteuid()
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = str(uid)
        return BotUser(uid, os.getegid(), name)
    text = str(user).strip()
    shown = printable(text if len(text) <= 40 else text[:37] + "...")
    if m := UID_RANGE_RE.match(text):
        short = max(len(m.group(1)), len(m.group(2))) <= MAX_UID_DIGITS
        first, last = (int(m.group(1)), int(m.group(2))) if short else (0, 0)
        if not 1 <= first <= last <= MAX_UID:
            raise ConfigError(f"user id range {shown!r}: give FIRST-LAST with 1 <= FIRST <= LAST <= {MAX_UID}")
        taken = [e for e in pwd.getpwall() if first <= e.pw_uid <= last]
        if taken:
            raise ConfigError(
                f"user id range {shown!r} includes the user {taken[0].pw_name} (uid {taken[0].pw_uid}): "
                "give uids that belong to nobody"
            )
        return BotUser(first, first, f"uids {first}-{last}", pool=(first, last))
    if text.isdigit():
        if len(text) > MAX_UID_DIGITS or int(text) > MAX_UID:
            raise ConfigError(f"user id {shown} is out of range: at most {MAX_UID}")
        uid = int(text)
        try:
            entry = pwd.getpwuid(uid)
            return BotUser(uid, entry.pw_gid, entry.pw_name)
        except KeyError:
            return BotUser(uid, uid, text)
    try:
        entry = pwd.getpwnam(text)
    except KeyError:
        raise ConfigError(
            f"no such user: {shown!r} (give a user name from /etc/passwd, a numeric uid, or a range FIRST-LAST of unused uids)"
        ) from None
    return BotUser(entry.pw_uid, entry.pw_gid, entry.pw_name)


UID_LOCKS = "/tmp/barbu-uids"  # one lock file per uid in use, shared by every arbiter process


class UidReservation:
    """A uid of a range, held by one bot while it runs: no other bot (of this or any other
    match, in any process of this machine) gets it, nor a uid some process still uses.

    The reservation is an flock on ``/tmp/barbu-uids/UID``; the kernel releases it when the holder
    dies, so a killed arbiter leaks nothing but an empty file. A released reservation removes its file
    while still holding the lock; whoever opened the old file meanwhile sees, once it gets the
    lock, that the name no longer leads to it, and tries again.
    """

    def __init__(self, pool: tuple[int, int]):
        import fcntl
        import random as _random

        first, last = pool
        _lock_dir()
        in_use = uids_in_use()
        rng = _random.SystemRandom()
        self._fd: int | None = None
        for _ in range(200):
            uid = rng.randint(first, last)
            if uid in in_use:
                continue
            path = os.path.join(UID_LOCKS, str(uid))
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                mine, named = os.fstat(fd), os.stat(path, follow_symlinks=False)
                if (mine.st_dev, mine.st_ino) != (named.st_dev, named.st_ino):
                    raise OSError("the lock file was replaced")
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd, self._path = uid, fd, path
            return
        raise ConfigError(f"no free user id in the range {first}-{last}: make it larger")

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._path)
            os.close(self._fd)  # drops the flock
            self._fd = None


def _lock_dir() -> None:
    with contextlib.suppress(FileExistsError):
        os.mkdir(UID_LOCKS, 0o700)
    st = os.lstat(UID_LOCKS)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise ConfigError(f"{UID_LOCKS} must be a folder of the arbiter's user that only it may write")


@functools.cache
def setpriv_program() -> str | None:
    return shutil.which("setpriv")


def _may(st: os.stat_result, user: BotUser, want: int) -> bool:
    """Whether ``user`` has ``want`` (4 read, 2 write, 1 search/execute) on a file with ``st``."""
    if user.uid == 0:
        return True
    if st.st_uid == user.uid:
        return bool((st.st_mode >> 6) & want == want)
    if st.st_gid == user.gid:
        return bool((st.st_mode >> 3) & want == want)
    return bool(st.st_mode & want == want)


def as_user(argv: list[str], user: BotUser) -> tuple[list[str], dict[str, Any]]:
    """``argv`` and the ``subprocess.Popen`` keywords that run it as ``user``.

    util-linux setpriv switches user in the exec chain, which keeps subprocess on its vfork path
    (``user=`` forces a fork() of this multi-threaded, gRPC-serving process) and sets
    no_new_privs (no set-user-ID program can give the bot privileges back); without it,
    subprocess's ``user=``/``group=``.
    """
    if not user.is_other:
        return argv, {}
    setpriv = setpriv_program()
    if setpriv is None:
        return argv, {"user": user.uid, "group": user.gid, "extra_groups": []}
    return [setpriv, f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--no-new-privs", "--", *argv], {}


def path_problem(path: str, user: BotUser, need: str, *, parents: bool = True) -> str | None:
    """Why ``user`` cannot reach ``path`` (search every folder above it, unless ``parents`` is
    False: a sandbox shows the folder with searchable parents of its own; then ``need``: ``r``
    read, ``x`` execute or search, ``rx`` both), or None."""
    real = os.path.realpath(path)
    for folder in reversed(list(Path(real).parents) if parents else []):
        try:
            st = os.stat(folder)
        except OSError as e:
            return f"{folder}: {e.strerror}"
        if not _may(st, user, 1):
            return f"it cannot enter the folder {folder} (mode {stat.filemode(st.st_mode)})"
    try:
        st = os.stat(real)
    except OSError as e:
        return f"{real}: {e.strerror}"
    want = {"x": 1, "r": 4, "rx": 5}[need]
    if not _may(st, user, want):
        what = "run" if need == "x" and not stat.S_ISDIR(st.st_mode) else "enter" if need == "x" else "read"
        return f"it cannot {what} {real} (mode {stat.filemode(st.st_mode)}): let others {what} it"
    return None


def make_reachable(path: str, user: BotUser) -> None:
    """Let ``user`` reach ``path``: folders above it that are the arbiter's own temporary
    folders (``barbu-…``) get search permission for others; anything else must already allow it."""
    for folder in reversed(list(Path(os.path.realpath(path)).parents)):
        st = os.stat(folder)
        if _may(st, user, 1):
            continue
        if folder.name.startswith("barbu-") and st.st_uid == os.geteuid():
            os.chmod(folder, stat.S_IMODE(st.st_mode) | 0o011)
            continue
        raise ConfigError(
            f"bots running as user {user.name} cannot reach {path}: they may not enter {folder}; "
            "set TMPDIR to a folder other users can enter"
        )
