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
* :class:`MarginTable`: ``ratings`` (name → :class:`MarginRating`: ``rating`` in points per
  match against the field's average, ``sd`` its posterior standard deviation, ``sets`` rated),
  ``noise_sd`` (the per-set noise, estimated from the residuals; None while no residual is free)
  and :meth:`MarginTable.order` (best first by rating − k·sd).

Cost: O(S·k² + N³) for S sets of k entrants and a field of N (a Cholesky factorisation of the
N × N normal equations); milliseconds for a field of tens.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

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
    if not shrinkage > 0:
        raise ValueError(f"shrinkage must be positive, got {shrinkage}")
    names = list(dict.fromkeys(entrants))
    index = {name: i for i, name in enumerate(names)}
    size = len(names)
    normal = [[shrinkage if i == j else 0.0 for j in range(size)] for i in range(size)]
    target = [0.0] * size
    rated: list[tuple[list[int], list[float]]] = []
    played = [0] * size
    for scores in sets:
        unknown = [name for name in scores if name not in index]
        if unknown:
            raise ValueError(f"a set names {unknown[0]!r}, which is not an entrant")
        if len(scores) < 2:
            continue
        members = [index[name] for name in scores]
        mean = sum(scores.values()) / len(scores)
        centred = [float(scores[names[i]]) - mean for i in members]
        rated.append((members, centred))
        weight = 1.0 / len(members)
        for a, i in enumerate(members):
            played[i] += 1
            target[i] += centred[a]
            for j in members:
                normal[i][j] -= weight
            normal[i][i] += 1.0
    factor = _cholesky(normal)
    ratings = _solve(factor, target)
    noise_sd = _noise_sd(rated, ratings, sum(1 for n in played if n))
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


def _noise_sd(rated: Sequence[tuple[list[int], list[float]]], ratings: Sequence[float], active: int) -> float | None:
    """The noise per entrant and set: residual sum of squares over its degrees of freedom (each
    set of k entrants gives k − 1 differences; the ratings of the ``active`` entrants take
    ``active`` − 1 of them)."""
    residual, free = 0.0, -(active - 1)
    for members, centred in rated:
        fitted = [ratings[i] for i in members]
        level = sum(fitted) / len(fitted)
        residual += sum((c - (f - level)) ** 2 for c, f in zip(centred, fitted, strict=True))
        free += len(members) - 1
    return math.sqrt(residual / free) if free > 0 else None


def _cholesky(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """The lower-triangular L with L·Lᵀ = ``matrix`` (symmetric positive definite)."""
    size = len(matrix)
    lower = [[0.0] * size for _ in range(size)]
    for i in range(size):
        row = lower[i]
        for j in range(i + 1):
            other = lower[j]
            total = matrix[i][j] - sum(row[k] * other[k] for k in range(j))
            row[j] = math.sqrt(total) if i == j else total / other[j]
    return lower


def _solve(lower: Sequence[Sequence[float]], target: Sequence[float]) -> list[float]:
    """x with L·Lᵀ·x = target."""
    size = len(lower)
    y = [0.0] * size
    for i in range(size):
        y[i] = (target[i] - sum(lower[i][k] * y[k] for k in range(i))) / lower[i][i]
    x = [0.0] * size
    for i in reversed(range(size)):
        x[i] = (y[i] - sum(lower[k][i] * x[k] for k in range(i + 1, size))) / lower[i][i]
    return x


def _inverse_diagonal(lower: Sequence[Sequence[float]]) -> list[float]:
    """The diagonal of (L·Lᵀ)⁻¹ = L⁻ᵀ·L⁻¹: the squared column norms of L⁻¹."""
    size = len(lower)
    inverse = [[0.0] * size for _ in range(size)]  # L⁻¹, lower triangular, row by row
    for i in range(size):
        inverse[i][i] = 1.0 / lower[i][i]
        for j in range(i):
            inverse[i][j] = -sum(lower[i][k] * inverse[k][j] for k in range(j, i)) / lower[i][i]
    return [sum(inverse[k][i] ** 2 for k in range(i, size)) for i in range(size)]
