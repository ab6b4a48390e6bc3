"""Starting and stopping local bot processes.

A bot is started from its command line (a shell-style string, split with ``shlex``; no shell)
in a new session, so it and its children form one process group. It learns where the arbiter
listens and its secret token from the environment (``BARBU_ARBITER``, ``BARBU_TOKEN``). Its
stdout and stderr go to a per-seat file kept beside the match log. At the end the whole group
is killed, and so is any process that escaped the group (e.g. with ``setsid``) but still
carries the seat's token in its environment. Output beyond ``output_limit`` bytes is read and
dropped, so a flooding bot neither blocks on a full pipe nor fills the disk.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
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


DEFAULT_OUTPUT_LIMIT = 1 << 20  # bytes of a bot's stdout+stderr kept per match


class BotProcess:
    def __init__(
        self,
        command: str,
        env: dict[str, str],
        output: Path,
        cwd: str | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ):
        self.command = command
        self.argv = split_command(command)
        self.token = env.get("BARBU_TOKEN", "")
        self.output = output
        self.output_limit = output_limit
        output.parent.mkdir(parents=True, exist_ok=True)
        self._out = open(output, "wb")
        try:
            self.proc = subprocess.Popen(
                self.argv,
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as e:
            self._out.close()
            raise ConfigError(f"cannot start bot {command!r}: {e.strerror or e}") from None
        self.pid = self.proc.pid
        self._drain = threading.Thread(target=self._keep_output, name=f"bot-output-{self.pid}", daemon=True)
        self._drain.start()

    def _keep_output(self) -> None:
        """Copy the bot's output to its file up to the limit; read and drop the rest."""
        kept = 0
        dropped = 0
        pipe = self.proc.stdout
        while chunk := pipe.read1(65536):
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
        return self.proc.poll()

    def describe_exit(self) -> str:
        """A one-line account of how the process ended, with its last output line."""
        code = self.proc.poll()
        if code is None:
            return "the bot process is still running"
        how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
        last = self.last_output_line()
        return f"the bot process {how}" + (f"; last output: {last}" if last else "")

    def last_output_line(self) -> str:
        try:
            with open(self.output, "rb") as f:
                f.seek(max(0, os.path.getsize(self.output) - 2048))
                lines = f.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1][:300] if lines else ""

    def kill(self) -> None:
        """Kill the process group and every process still carrying this seat's token."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.token:
            for pid in processes_with_token(self.token):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log.error("bot process %d did not die after SIGKILL", self.pid)
        self._drain.join(timeout=5)  # every writer of the pipe is dead: it reaches end of file
        self._out.close()


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
