"""What the report reads from the results database, all through :class:`Repo` (read only)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arbiter.model import DEFAULT_RANKING, RatingRow
from arbiter.storage import Repo, database_url, open_database, row_id
from arbiter.storage.models import Match, SeatResult, Tournament
from arbiter.tournament.kept import kept_standings
from arbiter.tournament.ratings import Standing

Ranking = Callable[[Tournament], tuple[str, int]]
"""A tournament's rating that orders its standings, and its provisional count (``arbiter
standings``: the file's, else the one the run was made with)."""


@dataclass
class Gathered:
    tournament: Tournament
    db_url: str  # as given (resolved), not the engine's: a read-only engine's URL names no file
    entrants: list[str]  # in the database's order
    standings: list[Standing]
    history: list[RatingRow]
    rows: list[Match]
    seat_results: dict[int, list[SeatResult]]  # match id -> its rows by seat
    faults: list[tuple[str, str]]  # (entrant, kind)
    fault_details: dict[int, list[dict[str, Any]]]  # match id -> its faults
    rating: str  # what orders the standings
    provisional: int  # fewer complete matches: a provisional standing


def gather(db: str | None, tournament: str | None, ranking: Ranking | None = None) -> Gathered:
    """Read everything the report needs; a database it cannot read is one error line."""
    engine = open_database(db, create=False)
    try:
        repo = Repo(engine)
        t = repo.require_tournament(tournament)
        t_id = row_id(t)
        rating, provisional = ranking(t) if ranking is not None else DEFAULT_RANKING
        with repo.reading(f"tournament {t.name!r}"):
            entrants = repo.entrant_names(t_id)
            # the standings table (a replay if it is missing or behind)
            table = kept_standings(repo, t, rating, provisional).rows
            history = repo.rating_history(t_id)
            rows = repo.match_rows(t_id)
            seat_results = repo.seat_results(t_id)
            names = repo.entrants_by_id(t_id)
            faults: list[tuple[str, str]] = []
            details: dict[int, list[dict[str, Any]]] = {}
            for f in repo.faults(t_id):
                faults.append((names.get(f.entrant_id, "?"), f.kind))
                details.setdefault(f.match_id, []).append(
                    {"seat": f.seat, "deal": f.deal, "kind": f.kind, "detail": f.detail, "action": f.action}
                )
        return Gathered(
            t, database_url(db), entrants, table, history, rows, seat_results, faults, details, rating, provisional
        )
    finally:
        engine.dispose()
