"""Starting and stopping local bot processes, under resource limits, optionally sandboxed.

A bot is started from its command line (a shell-style string, split with ``shlex``; no shell)
in a new session, so it and its children form one process group. It learns where the arbiter
listens and its secret token from the environment (``BARBU_ARBITER``, ``BARBU_TOKEN``). Its
stdout and stderr go through a pipe to a per-seat file kept beside the match log; output beyond
``limits.output`` bytes is read and dropped, so a flooding bot neither blocks on a full pipe nor
fills the disk.

**Limits** (:class:`Limits`, the tournament file's ``limits:``) are kernel resource limits set
by util-linux ``prlimit`` wrapped around the bot's command (never a ``preexec_fn``: it is unsafe
in a process with gRPC threads); without ``prlimit`` they are set with ``resource.prlimit`` right
after the start. ``limits.user`` runs the bot as another, unprivileged user (util-linux
``setpriv`` in the exec chain, else ``subprocess``'s ``user=``/``group=``): the only way to make
the process limit real, and to keep a bot from lifting its own limits, when the arbiter runs as
root. A uid range gives every bot a uid of its own (:class:`UidLease`). docs/security.md says
what each limit does and does not stop.

**Isolation** (``isolation: bubblewrap``): the bot runs under ``bwrap`` with no network, its
own process, IPC and user namespaces, a read-only view of the system, of the arbiter's Python
and of its own program's folder, a private ``/tmp``, and the arbiter's Unix socket bound in.
:func:`bubblewrap_problem` checks at run time that ``bwrap`` works here; a match that asks for
isolation it cannot have is refused, never played unisolated.

At the end the whole group is killed, and so is any process that escaped the group (e.g. with
``setsid``) but still carries the seat's token in its environment, and, for a bot with a uid of
its own, any process of that uid; a sandboxed bot's processes all die with the sandbox's PID
namespace. The seat's scratch folder (its ``TMPDIR``) is removed.
"""

from __future__ import annotations

import functools
import logging
import os
import pwd
import re
import resource
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import ConfigError

log = logging.getLogger(__name__)


def split_command(command: str) -> list[str]:
    """A bot command's argv, with a bare ``python`` resolved by :func:`with_own_python`."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ConfigError(f"bad bot command {command!r}: {e}") from None
    if not argv:
        raise ConfigError("a bot command is empty")
    return with_own_python(argv)


def with_own_python(argv: list[str]) -> list[str]:
    """A bare ``python``/``python3`` program (after any ``env NAME=value``) becomes the
    arbiter's own interpreter, which has the SDK installed; anything else is left alone."""
    i = 0
    if argv[:1] == ["env"]:
        i = 1
        while i < len(argv) and "=" in argv[i] and not argv[i].startswith("-"):
            i += 1
    if i < len(argv) and re.fullmatch(r"python3?", argv[i]):
        return [*argv[:i], sys.executable, *argv[i + 1 :]]
    return argv


