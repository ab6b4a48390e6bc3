"""TrueSkill ratings and standings, computed from plain match records in schedule order.

* A *game* is one rated event: a match (round robin, gauntlet) or a duplicate set (the seat
  rotations of one table on the same deals).
* An entrant's *score* in a match is its seat's total; an entrant filling several seats (copies,
  when a tournament has fewer than 4 entrants) scores the mean of its seats' totals, so copies
  are one entrant: one rating, one score per match. Over a duplicate set its score is the mean of
  its per-match scores (every entrant holds every hand equally often, so these compare).
* Places: by score, higher is better; ties share the better place; an entrant that forfeited
  (in any of its seats, in any match of the game) is placed after all those that did not.
* Ratings are replayed game by game in schedule order, never in completion order, so a resumed
  tournament ends with exactly the ratings of an uninterrupted one. An aborted match (or a set
  with an aborted rotation) is not rated.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import trueskill

from arbiter.model import PROVISIONAL_MATCHES, RATINGS, MatchRecord
from arbiter.stats import mean_ci
from arbiter.tournament.margins import MarginTable, margin_ratings

MU = 25.0
SIGMA = MU / 3
# A draw (equal totals) is possible but rare in Barbu; TrueSkill needs a non-zero draw
# probability to handle shared places at all.
ENV = trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=0.02)


@dataclass(frozen=True)
class GameOutcome:
    game: int
    last_match: int  # the highest match number of the game (rating history is keyed by it)
    scores: dict[str, Fraction]
    forfeited: frozenset[str]

    def places(self) -> dict[str, int]:
        key = {e: (e in self.forfeited, -s) for e, s in self.scores.items()}
        return {e: 1 + sum(1 for o in key.values() if o < k) for e, k in key.items()}


def game_outcome(matches: Sequence[MatchRecord]) -> GameOutcome | None:
    """One game from its matches; None when it cannot be rated (an aborted match)."""
    if not matches or any(m.status != "complete" for m in matches):
        return None
    per_match = [m.scores() for m in matches]
    entrants = sorted({e for s in per_match for e in s})
    scores = {
        e: sum((s[e] for s in per_match if e in s), Fraction(0)) / sum(1 for s in per_match if e in s) for e in entrants
    }
    forfeited = frozenset(e for m in matches for e in m.forfeited())
    return GameOutcome(matches[0].game, max(m.number for m in matches), scores, forfeited)


class RatingBook:
    """Current TrueSkill ratings; ``rate`` applies one game."""

    def __init__(self, entrants: Iterable[str]):
        self.ratings: dict[str, trueskill.Rating] = {e: ENV.create_rating() for e in entrants}
        self.games: dict[str, int] = {e: 0 for e in self.ratings}

    def copy(self) -> RatingBook:
        other = RatingBook([])
        other.ratings = dict(self.ratings)
        other.games = dict(self.games)
        return other

    def including(self, entrants: Iterable[str]) -> RatingBook:
        """A copy that also rates ``entrants`` (a new one starts at the prior: a growing field)."""
        other = self.copy()
        for e in entrants:
            other.ratings.setdefault(e, ENV.create_rating())
            other.games.setdefault(e, 0)
        return other

    def rate(self, outcome: GameOutcome) -> dict[str, trueskill.Rating]:
        """Apply one game; returns the new ratings of its entrants (empty if it has only one)."""
        entrants = sorted(outcome.scores)
        if len(entrants) < 2:
            return {}
        places = outcome.places()
        groups = [(self.ratings[e],) for e in entrants]
        rated = ENV.rate(groups, ranks=[places[e] - 1 for e in entrants])
        new = {e: group[0] for e, group in zip(entrants, rated, strict=True)}
        self.ratings.update(new)
        for e in entrants:
            self.games[e] += 1
        return new


def replay(
    entrants: Iterable[str], matches: Iterable[MatchRecord]
) -> tuple[RatingBook, list[tuple[GameOutcome, dict[str, trueskill.Rating]]]]:
    """Ratings after every complete game of ``matches``, applied in schedule order."""
    book = RatingBook(entrants)
    by_game: dict[int, list[MatchRecord]] = {}
    for m in sorted(matches, key=lambda m: m.number):
        by_game.setdefault(m.game, []).append(m)
    history = []
    for game in sorted(by_game):
        outcome = game_outcome(by_game[game])
        if outcome is not None:
            history.append((outcome, book.rate(outcome)))
    return book, history


# ---- standings ----------------------------------------------------------------------------
@dataclass
class Standing:
    name: str
    mu: float
    sigma: float
    matches: int = 0
    mean_score: float | None = None
    ci95: tuple[float, float] | None = None
    faults: int = 0
    forfeits: int = 0
    games: int = 0
    duplicate_diff: float | None = None  # mean score difference against the field, same cards
    duplicate_ci95: tuple[float, float] | None = None
    margin: float = 0.0  # its margin rating: points per match against the field's average (arbiter.tournament.margins)
    margin_sd: float | None = None  # its standard deviation (None: not estimated yet)
    provisional: bool = True  # fewer complete matches than the provisional count
    rank: int = 0
    scores: list[float] = field(default_factory=list, repr=False)

    @property
    def rating(self) -> float:
        """The conservative rating: μ − 3σ."""
        return self.mu - 3 * self.sigma

    def to_json(self, duplicate: bool = False) -> dict[str, Any]:
        out = {
            "rank": self.rank,
            "name": self.name,
            "mu": round(self.mu, 4),
            "sigma": round(self.sigma, 4),
            "rating": round(self.rating, 4),
            "matches": self.matches,
            "mean_score": None if self.mean_score is None else round(self.mean_score, 3),
            "ci95": None if self.ci95 is None else [round(self.ci95[0], 3), round(self.ci95[1], 3)],
            "faults": self.faults,
            "forfeits": self.forfeits,
            "margin": round(self.margin, 3),
            "margin_sd": None if self.margin_sd is None else round(self.margin_sd, 3),
            "provisional": self.provisional,
        }
        if duplicate:
            out["duplicate_diff"] = None if self.duplicate_diff is None else round(self.duplicate_diff, 3)
            out["duplicate_ci95"] = (
                None
                if self.duplicate_ci95 is None
                else [round(self.duplicate_ci95[0], 3), round(self.duplicate_ci95[1], 3)]
            )
        return out


def ranked(
    rows: Iterable[Standing], rating: str = "trueskill", provisional: int = PROVISIONAL_MATCHES
) -> list[Standing]:
    """``rows`` best first by ``rating`` (one of :data:`RATINGS`: TrueSkill's μ, not μ − 3σ,
    which would rank a newcomer by how little it has played; or the margin rating), ranked from
    1, each marked provisional while it has fewer than ``provisional`` complete matches."""
    if rating not in RATINGS:
        raise ValueError(f"rating must be one of {', '.join(RATINGS)}, got {rating!r}")

    def key(r: Standing) -> tuple[float, float, str]:
        # rounded: ratings equal but for the float sums' order tie, and the other rating decides
        mu, margin = round(r.mu, 9), round(r.margin, 9)
        return (-mu, -margin, r.name) if rating == "trueskill" else (-margin, -mu, r.name)

    ordered = sorted(rows, key=key)
    for i, row in enumerate(ordered, start=1):
        row.rank, row.provisional = i, row.matches < provisional
    return ordered


def with_margins(rows: Iterable[Standing], table: MarginTable) -> None:
    """Set each row's margin rating from ``table`` (0, its sd unknown, for an entrant not in it)."""
    for row in rows:
        found = table.ratings.get(row.name)
        if found is not None:
            row.margin, row.margin_sd = found.rating, found.sd if math.isfinite(found.sd) else None


