"""The arena API's JSON shapes (pydantic): what ``/openapi.json`` describes and clients read.

An arena entrant is a NAME with versions 1, 2, ...; the database names each version
``NAME@VERSION``; these shapes split that into ``name`` and ``version``. House entrants (the
arena file's commands) have no author. Times are UTC.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel, Field

from arbiter.tournament.config import NAME_RE

MAX_ID = 2**63 - 1  # the largest row id
# What a path may name: bounded before anything reads it.
Name = Annotated[str, Path(max_length=64, pattern=NAME_RE.pattern, description="an entrant's name")]
MatchId = Annotated[int, Path(ge=1, le=MAX_ID, description="a match's id: its place in the ladder, from 1")]


def public_id(number: int) -> int:
    """A match's one identifier for people and clients (its page, title, download name, API id
    and log file): its place in the ladder's schedule, from 1. It is known before the match is
    played, so its log file carries it too (arbiter.arena.ladder)."""
    return number + 1


class Rating(BaseModel):
    """A version's standing: TrueSkill μ and σ, μ−3σ, its margin rating, whether it is still
    provisional, and its mean score per match (95% interval)."""

    mu: float = Field(description="TrueSkill's μ: the leaderboard's order unless the arena file says rating: margins")
    sigma: float
    conservative: float = Field(description="μ − 3σ (the leaderboard's order before the provisional mark)")
    margin: float = Field(
        description="the margin rating: points per match against the field's average, opponents adjusted for"
    )
    margin_sd: float | None = Field(description="the margin rating's standard deviation (none while not estimated)")
    provisional: bool = Field(description="fewer complete matches than the arena's matchmaking.provisional")
    matches: int = Field(description="complete matches played")
    mean_score: float | None = Field(description="mean score per match")
    ci95: tuple[float, float] | None = Field(description="95% confidence interval of mean_score")
    faults: int


class LeaderboardRow(Rating):
    rank: int
    name: str
    version: int
    author: str | None = Field(description="the submitting author; none for a house entrant")


class Leaderboard(BaseModel):
    arena: str
    matches: int = Field(description="matches recorded in all")
    rating: str = Field(description="what orders the entrants: trueskill (μ) or margins (the margin rating)")
    entrants: list[LeaderboardRow] = Field(description="each active entrant, best first")


class VersionView(Rating):
    version: int
    status: str = Field(description="checking | rejected | active | retired (house entrants: active)")
    created_at: datetime | None
    decided_at: datetime | None
    retired_at: datetime | None


class RatingPoint(BaseModel):
    version: int
    game: int = Field(description="the rated game (a duplicate set) in the ladder's order")
    match_number: int = Field(description="the id of the game's last match")
    mu: float
    sigma: float


class ContractScore(BaseModel):
    mean: float | None = Field(description="mean deal score")
    n: int = Field(description="deals")
    ci95: tuple[float, float] | None


class SeatView(BaseModel):
    seat: int
    name: str
    version: int
    total: int
    place: int
    forfeited: bool
    faults: int


class FaultView(BaseModel):
    match: int = Field(description="the match's id")
    seat: int
    name: str
    version: int
    deal: int
    kind: str
    detail: str
    action: str


class MatchSummary(BaseModel):
    id: int = Field(description="the match's one identifier: its place in the ladder, from 1 (its page is /matches/ID)")
    key: str = Field(description="its log's key: the log file is ARENA-KEY.jsonl")
    game: int
    status: str = Field(description="complete | aborted")
    seats: list[SeatView]
    totals: list[int]
    places: list[int]
    finished_at: datetime
    log: str = Field(description="where its JSONL log is served")


class MatchDetail(MatchSummary):
    reason: str | None
    deals: int
    wall_seconds: float
    fault_list: list[FaultView]


class MatchPage(BaseModel):
    matches: list[MatchSummary] = Field(description="newest first")
    next_before: int | None = Field(description="pass as `before` for the next page; none at the end")


class LiveMatch(BaseModel):
    """A match scheduled and not yet recorded: being played, or waiting for a slot."""

    id: int = Field(description="the match's id: its page and log once recorded")
    game: int = Field(description="its duplicate set")
    seats: list[SeatView] = Field(description="who sits where (total and place are 0 until it ends)")


class ContractScores(BaseModel):
    matches: int = Field(
        description="the entrant's complete matches these cover (those whose log was sound when played)"
    )
    contracts: list[str]
    by_version: dict[int, dict[str, ContractScore]] = Field(
        description="per version, per contract (and `all`): its mean deal score over all deals"
    )


class DoublingRecord(BaseModel):
    doubles: int = Field(description="doubles it made")
    redoubles: int = Field(description="redoubles it made")
    pairs: int = Field(description="pairs it doubled or redoubled")
    won: int = Field(description="of those pairs, the ones that gained")
    lost: int = Field(description="of those pairs, the ones that lost")
    net: int = Field(description="the sum of those pairs' settlements to it")
    mean: float | None = Field(description="mean settlement per pair it doubled or redoubled")
    ci95: tuple[float, float] | None
    doubled_pairs: int = Field(description="pairs in which another entrant doubled it and it did not redouble")
    doubled_mean: float | None = Field(description="mean settlement per such pair")


class Doubling(BaseModel):
    matches: int = Field(
        description="the entrant's complete matches these cover (those whose log was sound when played)"
    )
    by_version: dict[int, DoublingRecord] = Field(
        description="per version: each doubled pair settles m(L)·(own raw − other's raw); copies doubling each other are left out"
    )


class EntrantView(BaseModel):
    name: str
    author: str | None
    active_version: int | None
    versions: list[VersionView]
    history: list[RatingPoint]
    contract_scores: ContractScores
    doubling: Doubling = Field(description="the doubling record over the same matches as contract_scores")
    recent_matches: list[MatchSummary]
    faults: list[FaultView] = Field(description="the most recent faults")
    fault_counts: dict[str, int] = Field(description="every fault of the entrant, by kind")


class SubmissionView(BaseModel):
    id: int
    name: str
    version: int
    status: str = Field(description="checking | rejected | active | retired")
    created_at: datetime | None
    decided_at: datetime | None
    retired_at: datetime | None
    author: str | None = Field(default=None, description="who submitted it (public, as on the leaderboard)")
    bundle: str | None = Field(default=None, description="the bundle's SHA-256; shown to its author only")
    report: Any = Field(default=None, description="the check-bot report; shown to its author only")


class ArenaState(BaseModel):
    arena: str
    matches: int = Field(description="matches recorded")
    in_flight: int = Field(description="matches being played now")
    last_hour: int = Field(description="matches recorded in the last hour")
    active: int = Field(description="active entrants")
    paused: str | None = Field(None, description="why no match starts now (a disk short of space), or null")
