"""What a match is and what it produced: the plain, typed values every layer passes on.

A :class:`MatchTask` is everything needed to play one match (its bots in seat order, rules,
deals, time control, fault policy, limits, isolation, where its log goes); a
:class:`MatchOutcome` is what the match produced: the referee's :class:`~barbu.matchlog.MatchResult`
(places, totals, typed faults), the log's path and hash, the CPU it cost. The schedule makes tasks, an executor plays them (in this process, a
local pool or a Dask cluster: arbiter.execution.executors), the loop's observers record and
rate the outcomes. Everything here pickles (a task travels to a worker, its outcome back).

This module sits below every layer (like arbiter.errors): it imports the SDK's log vocabulary
and nothing of the arbiter.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from fractions import Fraction

from barbu.matchlog import FaultRecord as FaultRecord  # the log format's: one type for both
from barbu.matchlog import MatchResult

from arbiter.stats import Moments

# The longest each may be: finite, and within what a match can sensibly wait for.
# (remote_wait: how long a match waits for a remote entrant, a tournament file's key.)
MAX_SECONDS = {
    "per_decision": 3600.0, "reserve": 86400.0, "connect": 3600.0, "match_limit": 7 * 86400.0, "remote_wait": 3600.0,
}  # fmt: skip
MAX_WORDS = {
    "per_decision": "an hour", "reserve": "a day", "connect": "an hour", "match_limit": "a week", "remote_wait": "an hour",
}  # fmt: skip


@dataclass(frozen=True)
class TimeControl:
    """A per-decision limit plus a per-match reserve (arbiter.referee.timecontrol applies it)."""

    per_decision: float = 1.0
    reserve: float = 10.0
    connect: float = 10.0  # for a bot to start, connect and say hello
    match_limit: float = 1800.0  # wall-clock watchdog for one whole match

    def __post_init__(self) -> None:
        for name in ("per_decision", "reserve", "connect", "match_limit"):
            problem = seconds_problem(name, getattr(self, name))
            if problem:
                raise ValueError(f"time control {name!r} {problem}")


def seconds_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the time control's ``name``, or ``remote_wait`` (the one check of
    their bounds), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number of seconds, got {value!r}"
    if value != value:  # NaN
        return "must be a finite number of seconds, got nan"
    if name == "reserve" and value < 0:
        return f"must be 0 seconds or more, got {value:g}"
    if name != "reserve" and not value > 0:
        return f"must be more than 0 seconds, got {value:g}"
    if not value <= MAX_SECONDS[name]:  # also infinity
        return f"must be at most {MAX_SECONDS[name]:g} seconds ({MAX_WORDS[name]}), got {value:g}"
    return None


class Isolation(StrEnum):
    """How a bot is kept from the machine: ``none`` (limits and users only) or ``bubblewrap``
    (arbiter.process.sandbox)."""

    NONE = "none"
    BUBBLEWRAP = "bubblewrap"


ISOLATIONS = tuple(mode.value for mode in Isolation)


class Transport(StrEnum):
    """How a bot reaches the arbiter: ``unix`` (the arbiter's Unix socket, the default) or ``tcp``
    (a loopback TCP address, for stacks that cannot dial a Unix socket: arbiter.process.tcp_relay)."""

    UNIX = "unix"
    TCP = "tcp"


TRANSPORTS = tuple(t.value for t in Transport)
DEFAULT_OUTPUT_LIMIT = 1 << 20  # bytes of a bot's stdout+stderr kept per match


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits of a launched bot (``None``: not limited).

    Every process of the bot gets them (children inherit them). ``cpu`` is CPU seconds per
    process over its life: one match, or several for a bot kept between matches (multi_match;
    arbiter.match.play lets such a process go once it has used half of it). ``memory`` and
    ``processes`` bound the bot as a whole where this machine gives it a cgroup with those
    controllers (arbiter.process.cgroup); besides, ``memory`` bounds each process's data
    (RLIMIT_DATA: what it writes, not the address space it merely reserves, which a JVM or a Go
    runtime reserves by gigabytes), and ``processes`` counts every process and thread of the
    bot's *user* (RLIMIT_NPROC), applied when the bot runs as a user of its own.
    """

    memory: int | None = 2 << 30  # bytes: the bot's memory (cgroup) and each process's data (RLIMIT_DATA)
    cpu: int | None = 1800  # CPU seconds per process (RLIMIT_CPU: SIGXCPU, then SIGKILL)
    processes: int | None = 256  # processes + threads of the bot (cgroup pids) and of its user (RLIMIT_NPROC)
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

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class BotSpec:
    """A bot for one seat: the entrant's name, its command line, the folder it runs in; or, with
    ``remote``, an entrant that plays from elsewhere through the lobby (no command)."""

    name: str
    command: str
    cwd: str | None = None
    remote: bool = False
    transport: Transport = Transport.UNIX


@dataclass(frozen=True)
class MatchTask:
    """One match to play: everything a worker needs, nothing it must look up."""

    number: int  # the match's position in the schedule
    key: str
    match_id: str
    bots: tuple[BotSpec, ...]  # in seat order
    rules: dict[str, object]  # the rules as the log's header holds them (Ruleset.to_json)
    seed: int
    deals: tuple[tuple[int, ...], ...] | None
    first_declarer: int
    log_path: str
    time_control: TimeControl
    max_strikes: int
    limits: Limits = Limits()  # the bots' resource limits (arbiter.process.limits sets them)
    isolation: Isolation = Isolation.NONE
    reuse: bool = True  # a worker may hand a kept bot process (one that said multi_match) this match


@dataclass(frozen=True)
class MatchOutcome:
    """What one played match produced, as a worker hands it back: the referee's result (the one
    outcome type, :class:`barbu.matchlog.MatchResult`), where its finished log is, what it cost."""

    number: int  # the match's position in the schedule
    result: MatchResult
    log_path: str = ""
    log_sha256: str = ""
    wall_seconds: float = 0.0
    arbiter_cpu: float = 0.0
    bots_cpu: float = 0.0  # the bot processes of this machine
    remote_seats: int = 0  # seats played from elsewhere (a remote entrant's, played or absent): bots_cpu is not theirs
    deals: tuple[DealSummary, ...] = ()  # each finished deal (a complete, valid log's): what the standings sum


@dataclass(frozen=True)
class DealSummary:
    """What the standings keep of one finished deal: its contract, declarer, raw and deal scores,
    and its doubled pairs as (i, j, level, the seat that doubled, the one that redoubled or -1)."""

    contract: str
    declarer: int
    raw: tuple[int, ...]
    scores: tuple[int, ...]
    pairs: tuple[tuple[int, int, int, int, int], ...] = ()


# ---- what a schedule says of a match, and what the ratings read of it ------------------------
@dataclass(frozen=True)
class ScheduledMatch:
    number: int  # 0-based position in the schedule: ratings are updated in this order
    key: str  # readable and unique in the tournament (its format's key pattern), e.g. "r1-t003-2"
    round: int  # 0-based
    table: int  # 0-based, within the round
    rotation: int  # 0-based seat rotation of the table
    game: int  # the rated game this match belongs to: its own number, or its duplicate set
    seats: tuple[str, str, str, str]  # entrant names in seat order 0..3
    seed: int  # seeds the deals (unless a deal file gives them) and the fallback players
    deal_block: int  # which block of the deal file this match plays
    first_declarer: int = 0


@dataclass(frozen=True)
class SeatRecord:
    entrant: str
    total: int
    forfeited: bool = False
    faults: int = 0


@dataclass(frozen=True)
class MatchRecord:
    number: int
    game: int
    status: str  # "complete" or "aborted"
    seats: tuple[SeatRecord, ...]

    def scores(self) -> dict[str, Fraction]:
        """Each entrant's score in this match: the mean total of its seats."""
        sums: dict[str, list[int]] = {}
        for s in self.seats:
            sums.setdefault(s.entrant, []).append(s.total)
        return {e: Fraction(sum(v), len(v)) for e, v in sums.items()}

    def forfeited(self) -> set[str]:
        return {s.entrant for s in self.seats if s.forfeited}


@dataclass(frozen=True)
class RatingRow:
    """One entrant's rating after one game (a row of the rating history)."""

    game: int
    match_number: int
    entrant: str
    mu: float
    sigma: float


@dataclass(frozen=True)
class DoublingTally:
    """An entrant's doubling record as data: the doubles and redoubles it made, what the pairs it
    acted in brought it (won, lost, net, their moments), and the pairs it was doubled in."""

    doubles: int = 0
    redoubles: int = 0
    won: int = 0
    lost: int = 0
    net: int = 0
    acted: Moments = Moments()
    passive: Moments = Moments()


RATINGS = ("trueskill", "margins")  # what may order the standings (a file's ``rating`` key); both are shown
PROVISIONAL_MATCHES = 12
"""An entrant with fewer complete matches than this is *provisional* in a tournament's standings
(three duplicate sets: its μ is still mostly the prior's). An arena's leaderboard marks its
entrants by ``matchmaking.provisional`` instead (:data:`arbiter.arena.matchmaking.SWISS_START`)."""
DEFAULT_RANKING = (RATINGS[0], PROVISIONAL_MATCHES)
"""What orders standings, and their provisional count, when no file says otherwise."""


@dataclass(frozen=True)
class MarginSums:
    """One entrant's share of the margin ratings' normal equations (arbiter.tournament.margins),
    added to by each rated set it is in: the sets, the sum of its centred scores (its score less
    the set's mean) and of their squares, and per entrant it met (itself too) the sum of 1/k over
    the sets of k entrants they were both in. Kept as data (the standings), so the ratings are
    solved from these sums without replaying the history."""

    sets: int = 0
    total: float = 0.0
    squares: float = 0.0
    met: dict[str, float] = field(default_factory=dict)

    def add(self, entrant: str, scores: dict[str, float]) -> MarginSums:
        """These sums once the set ``scores`` (entrant → score, ``entrant`` among them) is added."""
        mean = sum(scores.values()) / len(scores)
        centred = scores[entrant] - mean
        met = dict(self.met)
        for other in scores:
            met[other] = met.get(other, 0.0) + 1.0 / len(scores)
        return MarginSums(self.sets + 1, self.total + centred, self.squares + centred * centred, met)


@dataclass(frozen=True)
class Tally:
    """One entrant's standing as data, brought up to date by each recorded match and each rated
    game (arbiter.tournament.standings); what the standings table keeps per entrant."""

    entrant: str
    mu: float
    sigma: float
    games: int = 0  # rated games
    score: Moments = Moments()  # its score per complete match
    duplicate: Moments = Moments()  # per rated duplicate game: its score less the others' mean
    faults: int = 0
    forfeits: int = 0
    last_played: datetime | None = None
    trend: tuple[float, ...] = ()  # μ after each of its last rated games, oldest first (bounded)
    analysed: int = 0  # complete matches whose deals are summed below
    contracts: dict[str, Moments] = field(default_factory=dict)  # its deal score per contract
    doubling: DoublingTally = DoublingTally()
    margin: MarginSums = MarginSums()  # per rated game with others: what its margin rating needs


@dataclass(frozen=True)
class StandingsMark:
    """How far a tournament's standings go: the matches they count and the first game (in
    schedule order) not yet rated."""

    matches: int
    next_game: int
