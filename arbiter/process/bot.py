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
root. A uid range gives every bot a uid of its own (:class:`UidReservation`). docs/security.md says
what each limit does and does not stop.

**Isolation** (``isolation: bubblewrap``, arbiter.process.sandbox): the bot runs under ``bwrap``
with no network, its own process, IPC and user namespaces, a read-only view of the system, of the
arbiter's Python and of its own program's folder, a private ``/tmp``, and the arbiter's Unix
socket file bound in read-only; never as root, inside or outside its namespace.
:func:`bubblewrap_problem` checks at run time that ``bwrap`` works here; a match that asks for
isolation it cannot have is refused, never played unisolated.

Where the machine allows, the bot's own cgroup bounds its memory and processes as a whole
(arbiter.process.cgroup). At the end the whole group is killed, and so is every process that
escaped the group (e.g. with ``setsid``), found by :class:`~arbiter.process.tree.ProcessTree`:
the bot's own cgroup where this machine allows one, else its uid when it has one of its own, else the seat's token in the
environment; a sandboxed bot's processes also die with the sandbox's PID namespace. The seat's
scratch folder (its ``TMPDIR``) is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import io
import logging
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arbiter.errors import ConfigError
from arbiter.model import TRANSPORTS, Transport
from arbiter.process.command import split_command
from arbiter.process.limits import CPU_GRACE, Limits, human_bytes, prlimit_argv, prlimit_program, rlimit_values
from arbiter.process.procfs import processes_of_uid, tree_cpu_seconds, tree_exiting
from arbiter.process.sandbox import (
    ISOLATIONS,
    SANDBOX_SOCKET,
    Isolation,
    bot_user,
    bubblewrap_argv,
    bubblewrap_problem,
    relay_argv,
)
from arbiter.process.tree import ProcessTree
from arbiter.process.users import BotUser, UidReservation, as_user, make_reachable, path_problem
from arbiter.text import printable

log = logging.getLogger(__name__)


