"""Raw contract scores, pairwise doubling settlement and places (docs/rules.md §6-8, M5).

A bot that plays a deal out in simulation reads the outcome from ``state.results``; these are
the pieces, for a bot that scores positions of its own:

>>> from barbu.rules import make_ruleset
>>> rules = make_ruleset("standard")
>>> settle(rules, [-12, 0, -6, -8], [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
[-24, 12, -6, -8]
>>> places([10, -5, 10, 0])
[1, 4, 1, 3]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .actions import Declaration
from .cards import ACE_OF_HEARTS, HEARTS_MASK, KING_OF_HEARTS, QUEENS
from .contracts import Contract
from .ruleset import Ruleset

# Read as C statics by a compiled build (Final), not as enum lookups.
_NO_TRICKS: Final = Contract.NO_TRICKS
_NO_HEARTS: Final = Contract.NO_HEARTS
_NO_QUEENS: Final = Contract.NO_QUEENS
_BARBU: Final = Contract.BARBU
_NO_LAST_TWO: Final = Contract.NO_LAST_TWO
_TRUMPS: Final = Contract.TRUMPS
_SALAD: Final = Contract.SALAD
_PLAIN_HEARTS: Final = HEARTS_MASK & ~ACE_OF_HEARTS


@dataclass(frozen=True, init=False)
class DealResult:
    """A scored deal, as ``View.results`` and ``MatchState.results`` keep them."""

    deal: int
    """The deal's 0-based index in the match."""
    declarer: int
    declaration: Declaration
    levels: tuple[tuple[int, ...], ...]
    """The final pair levels: ``levels[a][b]`` is 0, 1 (doubled) or 2 (redoubled)."""
    reason: str
    """How the deal ended: all_tricks, all_queens, king_taken, all_hearts, domino_done, split."""
    raw: tuple[int, ...]
    """Each seat's raw contract score, before the doubles are settled."""
    scores: tuple[int, ...]
    """Each seat's deal score: raw plus the transfers of its doubled pairs."""
    totals: tuple[int, ...]
    """Each seat's match total after this deal."""

    def __init__(
        self,
        deal: int,
        declarer: int,
        declaration: Declaration,
        levels: tuple[tuple[int, ...], ...],
        reason: str,
        raw: tuple[int, ...],
        scores: tuple[int, ...],
        totals: tuple[int, ...],
    ) -> None:
        # The dataclass's own __init__ is Python code even in a compiled build (a twentieth of
        # a compiled deal playout); this one is compiled. A frozen instance's fields are set so.
        setattr_ = object.__setattr__
        setattr_(self, "deal", deal)
        setattr_(self, "declarer", declarer)
        setattr_(self, "declaration", declaration)
        setattr_(self, "levels", levels)
        setattr_(self, "reason", reason)
        setattr_(self, "raw", raw)
        setattr_(self, "scores", scores)
        setattr_(self, "totals", totals)


MULTIPLIERS = {"pagat": (0, 1, 2), "multiplier": (0, 2, 4)}
"""Settlement multiplier by pair level (0, 1, 2), per ``double_scoring`` (S2)."""


def trick_raw_scores(
    rules: Ruleset, contract: Contract, won: list[int], tricks_won: list[int], last_two: tuple[int, int] | None
) -> list[int]:
    """Raw scores of a trick contract from each seat's captured cards.

    ``won[s]`` is the mask of cards seat s captured, ``tricks_won[s]`` its trick count and
    ``last_two`` the winners of tricks 12 and 13 (None when the hand ended early).
    """
    trick, heart, heart_ace, queen, king, t12, t13, trump = rules.score_values
    salad = contract is _SALAD
    nt = salad or contract is _NO_TRICKS
    nh = salad or contract is _NO_HEARTS
    nq = salad or contract is _NO_QUEENS
    kh = salad or contract is _BARBU
    tr = contract is _TRUMPS
    raw = [0, 0, 0, 0]
    for s in range(4):
        w = won[s]
        score = 0
        if nt:
            score += trick * tricks_won[s]
        if nh:
            score += heart * (w & _PLAIN_HEARTS).bit_count()
            if w & ACE_OF_HEARTS:
                score += heart_ace
        if nq:
            score += queen * (w & QUEENS).bit_count()
        if kh and w & KING_OF_HEARTS:
            score += king
        if tr:
            score += trump * tricks_won[s]
        raw[s] = score
    if (salad or contract is _NO_LAST_TWO) and last_two is not None:
        raw[last_two[0]] += t12
        raw[last_two[1]] += t13
    return raw


def domino_raw_scores(rules: Ruleset, finish_order: list[int]) -> list[int]:
    """Raw Domino scores: each seat's payout by its place in ``finish_order`` (F6)."""
    raw = [0, 0, 0, 0]
    for place, seat in enumerate(finish_order):
        raw[seat] = rules.domino_payouts[place]
    return raw


def split_raw_scores(rules: Ruleset, contract: Contract, declarer: int) -> list[int]:
    """S4: an undoubled negative hand is not played; the total is shared out."""
    total = rules.contract_total(contract)
    share = total // 3
    return [total - 3 * share if s == declarer else share for s in range(4)]


def settle(rules: Ruleset, raw: list[int], levels: list[list[int]]) -> list[int]:
    """S2-S3: deal scores = raw + each doubled pair's transfer, on raw differences."""
    mult = MULTIPLIERS[rules.double_scoring]
    scores = list(raw)
    for i in range(4):
        for j in range(i + 1, 4):
            level = levels[i][j]
            if level:
                transfer = mult[level] * (raw[i] - raw[j])
                scores[i] += transfer
                scores[j] -= transfer
    return scores


def places(totals: list[int]) -> list[int]:
    """1-based places; tied totals share the better place ([1, 1, 3, 4])."""
    return [1 + sum(1 for other in totals if other > t) for t in totals]
