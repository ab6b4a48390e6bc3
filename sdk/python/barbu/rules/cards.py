"""Cards as integers 0..51 and hands as 52-bit masks.

Card ``c`` is suit ``c // 13`` (0=C, 1=D, 2=H, 3=S) and rank index ``c % 13`` (0 = the 2,
12 = the ace), so within a suit a higher bit is a higher card. A hand is an ``int`` with bit
``c`` set for each card it holds: suit tests, following and trick winners are a few bit
operations, which is what makes random playouts fast enough for Monte-Carlo bots.
"""

from __future__ import annotations

from typing import Iterable

from .errors import NotationError

RANKS = "23456789TJQKA"
SUITS = "CDHS"
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
SUIT_SYMBOLS = "♣♦♥♠"

FULL_SUIT = (1 << 13) - 1
SUIT_MASKS = tuple(FULL_SUIT << (13 * s) for s in range(4))
FULL_DECK = (1 << 52) - 1

CARD_NAMES = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(52))
_CARD_BY_NAME = {name: c for c, name in enumerate(CARD_NAMES)}


def card(rank: str, suit: str) -> int:
    return SUITS.index(suit) * 13 + RANKS.index(rank)


def parse_card(text: str) -> int:
    """``"TH"`` -> the ten of hearts; also accepts ``"10H"`` and lower case."""
    if not isinstance(text, str):
        raise NotationError(f"a card must be a string like 'TH', got {text!r}")
    key = text.strip().upper()
    if key.startswith("10"):
        key = "T" + key[2:]
    try:
        return _CARD_BY_NAME[key]
    except KeyError:
        raise NotationError(
            f"bad card {text!r}: expected rank 2-9 T J Q K A then suit C D H S, e.g. 'TH'"
        ) from None


def parse_rank(text: str) -> int:
    """``"7"`` -> 5 (the rank index); accepts ``"10"`` for the ten."""
    key = str(text).strip().upper()
    if key == "10":
        key = "T"
    if len(key) != 1 or key not in RANKS:
        raise NotationError(f"bad rank {text!r}: expected one of 2-9 T J Q K A")
    return RANKS.index(key)


def parse_suit(text: str) -> int:
    key = str(text).strip().upper()
    if len(key) != 1 or key not in SUITS:
        raise NotationError(f"bad suit {text!r}: expected one of C D H S")
    return SUITS.index(key)


def card_name(c: int) -> str:
    return CARD_NAMES[c]


def suit_of(c: int) -> int:
    return c // 13


def rank_of(c: int) -> int:
    return c % 13


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def parse_hand(names: Iterable[str]) -> int:
    """A list of card names -> a mask; a repeated card is an error."""
    m = 0
    for name in names:
        c = parse_card(name)
        if m >> c & 1:
            raise NotationError(f"card {CARD_NAMES[c]} is listed twice")
        m |= 1 << c
    return m


# Per-suit tables: the ascending card list of every 13-bit pattern. Turning a mask into a
# list of cards is then four lookups instead of a loop over bits.
def _suit_table(suit: int) -> tuple[tuple[int, ...], ...]:
    base = 13 * suit
    table: list[tuple[int, ...]] = [()]
    for pattern in range(1, 1 << 13):
        top = pattern.bit_length() - 1  # built from the pattern without its top card
        table.append(table[pattern ^ (1 << top)] + (base + top,))
    return tuple(table)


_TABLES = tuple(_suit_table(s) for s in range(4))
_T0, _T1, _T2, _T3 = _TABLES


def cards_of(mask: int) -> tuple[int, ...]:
    """The cards of a mask in ascending order (clubs 2 .. spades A)."""
    return (
        _T0[mask & FULL_SUIT]
        + _T1[mask >> 13 & FULL_SUIT]
        + _T2[mask >> 26 & FULL_SUIT]
        + _T3[mask >> 39 & FULL_SUIT]
    )


def hand_names(mask: int) -> list[str]:
    return [CARD_NAMES[c] for c in cards_of(mask)]


QUEENS = mask_of(card("Q", s) for s in SUITS)
HEARTS_MASK = SUIT_MASKS[HEARTS]
KING_OF_HEARTS = 1 << card("K", "H")
ACE_OF_HEARTS = 1 << card("A", "H")
SEVEN_OF_DIAMONDS = card("7", "D")
ACES = mask_of(card("A", s) for s in SUITS)
