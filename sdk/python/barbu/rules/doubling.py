"""The doubling phase (RULES.md §1.4): who may double or redouble whom, and the quota.

Pair levels live in a symmetric 4x4 matrix; ``doubled[p]`` is the mask of seats that p has
doubled first in this deal, which tells a redouble (answering a double) from a new double.
"""

from __future__ import annotations

from .contracts import Contract
from .ruleset import Ruleset


def doubling_order(declarer: int) -> tuple[int, ...]:
    """X2: left of the declarer first, the declarer last."""
    return tuple((declarer + i) % 4 for i in (1, 2, 3, 4))


def may_start_double(rules: Ruleset, contract: Contract, declarer: int, target: int) -> bool:
    """Whether a non-declarer may open a new double on ``target`` (X3, double_targets)."""
    if rules.double_targets == "any":
        return True
    if rules.double_targets == "declarer_only" or contract.is_positive:
        return target == declarer
    return True


def target_masks(
    rules: Ruleset,
    contract: Contract,
    declarer: int,
    seat: int,
    doubled: list[int],
    levels: list[list[int]],
    extra_round: bool,
    forced: bool,
) -> tuple[int, int]:
    """(legal target mask, forced target mask) for ``seat``'s doubling action.

    A redouble answers a double still at level 1. In the first round a non-declarer may also
    open doubles; the declarer and the extra round only redouble.
    """
    legal = 0
    for t in range(4):
        if t == seat:
            continue
        if doubled[t] >> seat & 1:
            if levels[seat][t] == 1:
                legal |= 1 << t
        elif (
            not extra_round
            and seat != declarer
            and not doubled[seat] >> t & 1
            and may_start_double(rules, contract, declarer, t)
        ):
            legal |= 1 << t
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
    return tuple(
        tuple(s for s in range(4) if m >> s & 1)
        for m in range(16)
        if m & legal == m and m & forced == forced
    )


# (legal mask, forced mask) -> every action within ``legal`` containing ``forced``, as sorted
# seat tuples in increasing mask order (the pass first). 256 entries, built once.
_SUBSETS = {(legal, forced): _subsets(legal, forced) for legal in range(16) for forced in range(16)}


def actions_for(legal: int, forced: int) -> tuple[tuple[int, ...], ...]:
    return _SUBSETS[legal, forced]
