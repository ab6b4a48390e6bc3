"""The report's statistics, as plain JSON values: per-contract deal scores, doubling, ratings.

An entrant's score in a deal is the mean of its seats' (copies are one entrant, as in the
standings). A doubled pair settles ``m(L)·(raw_self − raw_other)`` for each of its seats
(:mod:`barbu.rules.scoring`); what an entrant's doubles and redoubles brought it is the sum of
those settlements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arbiter.replay.facts import DealFacts

if TYPE_CHECKING:  # pragma: no cover
    from arbiter.model import RatingRow

Samples = dict[str, dict[str, list[float]]]  # entrant -> contract -> deal scores


def _mean_ci(values: Sequence[float]) -> tuple[float | None, list[float] | None]:
    from arbiter.tournament.ratings import mean_with_ci

    mean, ci = mean_with_ci(values)
    return mean, None if ci is None else [ci[0], ci[1]]


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def pair_transfer(double_scoring: str, level: int, raw_self: int, raw_other: int) -> int:
    """What a doubled pair's settlement moves to one of its seats: m(L)·(raw_self − raw_other)."""
    from barbu.rules.scoring import MULTIPLIERS

    return MULTIPLIERS[double_scoring][level] * (raw_self - raw_other)


def _doubling_row() -> dict[str, Any]:
    return {"doubles": 0, "redoubles": 0, "acted": [], "passive": []}


@dataclass
class Analysis:
    """The samples gathered from the sound logs, before they are summed up."""

    contracts_all: Samples = field(default_factory=dict)
    contracts_declarer: Samples = field(default_factory=dict)
    doubles: dict[str, dict[str, Any]] = field(default_factory=dict)
    matches: int = 0
    deals: int = 0
    unsettled: int = 0  # deals whose recomputed settlement differs from the log (should be 0)

    def add_match(self, seats: Sequence[str], facts: Sequence[DealFacts], double_scoring: str) -> None:
        """Add one match's deals to the per-contract and doubling samples."""
        self.matches += 1
        by_entrant: dict[str, list[int]] = {}
        for s, name in enumerate(seats):
            by_entrant.setdefault(name, []).append(s)
        for d in facts:
            self.deals += 1
            if not d.settled:
                self.unsettled += 1
            for name, own in by_entrant.items():
                score = sum(d.scores[s] for s in own) / len(own)
                self.contracts_all.setdefault(name, {}).setdefault(d.contract, []).append(score)
            decl = seats[d.declarer]
            self.contracts_declarer.setdefault(decl, {}).setdefault(d.contract, []).append(float(d.scores[d.declarer]))
            self._add_doubles(seats, d, double_scoring)

    def _add_doubles(self, seats: Sequence[str], d: DealFacts, double_scoring: str) -> None:
        for (i, j), (level, by, redo) in d.pairs.items():
            if seats[i] == seats[j]:
                continue  # an entrant's copies doubling each other: nothing won or lost
            for me, other in ((i, j), (j, i)):
                row = self.doubles.setdefault(seats[me], _doubling_row())
                gain = pair_transfer(double_scoring, level, d.raw[me], d.raw[other])
                if by == me:
                    row["doubles"] += 1
                    row["acted"].append(gain)
                elif redo == me:
                    row["redoubles"] += 1
                    row["acted"].append(gain)
                else:
                    row["passive"].append(gain)


def contract_stats(
    samples: Samples, entrants: Sequence[str], contracts: Sequence[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """{entrant: {contract: {mean, n, ci95}}} (and an ``all`` pseudo-contract)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for e in entrants:
        per = samples.get(e, {})
        row: dict[str, dict[str, Any]] = {}
        for c in [*contracts, "all"]:
            values = per.get(c, []) if c != "all" else [v for k in contracts for v in per.get(k, [])]
            mean, ci = _mean_ci(values)
            row[c] = {"mean": _r(mean), "n": len(values), "ci95": None if ci is None else [_r(ci[0]), _r(ci[1])]}
        out[e] = row
    return out


def doubling_stats(analysis: Analysis, entrants: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per entrant: the doubles and redoubles it made, what they brought, and being doubled."""
    out = {}
    for e in entrants:
        row = analysis.doubles.get(e, _doubling_row())
        acted, passive = row["acted"], row["passive"]
        mean, ci = _mean_ci(acted)
        pmean, _ = _mean_ci(passive)
        out[e] = {
            "doubles": row["doubles"],
            "redoubles": row["redoubles"],
            "pairs": len(acted),
            "won": sum(1 for g in acted if g > 0),
            "lost": sum(1 for g in acted if g < 0),
            "net": sum(acted),
            "mean": _r(mean),
            "ci95": None if ci is None else [_r(ci[0]), _r(ci[1])],
            "doubled_pairs": len(passive),
            "doubled_mean": _r(pmean),
        }
    return out


def rating_series(
    history: Sequence[RatingRow], entrants: Sequence[str], mu0: float, *, joined: bool = False
) -> dict[str, list[list[float]]]:
    """Per entrant: [[matches played, μ, σ], ...] from the start (0, μ₀) through every rated game;
    ``joined`` (a ladder, whose versions come as it goes): from where each joined instead, μ₀ just
    before its first rated game, not as if present from the start."""
    from arbiter.tournament.ratings import SIGMA

    ends: dict[int, int] = {}  # each rated game's last match, counted from 1
    first_game: dict[str, int] = {}
    for r in history:
        ends[r.game] = max(ends.get(r.game, 0), r.match_number + 1)
        first_game.setdefault(r.entrant, r.game)
    series: dict[str, list[list[float]]] = {}
    for e in [*entrants, *(r.entrant for r in history)]:
        if e not in series:
            before = [end for game, end in ends.items() if e in first_game and game < first_game[e]]
            series[e] = [[max(before, default=0) if joined else 0, mu0, round(SIGMA, 4)]]
    for r in history:
        series[r.entrant].append([r.match_number + 1, round(r.mu, 4), round(r.sigma, 4)])
    return series


def fault_counts(faults: Sequence[tuple[str, str]], entrants: Sequence[str]) -> dict[str, dict[str, int]]:
    """{entrant: {kind: count}} from (entrant, kind) pairs, every entrant present."""
    by_entrant: dict[str, dict[str, int]] = {e: {} for e in entrants}
    for e, kind in faults:
        counts = by_entrant.setdefault(e, {})
        counts[kind] = counts.get(kind, 0) + 1
    return by_entrant