# ---- limits ----------------------------------------------------------------------------------
DEFAULT_OUTPUT_LIMIT = 1 << 20  # bytes of a bot's stdout+stderr kept per match
CPU_GRACE = 2  # seconds between the CPU soft limit (SIGXCPU) and the hard one (SIGKILL)
ISOLATIONS = ("none", "bubblewrap")


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits of a launched bot (``None``: not limited).

    Every process of the bot gets them (children inherit them); a bot process lives for one
    match, so ``cpu`` is CPU seconds per match and process. ``processes`` counts every process
    and thread of the bots' *user* (that is how the kernel counts RLIMIT_NPROC), so it is only
    applied when ``user`` names another user than the arbiter's; root ignores it anyway.
    """

    memory: int | None = 2 << 30  # bytes of address space per process (RLIMIT_AS)
    cpu: int | None = 1800  # CPU seconds per process (RLIMIT_CPU: SIGXCPU, then SIGKILL)
    processes: int | None = 256  # processes + threads of the bots' user (RLIMIT_NPROC)
    open_files: int | None = 1024  # file descriptors per process (RLIMIT_NOFILE)
    file_size: int | None = 64 << 20  # bytes: the largest file it may write (RLIMIT_FSIZE); sizes the sandbox's /tmp
    output: int = DEFAULT_OUTPUT_LIMIT  # bytes of stdout+stderr kept per seat and match
    user: str | None = None  # a user name, a uid, or a uid range FIRST-LAST (one each); None: the arbiter's

    def __post_init__(self) -> None:
        for name in ("memory", "cpu", "processes", "open_files", "file_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"limit {name!r} must be a positive whole number or None, got {value!r}")
        if isinstance(self.output, bool) or not isinstance(self.output, int) or self.output < 0:
            raise ValueError(f"limit 'output' must be a whole number of bytes >= 0, got {self.output!r}")
        if self.user is not None and (not isinstance(self.user, str) or not self.user):
            raise ValueError(f"limit 'user' must be a user name or uid as text, got {self.user!r}")

    def to_json(self) -> dict:
        return asdict(self)


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
MAX_UID = 2**32 - 2


def resolve_user(user: str | int | None) -> BotUser:
    """The uid/gid the bots run as: a user name, a numeric uid (it need not exist in
    /etc/passwd; its group is then the same number), a range ``FIRST-LAST`` of unused uids
    (every bot gets one of its own, see :class:`UidLease`), or None for the arbiter's own user."""
    if user is None:
        uid = os.geteuid()
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = str(uid)
        return BotUser(uid, os.getegid(), name)
    text = str(user).strip()
    if m := UID_RANGE_RE.match(text):
        first, last = int(m.group(1)), int(m.group(2))
        if not 1 <= first <= last <= MAX_UID:
            raise ConfigError(f"user id range {text!r}: give FIRST-LAST with 1 <= FIRST <= LAST <= {MAX_UID}")
        taken = [e for e in pwd.getpwall() if first <= e.pw_uid <= last]
        if taken:
            raise ConfigError(
                f"user id range {text!r} includes the user {taken[0].pw_name} (uid {taken[0].pw_uid}): "
                "give uids that belong to nobody"
            )
        return BotUser(first, first, f"uids {first}-{last}", pool=(first, last))
    if text.isdigit():
        uid = int(text)
        if uid > MAX_UID:
            raise ConfigError(f"user id {uid} is out of range")
        try:
            entry = pwd.getpwuid(uid)
            return BotUser(uid, entry.pw_gid, entry.pw_name)
        except KeyError:
            return BotUser(uid, uid, text)
    try:
        entry = pwd.getpwnam(text)
    except KeyError:
        raise ConfigError(
            f"no such user: {text!r} (give a user name from /etc/passwd, a numeric uid, or a range FIRST-LAST of unused uids)"
        ) from None
    return BotUser(entry.pw_uid, entry.pw_gid, entry.pw_name)


UID_LOCKS = "/tmp/barbu-uids"  # one lock file per uid in use, shared by every arbiter process


class UidLease:
    """A uid of a range, held by one bot while it runs: no other bot (of this or any other
    match, in any process of this machine) gets it, nor a uid some process still uses.

    The lease is an flock on ``/tmp/barbu-uids/UID``; the kernel releases it when the holder
    dies, so a killed arbiter leaks nothing but an empty file. A released lease removes its file
    while still holding the lock; whoever opened the old file meanwhile sees, once it gets the
    lock, that the name no longer leads to it, and tries again.
    """

    def __init__(self, pool: tuple[int, int]):
        import fcntl
        import random as _random

        first, last = pool
        _lock_dir()
        in_use = _uids_in_use()
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
            try:
                os.unlink(self._path)
            except OSError:
                pass
            os.close(self._fd)  # drops the flock
            self._fd = None


