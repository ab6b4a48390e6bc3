"""The database tables (SQLModel): tournaments, entrants, matches, seat results, faults, ratings,
the standings, remote entrants' keys, arena authors and submissions.

A match row is written only when the match is over, in one transaction with its seat results,
its faults and the rating history it completes; so the database never holds half a match.
Lists (seats, totals, places) are kept as JSON text, which reads the same in SQLite and
PostgreSQL, and read back as lists (:class:`JsonList`): nothing outside storage decodes them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import BigInteger, Column, Dialect, Integer, Table, Text, UniqueConstraint, inspect
from sqlalchemy.types import TypeDecorator
from sqlmodel import AutoString, Field, SQLModel


def now() -> datetime:
    return datetime.now(UTC)


SEED = BigInteger().with_variant(Integer(), "sqlite")  # SQLite's INTEGER holds 64 bits already


class JsonList(TypeDecorator[Any]):
    """A list, kept as JSON text. What the text does not decode to is handed on as it is, for
    :func:`arbiter.storage.rows.check_row` to refuse with the row and column it is in."""

    impl = AutoString
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else json.dumps(list(value))

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        try:
            return json.loads(value)
        except (ValueError, TypeError, RecursionError):
            return value


class _Row(Protocol):
    id: int | None


def row_id(row: _Row) -> int:
    """The id of a stored row: the database sets it when the row is flushed (or read back)."""
    assert row.id is not None, f"{type(row).__name__} row not stored yet"
    return row.id


def table_of(model: type[SQLModel]) -> Table:
    """A table model's Table (SQLModel sets ``model.__table__`` but does not declare its type)."""
    table = inspect(model).local_table
    assert isinstance(table, Table)
    return table


class Tournament(SQLModel, table=True):
    __tablename__ = "tournaments"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    format: str
    fingerprint: str  # what fixes the games; a resumed run must match it
    rounds: int
    total_matches: int
    seed: int = Field(sa_type=SEED)  # 64 bits: an arena's set seeds (revision 0004)
    rules: str  # the rules as JSON (the match log's rules object)
    config_path: str = ""
    config_text: str = Field(default="", sa_column=Column(Text))
    created_at: datetime = Field(default_factory=now)
    finished_at: datetime | None = None


