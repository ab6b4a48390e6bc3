"""One match between four bot processes: listen, launch, referee, record, clean up.

This is what ``arbiter match`` and the tournament workers call. Whatever the bots do, the
function returns a result and leaves a finished log; every process it started is gone.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .faults import FaultPolicy
from .launcher import BotProcess, wait_until
from .log import AtomicLogFile
from .referee import MatchResult, MatchSetup, Referee
from .remote import ArbiterServer, RemotePlayer
from .timecontrol import TimeControl

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


def play_bot_match(
    bots: list[BotSpec],
    setup: MatchSetup,
    log_path: Path,
    *,
    time_control: TimeControl = TimeControl(),
    fault_policy: FaultPolicy = FaultPolicy(),
    listen: str | None = None,
) -> BotMatch:
    """Play a match between four bot commands; the log is written to ``log_path``."""
    if len(bots) != 4:
        raise ValueError("a match needs exactly 4 bots")
    started = time.perf_counter()
    log_path = Path(log_path)
    stem = log_path.name.removesuffix(".jsonl")
    outputs = [log_path.with_name(f"{stem}.seat{s}.stderr") for s in range(4)]
    sink = AtomicLogFile(log_path)
    socket_dir = None
    if listen is None:
        socket_dir = tempfile.mkdtemp(prefix="barbu-")
        listen = f"unix:{socket_dir}/arbiter.sock"
    server = ArbiterServer(listen).start()
    processes: list[BotProcess] = []
    try:
        sessions = [server.expect(seat) for seat in range(4)]
        for seat, (bot, session) in enumerate(zip(bots, sessions)):
            env = {"BARBU_ARBITER": server.address, "BARBU_TOKEN": session.token, "BARBU_SEAT": str(seat)}
            processes.append(BotProcess(bot.command, env, outputs[seat], cwd=bot.cwd))
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
        referee = Referee(setup, players, sink, seats=seats, time_control=time_control, fault_policy=fault_policy)
        result = referee.run()
        played = time.perf_counter()
        path = sink.commit()
    finally:
        for p in processes:
            p.kill()
        server.stop()
        if socket_dir:
            shutil.rmtree(socket_dir, ignore_errors=True)
        if not sink.closed:  # the match never started (a bot could not be launched)
            sink.discard()
    return BotMatch(
        result,
        path,
        outputs,
        wall_seconds=time.perf_counter() - started,
        connect_seconds=connected - started,
        play_seconds=played - connected,
        pids=[p.pid for p in processes],
        tokens=[s.token for s in sessions],
    )
