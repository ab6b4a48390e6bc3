"""The standings table: each entrant's :class:`~arbiter.model.Tally` as a row (its margin sums in
a row of ``margin_sums``), and how far a tournament's standings go
(:class:`~arbiter.model.StandingsMark`).

Rows are written inside the transaction that records a match (:meth:`Repo.record_match
<arbiter.storage.repo.Repo.record_match>`) by :func:`write_tallies`: a handful of rows by their
index, whatever the history's size. They are checked when read, like every row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC

from sqlalchemy import Table, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.expression import Executable
from sqlmodel import Session, col, select

from arbiter.model import DoublingTally, MarginSums, StandingsMark, Tally
from arbiter.stats import Moments
from arbiter.storage.models import MarginSumRow, RatingHistory, StandingRow, StandingsMarkRow, table_of
from arbiter.storage.rows import bad_row, checked

__all__ = ["clear_standings", "read_standings", "write_mark", "write_tallies"]


def _row_values(t: Tally) -> dict[str, object]:
    d = t.doubling
    return {
        "mu": t.mu,
        "sigma": t.sigma,
        "conservative": t.mu - 3 * t.sigma,
        "games": t.games,
        "matches": t.score.n,
        "score_sum": t.score.total,
        "score_m2": t.score.m2,
        "duplicate_n": t.duplicate.n,
        "duplicate_sum": t.duplicate.total,
        "duplicate_m2": t.duplicate.m2,
        "faults": t.faults,
        "forfeits": t.forfeits,
        "last_played": t.last_played,
        "trend": list(t.trend),
        "analysed": t.analysed,
        "contracts": [[c, *m.to_list()] for c, m in t.contracts.items()],
        "doubling": [d.doubles, d.redoubles, d.won, d.lost, d.net, *d.acted.to_list(), *d.passive.to_list()],
    }


def write_tallies(s: Session, tournament_id: int, tallies: Iterable[Tally], entrant_ids: Mapping[str, int]) -> None:
    """Insert or update the rows of ``tallies`` (in the caller's transaction): one statement,
    found by the (tournament, entrant) key."""
    tallies = list(tallies)
    rows = [{"tournament_id": tournament_id, "entrant_id": entrant_ids[t.entrant], **_row_values(t)} for t in tallies]
    if rows:
        _upsert(s, table_of(StandingRow), rows, ["tournament_id", "entrant_id"])
    sums = [
        {
            "tournament_id": tournament_id,
            "entrant_id": entrant_ids[t.entrant],
            "sets": t.margin.sets,
            "total": t.margin.total,
            "squares": t.margin.squares,
            "met": [[entrant_ids[other], weight] for other, weight in t.margin.met.items()],
        }
        for t in tallies
        if t.margin.sets
    ]
    if sums:
        _upsert(s, table_of(MarginSumRow), sums, ["tournament_id", "entrant_id"])


def write_mark(s: Session, tournament_id: int, mark: StandingsMark) -> None:
    row: dict[str, object] = {"tournament_id": tournament_id, "matches": mark.matches, "next_game": mark.next_game}
    _upsert(s, table_of(StandingsMarkRow), [row], ["tournament_id"])


_UPSERTS: dict[tuple[str, str], Executable] = {}


def _upsert(s: Session, table: Table, rows: list[dict[str, object]], key: list[str]) -> None:
    """INSERT ... ON CONFLICT (key) DO UPDATE, as SQLite and PostgreSQL both say it (the
    statement made once per table and dialect)."""
    dialect = s.get_bind().dialect.name
    statement = _UPSERTS.get((dialect, table.name))
    if statement is None:
        made = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)
        updated = {c.name: made.excluded[c.name] for c in table.columns if c.name not in (*key, "id")}
        statement = _UPSERTS[dialect, table.name] = made.on_conflict_do_update(index_elements=key, set_=updated)
    s.execute(statement, rows)


def clear_standings(s: Session, tournament_id: int) -> None:
    """Delete the tournament's standings, its margin sums, its mark and its rating history
    (before a rebuild)."""
    for table in (StandingRow, MarginSumRow, StandingsMarkRow, RatingHistory):
        s.exec(delete(table).where(col(table.tournament_id) == tournament_id))


def read_standings(
    s: Session, tournament_id: int, names: Mapping[int, str]
) -> tuple[StandingsMark | None, dict[str, Tally]]:
    """The tournament's mark (None: no standings kept yet) and every entrant's tally, checked."""
    mark_row = next(
        iter(checked(s, select(StandingsMarkRow).where(StandingsMarkRow.tournament_id == tournament_id))), None
    )
    mark = None if mark_row is None else StandingsMark(mark_row.matches, mark_row.next_game)
    tallies: dict[str, Tally] = {}
    for row in checked(s, select(StandingRow).where(StandingRow.tournament_id == tournament_id)):
        if row.entrant_id not in names:
            raise bad_row("standings", row, "entrant_id", "names no entrant of this tournament")
        tallies[names[row.entrant_id]] = _tally(row, names[row.entrant_id])
    for margin in checked(s, select(MarginSumRow).where(MarginSumRow.tournament_id == tournament_id)):
        name = names.get(margin.entrant_id)
        if name is None:
            raise bad_row("margin_sums", margin, "entrant_id", "names no entrant of this tournament")
        if name not in tallies:
            raise bad_row("margin_sums", margin, "entrant_id", "names an entrant without a standing")
        tallies[name] = replace(tallies[name], margin=_margin_sums(margin, names))
    return mark, tallies


def _margin_sums(row: MarginSumRow, names: Mapping[int, str]) -> MarginSums:
    try:
        met = {int(other): float(weight) for other, weight in row.met}
    except (TypeError, ValueError) as e:
        raise bad_row("margin_sums", row, "met", f"is not what margin sums hold ({e})") from None
    unknown = [other for other in met if other not in names]
    if unknown:
        raise bad_row("margin_sums", row, "met", f"names entrant id {unknown[0]}, no entrant of this tournament")
    return MarginSums(row.sets, row.total, row.squares, {names[other]: weight for other, weight in met.items()})


def _tally(row: StandingRow, name: str) -> Tally:
    column = "trend"
    try:
        trend = tuple(float(x) for x in row.trend)
        column = "contracts"
        contracts = {str(c): Moments.from_list(m) for c, *m in row.contracts}
        column = "doubling"
        doubles, redoubles, won, lost, net, *moments = row.doubling if row.doubling else [0] * 5 + [0, 0.0, 0.0] * 2
        doubling = DoublingTally(
            int(doubles),
            int(redoubles),
            int(won),
            int(lost),
            int(net),
            Moments.from_list(moments[:3]),
            Moments.from_list(moments[3:]),
        )
        column = "matches"
        score = Moments.from_list([row.matches, row.score_sum, row.score_m2])
        column = "duplicate_n"
        duplicate = Moments.from_list([row.duplicate_n, row.duplicate_sum, row.duplicate_m2])
    except (TypeError, ValueError) as e:
        raise bad_row("standings", row, column, f"is not what a standing holds ({e})") from None
    last = row.last_played
    return Tally(
        name,
        row.mu,
        row.sigma,
        row.games,
        score,
        duplicate,
        row.faults,
        row.forfeits,
        None if last is None else (last.replace(tzinfo=UTC) if last.tzinfo is None else last.astimezone(UTC)),
        trend,
        row.analysed,
        contracts,
        doubling,
    )
