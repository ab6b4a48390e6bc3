"""What the arena's API and pages show of stored rows: each row, standing or tally shaped as its
view (arbiter.arena.views), one function a shape."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from arbiter.model import ScheduledMatch, Tally
from arbiter.stats import Moments
from arbiter.storage.arena import SubmissionRow
from arbiter.storage.models import Fault, Match, SeatResult
from arbiter.tournament.ratings import Standing

from .views import (
    ContractScore,
    DoublingRecord,
    FaultView,
    LiveMatch,
    MatchSummary,
    SeatView,
    SubmissionView,
    VersionView,
    public_id,
)


def split_version(entrant: str) -> tuple[str, int]:
    """``NAME@VERSION`` as (NAME, VERSION); a name without a version is version 1 (a house entrant
    of a tournament that named it so)."""
    name, at, version = entrant.rpartition("@")
    if at and version.isdigit():
        return name, int(version)
    return entrant, 1


def utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def rating_fields(s: Standing) -> dict[str, Any]:
    return {
        "mu": round(s.mu, 4),
        "sigma": round(s.sigma, 4),
        "conservative": round(s.rating, 4),
        "margin": round(s.margin, 3),
        "margin_sd": None if s.margin_sd is None else round(s.margin_sd, 3),
        "provisional": s.provisional,
        "matches": s.matches,
        "mean_score": None if s.mean_score is None else round(s.mean_score, 3),
        "ci95": None if s.ci95 is None else (round(s.ci95[0], 3), round(s.ci95[1], 3)),
        "faults": s.faults,
    }


def mean_and_ci(m: Moments) -> tuple[float | None, tuple[float, float] | None]:
    mean, ci = m.mean_ci()
    return (None if mean is None else round(mean, 3)), (None if ci is None else (round(ci[0], 3), round(ci[1], 3)))


def contract_scores(tally: Tally, contracts: Sequence[str]) -> dict[str, ContractScore]:
    out = {}
    every = Moments()
    for c in contracts:
        m = tally.contracts.get(c, Moments())
        every = every.merge(m)
        mean, ci = mean_and_ci(m)
        out[c] = ContractScore(mean=mean, n=m.n, ci95=ci)
    mean, ci = mean_and_ci(every)
    out["all"] = ContractScore(mean=mean, n=every.n, ci95=ci)
    return out


def doubling_record(tally: Tally) -> DoublingRecord:
    d = tally.doubling
    mean, ci = mean_and_ci(d.acted)
    passive, _ = mean_and_ci(d.passive)
    return DoublingRecord(
        doubles=d.doubles,
        redoubles=d.redoubles,
        pairs=d.acted.n,
        won=d.won,
        lost=d.lost,
        net=d.net,
        mean=mean,
        ci95=ci,
        doubled_pairs=d.passive.n,
        doubled_mean=passive,
    )


def rating_point(game: int, match_number: int, mu: float, sigma: float) -> dict[str, Any]:
    return {"game": game, "match_number": match_number, "mu": round(mu, 4), "sigma": round(sigma, 4)}


def version_view(row: SubmissionRow, s: Standing) -> VersionView:
    return VersionView(
        version=row.version,
        status=row.status,
        created_at=row.created_at,
        decided_at=row.decided_at,
        retired_at=row.retired_at,
        **rating_fields(s),
    )


def submission_view(row: SubmissionRow, own: bool) -> SubmissionView:
    """A submission as anyone sees it (its author too, as the leaderboard and the entrant pages
    show it: an author's name is public); ``own``: as its author does (its bundle and check
    report too)."""
    view = SubmissionView(
        id=row.id,
        name=row.entrant,
        version=row.version,
        status=row.status,
        created_at=row.created_at,
        decided_at=row.decided_at,
        retired_at=row.retired_at,
        author=row.author,
    )
    if own:
        view.bundle, view.report = row.bundle, check_report(row.report)
    return view


def house_version_view(s: Standing) -> VersionView:
    return VersionView(
        version=1, status="active", created_at=None, decided_at=None, retired_at=None, **rating_fields(s)
    )


def seat_view(
    seat: int, entrant: str, total: int = 0, place: int = 0, forfeit: bool = False, faults: int = 0
) -> SeatView:
    name, version = split_version(entrant)
    return SeatView(seat=seat, name=name, version=version, total=total, place=place, forfeited=forfeit, faults=faults)


def live_view(m: ScheduledMatch) -> LiveMatch:
    return LiveMatch(id=public_id(m.number), game=m.game, seats=[seat_view(i, e) for i, e in enumerate(m.seats)])


def match_summary(m: Match, seats: Sequence[SeatResult], names: dict[int, str]) -> MatchSummary:
    views = [
        seat_view(sr.seat, names.get(sr.entrant_id, "?"), sr.total, sr.place, sr.forfeited, sr.faults) for sr in seats
    ]
    match_id = public_id(m.number)
    return MatchSummary(
        id=match_id,
        key=m.key,
        game=m.game,
        status=m.status,
        seats=views,
        totals=m.totals,
        places=m.places,
        finished_at=utc(m.finished_at),
        log=f"/api/matches/{match_id}/log",
    )


def fault_view(f: Fault, names: dict[int, str], numbers: dict[int, int]) -> FaultView:
    """A fault; ``numbers``: its match's ladder number by the match's row id."""
    name, version = split_version(names.get(f.entrant_id, "?"))
    return FaultView(
        match=public_id(numbers.get(f.match_id, -1)),
        seat=f.seat,
        name=name,
        version=version,
        deal=f.deal,
        kind=f.kind,
        detail=f.detail,
        action=f.action,
    )


def check_report(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text