class Entrant(SQLModel, table=True):
    __tablename__ = "entrants"
    __table_args__ = (UniqueConstraint("tournament_id", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    name: str
    command: str | None = None
    remote: bool = False


class Match(SQLModel, table=True):
    __tablename__ = "matches"
    __table_args__ = (UniqueConstraint("tournament_id", "number"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    number: int  # position in the schedule
    key: str
    round: int
    table_no: int
    rotation: int
    game: int  # the rated game (the match itself, or its duplicate set)
    seed: int = Field(sa_type=SEED)  # 64 bits: an arena's set seeds (revision 0004)
    seats: list[str] = Field(sa_type=JsonList)  # the 4 entrant names in seat order
    status: str  # complete | aborted
    reason: str | None = None
    deals: int = 0
    totals: list[int] = Field(default_factory=list, sa_type=JsonList)
    places: list[int] = Field(default_factory=list, sa_type=JsonList)
    log_path: str = ""
    log_sha256: str = ""
    wall_seconds: float = 0.0
    arbiter_cpu: float = 0.0  # CPU seconds of the worker that refereed the match
    bots_cpu: float = 0.0  # CPU seconds of the four bot processes
    finished_at: datetime = Field(default_factory=now)


class SeatResult(SQLModel, table=True):
    __tablename__ = "seat_results"
    __table_args__ = (UniqueConstraint("match_id", "seat"),)

    id: int | None = Field(default=None, primary_key=True)
    match_id: int = Field(foreign_key="matches.id", index=True)
    entrant_id: int = Field(foreign_key="entrants.id", index=True)
    seat: int
    total: int
    place: int
    forfeited: bool = False
    faults: int = 0
    think_seconds: float = 0.0


class Fault(SQLModel, table=True):
    __tablename__ = "faults"

    id: int | None = Field(default=None, primary_key=True)
    match_id: int = Field(foreign_key="matches.id", index=True)
    entrant_id: int = Field(foreign_key="entrants.id", index=True)
    seat: int
    deal: int
    kind: str
    detail: str = Field(default="", sa_column=Column(Text))
    action: str


class RatingHistory(SQLModel, table=True):
    __tablename__ = "rating_history"
    __table_args__ = (UniqueConstraint("tournament_id", "game", "entrant_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    game: int  # the rated game, in schedule order
    match_number: int  # the last match of that game
    entrant_id: int = Field(foreign_key="entrants.id", index=True)  # an entrant's history (revision 0006)
    mu: float
    sigma: float


class StandingRow(SQLModel, table=True):
    """One entrant's standing as data (:class:`arbiter.model.Tally`), written in the transaction
    of each match that changes it: what the tables, pages and API read, never the history.
    Moments (count, sum, sum of squared deviations) give a mean and its 95% interval; ``trend``
    holds μ after its last rated games; ``contracts`` [[contract, n, sum, m2], ...] its deal
    scores; ``doubling`` [doubles, redoubles, won, lost, net, n, sum, m2 (acted), n, sum, m2
    (doubled)] (revision 0006)."""

    __tablename__ = "standings"
    __table_args__ = (UniqueConstraint("tournament_id", "entrant_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    entrant_id: int = Field(foreign_key="entrants.id")
    mu: float
    sigma: float
    conservative: float  # μ − 3σ (the table's order before revision 0007: now μ or the margin rating)
    games: int = 0
    matches: int = 0
    score_sum: float = 0.0
    score_m2: float = 0.0
    duplicate_n: int = 0
    duplicate_sum: float = 0.0
    duplicate_m2: float = 0.0
    faults: int = 0
    forfeits: int = 0
    last_played: datetime | None = None
    trend: list[float] = Field(default_factory=list, sa_type=JsonList)
    analysed: int = 0  # complete matches whose deals ``contracts`` and ``doubling`` sum
    contracts: list[Any] = Field(default_factory=list, sa_type=JsonList)
    doubling: list[Any] = Field(default_factory=list, sa_type=JsonList)


class MarginSumRow(SQLModel, table=True):
    """What one entrant's margin rating is solved from (:class:`arbiter.model.MarginSums`),
    written with its standing: the sets it was rated in, the sum of its centred scores and of
    their squares, and ``met`` [[entrant_id, Σ 1/k], ...] over the sets of k entrants it shared
    with each (itself too) (revision 0007)."""

    __tablename__ = "margin_sums"
    __table_args__ = (UniqueConstraint("tournament_id", "entrant_id"),)

    id: int | None = Field(default=None, primary_key=True)
    tournament_id: int = Field(foreign_key="tournaments.id", index=True)
    entrant_id: int = Field(foreign_key="entrants.id")
    sets: int = 0
    total: float = 0.0
    squares: float = 0.0
    met: list[Any] = Field(default_factory=list, sa_type=JsonList)


class StandingsMarkRow(SQLModel, table=True):
    """How far a tournament's standings go: the matches they count (a table behind the matches
    is rebuilt) and the first game, in schedule order, not yet rated (revision 0006)."""

    __tablename__ = "standings_marks"

    tournament_id: int = Field(foreign_key="tournaments.id", primary_key=True)
    matches: int = 0
    next_game: int = 0


class TournamentLease(SQLModel, table=True):
    """Who runs a tournament now: one row per tournament name, in the results database itself.

    A run takes the row before it touches anything (an insert, or a compare-and-set update of a
    free or stale row), renews ``heartbeat`` while it runs and frees the row (``owner`` empty)
    when it ends; each match it records renews the row in the same transaction, so a run that
    lost its lease cannot record. Times are the database server's clock, in seconds since the
    epoch, so that runs on machines whose clocks differ judge staleness alike. ``folder_key`` is
    made once with the row: the tournament's log folder names it (arbiter.tournament.logfolder).
    """

    __tablename__ = "tournament_leases"

    tournament: str = Field(primary_key=True)  # the tournament's name
    owner: str = ""  # the holding run's id; empty: free
    host: str = ""
    pid: int = 0
    node: str = ""  # host, boot and PID namespace: where ``pid`` names a process
    process_start: int = 0  # the holder's start time (clock ticks since boot): a reused pid is not it
    taken_at: float = 0.0
    heartbeat: float = 0.0
    folder_key: str = ""


class EntrantKey(SQLModel, table=True):
    """A remote entrant's key (arbiter.lobby.keys): found by its public ``key_id``; of its secret
    only the SHA-256 is kept. An entrant may hold several live keys (a new one before the old is
    revoked); a revoked key stays, with the time it was revoked, to say so to whoever tries it."""

    __tablename__ = "entrant_keys"

    id: int | None = Field(default=None, primary_key=True)
    key_id: str = Field(index=True, unique=True)
    entrant: str
    secret_sha256: str
    created_at: datetime = Field(default_factory=now)
    revoked_at: datetime | None = None


class Author(SQLModel, table=True):
    """An arena author: who may submit bots (arbiter.storage.arena). Its token has the
    entrant keys' format with another prefix (arbiter.lobby.keys); of its secret only the SHA-256
    is kept. A revoked author's row stays, with the time, to say so to whoever tries the token."""

    __tablename__ = "authors"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    token_id: str = Field(index=True, unique=True)
    token_sha256: str
    created_at: datetime = Field(default_factory=now)
    revoked_at: datetime | None = None
    # Counts the times the author's browser sessions were ended (logging out); a session holds
    # the count it began under and its token's id, and dies when either changes (revision 0005).
    session_epoch: int = 0


class Submission(SQLModel, table=True):
    """One version of an arena entrant, as its author submitted it: ``entrant@version`` in the
    arena's matches. ``status`` is one of :data:`arbiter.storage.arena.STATUSES`."""

    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("arena", "entrant", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    arena: str  # the arena's name (its tournament row's)
    author: str  # the author's name
    entrant: str
    version: int  # 1, 2, ... per arena and entrant
    status: str
    bundle: str  # SHA-256 (hex) of the bundle in the arena's store
    command: str  # from the bundle's entrant.yaml
    report: str = Field(default="", sa_column=Column(Text, nullable=False))  # the check's report (JSON)
    created_at: datetime = Field(default_factory=now)
    decided_at: datetime | None = None
    retired_at: datetime | None = None
