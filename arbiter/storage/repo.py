"""Reading and writing tournament results; every write that matters is one transaction.

The tournament loop's recorder (parent process only) calls :meth:`Repo.record_match` once per
finished match: the match row, its four seat results, its faults and the rating-history rows the
match completes are committed together, so an interrupted run leaves either the whole match or
none of it. Readers get plain values (:class:`arbiter.tournament.ratings.MatchRecord`).

The database is input too (rows may be edited by hand or another program): every row read is
checked against its table (:mod:`arbiter.storage.rows`); one that does not fit is a
StorageError naming the table, the row and the column, never a traceback further on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Protocol

from sqlalchemy import func, insert, inspect, update
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session, col, select

from arbiter.errors import ConfigError, StorageError
from arbiter.model import MatchOutcome, MatchRecord, RatingRow, ScheduledMatch, SeatRecord, StandingsMark, Tally
from arbiter.storage.db import first_line
from arbiter.storage.models import (
    Entrant,
    Fault,
    MarginSumRow,
    Match,
    RatingHistory,
    SeatResult,
    StandingsMarkRow,
    Tournament,
    now,
    row_id,
    table_of,
)
from arbiter.storage.rows import bad_row, check_value, checked
from arbiter.storage.standings import clear_standings, read_standings, write_mark, write_tallies


class _Rules(Protocol):
    def to_json(self) -> dict[str, object]: ...


class _Entrant(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def command(self) -> str | None: ...
    @property
    def remote(self) -> bool: ...


class TournamentSpec(Protocol):
    """What the database keeps of a tournament's configuration (arbiter.tournament.config's
    TournamentConfig; storage sits below it)."""

    @property
    def name(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def rounds(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def source(self) -> str: ...
    @property
    def rules(self) -> _Rules: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def entrants(self) -> Sequence[_Entrant]: ...
    def fingerprint(self, legacy: bool = False) -> str: ...


class Repo:
    def __init__(self, engine: Engine):
        self.engine = engine

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    # ---- tournaments -------------------------------------------------------------------
    def tournament(self, name: str | None = None) -> Tournament | None:
        """The named tournament, or the most recently created one."""
        with self.session() as s:
            if name is not None:
                return next(iter(checked(s, select(Tournament).where(Tournament.name == name))), None)
            latest = select(Tournament).order_by(col(Tournament.id).desc())
            rows = checked(s, latest)  # every row checked: the latest by its (checked) created_at
            return max(rows, key=lambda t: (t.created_at, row_id(t)), default=None)

    def require_tournament(self, name: str | None = None) -> Tournament:
        """:meth:`tournament`, or a ConfigError saying why there is none (for the commands)."""
        try:
            t = self.tournament(name)
        except SQLAlchemyError as e:  # an empty or foreign database: no tournaments table
            raise ConfigError(f"the database holds no tournament results ({first_line(e)})") from None
        if t is None:
            if name is None:
                raise ConfigError("the database holds no tournament yet")
            known = ", ".join(x.name for x in self.tournaments())
            raise ConfigError(f"no tournament named {name!r}" + (f" (known: {known})" if known else ""))
        return t

    @contextmanager
    def reading(self, what: str) -> Iterator[None]:
        """Reads in this block that fail become one StorageError line: "cannot read WHAT: why"."""
        try:
            yield
        except SQLAlchemyError as e:
            raise StorageError(f"cannot read {what}: {first_line(e)}") from None

    def tournaments(self) -> list[Tournament]:
        with self.session() as s:
            return checked(s, select(Tournament).order_by(col(Tournament.id)))

    def start(
        self,
        config: TournamentSpec,
        schedule: Sequence[ScheduledMatch],
        *,
        check_stored: bool = True,
        stored_rows: Sequence[Match] | None = None,
    ) -> tuple[Tournament, dict[str, int]]:
        """Create the tournament, or check that a stored one is the same and may be resumed.
        ``check_stored``: check the stored matches (``stored_rows``, when the caller read them
        already) against ``schedule`` (a schedule that grows during the run was checked when the
        run began: its new matches are not stored yet)."""
        with self.session() as s:
            t = next(iter(checked(s, select(Tournament).where(Tournament.name == config.name))), None)
            if t is None:
                t = Tournament(
                    name=config.name,
                    format=config.format,
                    fingerprint=config.fingerprint(),
                    rounds=config.rounds,
                    total_matches=len(schedule),
                    seed=config.seed,
                    rules=json.dumps(config.rules.to_json()),
                    config_path=str(config.path or ""),
                    config_text=config.source,
                )
                s.add(t)
                try:
                    s.flush()
                except IntegrityError:  # another run created it at the same moment (no lease held?)
                    s.rollback()
                    raise ConfigError(
                        f"tournament {config.name!r} was created by another run at the same time"
                    ) from None
                for e in config.entrants:
                    s.add(Entrant(tournament_id=row_id(t), name=e.name, command=e.command, remote=e.remote))
                try:
                    s.commit()
                except IntegrityError:  # another run created it at the same moment
                    s.rollback()
                    raise ConfigError(
                        f"tournament {config.name!r} was created by another run at the same time"
                    ) from None
            else:
                if t.fingerprint != config.fingerprint() and t.fingerprint == config.fingerprint(legacy=True):
                    # recorded before the fingerprint covered limits and isolation: adopt this run's
                    t.fingerprint = config.fingerprint()
                    s.add(t)
                    s.commit()
                if t.fingerprint != config.fingerprint():
                    raise ConfigError(
                        f"the database already holds a tournament named {config.name!r} played with a different "
                        "configuration (entrants, rules, format, seed, deals, time control, fault policy, limits or "
                        "isolation); "
                        "give the tournament a new 'name' or use another database"
                    )
                if check_stored:
                    stored = (
                        stored_rows
                        if stored_rows is not None
                        else checked(s, select(Match).where(Match.tournament_id == t.id))
                    )
                    _check_stored(config, schedule, stored)
                if t.total_matches != len(schedule) or t.rounds != config.rounds:
                    t.rounds, t.total_matches, t.finished_at = config.rounds, len(schedule), None
                    t.config_text = config.source
                    s.add(t)
                    s.commit()
            known = {e.name for e in s.exec(select(Entrant).where(Entrant.tournament_id == t.id))}
            joined = [e for e in config.entrants if e.name not in known]  # an arena's field grows
            for e in joined:
                s.add(Entrant(tournament_id=row_id(t), name=e.name, command=e.command, remote=e.remote))
            if joined:
                s.commit()
            ids = {e.name: row_id(e) for e in s.exec(select(Entrant).where(Entrant.tournament_id == t.id))}
            return t, ids

    def grow(
        self, tournament_id: int, config: TournamentSpec, total: int, entrant_ids: dict[str, int]
    ) -> dict[str, int]:
        """A running tournament's schedule grew to ``total`` matches (its start checked what was
        stored): its row says so and the entrants not in ``entrant_ids`` join (an arena's field);
        every entrant's id. A few statements, whatever the history's size."""
        tournaments = table_of(Tournament)
        with self.session() as s:
            s.execute(
                update(tournaments)
                .where(tournaments.c.id == tournament_id)
                .values(rounds=config.rounds, total_matches=total, finished_at=None, config_text=config.source)
            )
            ids = dict(entrant_ids)
            for e in config.entrants:
                if e.name not in ids:
                    values = {"tournament_id": tournament_id, "name": e.name, "command": e.command, "remote": e.remote}
                    entrants = table_of(Entrant)
                    ids[e.name] = s.execute(insert(entrants).returning(entrants.c.id), values).scalar_one()
            s.commit()
        return ids

    def finish(self, tournament_id: int) -> None:
        """Mark the tournament complete: finished when its last match was recorded."""
        with self.session() as s:
            t = s.get_one(Tournament, tournament_id)
            last = s.exec(select(func.max(Match.finished_at)).where(Match.tournament_id == tournament_id)).one()
            if t.finished_at != last:
                t.finished_at = last
                s.add(t)
                s.commit()

    def entrant_names(self, tournament_id: int) -> list[str]:
        with self.session() as s:
            query = select(Entrant).where(Entrant.tournament_id == tournament_id).order_by(col(Entrant.id))
            return [e.name for e in checked(s, query)]

    def entrants_by_id(self, tournament_id: int) -> dict[int, str]:
        """Entrant names by row id: seat results and faults name their entrant by id."""
        with self.session() as s:
            query = select(Entrant).where(Entrant.tournament_id == tournament_id)
            return {row_id(e): e.name for e in checked(s, query)}

    # ---- matches -----------------------------------------------------------------------
    def record_match(
        self,
        tournament_id: int,
        scheduled: ScheduledMatch,
        outcome: MatchOutcome,
        entrant_ids: dict[str, int],
        ratings: Iterable[RatingRow] = (),
        fence: Callable[[Session], None] | None = None,
        *,
        tallies: Iterable[Tally] = (),
        mark: StandingsMark | None = None,
        finished_at: datetime | None = None,
    ) -> None:
        """One finished match with its seats, faults, rating rows and the standings it changes
        (``tallies``, and how far they go: ``mark``), in one transaction.

        ``fence(session)`` runs first in that transaction (the tournament lease: it raises, and
        nothing is recorded, if this run no longer holds it)."""
        r = outcome.result
        forfeits, strikes = set(r.forfeits), r.strikes
        try:
            with self.session() as s:
                if fence is not None:
                    fence(s)
                # Core statements, a few per match: the ORM's unit of work cost more than the rows.
                values = _match_values(tournament_id, scheduled, outcome, finished_at or now())
                match_id = s.execute(insert(table_of(Match)).returning(table_of(Match).c.id), values).scalar_one()
                s.execute(
                    insert(table_of(SeatResult)),
                    [
                        {
                            "match_id": match_id,
                            "entrant_id": entrant_ids[name],
                            "seat": seat,
                            "total": r.totals[seat],
                            "place": r.places[seat],
                            "forfeited": seat in forfeits,
                            "faults": strikes[seat],
                            "think_seconds": r.think_seconds[seat],
                        }
                        for seat, name in enumerate(scheduled.seats)
                    ],
                )
                if r.faults:
                    s.execute(
                        insert(table_of(Fault)),
                        [
                            {
                                "match_id": match_id,
                                "entrant_id": entrant_ids[scheduled.seats[f.seat]],
                                "seat": f.seat,
                                "deal": f.deal,
                                "kind": f.kind.value,
                                "detail": f.detail,
                                "action": f.action,
                            }
                            for f in r.faults
                        ],
                    )
                rating_rows = [self._rating_values(tournament_id, row, entrant_ids) for row in ratings]
                if rating_rows:
                    s.execute(insert(table_of(RatingHistory)), rating_rows)
                write_tallies(s, tournament_id, tallies, entrant_ids)
                if mark is not None:
                    write_mark(s, tournament_id, mark)
                s.commit()
        except IntegrityError as e:
            raise StorageError(
                f"match {scheduled.key} is already recorded (is another run of this tournament going on?): {first_line(e)}"
            ) from None
        except SQLAlchemyError as e:
            raise StorageError(f"cannot record match {scheduled.key}: {first_line(e)}") from None

    @staticmethod
    def _rating_values(tournament_id: int, r: RatingRow, entrant_ids: dict[str, int]) -> dict[str, object]:
        return {
            "tournament_id": tournament_id,
            "game": r.game,
            "match_number": r.match_number,
            "entrant_id": entrant_ids[r.entrant],
            "mu": r.mu,
            "sigma": r.sigma,
        }

    def matches(self, tournament_id: int, rows: Sequence[Match] | None = None) -> list[MatchRecord]:
        """Every recorded match as a plain record, in schedule order (``rows``: its match rows,
        when the caller read them already)."""
        seats = self._seat_records(tournament_id, self.entrants_by_id(tournament_id))
        return [
            MatchRecord(number=m.number, game=m.game, status=m.status, seats=tuple(seats.get(row_id(m), ())))
            for m in (self.match_rows(tournament_id) if rows is None else rows)
        ]

    def _seat_records(self, tournament_id: int, names: dict[int, str]) -> dict[int, list[SeatRecord]]:
        """Each recorded match's seats as records, by match id, in seat order: read as plain
        columns (a history of 100 000 matches holds 400 000 of them), each value checked."""
        table = table_of(SeatResult)
        query = (
            sa_select(
                table.c.id, table.c.match_id, table.c.entrant_id, table.c.total, table.c.forfeited, table.c.faults
            )
            .join(table_of(Match), table.c.match_id == table_of(Match).c.id)
            .where(table_of(Match).c.tournament_id == tournament_id)
            .order_by(table.c.match_id, table.c.seat)
        )
        out: dict[int, list[SeatRecord]] = {}
        with self.engine.connect() as c:
            for seat_id, match_id, entrant_id, total, forfeited, faults in c.execute(query):
                if entrant_id not in names:
                    raise bad_row("seat_results", seat_id, "entrant_id", "names no entrant of this tournament")
                check_value("seat_results", seat_id, "total", total, int)
                check_value("seat_results", seat_id, "faults", faults, int)
                check_value("seat_results", seat_id, "forfeited", forfeited, bool)
                out.setdefault(match_id, []).append(SeatRecord(names[entrant_id], total, bool(forfeited), faults))
        return out

    def match_rows(self, tournament_id: int) -> list[Match]:
        with self.session() as s:
            query = select(Match).where(Match.tournament_id == tournament_id).order_by(col(Match.number))
            return checked(s, query)

    def count_matches(self, tournament_id: int) -> int:
        with self.session() as s:
            return s.exec(select(func.count()).select_from(Match).where(Match.tournament_id == tournament_id)).one()

    def faults(self, tournament_id: int) -> list[Fault]:
        with self.session() as s:
            query = (
                select(Fault)
                .join(Match, col(Fault.match_id) == col(Match.id))
                .where(Match.tournament_id == tournament_id)
            )
            return checked(s, query.order_by(col(Fault.id)))

    def seat_results(self, tournament_id: int) -> dict[int, list[SeatResult]]:
        """Each recorded match's seat results, by match id, in seat order."""
        with self.session() as s:
            query = (
                select(SeatResult)
                .join(Match, col(SeatResult.match_id) == col(Match.id))
                .where(Match.tournament_id == tournament_id)
                .order_by(col(SeatResult.match_id), col(SeatResult.seat))
            )
            out: dict[int, list[SeatResult]] = {}
            for sr in checked(s, query):
                out.setdefault(sr.match_id, []).append(sr)
            return out

    # ---- ratings -----------------------------------------------------------------------
    def rating_history(self, tournament_id: int, *, entrants: Sequence[str] | None = None) -> list[RatingRow]:
        """The rating history in game order; ``entrants``: theirs alone (by its entrant index)."""
        names = self.entrants_by_id(tournament_id)
        with self.session() as s:
            query = select(RatingHistory).where(RatingHistory.tournament_id == tournament_id)
            if entrants is not None:
                ids = [i for i, name in names.items() if name in set(entrants)]
                query = query.where(col(RatingHistory.entrant_id).in_(ids))
            rows = checked(s, query.order_by(col(RatingHistory.game), col(RatingHistory.entrant_id)))
        for r in rows:
            if r.entrant_id not in names:
                raise bad_row("rating_history", r, "entrant_id", "names no entrant of this tournament")
        return [RatingRow(r.game, r.match_number, names[r.entrant_id], r.mu, r.sigma) for r in rows]

    # ---- standings -----------------------------------------------------------------------
    def standings(self, tournament_id: int) -> tuple[StandingsMark | None, dict[str, Tally]]:
        """How far the kept standings go (None: not kept yet, or a database from before they
        were: readers never upgrade it) and each entrant's tally."""
        names = self.entrants_by_id(tournament_id)
        try:
            with self.session() as s:
                return read_standings(s, tournament_id, names)
        except SQLAlchemyError:
            inspector = inspect(self.engine)
            if all(inspector.has_table(table_of(kept).name) for kept in (StandingsMarkRow, MarginSumRow)):
                raise
            return None, {}

    def store_standings(
        self,
        tournament_id: int,
        tallies: Iterable[Tally],
        mark: StandingsMark,
        ratings: Iterable[RatingRow],
        entrant_ids: dict[str, int],
        *,
        rebuilt: bool,
        fence: Callable[[Session], None] | None = None,
    ) -> None:
        """Write standings in one transaction: ``rebuilt``, in place of every kept one and of the
        rating history (a replay); else added to them (games rated at a run's start)."""
        try:
            with self.session() as s:
                if fence is not None:
                    fence(s)
                if rebuilt:
                    clear_standings(s, tournament_id)
                    s.flush()
                rows = [self._rating_values(tournament_id, row, entrant_ids) for row in ratings]
                for start in range(0, len(rows), 5000):
                    s.execute(insert(table_of(RatingHistory)), rows[start : start + 5000])
                write_tallies(s, tournament_id, tallies, entrant_ids)
                write_mark(s, tournament_id, mark)
                s.commit()
        except SQLAlchemyError as e:
            raise StorageError(f"cannot store the standings: {first_line(e)}") from None

    def final_ratings(self, tournament_id: int) -> dict[str, tuple[float, float]]:
        """Each entrant's latest (μ, σ) from the rating history."""
        out: dict[str, tuple[float, float]] = {}
        for r in self.rating_history(tournament_id):
            out[r.entrant] = (r.mu, r.sigma)
        return out


def _match_values(
    tournament_id: int, m: ScheduledMatch, outcome: MatchOutcome, finished_at: datetime
) -> dict[str, object]:
    """A match row's columns, as the recorder inserts it."""
    r = outcome.result
    return {
        "tournament_id": tournament_id,
        "number": m.number,
        "key": m.key,
        "round": m.round,
        "table_no": m.table,
        "rotation": m.rotation,
        "game": m.game,
        "seed": m.seed,
        "seats": list(m.seats),
        "status": r.status.value,
        "reason": r.reason,
        "deals": r.deals,
        "totals": list(r.totals),
        "places": list(r.places),
        "log_path": outcome.log_path,
        "log_sha256": outcome.log_sha256,
        "wall_seconds": outcome.wall_seconds,
        "arbiter_cpu": outcome.arbiter_cpu,
        "bots_cpu": outcome.bots_cpu,
        "finished_at": finished_at,
    }


def _check_stored(config: TournamentSpec, schedule: Sequence[ScheduledMatch], stored: Sequence[Match]) -> None:
    """Every stored match is the scheduled match of its number: rounds can grow, not shrink."""
    by_number = {m.number: m for m in schedule}
    for row in stored:
        number, key, seats = row.number, row.key, row.seats
        want = by_number.get(number)
        if want is None:
            raise ConfigError(
                f"tournament {config.name!r} already has match {key} beyond the {len(schedule)} matches of "
                f"{config.rounds} round(s); rounds can grow, not shrink"
            )
        if want.key != key or list(want.seats) != seats:
            raise ConfigError(f"stored match {key} of tournament {config.name!r} does not fit this schedule")
