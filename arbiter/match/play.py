"""One match between four bot processes: listen, launch, referee, record, clean up.

This is what ``arbiter match`` and the tournament workers call. Whatever the bots do, the
function returns a result and leaves a finished log; every process it started is gone.

The bots run under ``limits`` (arbiter.launcher.Limits) and, with ``isolation="bubblewrap"``,
each in its own sandbox; a match that asks for a sandbox this machine cannot build is refused
(ConfigError), never played without it. The log's ``match`` line records both (``isolation``,
``limits``), and a match played without isolation says so in the arbiter's log.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from barbu.matchlog import dumps

from arbiter.errors import ConfigError
from arbiter.process.bot import BotProcess, wait_until
from arbiter.process.limits import Limits
from arbiter.process.sandbox import bubblewrap_problem
from arbiter.process.users import make_reachable, resolve_user
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import MatchResult, MatchSetup, Referee
from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.server import ArbiterServer, RemotePlayer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BotSpec:
    name: str
    command: str
    cwd: str | None = None


@dataclass
class BotMatch:
    result: MatchResult
    log_path: Path
    outputs: list[Path] = field(default_factory=list)  # each seat's captured stdout+stderr
    wall_seconds: float = 0.0  # launch to clean-up
    connect_seconds: float = 0.0  # launch until every bot connected (or gave up)
    play_seconds: float = 0.0  # the referee's match loop
    pids: list[int] = field(default_factory=list)  # the bot processes started
    tokens: list[str] = field(default_factory=list)  # the seats' tokens (children inherit them)
    refused: list[str] = field(default_factory=list)  # why each refused connection was refused
    isolation: str = "none"
    scratch: list[str] = field(default_factory=list)  # the seats' scratch folders (removed)
    uids: list[int] = field(default_factory=list)  # the user each bot ran as


_warned_unisolated = False


class _HeaderKeys:
    """A log sink that adds keys to the first line (the ``match`` line); the log format lets
    a reader ignore keys it does not know."""

    def __init__(self, sink: Callable[[str], None], extra: dict):
        self.sink = sink
        self.extra: dict | None = extra

    def __call__(self, line: str) -> None:
        if self.extra is not None:
            header = json.loads(line)
            header.update(self.extra)
            line = dumps(header)
            self.extra = None
        self.sink(line)


def play_bot_match(
    bots: list[BotSpec],
    setup: MatchSetup,
    log_path: Path,
    *,
    time_control: TimeControl = TimeControl(),
    fault_policy: FaultPolicy = FaultPolicy(),
    listen: str | None = None,
    limits: Limits = Limits(),
    isolation: str = "none",
) -> BotMatch:
    """Play a match between four bot commands; the log is written to ``log_path``."""
    global _warned_unisolated
    if len(bots) != 4:
        raise ValueError("a match needs exactly 4 bots")
    user = resolve_user(limits.user)
    if isolation == "bubblewrap":
        problem = bubblewrap_problem(user)
        if problem:
            raise ConfigError(
                f"isolation: bubblewrap was asked for, but {problem}. Bots are not isolated, so the match is not "
                "played (install bubblewrap and allow user namespaces, or set isolation: none)"
            )
        if listen is not None and not listen.startswith("unix:"):
            raise ConfigError(
                "isolation: bubblewrap leaves bots no network: they reach the arbiter by its Unix socket only"
            )
    elif isolation != "none":
        raise ConfigError(f"isolation {isolation!r} is not one of none, bubblewrap")
    started = time.perf_counter()
    log_path = Path(log_path)
    stem = log_path.name.removesuffix(".jsonl")
    outputs = [log_path.with_name(f"{stem}.seat{s}.stderr") for s in range(4)]
    sink = AtomicLogFile(log_path)
    socket_dir = None
    if listen is None:
        socket_dir = tempfile.mkdtemp(prefix="barbu-")
        listen = f"unix:{socket_dir}/arbiter.sock"
    # Keepalive pings must not cut off a bot that may think this long without answering one.
    thinking = time_control.per_decision + time_control.reserve
    try:
        server = ArbiterServer(
            listen,
            hello_seconds=max(1.0, min(5.0, time_control.connect / 2)),
            keepalive_seconds=max(60.0, thinking + 10),
        ).start()
    except BaseException:
        sink.discard()
        if socket_dir:
            shutil.rmtree(socket_dir, ignore_errors=True)
        raise
    processes: list[BotProcess] = []
    try:
        if socket_dir and user.is_other:  # another user must reach and use the socket
            make_reachable(socket_dir, user)
            os.chmod(socket_dir, 0o711)
            os.chmod(os.path.join(socket_dir, "arbiter.sock"), 0o666)
        sessions = [server.expect(seat) for seat in range(4)]
        for seat, (bot, session) in enumerate(zip(bots, sessions)):
            env = {"BARBU_ARBITER": server.address, "BARBU_TOKEN": session.token, "BARBU_SEAT": str(seat)}
            processes.append(
                BotProcess(
                    bot.command,
                    env,
                    outputs[seat],
                    cwd=bot.cwd,
                    limits=limits,
                    isolation=isolation,
                    socket_dir=socket_dir,
                )
            )
        if isolation == "none" and not _warned_unisolated:
            log.warning(
                "bots are not isolated (isolation: none): they run as user %s and see this machine's files, "
                "processes and network; see docs/security.md",
                user.name,
            )
            _warned_unisolated = True
        # Wait for every bot to connect, or to die, or for the connect limit.
        wait_until(
            lambda: all(s.connected.is_set() or p.exit_code() is not None for s, p in zip(sessions, processes)),
            time_control.connect,
        )
        connected = time.perf_counter()
        entrants = [b.name for b in bots]
        players = [
            RemotePlayer(s, b.name, time_control, process=p, match_id=setup.match_id or stem, entrants=entrants)
            for s, b, p in zip(sessions, bots, processes)
        ]
        seats = [{"seat": s, "entrant": b.name, "command": b.command} for s, b in enumerate(bots)]
        header = _HeaderKeys(sink, {"isolation": isolation, "limits": limits.to_json()})
        referee = Referee(setup, players, header, seats=seats, time_control=time_control, fault_policy=fault_policy)
        result = referee.run()
        played = time.perf_counter()
    except BaseException:
        sink.discard()  # the match never started (a bot could not be launched), or we are being stopped
        raise
    finally:
        for p in processes:
            p.kill()
        server.stop()
        if socket_dir:
            shutil.rmtree(socket_dir, ignore_errors=True)
    # The log gets its final name last, after the clean-up: a tournament records the match right
    # after this returns, so the time a finished log exists unrecorded stays as short as it can.
    path = sink.commit()
    return BotMatch(
        result,
        path,
        outputs,
        wall_seconds=time.perf_counter() - started,
        connect_seconds=connected - started,
        play_seconds=played - connected,
        pids=[p.pid for p in processes],
        tokens=[s.token for s in sessions],
        refused=list(server.refused),
        isolation=isolation,
        scratch=[p.scratch for p in processes if p.scratch],
        uids=[p.user.uid for p in processes],
    )