_ENV_KEEP = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TERM",
    "BARBU_LOG_LEVEL",
    "BARBU_PURE",
)
_warned_prlimit = False
QUIET_SECONDS = 0.2  # a kept bot silent this long between matches has printed all of the last one


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
        isolation: str = Isolation.NONE,
        transport: str = Transport.UNIX,
        writable: bool = False,
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
        if transport not in TRANSPORTS:
            raise ConfigError(f"transport {transport!r} is not one of {', '.join(TRANSPORTS)}")
        self.transport = transport
        self.writable = writable  # its folder writable in the sandbox: a build step, not a bot
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.rusage: resource.struct_rusage | None = None
        self._tail = b""  # the last bytes of output, kept or dropped (for the last line)
        self._head = b""  # the first bytes of output (a Go panic says its cause first)
        self._out_lock = threading.Lock()  # the drain thread against redirect_output
        self._kept = 0  # bytes kept in the current output file
        self.output_error: str | None = None  # why the current output file could not be written
        self._dropped = 0  # bytes dropped since
        self._in_hand = 0  # bytes the drain thread has read and not yet written
        self._last_output = 0.0  # when the drain thread last read output (time.monotonic)
        self.scratch: str | None = None  # the seat's TMPDIR (and HOME, for another user)
        self._reservation: UidReservation | None = None
        self._tree: ProcessTree | None = None
        self._out: io.BufferedWriter | None = None  # see _output_file
        user = bot_user(limits.user, isolation)
        if user.is_other and os.geteuid() != 0:
            raise ConfigError(f"running bots as user {user.name} needs the arbiter to run as root")
        self._check_program()
        if user.is_other and isolation == Isolation.NONE:
            self._check_reachable(user)
        if isolation == Isolation.BUBBLEWRAP and (problem := bubblewrap_problem(user)):
            raise ConfigError(f"isolation: bubblewrap was asked for, but {problem}: bots are not isolated")
        try:
            self._start(env, user)
        except BaseException:
            self._release()
            raise
        self._drain = threading.Thread(target=self._keep_output, name=f"bot-output-{self.pid}", daemon=True)
        self._drain.start()

    def _start(self, env: dict[str, str], user: BotUser) -> None:
        if user.pool is not None:  # a uid of its own, for this bot only
            self._reservation = UidReservation(user.pool)
            user = BotUser(self._reservation.uid, self._reservation.uid, str(self._reservation.uid), pool=user.pool)
        self.user = user
        self.rlimits = rlimit_values(self.limits, user)
        child_env = self._environment(env)
        kw: dict[str, Any] = {}
        address = child_env.get("BARBU_ARBITER", "")
        socket = address.removeprefix("unix:") if address.startswith("unix:") else None
        relayed = socket is not None and self.transport == Transport.TCP  # a loopback port before the socket
        if self.isolation == Isolation.BUBBLEWRAP:
            child_env.update(HOME="/tmp", TMPDIR="/tmp")
            # The arbiter's socket file, alone, at the sandbox's one place for it.
            if socket is not None:
                child_env["BARBU_ARBITER"] = f"unix:{SANDBOX_SOCKET}"
            # Its /tmp is memory: as large as one file may be (and a little), not more.
            size = self.limits.file_size
            tmp_size = None if size is None else size + (1 << 20)
            argv = bubblewrap_argv(
                self.argv,
                cwd=self.cwd,
                socket=socket,
                user=user,
                tmp_size=tmp_size,
                relay=relayed,
                writable=self.writable,
            )
        else:
            self.scratch = tempfile.mkdtemp(prefix="barbu-seat-")
            if user.is_other:
                os.chown(self.scratch, user.uid, user.gid)
                make_reachable(self.scratch, user)
                child_env["HOME"] = self.scratch
            child_env["TMPDIR"] = self.scratch
            argv = relay_argv(socket, self.argv) if relayed and socket is not None else list(self.argv)
            argv, kw = as_user(argv, user)
        prlimit = prlimit_program()
        if prlimit is not None:
            argv = [*prlimit_argv(prlimit, self.rlimits), *argv]
        # A cgroup is entered by a shell of the arbiter's user: not when the whole chain runs as another
        self._tree = ProcessTree(
            self.token,
            None if self._reservation is None else user.uid,
            own_cgroup=not kw,
            memory=self.limits.memory,
            processes=self.limits.processes,
        )
        argv = self._tree.wrap(argv)
        self.output.parent.mkdir(parents=True, exist_ok=True)
        self._out = open(self.output, "wb")  # noqa: SIM115 - open while the bot runs; _close_output closes it
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
            who = f" as user {user.name}" if user.is_other else ""
            raise ConfigError(f"cannot start bot {self.command!r}{who}: {e.strerror or e}") from None
        self.pid = self.proc.pid
        if prlimit_program() is None:
            self._set_limits_after_start()

    def _release(self) -> None:
        """Give back what a bot that could not start (or is gone) held."""
        if self._out is not None:
            self._out.close()
        self._remove_scratch()
        if self._tree is not None:
            self._tree.close()
        if self._reservation is not None:
            self._reservation.release()

    def _environment(self, env: dict[str, str]) -> dict[str, str]:
        """The bot's environment. A bot of the arbiter's own user, unsandboxed, inherits the
        arbiter's environment (as it always has); any other gets only the basics, so no
        secret of the arbiter's (a database URL, say) reaches an untrusted bot."""
        if self.isolation == Isolation.NONE and not self.user.is_other:
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
        pipe = self.proc.stdout
        assert isinstance(pipe, io.BufferedReader)  # stdout=PIPE, in bytes, buffered
        while chunk := pipe.read1(65536):
            self._in_hand = len(chunk)  # read, not yet written: redirect_output waits for it
            self._last_output = time.monotonic()
            with self._out_lock:
                self._tail = (self._tail + chunk)[-_ENDS:]
                if len(self._head) < _ENDS:
                    self._head += chunk[: _ENDS - len(self._head)]
                room = self.output_limit - self._kept if self.output_error is None else 0
                if room > 0:
                    self._write_output(chunk[:room])
                    self._kept += min(room, len(chunk))
                self._dropped += max(0, len(chunk) - max(room, 0))
                self._in_hand = 0
        with self._out_lock:
            self._close_output()
        pipe.close()

    def _write_output(self, data: bytes) -> None:
        """Write to the output file; one that cannot be written (a full disk) is the arbiter's
        failure, noted in ``output_error`` (the match host stops on it), not the bot's."""
        try:
            self._output_file.write(data)
            self._output_file.flush()
        except OSError as e:
            self.output_error = f"cannot write {printable(str(self.output))}: {e.strerror or e}"

    def _close_output(self) -> None:
        """Note what was dropped at the end of the current output file (under the lock)."""
        if self._dropped and self.output_error is None:
            self._write_output(f"\n[arbiter: {self._dropped} more bytes of output were dropped]\n".encode())
        self._dropped = 0

    @property
    def _output_file(self) -> io.BufferedWriter:
        """The current output file: :meth:`_start` opens it, before the drain thread starts."""
        assert self._out is not None
        return self._out

    def redirect_output(self, output: Path) -> None:
        """From now on the bot's output goes to ``output``, with a limit of its own: a bot process
        that plays several matches keeps one output file per match (:meth:`settle_output` first)."""
        output.parent.mkdir(parents=True, exist_ok=True)
        new = open(output, "wb")  # noqa: SIM115 - the bot's next output file; _close_output closes it
        with self._out_lock:
            self._close_output()
            old, self._out, self.output = self._output_file, new, output
            self._kept = 0
            self.output_error = None
            self._tail = self._head = b""
        old.close()

    async def settle_output(self, ended: float, quiet: float = QUIET_SECONDS, timeout: float = 1.0) -> None:
        """Wait (at most ``timeout``) until what the bot printed after its last match, which
        ended at ``ended`` (``time.monotonic()``), is in that match's file: nothing left in the
        pipe, nothing read and not yet written, and no output for ``quiet`` seconds since the
        match ended or its last output, whichever is later (a kept bot has nothing to do between
        matches: what it prints then, a JVM's late log line say, ends the match before). Call it
        before :meth:`redirect_output`; no wait for a bot idle that long."""
        deadline, pipe = time.monotonic() + timeout, self.proc.stdout
        while pipe is not None and time.monotonic() < deadline:
            try:
                pending = struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0" * 4))[0]
            except (OSError, ValueError):  # the pipe is closed: the drain thread is done
                return
            if pending == 0 and self._in_hand == 0 and time.monotonic() - max(self._last_output, ended) >= quiet:
                return
            await asyncio.sleep(0.005)

    def running(self) -> bool:
        """Whether the bot still runs: False once it has ended, or is ending (its process, or one
        in its sandbox, is exiting). Asked when gRPC cuts the bot's stream, to tell a crash from a
        connection dropped by a live process."""
        return self.exit_code() is None and not tree_exiting(self.pid)

    def exit_description(self) -> str | None:
        """None while the bot runs; once it has ended, how (:meth:`describe_exit`)."""
        return None if self.exit_code() is None else self.describe_exit()

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the bot has used so far: the process and its descendants,
        live or reaped (after the bot is reaped, what ``wait4`` reported)."""
        if self.rusage is not None:
            return self.rusage.ru_utime + self.rusage.ru_stime
        return tree_cpu_seconds(self.pid)

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
        if self.isolation == Isolation.BUBBLEWRAP and 128 < code < 128 + 65:
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
        first, last = _output_line(self._head, 0), self.last_output_line()
        how = f"was killed by {_signal_name(sig)}" if sig is not None else f"exited with code {code}"
        if self._tree is not None and self._tree.out_of_memory():  # the kernel killed one of its processes
            reason: str | None = (
                f"memory limit: {human_bytes(self.limits.memory or 0)} for the bot's processes together"
            )
        else:
            reason = (self._signal_reason(sig) if sig is not None else None) or self._output_reason(last)
        text = f"the bot process {how}"
        if reason:
            text += f" ({reason})"
        if first and first != last and first not in _NO_CAUSE:
            text += f"; first output: {first}"
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
            return f"memory limit: {human_bytes(limits.memory)}"
        if limits.file_size is not None and re.search(r"File too large|EFBIG|\[Errno 27\]", last):
            return f"file size limit: {human_bytes(limits.file_size)}"
        if self.isolation == Isolation.BUBBLEWRAP and re.search(r"No space left on device|ENOSPC|\[Errno 28\]", last):
            size = f" ({human_bytes(limits.file_size + (1 << 20))})" if limits.file_size is not None else ""
            return f"its private /tmp is full{size}"
        if limits.open_files is not None and re.search(r"Too many open files|EMFILE|\[Errno 24\]", last):
            return f"open files limit: {limits.open_files}"
        bounded = resource.RLIMIT_NPROC in self.rlimits or (self._tree is not None and self._tree.bounds_processes)
        if bounded and re.search(
            r"fork|thread|Resource temporarily unavailable|EAGAIN|\[Errno 11\]", last, re.IGNORECASE
        ):
            return f"process limit: {limits.processes} processes and threads"
        return None

    def last_output_line(self) -> str:
        """The last line the bot wrote (kept or dropped), without the arbiter's own notes; its
        control characters spelled out (it is shown on terminals and kept in logs)."""
        return _output_line(self._tail, -1)

    def with_last_words(self, detail: str, wait: float = 0.2) -> str:
        """``detail`` of a fault, with the bot's last output line if it wrote one: a bot that
        answers nonsense has usually said why on its stderr just before (the SDK logs it before
        it sends). With no output yet, waits up to ``wait`` seconds for the pipe to catch up."""
        if not self._tail:
            wait_until(lambda: bool(self._tail), wait, interval=0.01)
        last = self.last_output_line()
        return f"{detail}; the bot's last output: {last}" if last else detail

    def kill(self) -> None:
        """Kill the process group and every other process of the bot (:class:`ProcessTree`)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        assert self._tree is not None  # made before the process started
        self._tree.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log.error("bot process %d did not die after SIGKILL", self.pid)
        self.exit_code()
        self._drain.join(timeout=5)  # every writer of the pipe is dead: it reaches end of file
        if self._reservation is not None and processes_of_uid(self.user.uid):
            log.error("processes of uid %d survived; the uid stays reserved", self.user.uid)
            self._reservation = None
        self._release()

    def _remove_scratch(self) -> None:
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


_ENDS = 4096  # bytes kept of the output's beginning and of its end
_NO_CAUSE = {"Traceback (most recent call last):"}  # a first line that says nothing of the cause


def _output_line(data: bytes, index: int) -> str:
    """One line (first: 0, last: -1) of some output, without the arbiter's own notes; bounded,
    and its control characters spelled out (it is shown on terminals and kept in logs)."""
    lines = data.decode("utf-8", "replace").strip().split("\n")
    lines = [x for x in lines if x.strip() and not x.startswith("[arbiter:")]
    return printable(lines[index].strip()[:300]) if lines else ""


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def wait_until(predicate: Callable[[], object], timeout: float, interval: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
