"""What the match waits for and what a seat does: the phases and the action values.

Actions are values (the type :data:`Action`):

* ``Declaration(contract, trump, start_rank)`` in the declare phase;
* a tuple of target seats (ascending; ``()`` passes) in the doubling phase;
* a card (an ``int``, see :mod:`.cards`) in trick play and Domino; ``None`` is a Domino pass.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple, TypeAlias

from .cards import RANKS, SUITS
from .contracts import Contract

PASS = None
"""The Domino pass action (``None``): legal when the seat has no playable card, or under
``domino_must_play=false``."""


class Phase(IntEnum):
    """What the match waits for; ``View.phase`` and ``MatchState.phase``."""

    DEAL = 0
    """Waiting for the next deal's hands (:func:`deal`); nobody acts."""
    DECLARE = 1
    """The declarer chooses the contract: actions are :class:`Declaration` values."""
    DOUBLE = 2
    """Each seat in turn doubles or redoubles: actions are tuples of target seats."""
    PLAY = 3
    """Trick play: actions are cards."""
    DOMINO = 4
    """The Domino contract: actions are cards, or ``None`` (a pass)."""
    OVER = 5
    """The match has ended."""


class Declaration(NamedTuple):
    """The declare-phase action: a contract, with its trump suit or Domino start rank.

    >>> str(Declaration(Contract.TRUMPS, trump=2)), str(Declaration(Contract.DOMINO, start_rank=9))
    ('trumps (H)', 'domino (from J)')
    """

    contract: Contract
    trump: int | None = None
    """The trump suit index (0 clubs .. 3 spades), with Trumps only."""
    start_rank: int | None = None
    """The rank index the Domino starts from (0 the 2 .. 12 the ace), with Domino only."""

    def __str__(self) -> str:
        if self.trump is not None:
            return f"{self.contract.value} ({SUITS[self.trump]})"
        if self.start_rank is not None:
            return f"{self.contract.value} (from {RANKS[self.start_rank]})"
        return self.contract.value


Action: TypeAlias = Declaration | tuple[int, ...] | int | None
"""Any action a seat takes: a :class:`Declaration` (declare phase), a tuple of target seats
(doubling; ``()`` passes), a card number (trick play, Domino) or ``None`` (a Domino pass).
``view.legal`` and :func:`legal_actions` list the legal ones; :meth:`Bot.decide
<barbu.bot.Bot.decide>` returns one of them."""
