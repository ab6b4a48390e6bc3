"""Domino (Fan Tan): which frontier card to play, and which start rank to name.

Play: a card is worth playing when it leads towards more of my own cards (it unblocks me) and
when the card it exposes is mine (nobody else gains a move). A card that exposes only other
players' cards, with nothing of mine behind it, is a blocker: hold it while I have anything
else to play.

Start rank: the rank where the fewest of other players' cards stand between the start card and
my own cards (those are the moves I must wait for).
"""

from __future__ import annotations

from barbu.rules.domino import ordinal

from .knowledge import highest


# Play weights (tuned by duplicate A/B runs).
W_BEYOND = 2.0  # per own card further along the row
W_MINE = 1.5  # the card exposed next is mine
W_OTHER = 1.6  # the card exposed next is someone else's
W_GAPS = 0.4  # per foreign card between this one and my farthest card in that direction
W_BLOCKER = 1.0  # releasing a pure blocker (nothing of mine behind it)
W_RELEASED = 0.3  # per foreign card a released blocker opens the way to


def _suit_ordinals(mask: int, suit: int, ace: str) -> list[int]:
    return [ordinal(r, ace) for r in range(13) if mask >> (suit * 13 + r) & 1]


def _card_at(suit: int, o: int, ace: str) -> int:
    if ace == "low":
        rank = 12 if o == 0 else o - 1
    else:
        rank = o
    return suit * 13 + rank


def blocking_count(hand: int, start_rank: int, ace: str) -> tuple[int, int]:
    """(other players' cards I must wait for, my cards that wait) with this start rank."""
    so = ordinal(start_rank, ace)
    waits = 0
    waiting = 0
    for suit in range(4):
        mine = _suit_ordinals(hand, suit, ace)
        if not mine:
            continue
        top, bottom = max(mine), min(mine)
        mine_set = set(mine)
        if top >= so:
            gap = sum(1 for o in range(so, top) if o not in mine_set)
            waits += gap
            waiting += sum(1 for o in mine if o > so) if gap else 0
        if bottom <= so:
            gap = sum(1 for o in range(bottom + 1, so + 1) if o not in mine_set)
            waits += gap
            waiting += sum(1 for o in mine if o < so) if gap else 0
        # a start card I do not hold delays both halves of the row
    return waits, waiting


def start_rank_score(hand: int, start_rank: int, ace: str) -> float:
    """Lower is better: the moves I depend on others for, with a bonus for holding start cards."""
    waits, waiting = blocking_count(hand, start_rank, ace)
    starts = sum(1 for s in range(4) if hand >> (s * 13 + start_rank) & 1)
    return waits + 0.35 * waiting - 0.8 * starts


def best_start_rank(hand: int, ace: str, ranks=range(13)) -> tuple[int, float]:
    """The start rank with the lowest score, and that score."""
    return min(((r, start_rank_score(hand, r, ace)) for r in ranks), key=lambda x: x[1])


def domino_play(view):
    legal = view.legal
    cards = [c for c in legal if c is not None]
    if not cards:
        return legal[0]  # the pass
    if len(cards) == 1 and None not in legal:
        return cards[0]
    ace = view.rules.domino_ace
    start = view.declaration.start_rank
    so = ordinal(start, ace)
    hand = view.hand
    unplayed_by_others = ~(hand | view.layout)
    best, best_value = cards[0], float("-inf")
    n_hand = hand.bit_count()
    for c in cards:
        suit = c // 13
        o = ordinal(c % 13, ace)
        mine = _suit_ordinals(hand & ~(1 << c), suit, ace)
        if o == so:
            directions = (1, -1)
        else:
            directions = (1,) if o > so else (-1,)
        beyond = 0
        gaps = 0
        exposes_mine = 0
        exposes_other = 0
        others_beyond = 0
        for d in directions:
            ahead = [m for m in mine if (m - o) * d > 0]
            beyond += len(ahead)
            if ahead:
                far = max(ahead) if d > 0 else min(ahead)
                gaps += sum(1 for x in range(o + d, far, d) if x not in mine)
            x = o + d
            while 0 <= x <= 12:
                if unplayed_by_others >> _card_at(suit, x, ace) & 1:
                    others_beyond += 1
                x += d
            nxt = o + d
            if 0 <= nxt <= 12:
                card = _card_at(suit, nxt, ace)
                if hand >> card & 1:
                    exposes_mine += 1
                elif unplayed_by_others >> card & 1:
                    exposes_other += 1
        value = W_BEYOND * beyond + W_MINE * exposes_mine - W_OTHER * exposes_other - W_GAPS * gaps
        if exposes_other and not beyond:
            value -= W_BLOCKER + W_RELEASED * others_beyond  # a pure blocker: release the one that helps least
        # near the end, prefer keeping a follow-up move so as not to pass
        value += 0.01 * (c % 13)
        if value > best_value:
            best, best_value = c, value
    if None in legal and n_hand > 1 and best_value < -2.5:
        return None  # optional pass (domino_must_play=false): hold a pure blocker
    return best


__all__ = ["best_start_rank", "blocking_count", "domino_play", "highest", "start_rank_score"]
