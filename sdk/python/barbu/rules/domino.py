"""Domino / Fan Tan layout arithmetic (docs/rules.md §7).

Each suit's row is a run of consecutive ranks around the start rank. The *frontier* is the
mask of cards that may be played next: the start card of each unopened suit and the next card
beyond each open end. Ranks are placed on an ordinal scale: with ``domino_ace=high`` the ace is
above the king; with ``low`` it is below the 2.

>>> from barbu.rules.cards import hand_names, parse_card
>>> frontier = start_cards(5)  # the four 7s open the rows
>>> hand_names(frontier)
['7C', '7D', '7H', '7S']
>>> frontier = frontier ^ (1 << parse_card("7H")) | frontier_steps(5, "high")[parse_card("7H")]
>>> hand_names(frontier)  # once the 7H is down, the 6H and the 8H are playable
['7C', '7D', '6H', '8H', '7S']
"""

from __future__ import annotations

import functools

from .cards import RANKS


def ordinal(rank: int, ace: str) -> int:
    """A rank index's place in a Domino row: the rank itself, shifted up one under ``ace="low"``
    where the ace (12) comes first at 0."""
    if ace == "low":
        return 0 if rank == 12 else rank + 1
    return rank


def rank_at(ordinal_value: int, ace: str) -> int:
    """The inverse of :func:`ordinal`."""
    if ace == "low":
        return 12 if ordinal_value == 0 else ordinal_value - 1
    return ordinal_value


def neighbours(ace: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(card one step up, card one step down) for every card; -1 where the row stops."""
    up, down = [], []
    for c in range(52):
        suit, o = divmod(c, 13)
        o = ordinal(o, ace)
        up.append(suit * 13 + rank_at(o + 1, ace) if o < 12 else -1)
        down.append(suit * 13 + rank_at(o - 1, ace) if o > 0 else -1)
    return tuple(up), tuple(down)


NEIGHBOURS = {ace: neighbours(ace) for ace in ("high", "low")}
"""``neighbours(ace)`` for both values of ``domino_ace``."""


def start_cards(start_rank: int) -> int:
    """The mask of the four cards of the start rank: what may open each row."""
    return sum(1 << (s * 13 + start_rank) for s in range(4))


@functools.cache  # 26 possible tables
def frontier_steps(start_rank: int, ace: str) -> tuple[int, ...]:
    """For each card: the mask of cards that become playable once it is on the layout.

    The start card opens both ends of its row; a card above the start extends the top end,
    one below extends the bottom end.
    """
    up, down = NEIGHBOURS[ace]
    start = ordinal(start_rank, ace)
    steps = []
    for c in range(52):
        o = ordinal(c % 13, ace)
        nxt = (up[c], down[c]) if o == start else (up[c],) if o > start else (down[c],)
        steps.append(sum(1 << n for n in nxt if n >= 0))
    return tuple(steps)


def rows(layout: int, ace: str) -> list[tuple[str, str] | None]:
    """Each suit's row as (lowest card, highest card) on the layout, or None if unopened."""
    out: list[tuple[str, str] | None] = []
    for suit in range(4):
        ranks = [r for r in range(13) if layout >> (suit * 13 + r) & 1]
        if not ranks:
            out.append(None)
            continue
        ordered = sorted(ranks, key=lambda r: ordinal(r, ace))
        out.append((RANKS[ordered[0]] + "CDHS"[suit], RANKS[ordered[-1]] + "CDHS"[suit]))
    return out