def standings(
    entrants: Sequence[str],
    matches: Sequence[MatchRecord],
    duplicate: bool = False,
    rating: str = "trueskill",
    provisional: int = PROVISIONAL_MATCHES,
) -> list[Standing]:
    """The table: ratings replayed in schedule order, mean score per match with a 95% CI, faults,
    ordered by ``rating`` (:func:`ranked`)."""
    book, history = replay(entrants, matches)
    rows = {e: Standing(e, book.ratings[e].mu, book.ratings[e].sigma, games=book.games[e]) for e in entrants}
    for m in sorted(matches, key=lambda m: m.number):
        for s in m.seats:
            if s.entrant in rows:
                rows[s.entrant].faults += s.faults
        for e in {s.entrant for s in m.seats if s.forfeited}:
            if e in rows:
                rows[e].forfeits += 1
        if m.status != "complete":
            continue
        for e, score in m.scores().items():
            if e in rows:
                rows[e].matches += 1
                rows[e].scores.append(float(score))
    for row in rows.values():
        row.mean_score, row.ci95 = mean_with_ci(row.scores)
    if duplicate:
        for e, values in _duplicate_diffs(entrants, matches).items():
            rows[e].duplicate_diff, rows[e].duplicate_ci95 = mean_with_ci(values)
    with_margins(rows.values(), margin_ratings(entrants, [_floats(o.scores) for o, _ in history if len(o.scores) >= 2]))
    return ranked(rows.values(), rating, provisional)


def _floats(scores: Mapping[str, Fraction]) -> dict[str, float]:
    return {e: float(score) for e, score in scores.items()}


def _duplicate_diffs(entrants: Sequence[str], matches: Sequence[MatchRecord]) -> dict[str, list[float]]:
    """Per entrant, each game's score less the mean of the others' on the same deals."""
    diffs: dict[str, list[float]] = {e: [] for e in entrants}
    by_game: dict[int, list[MatchRecord]] = {}
    for m in matches:
        by_game.setdefault(m.game, []).append(m)
    for game in by_game.values():
        outcome = game_outcome(game)
        if outcome is None or len(outcome.scores) < 2:
            continue
        for e, score in outcome.scores.items():
            others = [s for o, s in outcome.scores.items() if o != e]
            if e in diffs:
                diffs[e].append(float(score - sum(others, Fraction(0)) / len(others)))
    return diffs


def mean_with_ci(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """The mean and its 95% confidence interval (arbiter.stats.mean_ci; None with fewer than 2 values)."""
    n = len(values)
    if n == 0:
        return None, None
    mean = sum(values) / n
    if n < 2:
        return mean, None
    return mean, mean_ci(n, mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)))
