"""The contracts and their fixed facts (docs/rules.md: the seven contracts, and the salad).

>>> Contract.BARBU.short, Contract.TRUMPS.is_positive, Contract("no_hearts") is Contract.NO_HEARTS
('KH', True, True)
>>> [c.short for c in STANDARD_CONTRACTS]
['NT', 'NH', 'NQ', 'KH', 'L2', 'TR', 'DO']
"""

from __future__ import annotations

from enum import StrEnum


class Contract(StrEnum):
    """A contract; its value is the name the match log and the protocol use (``"no_tricks"``)."""

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
        """True for the contracts that score points (Trumps, Domino); the others cost points."""
        return self in (Contract.TRUMPS, Contract.DOMINO)

    @property
    def short(self) -> str:
        """A two-letter label for tables and replays (``NT``, ``KH``, ``DO`` ...)."""
        return _SHORT[self]


# Canonical order: the order of docs/rules.md, salad last. Legal declarations follow it.
ALL_CONTRACTS = tuple(Contract)
"""Every contract in canonical order, the salad last."""
STANDARD_CONTRACTS = ALL_CONTRACTS[:7]
"""The seven contracts of the standard menu (no salad); the ``contracts`` switch's default."""
CONTRACT_BITS = {c: 1 << i for i, c in enumerate(ALL_CONTRACTS)}
"""Each contract's bit in a mask of contracts (a seat's declared contracts, ``MatchState.declared``)."""
_SHORT = dict(zip(ALL_CONTRACTS, ("NT", "NH", "NQ", "KH", "L2", "TR", "DO", "SA"), strict=True))
