"""The doubling phase (docs/rules.md §4): who may double or redouble whom, and the quota.

Pair levels live in a symmetric 4x4 matrix; ``doubled[p]`` is the mask of seats that p has
doubled first in this deal, which tells a redouble (answering a double) from a new double.
"""

from __future__ import annotations

from .contracts import Contract
from .ruleset import Ruleset


def doubling_order(declarer: int) -> tuple[int, ...]:
    """X2: left of the declarer first, the declarer last."""
    return tuple((declarer + i) % 4 for i in (1, 2, 3, 4))


def startable_targets(rules: Ruleset, contract: Contract, declarer: int) -> int:
    """The mask of seats a non-declarer may open a new double on (X3, double_targets)."""
    if rules.double_targets == "any":
        return 0b1111
    if rules.double_targets == "declarer_only" or contract.is_positive:
        return 1 << declarer
    return 0b1111


def target_masks(
    seat: int,
    declarer: int,
    startable: int,
    doubled: int,
    doubled_by: int,
    redoubled: int,
    extra_round: bool,
    forced: bool,
) -> tuple[int, int]:
    """(legal target mask, forced target mask) for ``seat``'s doubling action.

    ``doubled`` / ``doubled_by`` are the seats ``seat`` has doubled / that have doubled it,
    ``redoubled`` the seats it is at level 2 with. A redouble answers a double still at
    level 1; in the first round a non-declarer may also open doubles on startable seats it
    has no business with yet; the declarer and the extra round only redouble.
    """
    legal = doubled_by & ~redoubled
    if not extra_round and seat != declarer:
        legal |= startable & ~(1 << seat) & ~doubled & ~doubled_by
    forced_mask = (1 << declarer) if forced and legal >> declarer & 1 else 0
    return legal, forced_mask


def is_forced(rules: Ruleset, remaining: int, earlier_doubles: int) -> bool:
    """X7: must this non-declarer double the declarer to meet the quota in time?

    ``remaining`` counts the declarer's deals left including this one; ``earlier_doubles``
    the declarer's earlier deals in which this player doubled him.
    """
    q = rules.double_quota
    return rules.quota_enforcement == "forced" and q > 0 and q - earlier_doubles >= remaining


def _subsets(legal: int, forced: int) -> tuple[tuple[int, ...], ...]:
    if forced & ~legal:
        return ()
    return tuple(tuple(s for s in range(4) if m >> s & 1) for m in range(16) if m & legal == m and m & forced == forced)


# (legal mask, forced mask) -> every action within ``legal`` containing ``forced``, as sorted
# seat tuples in increasing mask order (the pass first). 256 entries, built once.
_SUBSETS = {(legal, forced): _subsets(legal, forced) for legal in range(16) for forced in range(16)}


def actions_for(legal: int, forced: int) -> tuple[tuple[int, ...], ...]:
    """Every doubling action within the ``legal`` target mask that contains the ``forced``
    one, as ascending seat tuples in increasing mask order (the pass first).

    >>> actions_for(0b0101, 0)
    ((), (0,), (2,), (0, 2))
    >>> actions_for(0b0101, 0b0001)  # seat 0 must be doubled
    ((0,), (0, 2))
    """
    return _SUBSETS[legal, forced]
