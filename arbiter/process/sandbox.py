"""Isolation with bubblewrap (``isolation: bubblewrap``).

The bot runs under ``bwrap`` with no network, its own process, IPC and user namespaces, a
read-only view of the system, of the arbiter's Python and of its own program's folder, a private
``/tmp``, and the arbiter's Unix socket bound in. :func:`bubblewrap_problem` checks at run time
that ``bwrap`` works here; a match that asks for isolation it cannot have is refused, never
played unisolated.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
import threading
from enum import StrEnum
from pathlib import Path

from arbiter.errors import ConfigError
from arbiter.process.users import BotUser, as_user, path_problem, resolve_user

log = logging.getLogger(__name__)

_bwrap_checks: dict[int, str | None] = {}
_bwrap_lock = threading.Lock()
_warned_weaker = False


class Isolation(StrEnum):
    """How a bot is kept from the machine: ``none`` (limits and users only) or ``bubblewrap``."""

    NONE = "none"
    BUBBLEWRAP = "bubblewrap"


ISOLATIONS = tuple(mode.value for mode in Isolation)


_PROTO_DIR = Path(__file__).resolve().parents[2] / "proto"


_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


_ETC_FILES = (
    "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/ssl", "/etc/ca-certificates",
    "/etc/mime.types", "/etc/os-release",
)  # fmt: skip


@functools.cache
def bwrap_program() -> str | None:
    return shutil.which("bwrap")


def bubblewrap_problem(user: BotUser | None = None) -> str | None:
    """None if ``bwrap`` can build the sandbox here for ``user``; else why not (one line)."""
    user = user or resolve_user(None)
    with _bwrap_lock:
        if user.uid in _bwrap_checks:
            return _bwrap_checks[user.uid]
        bwrap = bwrap_program()
        if bwrap is None:
            problem: str | None = "the bwrap program is not installed (Debian: apt-get install bubblewrap)"
        else:
            argv = [
                bwrap,
                *_bwrap_namespace_options(user),
                "--ro-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "--",
                "true",
            ]
            argv, kw = as_user(argv, user)
            try:
                r = subprocess.run(
                    argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL, check=False, **kw
                )
                problem = (
                    None if r.returncode == 0 else (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
                )
            except (OSError, subprocess.TimeoutExpired) as e:
                problem = str(e)
        if problem is not None:
            problem = f"bwrap cannot build a sandbox as user {user.name}: {problem}"
        _bwrap_checks[user.uid] = problem
        return problem


def strongest_isolation(user: BotUser | None = None) -> Isolation:
    """The default isolation: bubblewrap where it works here, else none, said once in one line."""
    problem = bubblewrap_problem(user)
    if problem is None:
        return Isolation.BUBBLEWRAP
    global _warned_weaker
    if not _warned_weaker:
        log.warning(
            "bots run without isolation (isolation: none), as %s; install bubblewrap, or write 'isolation: none' "
            "in the tournament file to choose it",
            problem,
        )
        _warned_weaker = True
    return Isolation.NONE


def _bwrap_namespace_options(user: BotUser) -> list[str]:
    # A user namespace even for root: the sandbox then holds no capability of the real system
    # (it cannot lift its limits), and --disable-userns stops it from nesting more namespaces.
    options = ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]
    if user.uid == 0:
        options += ["--cap-drop", "ALL"]
    return options


def _python_dirs() -> list[str]:
    """What a Python bot started with the arbiter's interpreter needs to see: the interpreter,
    its standard library, the virtual environment and the SDK's source (editable installs)."""
    dirs = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
    }
    try:
        import barbu

        dirs.add(os.path.dirname(os.path.dirname(os.path.realpath(barbu.__file__))))
    except ImportError:  # pragma: no cover - the arbiter always has the SDK
        pass
    return sorted(d for d in dirs if d and os.path.isdir(d))


def _bot_dirs(argv: list[str], cwd: str) -> list[str]:
    """The folders of the bot's own files: every argument that names an existing file."""
    dirs = set()
    for arg in argv:
        if "/" not in arg and not arg.endswith(".py"):
            continue
        path = os.path.join(cwd, os.path.expanduser(arg.split("=", 1)[-1]))
        if os.path.isfile(path):
            dirs.add(os.path.dirname(os.path.realpath(path)))
    return sorted(dirs)


def bubblewrap_argv(
    argv: list[str], *, cwd: str, socket_dir: str | None, user: BotUser, tmp_size: int | None
) -> list[str]:
    """The bwrap command line that runs ``argv`` in the sandbox."""
    bw = [bwrap_program() or "bwrap", *_bwrap_namespace_options(user)]
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            bw += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            bw += ["--ro-bind", d, d]
    for f in _ETC_FILES:
        bw += ["--ro-bind-try", f, f]
    bw += ["--proc", "/proc", "--dev", "/dev"]
    if tmp_size is not None:
        bw += ["--size", str(tmp_size)]
    bw += ["--tmpfs", "/tmp"]
    bound: list[str] = []
    own = _bot_dirs(argv, cwd)
    for d in own:
        problem = path_problem(d, user, "x")
        if problem:
            raise ConfigError(f"the bot's folder cannot be shown in its sandbox as user {user.name}: {problem}")
    shared = [*_python_dirs(), *([str(_PROTO_DIR)] if _PROTO_DIR.is_dir() else [])]
    # The arbiter's Python and the protocol files, where the bots' user may read them.
    shared = [d for d in shared if path_problem(d, user, "x") is None]
    for d in [*shared, *own]:
        real = os.path.realpath(d)
        if any(real == b or real.startswith(b + "/") for b in bound):
            continue
        bound.append(real)
        bw += ["--ro-bind", real, real]
    real_cwd = os.path.realpath(cwd)
    if not any(real_cwd == b or real_cwd.startswith(b + "/") for b in bound):
        bw += ["--dir", real_cwd]  # the bot runs there, but sees none of it
    if socket_dir:
        bw += ["--bind", socket_dir, socket_dir]
    bw += ["--chdir", real_cwd, "--"]
    return [*bw, *argv]
