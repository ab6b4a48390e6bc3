"""What each deal of a match log came to: contract, declarer, raw and deal scores, doubled pairs.

Shared by the tournament report (:mod:`arbiter.web.report`) and the A/B verdict
(:mod:`arbiter.verdict.ab`): both read per-deal facts from the logs the database points to, since
the database keeps no per-deal data. :class:`Facts` is a visitor of :func:`barbu.matchlog.read_log`
(the typed lines of a verified log); no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from barbu.loglines import DealEnd, Dealt, Declared, Doubled, LogLine
from barbu.matchlog import Verification, Visitor

from arbiter.model import DealSummary

if TYPE_CHECKING:  # pragma: no cover
    from barbu.rules import MatchState
    from barbu.rules.ruleset import Ruleset

__all__ = ["DealFacts", "Facts", "Pairs", "deal_summaries"]

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


class Facts(Visitor[tuple[Verification, list[DealFacts]]]):
    """The finished deals of a log, in order, with the verdict on it.

    A ``double`` target that had already doubled the seat is a redouble, any other a double
    (docs/match-log.md). Each deal's settlement is recomputed with
    :func:`barbu.rules.scoring.settle` and compared with the logged ``scores``.
    """

    def __init__(self, rules: Ruleset):
        self.rules = rules
        self.deals: list[DealFacts] = []
        self._dealt: Dealt | None = None
        self._contract = ""
        self._doubled: list[set[int]] = [set(), set(), set(), set()]
        self._pairs: Pairs = {}

    def visit(self, line: LogLine, state: MatchState | None = None) -> None:
        if isinstance(line, Dealt):
            self._dealt, self._contract = line, ""
            self._doubled, self._pairs = [set(), set(), set(), set()], {}
        elif self._dealt is None:
            return
        elif isinstance(line, Declared):
            self._contract = line.declaration.contract.value
        elif isinstance(line, Doubled):
            self._double(line.seat, line.targets)
        elif isinstance(line, DealEnd):
            self.deals.append(self._facts(line))
            self._dealt = None

    def _double(self, seat: int, targets: Iterable[int]) -> None:
        pairs = self._pairs
        for t in targets:
            key = (min(seat, t), max(seat, t))
            if seat in self._doubled[t]:  # t doubled this seat before: a redouble
                pairs[key] = (2, pairs[key][1], seat)
            else:
                self._doubled[seat].add(t)
                pairs[key] = (1, seat, None)

    def _facts(self, end: DealEnd) -> DealFacts:
        from barbu.rules.scoring import settle

        assert self._dealt is not None
        levels = [[0] * 4 for _ in range(4)]
        for (i, j), (level, _, _) in self._pairs.items():
            levels[i][j] = levels[j][i] = level
        raw, scores = list(end.raw), list(end.scores)
        settled = settle(self.rules, raw, levels) == scores
        return DealFacts(self._dealt.deal, self._contract, self._dealt.declarer, raw, scores, self._pairs, settled)

    def end(self, verification: Verification) -> tuple[Verification, list[DealFacts]]:
        return verification, self.deals


def deal_summaries(lines: Sequence[str], rules: Ruleset) -> tuple[DealSummary, ...]:
    """A finished log's deals as the standings sum them: none unless the log is valid and complete."""
    from barbu.matchlog import read_log

    try:
        verification, deals = read_log(lines, Facts(rules))
    except (ValueError, RecursionError):
        return ()
    if not (verification.valid and verification.complete):
        return ()
    return tuple(
        DealSummary(
            d.contract,
            d.declarer,
            tuple(d.raw),
            tuple(d.scores),
            tuple((i, j, level, by, -1 if redo is None else redo) for (i, j), (level, by, redo) in d.pairs.items()),
        )
        for d in deals
    )