def _lock_dir() -> None:
    try:
        os.mkdir(UID_LOCKS, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(UID_LOCKS)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise ConfigError(f"{UID_LOCKS} must be a folder of the arbiter's user that only it may write")


def _uid_of(pid: str, live: bool = False) -> int | None:
    """The real uid of a process (None if it is gone, or a zombie when ``live``)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if live and line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                    return None
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _uids_in_use() -> set[int]:
    return {u for e in os.scandir("/proc") if e.name.isdigit() and (u := _uid_of(e.name)) is not None}


def processes_of_uid(uid: int) -> list[int]:
    """Pids of live (not zombie) processes whose real uid is ``uid``."""
    return [int(e.name) for e in os.scandir("/proc") if e.name.isdigit() and _uid_of(e.name, live=True) == uid]


def human_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} bytes"


_RLIMITS = {  # Limits field -> (prlimit option, resource constant)
    "memory": ("--as", resource.RLIMIT_AS),
    "open_files": ("--nofile", resource.RLIMIT_NOFILE),
    "file_size": ("--fsize", resource.RLIMIT_FSIZE),
    "processes": ("--nproc", resource.RLIMIT_NPROC),
}


def rlimit_values(limits: Limits, user: BotUser) -> dict[int, tuple[int, int]]:
    """The kernel limits to set: resource constant -> (soft, hard)."""
    values: dict[int, tuple[int, int]] = {resource.RLIMIT_CORE: (0, 0)}  # no core dumps on the disk
    for field, (_, res) in _RLIMITS.items():
        value = getattr(limits, field)
        if value is None or (field == "processes" and not user.is_other):
            continue
        values[res] = (value, value)
    if limits.cpu is not None:
        values[resource.RLIMIT_CPU] = (limits.cpu, limits.cpu + CPU_GRACE)
    return values


def prlimit_argv(values: dict[int, tuple[int, int]]) -> list[str]:
    """``prlimit --as=… … --`` for these limits (util-linux)."""
    options = {res: option for option, res in _RLIMITS.values()}
    options[resource.RLIMIT_CORE] = "--core"
    options[resource.RLIMIT_CPU] = "--cpu"
    argv = [_prlimit()]
    for res, (soft, hard) in values.items():
        argv.append(f"{options[res]}={soft}:{hard}")
    return [*argv, "--"]


@functools.cache
def _prlimit() -> str | None:
    return shutil.which("prlimit")


@functools.cache
def _setpriv() -> str | None:
    return shutil.which("setpriv")


# ---- isolation -----------------------------------------------------------------------------
_PROTO_DIR = Path(__file__).resolve().parent.parent / "proto"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/ssl", "/etc/ca-certificates",
    "/etc/mime.types", "/etc/os-release",
)  # fmt: skip


@functools.cache
def _bwrap() -> str | None:
    return shutil.which("bwrap")


_bwrap_checks: dict[int, str | None] = {}
_bwrap_lock = threading.Lock()


def bubblewrap_problem(user: BotUser | None = None) -> str | None:
    """None if ``bwrap`` can build the sandbox here for ``user``; else why not (one line)."""
    user = user or resolve_user(None)
    with _bwrap_lock:
        if user.uid in _bwrap_checks:
            return _bwrap_checks[user.uid]
        bwrap = _bwrap()
        if bwrap is None:
            problem = "the bwrap program is not installed (Debian: apt-get install bubblewrap)"
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
            kw: dict = {}
            if user.is_other and _setpriv() is not None:
                argv = [
                    _setpriv(),
                    f"--reuid={user.uid}",
                    f"--regid={user.gid}",
                    "--clear-groups",
                    "--no-new-privs",
                    "--",
                    *argv,
                ]
            elif user.is_other:
                kw = {"user": user.uid, "group": user.gid, "extra_groups": []}
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
    bw = [_bwrap() or "bwrap", *_bwrap_namespace_options(user)]
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


# ---- the bot process -----------------------------------------------------------------------
_ENV_KEEP = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM", "BARBU_LOG_LEVEL")
_warned_prlimit = False


class BotProcess:
    def __init__(
        self,
        command: str,
        env: dict[str, str],
        output: Path,
        cwd: str | None = None,
        output_limit: int | None = None,
        *,
        limits: Limits | None = None,
        isolation: str = "none",
        socket_dir: str | None = None,
    ):
        self.command = command
        self.argv = split_command(command)
        self.token = env.get("BARBU_TOKEN", "")
        self.output = output
        self.limits = limits = limits if limits is not None else Limits()
        self.output_limit = output_limit if output_limit is not None else limits.output
        if isolation not in ISOLATIONS:
            raise ConfigError(f"isolation {isolation!r} is not one of {', '.join(ISOLATIONS)}")
        self.isolation = isolation
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.rusage: resource.struct_rusage | None = None
        self._tail = b""  # the last bytes of output, kept or dropped (for the last line)
        self.scratch: str | None = None  # the seat's TMPDIR (and HOME, for another user)
        self._lease: UidLease | None = None
        self._out = None
        user = resolve_user(limits.user)
        if user.is_other and os.geteuid() != 0:
            raise ConfigError(f"running bots as user {user.name} needs the arbiter to run as root")
        self._check_program()
        if user.is_other and isolation == "none":
            self._check_reachable(user)
        if isolation == "bubblewrap" and (problem := bubblewrap_problem(user)):
            raise ConfigError(f"isolation: bubblewrap was asked for, but {problem}: bots are not isolated")
        try:
            self._start(env, user, socket_dir)
        except BaseException:
            self._release()
            raise
        self._drain = threading.Thread(target=self._keep_output, name=f"bot-output-{self.pid}", daemon=True)
        self._drain.start()

    def _start(self, env: dict[str, str], user: BotUser, socket_dir: str | None) -> None:
        if user.pool is not None:  # a uid of its own, for this bot only
            self._lease = UidLease(user.pool)
            user = BotUser(self._lease.uid, self._lease.uid, str(self._lease.uid), pool=user.pool)
        self.user = user
        self.rlimits = rlimit_values(self.limits, user)
        child_env = self._environment(env)
        if self.isolation == "bubblewrap":
            child_env.update(HOME="/tmp", TMPDIR="/tmp")
            # Its /tmp is memory: as large as one file may be (and a little), not more.
            size = self.limits.file_size
            argv = bubblewrap_argv(
                self.argv,
                cwd=self.cwd,
                socket_dir=socket_dir,
                user=user,
                tmp_size=None if size is None else size + (1 << 20),
            )
        else:
            self.scratch = tempfile.mkdtemp(prefix="barbu-seat-")
            if user.is_other:
                os.chown(self.scratch, user.uid, user.gid)
                make_reachable(self.scratch, user)
                child_env["HOME"] = self.scratch
            child_env["TMPDIR"] = self.scratch
            argv = list(self.argv)
        kw: dict = {}
        if user.is_other:
            # util-linux setpriv switches user in the exec chain, which keeps subprocess on its
            # vfork path (user= forces a fork() of this multi-threaded, gRPC-serving process) and
            # sets no_new_privs (no set-user-ID program can give the bot privileges back).
            if _setpriv() is not None:
                argv = [
                    _setpriv(),
                    f"--reuid={user.uid}",
                    f"--regid={user.gid}",
                    "--clear-groups",
                    "--no-new-privs",
                    "--",
                    *argv,
                ]
            else:
                kw = {"user": user.uid, "group": user.gid, "extra_groups": []}
        if _prlimit() is not None:
            argv = [*prlimit_argv(self.rlimits), *argv]
        self.output.parent.mkdir(parents=True, exist_ok=True)
        self._out = open(self.output, "wb")
        try:
            self.proc = subprocess.Popen(
                argv,
                env=child_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=self.cwd,
                start_new_session=True,
                **kw,
            )
        except OSError as e:
            as_user = f" as user {user.name}" if user.is_other else ""
            raise ConfigError(f"cannot start bot {self.command!r}{as_user}: {e.strerror or e}") from None
        self.pid = self.proc.pid
        if _prlimit() is None:
            self._set_limits_after_start()

    def _release(self) -> None:
        """Give back what a bot that could not start (or is gone) held."""
        if self._out is not None:
            self._out.close()
        self._remove_scratch()
        if self._lease is not None:
            self._lease.release()

    def _environment(self, env: dict[str, str]) -> dict[str, str]:
        """The bot's environment. A bot of the arbiter's own user, unsandboxed, inherits the
        arbiter's environment (as it always has); any other gets only the basics, so no
        secret of the arbiter's (a database URL, say) reaches an untrusted bot."""
        if self.isolation == "none" and not self.user.is_other:
            return {**os.environ, **env}
        base = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
        base.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        return {**base, **env}

    def _check_program(self) -> None:
        """The program must exist and be executable: once wrapped in prlimit or bwrap, a
        missing one would only show as a bot that crashed."""
        program = self.argv[0]
        if "/" in program:
            path = os.path.join(self.cwd, program)
            problem = None if os.path.isfile(path) else "No such file or directory"
            if problem is None and not os.access(path, os.X_OK):
                problem = "Permission denied"
        else:
            problem = None if shutil.which(program, path=os.environ.get("PATH")) else "No such file or directory"
        if problem:
            raise ConfigError(f"cannot start bot {self.command!r}: {problem}")

    def _check_reachable(self, user: BotUser) -> None:
        """Another user must be able to reach the bot's folder and run its program."""
        problem = path_problem(self.cwd, user, "x")
        program = self.argv[0]
        path = program if "/" in program else shutil.which(program, path=os.environ.get("PATH"))
        if problem is None and path:
            problem = path_problem(os.path.join(self.cwd, path), user, "x")
        for arg in self.argv[1:]:
            full = os.path.join(self.cwd, arg)
            if problem is None and "/" in arg and os.path.isfile(full):
                problem = path_problem(full, user, "r")
        if problem:
            raise ConfigError(f"the bot {self.command!r} cannot run as user {user.name}: {problem}")

    def _set_limits_after_start(self) -> None:
        """Without util-linux prlimit: set the limits on the running process (a short race)."""
        global _warned_prlimit
        if not _warned_prlimit:
            log.warning("prlimit is not installed: bot limits are set just after the start, not before")
            _warned_prlimit = True
        for res, value in self.rlimits.items():
            try:
                resource.prlimit(self.pid, res, value)
            except (ProcessLookupError, PermissionError, ValueError, OSError) as e:
                log.warning("cannot set a limit on bot process %d: %s", self.pid, e)

    def _keep_output(self) -> None:
        """Copy the bot's output to its file up to the limit; read and drop the rest."""
        kept = 0
        dropped = 0
        pipe = self.proc.stdout
        while chunk := pipe.read1(65536):
            self._tail = (self._tail + chunk)[-4096:]
            room = self.output_limit - kept
            if room > 0:
                self._out.write(chunk[:room])
                self._out.flush()
                kept += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        if dropped:
            self._out.write(f"\n[arbiter: {dropped} more bytes of output were dropped]\n".encode())
        pipe.close()

    def exit_code(self) -> int | None:
        """The exit code (negative: killed by that signal), or None while it runs."""
        if self.proc.returncode is None:
            try:
                pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere (Popen.wait)
                return self.proc.poll()
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.rusage = usage
        return self.proc.returncode

    def exit_signal(self) -> int | None:
        """The signal that ended the bot (bwrap reports its child's death by signal N as 128+N)."""
        code = self.exit_code()
        if code is None:
            return None
        if code < 0:
            return -code
        if self.isolation == "bubblewrap" and 128 < code < 128 + 65:
            return code - 128
        return None

    def describe_exit(self) -> str:
        """A one-line account of how the process ended, naming a limit it ran into, with its
        last output line."""
        code = self.exit_code()
        if code is None:
            return "the bot process is still running"
        self._drain.join(timeout=0.3)  # let the last output arrive
        sig = self.exit_signal()
        last = self.last_output_line()
        if sig is not None:
            how = f"was killed by {_signal_name(sig)}"
            reason = self._signal_reason(sig)
        else:
            how = f"exited with code {code}"
            reason = None
        reason = reason or self._output_reason(last)
        text = f"the bot process {how}"
        if reason:
            text += f" ({reason})"
        return text + (f"; last output: {last}" if last else "")

    def _cpu_used(self) -> str:
        if self.rusage is None:
            return ""
        return f" after {self.rusage.ru_utime + self.rusage.ru_stime:.1f} s of CPU"

    def _signal_reason(self, sig: int) -> str | None:
        limits = self.limits
        if sig == signal.SIGXCPU and limits.cpu is not None:
            return f"CPU time limit: {limits.cpu} s per process{self._cpu_used()}"
        if sig == signal.SIGXFSZ and limits.file_size is not None:
            return f"file size limit: {human_bytes(limits.file_size)}"
        if sig == signal.SIGKILL:
            hard = f"{limits.cpu + CPU_GRACE} s hard " if limits.cpu is not None else ""
            return (
                f"SIGKILL: the {hard}CPU limit, the kernel's out-of-memory killer, or another process{self._cpu_used()}"
            )
        return None

    def _output_reason(self, last: str) -> str | None:
        limits = self.limits
        if limits.memory is not None and re.search(
            r"MemoryError|out of memory|Cannot allocate memory|bad_alloc|ENOMEM|Allocation failed", last, re.IGNORECASE
        ):
            return f"memory limit: {human_bytes(limits.memory)} of address space"
        if limits.file_size is not None and re.search(r"File too large|EFBIG|\[Errno 27\]", last):
            return f"file size limit: {human_bytes(limits.file_size)}"
        if self.isolation == "bubblewrap" and re.search(r"No space left on device|ENOSPC|\[Errno 28\]", last):
            size = f" ({human_bytes(limits.file_size + (1 << 20))})" if limits.file_size is not None else ""
            return f"its private /tmp is full{size}"
        if limits.open_files is not None and re.search(r"Too many open files|EMFILE|\[Errno 24\]", last):
            return f"open files limit: {limits.open_files}"
        if resource.RLIMIT_NPROC in self.rlimits and re.search(
            r"fork|thread|Resource temporarily unavailable|EAGAIN|\[Errno 11\]", last, re.IGNORECASE
        ):
            return f"process limit: {limits.processes} processes and threads of user {self.user.name}"
        return None

    def last_output_line(self) -> str:
        """The last line the bot wrote (kept or dropped), without the arbiter's own notes."""
        lines = self._tail.decode("utf-8", "replace").strip().splitlines()
        lines = [x for x in lines if x.strip() and not x.startswith("[arbiter:")]
        return lines[-1].strip()[:300] if lines else ""

    def kill(self) -> None:
        """Kill the process group and every process still carrying this seat's token."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.token:
            _sweep(lambda: [p for p in processes_with_token(self.token) if p != os.getpid()], rounds=50)
        if self._lease is not None:
            # The uid is this bot's alone: whatever still runs under it is the bot's, even a
            # process that left the group and cleared its environment.
            _sweep(lambda: processes_of_uid(self.user.uid), rounds=100)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log.error("bot process %d did not die after SIGKILL", self.pid)
        self.exit_code()
        self._drain.join(timeout=5)  # every writer of the pipe is dead: it reaches end of file
        if self._lease is not None and processes_of_uid(self.user.uid):
            log.error("processes of uid %d survived; the uid stays reserved", self.user.uid)
            self._lease = None
        self._release()

    def _remove_scratch(self) -> None:
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


# ---- permissions for another user ------------------------------------------------------------
def _may(st: os.stat_result, user: BotUser, want: int) -> bool:
    """Whether ``user`` has ``want`` (4 read, 2 write, 1 search/execute) on a file with ``st``."""
    if user.uid == 0:
        return True
    if st.st_uid == user.uid:
        return bool((st.st_mode >> 6) & want == want)
    if st.st_gid == user.gid:
        return bool((st.st_mode >> 3) & want == want)
    return bool(st.st_mode & want == want)


def path_problem(path: str, user: BotUser, need: str) -> str | None:
    """Why ``user`` cannot reach ``path`` (search every folder above it, then ``need``:
    ``r`` read, ``x`` execute or search), or None."""
    real = os.path.realpath(path)
    parts = Path(real).parents
    for folder in reversed(list(parts)):
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
    want = 1 if need == "x" else 4
    if not _may(st, user, want):
        what = "run" if need == "x" and not stat.S_ISDIR(st.st_mode) else "enter" if need == "x" else "read"
        return f"it cannot {what} {real} (mode {stat.filemode(st.st_mode)})"
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


def _sweep(find: Callable[[], list[int]], rounds: int) -> None:
    """SIGKILL whatever ``find`` names until it names nothing: a fork storm may still be
    forking while we look."""
    for _ in range(rounds):
        found = find()
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


def processes_with_token(token: str) -> list[int]:
    """Pids of live processes whose environment holds ``BARBU_TOKEN=token``."""
    needle = f"BARBU_TOKEN={token}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_until(predicate, timeout: float, interval: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
