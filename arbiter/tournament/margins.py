"""Ratings from duplicate score margins: how many points per match each entrant makes against an
average entrant of the field, adjusted for the opponents it met, with its uncertainty.

TrueSkill (:mod:`arbiter.tournament.ratings`) sees a duplicate set only as places: first,
second, third, fourth. A set says more: *by how much* each entrant beat the others on the same
cards. This module uses that, as a least-squares model of the set's scores:

    score(entrant i in set s) = level(s) + rating(i) + noise,   noise ~ N(0, noise_sd²)

``level(s)`` absorbs what the set's deals were worth to everyone, so only the differences within
a set matter (a set's scores and its score differences give the same ratings). The ratings are
the posterior means under a normal prior centred on the field's average, whose weight is
``shrinkage`` sets' worth of evidence: an entrant that has played nothing rates 0 (the field's
average); one that has played a few sets is drawn slightly towards 0; the prior fades as sets
come in. The ratings of a field always sum to 0. ``bench/ladder.py`` measures that this orders a
field of known strength sooner than TrueSkill's places, and chooses ``shrinkage``.

API, plain values in and out (no storage, no I/O):

* :func:`margin_ratings` ``(entrants, sets, shrinkage=DEFAULT_SHRINKAGE) -> MarginTable``:
  ``sets`` is one mapping per rated set, entrant name → its score in that set (for a duplicate
  set, the entrant's mean total per match over the set, as
  :func:`arbiter.tournament.ratings.game_outcome` computes it; copies of one entrant count once).
  A set with fewer than two entrants says nothing and is skipped; a name not in ``entrants``
  is a :class:`ValueError`.
* :func:`solve` ``(entrants, sums, shrinkage) -> MarginTable``: the same from each entrant's
  :class:`~arbiter.model.MarginSums`, which the standings keep set by set
  (arbiter.tournament.standings): what the normal equations need, so a table is solved without
  the history. :func:`margin_ratings` is these sums added up, then solved.
* :class:`MarginTable`: ``ratings`` (name → :class:`MarginRating`: ``rating`` in points per
  match against the field's average, ``sd`` its posterior standard deviation, ``sets`` rated),
  ``noise_sd`` (the per-set noise, estimated from the residuals; None while no residual is free)
  and :meth:`MarginTable.order` (best first by rating − k·sd).

Cost: O(S·k²) to add S sets of k entrants up, then O(N³) to solve for a field of N (a Cholesky
factorisation of the N × N normal equations, and the diagonal of its inverse for the sds):
milliseconds for a field of tens, about 60 ms for 200 (``bench/margins_solve.py``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arbiter.model import MarginSums

DEFAULT_SHRINKAGE = 0.25
"""The prior's weight in sets against the field's average: on bench/ladder.py's fields (its
``--shrinkage``) 0.01 to 0.25 order alike and 1 or more order worse: a quarter set is the most
that costs nothing measured, and the most that holds back an entrant rated on one lucky set."""


@dataclass(frozen=True)
class MarginRating:
    rating: float  # points per match against the field's average entrant, opponents adjusted for
    sd: float  # its posterior standard deviation; math.inf while the noise is not yet estimated
    sets: int  # sets rated


@dataclass(frozen=True)
class MarginTable:
    ratings: dict[str, MarginRating]
    noise_sd: float | None  # an entrant's noise in one set, from the residuals (None: no residual free yet)

    def order(self, k: float = 0.0) -> list[str]:
        """The entrants best first by rating − k·sd (ties by name, so the order is reproducible)."""

        def key(name: str) -> tuple[float, str]:
            r = self.ratings[name]
            return (-(r.rating - k * r.sd) if k and math.isfinite(r.sd) else -r.rating, name)

        return sorted(self.ratings, key=key)


def margin_ratings(
    entrants: Iterable[str], sets: Iterable[Mapping[str, float]], shrinkage: float = DEFAULT_SHRINKAGE
) -> MarginTable:
    """The margin ratings of ``entrants`` after ``sets`` (see the module's docstring)."""
    names = list(dict.fromkeys(entrants))
    sums = {name: MarginSums() for name in names}
    for scores in sets:
        unknown = [name for name in scores if name not in sums]
        if unknown:
            raise ValueError(f"a set names {unknown[0]!r}, which is not an entrant")
        if len(scores) >= 2:
            floats = {name: float(score) for name, score in scores.items()}
            for name in floats:
                sums[name] = sums[name].add(name, floats)
    return solve(names, sums, shrinkage)


def solve(entrants: Iterable[str], sums: Mapping[str, MarginSums], shrinkage: float = DEFAULT_SHRINKAGE) -> MarginTable:
    """The margin ratings of ``entrants`` from their sums (:class:`~arbiter.model.MarginSums`, kept
    set by set; an entrant without sums has played nothing): the normal equations built from
    them and solved, never the sets replayed."""
    if not shrinkage > 0:
        raise ValueError(f"shrinkage must be positive, got {shrinkage}")
    names = list(dict.fromkeys(entrants))
    index = {name: i for i, name in enumerate(names)}
    size = len(names)
    normal = [[0.0] * size for _ in range(size)]
    target, played = [0.0] * size, [0] * size
    squares, sets_counted = 0.0, 0.0
    for name, i in index.items():
        own = sums.get(name, MarginSums())
        played[i], target[i] = own.sets, own.total
        squares += own.squares
        sets_counted += own.met.get(name, 0.0)  # each set adds 1/k for each of its k entrants
        row = normal[i]
        for other, weight in own.met.items():
            if other in index:
                row[index[other]] -= weight
        row[i] += shrinkage + own.sets
    factor = _cholesky(normal)
    ratings = _solve(factor, target)
    # The residual sum of squares from the sums: Σc² − 2·r·b + r·(N − shrinkage·I)·r.
    fitted = sum(r * sum(map(operator.mul, row, ratings)) for r, row in zip(ratings, normal, strict=True))
    residual = squares - 2 * sum(map(operator.mul, ratings, target)) + fitted - shrinkage * sum(r * r for r in ratings)
    # Each set of k entrants gives k − 1 differences; the active entrants' ratings take all but one.
    free = sum(played) - round(sets_counted) - max(0, sum(1 for n in played if n) - 1)
    noise_sd = math.sqrt(max(0.0, residual) / free) if free > 0 else None
    # A rating is against the field's average, so the field's common level (which no set
    # informs: the prior alone gives it variance 1 / (N · shrinkage)) is no part of its spread.
    spread = [max(0.0, v - 1.0 / (size * shrinkage)) for v in _inverse_diagonal(factor)]
    return MarginTable(
        {
            name: MarginRating(
                ratings[i], noise_sd * math.sqrt(spread[i]) if noise_sd is not None else math.inf, played[i]
            )
            for name, i in index.items()
        },
        noise_sd,
    )


def _cholesky(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """The lower-triangular L with L·Lᵀ = ``matrix`` (symmetric positive definite), each row
    holding its first i + 1 entries (the inner products run on slices: ten times faster)."""
    lower: list[list[float]] = []
    for i in range(len(matrix)):
        row: list[float] = []
        for j in range(i):
            other = lower[j]
            row.append((matrix[i][j] - sum(map(operator.mul, row, other))) / other[j])
        row.append(math.sqrt(matrix[i][i] - sum(map(operator.mul, row, row))))
        lower.append(row)
    return lower


def _solve(lower: Sequence[Sequence[float]], target: Sequence[float]) -> list[float]:
    """x with L·Lᵀ·x = target."""
    size = len(lower)
    y: list[float] = []
    for i in range(size):
        y.append((target[i] - sum(map(operator.mul, lower[i], y))) / lower[i][i])
    x = [0.0] * size
    for i in reversed(range(size)):
        x[i] = (y[i] - sum(lower[k][i] * x[k] for k in range(i + 1, size))) / lower[i][i]
    return x


def _inverse_diagonal(lower: Sequence[Sequence[float]]) -> list[float]:
    """The diagonal of (L·Lᵀ)⁻¹ = L⁻ᵀ·L⁻¹: the squared norms of L⁻¹'s columns, each
    column the forward solution of L·x = e_j."""
    size = len(lower)
    out = []
    for j in range(size):
        column = [1.0 / lower[j][j]]  # x_j .. x_i, the entries above j being 0
        for i in range(j + 1, size):
            column.append(-sum(map(operator.mul, lower[i][j:i], column)) / lower[i][i])
        out.append(sum(map(operator.mul, column, column)))
    return out
