"""Cards as integers 0..51 and hands as 52-bit masks.

Card ``c`` is suit ``c // 13`` (0=C, 1=D, 2=H, 3=S) and rank index ``c % 13`` (0 = the 2,
12 = the ace), so within a suit a higher bit is a higher card. A hand is an ``int`` with bit
``c`` set for each card it holds: suit tests, following and trick winners are a few bit
operations, which is what makes random playouts fast enough for Monte-Carlo bots.

>>> c = parse_card("QS")
>>> c, suit_of(c), rank_of(c), card_name(c)
(49, 3, 10, 'QS')
>>> hand = parse_hand(["2C", "AH", "QS"])
>>> hand_names(hand), len(cards_of(hand)) == hand.bit_count()
(['2C', 'AH', 'QS'], True)
>>> hand_names(hand & SUIT_MASKS[HEARTS])  # the hearts of a hand
['AH']
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Final, Protocol

from .errors import NotationError

RANKS = "23456789TJQKA"
"""Rank letters by rank index: ``RANKS[0]`` is the 2, ``RANKS[12]`` the ace."""
SUITS = "CDHS"
"""Suit letters by suit index: clubs, diamonds, hearts, spades."""
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
SUIT_SYMBOLS = "♣♦♥♠"
"""Suit symbols by suit index, for display."""

FULL_SUIT: Final = (1 << 13) - 1
"""The 13-bit pattern of a whole suit (shift it by ``13 * suit``)."""
SUIT_MASKS: Final = tuple(FULL_SUIT << (13 * s) for s in range(4))
"""The mask of every card of each suit: ``hand & SUIT_MASKS[s]`` keeps the suit-``s`` cards."""
FULL_DECK: Final = (1 << 52) - 1
"""The mask of all 52 cards."""

CARD_NAMES: Final = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(52))
"""Card names by card number: ``CARD_NAMES[c]`` is ``card_name(c)``."""
_CARD_BY_NAME = {name: c for c, name in enumerate(CARD_NAMES)}


def card(rank: str, suit: str) -> int:
    """The card number of a rank letter and a suit letter (strict notation): ``card("T", "H")``.

    >>> card("T", "H") == parse_card("TH")
    True
    """
    return SUITS.index(suit) * 13 + RANKS.index(rank)


def parse_card(text: object) -> int:
    """``"TH"`` -> the ten of hearts; also accepts ``"10H"`` and lower case.

    Raises :class:`~barbu.rules.NotationError` naming the bad text.

    >>> parse_card("TH"), parse_card("10h"), parse_card("2C")
    (34, 34, 0)
    """
    if not isinstance(text, str):
        raise NotationError(f"a card must be a string like 'TH', got {text!r}")
    key = text.strip().upper()
    if key.startswith("10"):
        key = "T" + key[2:]
    try:
        return _CARD_BY_NAME[key]
    except KeyError:
        raise NotationError(f"bad card {text!r}: expected rank 2-9 T J Q K A then suit C D H S, e.g. 'TH'") from None


def parse_rank(text: object) -> int:
    """``"7"`` -> 5 (the rank index); accepts ``"10"`` for the ten.

    >>> parse_rank("7"), parse_rank("10"), parse_rank("a")
    (5, 8, 12)
    """
    key = str(text).strip().upper()
    if key == "10":
        key = "T"
    if len(key) != 1 or key not in RANKS:
        raise NotationError(f"bad rank {text!r}: expected one of 2-9 T J Q K A")
    return RANKS.index(key)


def parse_suit(text: object) -> int:
    """``"H"`` -> 2 (the suit index, clubs 0 .. spades 3); lower case is accepted.

    >>> parse_suit("h") == HEARTS
    True
    """
    key = str(text).strip().upper()
    if len(key) != 1 or key not in SUITS:
        raise NotationError(f"bad suit {text!r}: expected one of C D H S")
    return SUITS.index(key)


def card_name(c: int) -> str:
    """The notation of a card number: ``card_name(34) == "TH"``."""
    return CARD_NAMES[c]


def suit_of(c: int) -> int:
    """The suit index of a card (0 clubs .. 3 spades)."""
    return c // 13


def rank_of(c: int) -> int:
    """The rank index of a card (0 the 2 .. 12 the ace)."""
    return c % 13


def mask_of(cards: Iterable[int]) -> int:
    """The mask of some card numbers (repeats are harmless).

    >>> mask_of([0, 12]) == (1 << 0) | (1 << 12)
    True
    """
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def parse_hand(names: Iterable[str]) -> int:
    """A list of card names -> a mask; a repeated card is an error.

    >>> parse_hand(["AS", "2C"]) == (1 << parse_card("AS")) | 1
    True
    """
    m = 0
    for name in names:
        c = parse_card(name)
        if m >> c & 1:
            raise NotationError(f"card {CARD_NAMES[c]} is listed twice")
        m |= 1 << c
    return m


# Per-suit tables: the ascending card list of every 13-bit pattern. Turning a mask into a
# list of cards is then four lookups instead of a loop over bits.
#
# The 4 x 8192 tuples are built on the first call of ``cards_of``, not at import: a bot
# process that never needs them (most of them, before their hello) pays nothing. Until then
# ``_T0`` .. ``_T3`` are stand-ins whose first lookup builds the real tables and rebinds the
# module globals, so the hot path reads plain tuples with no check of its own.
def _suit_table(suit: int) -> tuple[tuple[int, ...], ...]:
    """Every 13-bit pattern's cards as ``low[p & 127] + high[p >> 7]``: the 8192 entries are
    joined from 128 + 64 half tables in one comprehension (a few ms, not tens)."""
    base = 13 * suit
    low: list[tuple[int, ...]] = [()]
    for bit in range(7):
        low += [t + (base + bit,) for t in low]
    high: list[tuple[int, ...]] = [()]
    for bit in range(7, 13):
        high += [t + (base + bit,) for t in high]
    return tuple([lo + hi for hi in high for lo in low])


def _build_tables() -> tuple[tuple[tuple[int, ...], ...], ...]:
    global _TABLES, _T0, _T1, _T2, _T3
    gc_was_on = gc.isenabled()
    gc.disable()  # 32768 new tuples, all kept: a collection pass in between finds nothing
    try:
        tables = tuple(_suit_table(s) for s in range(4))
    finally:
        if gc_was_on:
            gc.enable()
    _TABLES = tables
    _T0, _T1, _T2, _T3 = tables
    return tables


class _LazyTable:
    """A suit table until the real ones exist: any use builds them (then it only delegates)."""

    __slots__ = ("_suit",)

    def __init__(self, suit: int) -> None:
        self._suit = suit

    def _real(self) -> _Table:
        tables = _TABLES if isinstance(_TABLES, tuple) else _build_tables()
        return tables[self._suit]

    def __getitem__(self, pattern: int) -> tuple[int, ...]:
        return self._real()[pattern]

    def __len__(self) -> int:
        return 1 << 13


class _LazyTables:
    """``_TABLES`` until the real ones exist."""

    def __getitem__(self, suit: int) -> _Table:
        return _build_tables()[suit]

    def __len__(self) -> int:
        return 4


class _Table(Protocol):
    """What a suit table answers: the cards of a pattern (a tuple, or a lazy one until built)."""

    def __getitem__(self, pattern: int, /) -> tuple[int, ...]: ...


class _Tables(Protocol):
    def __getitem__(self, suit: int, /) -> _Table: ...


# Typed as what both the lazy stand-ins and the real tables answer (so that a compiled build,
# which checks the types it is told, accepts either).
_TABLES: _Tables = _LazyTables()
_T0: _Table = _LazyTable(0)
_T1: _Table = _LazyTable(1)
_T2: _Table = _LazyTable(2)
_T3: _Table = _LazyTable(3)


def cards_of(mask: int) -> tuple[int, ...]:
    """The cards of a mask in ascending order (clubs 2 .. spades A).

    This is how a bot lists a mask (its hand, ``legal_mask()``, the cards of a suit); it costs
    four table lookups whatever the mask.

    >>> cards_of(parse_hand(["AS", "2C", "TH"]))
    (0, 34, 51)
    """
    return (
        _T0[mask & FULL_SUIT] + _T1[mask >> 13 & FULL_SUIT] + _T2[mask >> 26 & FULL_SUIT] + _T3[mask >> 39 & FULL_SUIT]
    )


def hand_names(mask: int) -> list[str]:
    """The names of a mask's cards, ascending: ``hand_names(parse_hand(["AS", "2C"])) == ["2C", "AS"]``."""
    return [CARD_NAMES[c] for c in cards_of(mask)]


QUEENS: Final = mask_of(card("Q", s) for s in SUITS)
"""The mask of the four queens (scored in No Queens and the salad)."""
HEARTS_MASK: Final = SUIT_MASKS[HEARTS]
"""The mask of the thirteen hearts."""
KING_OF_HEARTS: Final = 1 << card("K", "H")
"""The king of hearts as a mask (a one-bit mask, unlike ``SEVEN_OF_DIAMONDS``)."""
ACE_OF_HEARTS: Final = 1 << card("A", "H")
"""The ace of hearts as a mask."""
SEVEN_OF_DIAMONDS: Final = card("7", "D")
"""The seven of diamonds as a card number (it opens the Domino under ``domino_start=seven_of_diamonds``)."""
ACES = mask_of(card("A", s) for s in SUITS)
"""The mask of the four aces."""
