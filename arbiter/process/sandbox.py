"""Isolation with bubblewrap (``isolation: bubblewrap``).

The bot runs under ``bwrap`` with no network, its own process, IPC and UTS namespaces, a read-only
view of the system, of the arbiter's Python and of its own program's folder, a private ``/tmp``,
and the arbiter's Unix socket bound read-only at :data:`SANDBOX_SOCKET` (the socket file alone:
its folder, the arbiter's, is never shown to a bot, so no seat can replace the socket or leave
anything for another seat). Inside, it is never root: it runs as uid :data:`SANDBOX_UID` of a
user namespace of its own, without capabilities, unable to make more namespaces.

Outside, it runs as a user that is not root either: when the arbiter is root, each bot gets a
uid of its own (the tournament's ``limits.user``, or a uid of :data:`DEFAULT_UIDS`), so every
limit binds (the kernel never applies the process limit to root) and its processes are found by
that uid. The arbiter then builds the sandbox as root, with no user namespace (so it can show the
bot folders only root may reach, e.g. an interpreter under ``/root``), switches to the bot's uid
inside with util-linux ``setpriv``, and a second ``bwrap`` makes the bot's user namespace. An
arbiter that is not root runs ``bwrap`` as itself, with the user namespace.

:func:`bubblewrap_problem` checks at run time that all this works here; a match that asks for
isolation it cannot have is refused, never played unisolated.
"""

from __future__ import annotations

import functools
import glob
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from arbiter.errors import ConfigError
from arbiter.model import ISOLATIONS as ISOLATIONS
from arbiter.model import Isolation as Isolation  # the value, in the match model
from arbiter.process.users import BotUser, path_problem, resolve_user, setpriv_program

log = logging.getLogger(__name__)

_bwrap_checks: dict[tuple[int, int], str | None] = {}
_bwrap_lock = threading.Lock()
_warned_weaker = False


SANDBOX_SOCKET = "/run/barbu/arbiter.sock"  # where every sandboxed bot finds the arbiter
SANDBOX_RELAY = "/run/barbu/tcp_relay.py"  # a transport: tcp bot's loopback port (arbiter.process.tcp_relay)
RELAY_FILE = str(Path(__file__).with_name("tcp_relay.py"))
SANDBOX_UID = 1000  # the bot's uid and gid inside its user namespace
DEFAULT_UIDS = (2_000_000_000, 2_000_999_999)  # a root arbiter's sandboxed bots: a uid each, nobody's

_PROTO_DIR = Path(__file__).resolve().parents[2] / "proto"


_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


_ETC_FILES = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/etc/os-release",
)
_TOOLCHAIN_ETC = ("/etc/java-*",)  # configuration folders of language runtimes (Debian's JDK keeps its conf/ there)


def etc_shown() -> list[str]:
    """The files and folders of /etc a sandboxed bot sees (those this machine has)."""
    found = [f for f in _ETC_FILES if os.path.lexists(f)]
    return found + sorted(d for pattern in _TOOLCHAIN_ETC for d in glob.glob(pattern) if os.path.isdir(d))


@functools.cache
def bwrap_program() -> str | None:
    return shutil.which("bwrap")


def sandbox_user(user: BotUser) -> BotUser:
    """Who a sandboxed bot runs as outside its namespace: ``user``, unless that is root (a root
    arbiter's default), then a uid of its own from :data:`DEFAULT_UIDS`."""
    if user.uid != 0 or user.pool is not None:
        return user
    first, last = DEFAULT_UIDS
    return BotUser(first, first, f"uids {first}-{last}", pool=DEFAULT_UIDS)


def bot_user(user: str | None, isolation: str) -> BotUser:
    """The user a bot of ``limits.user`` = ``user`` runs as under ``isolation``."""
    resolved = resolve_user(user)
    return sandbox_user(resolved) if isolation == Isolation.BUBBLEWRAP else resolved


