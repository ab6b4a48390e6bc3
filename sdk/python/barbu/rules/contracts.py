"""The contracts and their fixed facts (RULES.md §1.6-1.7, salad from §2)."""

from __future__ import annotations

from enum import StrEnum


class Contract(StrEnum):
    NO_TRICKS = "no_tricks"
    NO_HEARTS = "no_hearts"
    NO_QUEENS = "no_queens"
    BARBU = "barbu"
    NO_LAST_TWO = "no_last_two"
    TRUMPS = "trumps"
    DOMINO = "domino"
    SALAD = "salad"

    @property
    def is_positive(self) -> bool:
        return self in (Contract.TRUMPS, Contract.DOMINO)

    @property
    def short(self) -> str:
        return _SHORT[self]


# Canonical order: the order of RULES.md, salad last. Legal declarations follow it.
ALL_CONTRACTS = tuple(Contract)
STANDARD_CONTRACTS = ALL_CONTRACTS[:7]
_SHORT = dict(zip(ALL_CONTRACTS, ("NT", "NH", "NQ", "KH", "L2", "TR", "DO", "SA")))
