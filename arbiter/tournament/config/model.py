"""What a tournament file says, once validated: :class:`TournamentConfig` and its entrants."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from barbu.rules import Ruleset

from arbiter.lobby.server import LobbySettings as LobbySettings  # where remote entrants connect
from arbiter.model import PROVISIONAL_MATCHES, BotSpec, TimeControl, Transport
from arbiter.process.limits import Limits
from arbiter.process.sandbox import Isolation
from arbiter.referee.faults import FaultPolicy
from arbiter.tournament.formats import format_of

DEFAULT_LOG_ROOT = "logs"  # relative to the current directory when the file names no log_folder
DEFAULT_REMOTE_WAIT = 60.0  # seconds a match waits for a remote entrant before it is faulted absent


@dataclass(frozen=True)
class EntrantConfig:
    name: str
    command: str | None  # as written in the file (stored in the database)
    launch: str | None  # the command actually started: ``python`` is the arbiter's own interpreter
    cwd: str  # bots run in the tournament file's folder
    remote: bool = False
    transport: Transport = Transport.UNIX  # how the bot reaches the arbiter (a loopback TCP port: tcp)

    @property
    def spec(self) -> BotSpec:
        """How a match starts it (a remote entrant: through the lobby)."""
        return BotSpec(self.name, self.launch or "", self.cwd, remote=self.remote, transport=self.transport)


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    entrants: tuple[EntrantConfig, ...]
    rules: Ruleset
    format: str = "round_robin"  # a registered format's name (arbiter.tournament.formats)
    rounds: int = 1
    seed: int = 0
    challenger: str | None = None
    copies: bool = True
    deals: tuple[tuple[int, int, int, int], ...] | None = None  # hands from the deal file
    deals_file: str | None = None
    time_control: TimeControl = TimeControl()
    fault_policy: FaultPolicy = FaultPolicy()
    parallelism: int | None = None  # None: as many as cores
    database: str | None = None  # a URL or an SQLite path; None: the default database
    log_folder: Path = Path(DEFAULT_LOG_ROOT)
    standings_every: int = 0  # 0: every max(4, total // 8) matches
    limits: Limits = Limits()  # resource limits of every launched bot (docs/security.md)
    # None: not chosen in the file; resolve_environment picks the strongest this machine supports
    isolation: Isolation | None = None
    cluster: str | None = None  # a Dask scheduler address (tcp://HOST:PORT): play there (docs/cluster.md)
    lobby: LobbySettings | None = None  # where remote entrants connect; None: the file has none
    remote_wait: float = DEFAULT_REMOTE_WAIT  # then an absent remote entrant's seat is faulted ``absent``
    rating: str = "trueskill"  # what orders the standings: trueskill (μ) or margins (both are shown)
    provisional: int = (
        PROVISIONAL_MATCHES  # fewer complete matches: a provisional standing (an arena's matchmaking.provisional)
    )
    description: str = ""
    path: Path | None = None
    source: str = ""  # the file's text, kept in the database
    # "file:line" of each key, for the checks against this machine made after parsing
    where: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def entrant_names(self) -> list[str]:
        return [e.name for e in self.entrants]

    def entrant(self, name: str) -> EntrantConfig:
        for e in self.entrants:
            if e.name == name:
                return e
        raise KeyError(name)

    def fingerprint(self, legacy: bool = False) -> str:
        """What fixes the games: a resumed run must have the same (``rounds`` may grow).

        ``legacy``: the fingerprint stored before it covered ``limits`` and ``isolation`` (a
        database written then is taken as having been played with the file's current ones)."""
        tc = self.time_control
        fixed = not format_of(self.format).growing  # an arena's field grows: its entrants do not fix its games
        data = {
            "entrants": [[e.name, e.command, e.remote] for e in self.entrants] if fixed else [],
            "rules": self.rules.to_json(),
            "format": str(self.format),
            "challenger": self.challenger,
            "copies": self.copies,
            "seed": self.seed,
            "deals": hashlib.sha256(json.dumps(self.deals).encode()).hexdigest() if self.deals else None,
            "time_control": [tc.per_decision, tc.reserve, tc.connect, tc.match_limit],
            "max_strikes": self.fault_policy.max_strikes,
        }
        if not legacy:
            data["limits"] = self.limits.to_json()
            data["isolation"] = str(self.isolation)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