def bubblewrap_problem(user: BotUser | None = None) -> str | None:
    """None if ``bwrap`` can build the sandbox here for a bot of ``user`` (the bots' configured
    user, None: the arbiter's); else why not (one line)."""
    user = sandbox_user(user or resolve_user(None))
    key = (user.uid, os.geteuid())
    with _bwrap_lock:
        if key not in _bwrap_checks:
            _bwrap_checks[key] = _probe(user)
        return _bwrap_checks[key]


def _probe(user: BotUser) -> str | None:
    if bwrap_program() is None:
        problem: str | None = "the bwrap program is not installed (Debian: apt-get install bubblewrap)"
    elif os.geteuid() == 0 and setpriv_program() is None:
        problem = "setpriv is not installed (Debian: apt-get install util-linux)"
    else:
        argv = [*_outer(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
        problem = _runs([*argv, "--", *_switch(user, inner=_inner_works(user)), "true"])
    return None if problem is None else f"bwrap cannot build a sandbox as user {user.name}: {problem}"


def _runs(argv: list[str]) -> str | None:
    """None if ``argv`` exits 0; else its last line of error."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]


def _inner_works(user: BotUser) -> bool:
    """Whether a root arbiter's bot user may make a user namespace (the inner ``bwrap``). Where it
    may not, the bot may not make one either, and the inner ``bwrap`` is left out."""
    return os.geteuid() == 0 and _inner_works_for(user.pool[0] if user.pool else user.uid, user.gid)


@functools.cache
def _inner_works_for(uid: int, gid: int) -> bool:
    switch = _setpriv(BotUser(uid, gid, str(uid)))
    inner = _inner_bwrap()
    outer = [bwrap_program() or "bwrap", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/"]
    return _runs([*outer, "--proc", "/proc", "--dev", "/dev", "--", *switch, *inner, "true"]) is None


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


def _outer() -> list[str]:
    """The first ``bwrap`` and its namespaces. As root: no user namespace (it builds the mounts
    as root; the bot's uid is set inside). Otherwise: the bot's user namespace, uid
    :data:`SANDBOX_UID`, no capability, no further namespaces."""
    bwrap = bwrap_program() or "bwrap"
    common = ["--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        return [
            bwrap,
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            *common,
        ]
    ids = ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    return [bwrap, "--unshare-all", "--unshare-user", *ids, "--disable-userns", *common]


def _setpriv(user: BotUser) -> list[str]:
    return [
        setpriv_program() or "setpriv",
        f"--reuid={user.uid}",
        f"--regid={user.gid}",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]


def _inner_bwrap() -> list[str]:
    ids = ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    return [
        bwrap_program() or "bwrap",
        "--unshare-user",
        *ids,
        "--disable-userns",
        "--die-with-parent",
        "--dev-bind",
        "/",
        "/",
        "--",
    ]


def _switch(user: BotUser, *, inner: bool) -> list[str]:
    """What runs inside the first ``bwrap`` before the bot: for a root arbiter, the switch to the
    bot's uid and (where allowed) its user namespace; nothing otherwise."""
    if os.geteuid() != 0:
        return []
    return [*_setpriv(user), *(_inner_bwrap() if inner else [])]


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


BOT_FOLDER_MARK = "entrant.yaml"  # a folder holding one is a bot's own: the sandbox shows it whole


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


def _folders_for(destinations: list[str], shown: list[str]) -> list[str]:
    """The folders to make above ``destinations`` (outermost first), searchable by anyone: a
    folder shown in the sandbox is then reached even where its real parents are private
    (``/root``). Folders inside ``shown`` (mounts of their own) are left alone."""
    found: set[str] = set()
    for path in destinations:
        parent = os.path.dirname(path)
        while parent not in ("/", ""):
            if not any(parent == b or parent.startswith(b + "/") for b in shown):
                found.add(parent)
            parent = os.path.dirname(parent)
    return sorted(found, key=lambda p: (p.count("/"), p))


def _within(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f + "/") for f in folders)


def _shown_folders(argv: list[str], cwd: str, user: BotUser) -> list[str]:
    """The host folders shown read-only at their own paths: the arbiter's Python and the protocol
    files (where the bot's user may read them), and the bot's own folders (which it must): those of
    the files its command names, and its whole working folder when that is a bot's folder (it holds
    an entrant.yaml: a submission, a folder from new-bot), so that a runtime it carries (a jlink
    image, a virtual environment) finds its own libraries whatever its command names."""
    own = _bot_dirs(argv, cwd)
    if os.path.isfile(os.path.join(cwd, BOT_FOLDER_MARK)):
        own = [os.path.realpath(cwd), *own]
    for d in own:
        if problem := path_problem(d, user, "rx", parents=False):
            raise ConfigError(f"the bot's folder cannot be shown in its sandbox as user {user.name}: {problem}")
    shared = [*_python_dirs(), *([str(_PROTO_DIR)] if _PROTO_DIR.is_dir() else [])]
    shared = [d for d in shared if path_problem(d, user, "rx", parents=False) is None]
    bound: list[str] = []
    for d in [*shared, *own]:
        real = os.path.realpath(d)
        if not _within(real, bound):
            bound.append(real)
    return bound


def relay_argv(socket: str, argv: list[str], relay: str = RELAY_FILE) -> list[str]:
    """``argv`` started by the TCP relay (arbiter.process.tcp_relay), which hands it a loopback
    port that leads to the arbiter's Unix socket ``socket``. The system's own interpreter, isolated
    from the environment and from every site folder: the relay needs the standard library only."""
    return [os.path.realpath(sys.executable), "-I", "-S", relay, socket, "--", *argv]


def bubblewrap_argv(
    argv: list[str],
    *,
    cwd: str,
    socket: str | None,
    user: BotUser,
    tmp_size: int | None,
    relay: bool = False,
    writable: bool = False,
) -> list[str]:
    """The command line that runs ``argv`` in the sandbox as ``user`` (:func:`sandbox_user`), with
    the arbiter's socket file ``socket`` (a path) shown at :data:`SANDBOX_SOCKET`; with ``relay``,
    started by the TCP relay (shown at :data:`SANDBOX_RELAY`) in the sandbox's own network; with
    ``writable``, its working folder shown whole and writable (a submission's build step)."""
    system = [d for d in _SYSTEM_DIRS if os.path.isdir(d) or os.path.islink(d)]
    bound = _shown_folders(argv, cwd, user)
    etc = etc_shown()
    real_cwd = os.path.realpath(cwd)
    empty_cwd = not writable and not _within(real_cwd, [*system, *bound])  # the bot runs there, sees none of it
    dests = [*etc, *bound, SANDBOX_SOCKET, *([real_cwd] if empty_cwd or writable else [])]
    bw = _outer()
    for d in system:
        bw += ["--symlink", os.readlink(d), d] if os.path.islink(d) else ["--ro-bind", d, d]
    bw += ["--proc", "/proc", "--dev", "/dev"]
    bw += [*(["--size", str(tmp_size)] if tmp_size is not None else []), "--perms", "1777", "--tmpfs", "/tmp"]
    for folder in _folders_for(dests, [*system, *bound]) + ([real_cwd] if empty_cwd else []):
        bw += ["--perms", "0755", "--dir", folder]
    for path in [*etc, *bound]:
        bw += ["--ro-bind", path, path]
    if writable:
        bw += ["--bind", real_cwd, real_cwd]
    if socket is not None:
        bw += ["--ro-bind", socket, SANDBOX_SOCKET]
        if relay:
            bw += ["--ro-bind", RELAY_FILE, SANDBOX_RELAY]
            argv = relay_argv(SANDBOX_SOCKET, argv, SANDBOX_RELAY)
    return [*bw, "--chdir", real_cwd, "--", *_switch(user, inner=_inner_works(user)), *argv]
