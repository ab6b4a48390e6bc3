"""Domino / Fan Tan layout arithmetic (RULES.md §1.7).

Each suit's row is a run of consecutive ranks around the start rank. The *frontier* is the
mask of cards that may be played next: the start card of each unopened suit and the next card
beyond each open end. Ranks are placed on an ordinal scale: with ``domino_ace=high`` the ace is
above the king; with ``low`` it is below the 2.
"""

from __future__ import annotations

from .cards import RANKS


def ordinal(rank: int, ace: str) -> int:
    if ace == "low":
        return 0 if rank == 12 else rank + 1
    return rank


def rank_at(ordinal_value: int, ace: str) -> int:
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


def start_cards(start_rank: int) -> int:
    return sum(1 << (s * 13 + start_rank) for s in range(4))


def extend_frontier(frontier: int, card: int, start_rank: int, ace: str) -> int:
    """The frontier after ``card`` (a frontier card) is played."""
    up, down = NEIGHBOURS[ace]
    frontier &= ~(1 << card)
    rank = card % 13
    if rank == start_rank:
        steps = (up[card], down[card])
    elif ordinal(rank, ace) > ordinal(start_rank, ace):
        steps = (up[card],)
    else:
        steps = (down[card],)
    for nxt in steps:
        if nxt >= 0:
            frontier |= 1 << nxt
    return frontier


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
