"""What each deal of a match log came to: contract, declarer, raw and deal scores, doubled pairs.

Shared by the tournament report (:mod:`arbiter.web.report`) and the A/B verdict
(:mod:`arbiter.verdict.ab`): both read per-deal facts from the logs the database points to, since
the database keeps no per-deal data. Plain values in, plain values out; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from barbu.rules.ruleset import Ruleset

__all__ = ["DealFacts", "Pairs", "deal_facts"]

# (i, j) with i < j -> (level, the seat that doubled, the seat that redoubled or None)
Pairs = dict[tuple[int, int], tuple[int, int, int | None]]


@dataclass
class DealFacts:
    """One finished deal of a log: its contract, declarer, raw and deal scores, doubled pairs."""

    deal: int
    contract: str
    declarer: int
    raw: list[int]
    scores: list[int]
    pairs: Pairs = field(default_factory=dict)
    settled: bool = True  # raw + the pairs' transfers give the logged scores


def deal_facts(objs: Iterable[dict[str, Any]], rules: Ruleset) -> list[DealFacts]:
    """The finished deals of a verified log's lines (header first or not), in order.

    A ``double`` target that had already doubled the seat is a redouble, any other a double
    (docs/match-log.md). Each deal's settlement is recomputed with
    :func:`barbu.rules.scoring.settle` and compared with the logged ``scores``.
    """
    from barbu.rules.scoring import settle

    out: list[DealFacts] = []
    current: dict[str, Any] | None = None
    doubled: list[set[int]] = [set(), set(), set(), set()]
    pairs: Pairs = {}
    for o in objs:
        kind = o.get("type")
        if kind == "deal":
            current = {"deal": o["deal"], "declarer": o["declarer"], "contract": None}
            doubled = [set(), set(), set(), set()]
            pairs = {}
        elif current is None:
            continue
        elif kind == "declare":
            current["contract"] = o["contract"]
        elif kind == "double":
            seat = o["seat"]
            for t in o["targets"]:
                key = (min(seat, t), max(seat, t))
                if seat in doubled[t]:  # t doubled this seat before: a redouble
                    pairs[key] = (2, pairs[key][1], seat)
                else:
                    doubled[seat].add(t)
                    pairs[key] = (1, seat, None)
        elif kind == "deal_end":
            levels = [[0] * 4 for _ in range(4)]
            for (i, j), (level, _, _) in pairs.items():
                levels[i][j] = levels[j][i] = level
            raw, scores = list(o["raw"]), list(o["scores"])
            settled = settle(rules, raw, levels) == scores
            out.append(
                DealFacts(current["deal"], current["contract"], current["declarer"], raw, scores, pairs, settled)
            )
            current = None
    return out
