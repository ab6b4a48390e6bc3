"""Reading the kept standings, and rebuilding them from the recorded matches (the repair tool).

Readers (``arbiter standings``, the report, the arena) read the standings table as it is. A
database whose table is missing (made before it existed: readers never upgrade a database) or
behind its matches is read by replaying its matches instead, and says so; ``arbiter standings
--rebuild`` replays them and stores the result, holding the tournament's lease (never while a
run records). A run's start does the same when it finds the table missing or behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arbiter.model import PROVISIONAL_MATCHES, DealSummary, ScheduledMatch
from arbiter.tournament.formats import plays_duplicate_sets
from arbiter.tournament.ratings import Standing, standings
from arbiter.tournament.schedule import rotations
from arbiter.tournament.standings import Keeper, table_of

if TYPE_CHECKING:
    from barbu.rules.ruleset import Ruleset
    from sqlalchemy.engine import Engine

    from arbiter.storage import Repo
    from arbiter.storage.models import Match, Tournament

__all__ = ["Kept", "kept_standings", "rebuild_standings", "recorded_deals", "stored_schedule"]


@dataclass
class Kept:
    """A tournament's standings as read: ``kept`` False when they were replayed from the matches
    (the table is missing or behind: ``arbiter standings --rebuild`` stores them)."""

    rows: list[Standing]
    recorded: int
    kept: bool


def kept_standings(
    repo: Repo, t: Tournament, rating: str = "trueskill", provisional: int = PROVISIONAL_MATCHES
) -> Kept:
    """The tournament's standings from the standings table, ordered by ``rating``
    (:func:`~arbiter.tournament.ratings.ranked`); replayed when the table is missing or behind."""
    from arbiter.storage import row_id

    t_id = row_id(t)
    names = repo.entrant_names(t_id)
    recorded = repo.count_matches(t_id)
    mark, tallies = repo.standings(t_id)
    if mark is not None and mark.matches >= recorded:  # read after the count: a match may have come since
        return Kept(table_of(names, tallies, rating, provisional), recorded, True)
    replayed = standings(names, repo.matches(t_id), plays_duplicate_sets(t.format), rating, provisional)
    return Kept(replayed, recorded, False)


def stored_schedule(rows: Sequence[Match], duplicate: bool) -> list[ScheduledMatch]:
    """The schedule the recorded matches imply: each one, and in a duplicate format the rotations
    of its table not recorded yet (a set is rated once all of them are in)."""
    matches: dict[int, ScheduledMatch] = {}
    tables: dict[tuple[int, int], Match] = {}
    for row in rows:
        matches[row.number] = _scheduled(row.number, row.game, row.rotation, row.table_no, row.seats)
        tables.setdefault((row.game, row.table_no), row)
    if duplicate:
        for first in tables.values():
            seating = tuple(first.seats[(s + first.rotation) % 4] for s in range(4))
            base = first.number - first.rotation
            for k, seats in enumerate(rotations(seating)):
                matches.setdefault(base + k, _scheduled(base + k, first.game, k, first.table_no, list(seats)))
    return [matches[n] for n in sorted(matches)]


def _scheduled(number: int, game: int, rotation: int, table: int, seats: Sequence[str]) -> ScheduledMatch:
    four = (seats[0], seats[1], seats[2], seats[3])
    return ScheduledMatch(number, "", 0, table, rotation, game, four, 0, 0)


def rebuild_standings(
    engine: Engine, t: Tournament, rating: str = "trueskill", provisional: int = PROVISIONAL_MATCHES
) -> Kept:
    """Replay the tournament's recorded matches into its standings table (rating history and
    margin sums too), holding its lease; the standings then kept, ordered by ``rating``."""
    import json

    from barbu.rules import ruleset_from_json

    from arbiter.storage import Repo, row_id
    from arbiter.storage.lease import Lease

    repo = Repo(engine)
    lease = Lease.take(engine, t.name)
    try:
        t_id = row_id(t)
        names = repo.entrant_names(t_id)
        rows = repo.match_rows(t_id)
        records = {r.number: r for r in repo.matches(t_id)}
        rules = ruleset_from_json(json.loads(t.rules))
        keeper = Keeper(names, duplicate=plays_duplicate_sets(t.format), double_scoring=rules.double_scoring)
        keeper.schedule(stored_schedule(rows, plays_duplicate_sets(t.format)))
        deals = recorded_deals(rows, rules, t.name, t.format)
        step = keeper.replay(records, {r.number: r.finished_at for r in rows}, deals)
        ids = {name: i for i, name in repo.entrants_by_id(t_id).items()}
        mark = keeper.mark(len(records))
        repo.store_standings(t_id, step.changed.values(), mark, step.rows, ids, rebuilt=True, fence=lease.fence)
    finally:
        lease.release()
    return Kept(table_of(names, keeper.tallies, rating, provisional), len(records), True)


def recorded_deals(rows: Sequence[Match], rules: Ruleset, name: str, fmt: str) -> dict[int, tuple[DealSummary, ...]]:
    """Each complete recorded match's deals, read from its log (only a replay reads logs: a log
    missing or changed since it was recorded adds no deals)."""
    from arbiter.replay.facts import deal_summaries
    from arbiter.tournament.recorded import read_match_log

    out: dict[int, tuple[DealSummary, ...]] = {}
    for row in rows:
        if row.status != "complete" or not row.log_sha256:
            continue
        state = read_match_log(row.log_path, row.log_sha256, "", name, fmt)
        if state.status == "ok":
            out[row.number] = deal_summaries(state.lines, rules)
    return out
