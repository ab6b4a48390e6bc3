"""Domino (Fan Tan): which frontier card to play, and which start rank to name.

Play: a card is worth playing when it leads towards more of my own cards (it unblocks me) and
when the card it exposes is mine (nobody else gains a move). A card that exposes only other
players' cards, with nothing of mine behind it, is a blocker: hold it while I have anything
else to play.

For the start rank, :func:`blocking_count` measures the other players' cards standing between
the start card and mine (the moves I must wait for); the Domino model of :mod:`.evaluate` turns
it and a few other counts into an expected payout for each rank.
"""

from __future__ import annotations

from barbu.rules.domino import ordinal

# Play weights, set by duplicate A/B runs (same deals, one seat changed). Weighing the gaps
# between a card and my farthest card in its direction only lost.
W_BEYOND = 3.5  # per own card further along the row
W_MINE = 1.5  # the card exposed next is mine
W_OTHER = 1.6  # the card exposed next is someone else's
W_BLOCKER = 1.0  # releasing a pure blocker (nothing of mine behind it)
W_RELEASED = 0.3  # per foreign card a released blocker opens the way to


def _suit_ordinals(mask: int, suit: int, ace: str) -> list[int]:
    return [ordinal(r, ace) for r in range(13) if mask >> (suit * 13 + r) & 1]


def _card_at(suit: int, o: int, ace: str) -> int:
    rank = (12 if o == 0 else o - 1) if ace == "low" else o
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
    replay = view.rules.domino_ace_replay
    for c in cards:
        suit = c // 13
        o = ordinal(c % 13, ace)
        mine = _suit_ordinals(hand & ~(1 << c), suit, ace)
        directions = (1, -1) if o == so else (1,) if o > so else (-1,)
        beyond = 0
        exposes_mine = 0
        exposes_other = 0
        others_beyond = 0
        for d in directions:
            beyond += sum(1 for m in mine if (m - o) * d > 0)
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
        value = W_BEYOND * beyond + W_MINE * exposes_mine - W_OTHER * exposes_other
        if exposes_other and not beyond:
            # a pure blocker: if one must go, the one that opens the fewest cards for others
            value -= W_BLOCKER + W_RELEASED * others_beyond
        if replay and c % 13 == 12:
            value += W_BEYOND  # an ace moves again at once
        value += 0.01 * (c % 13)  # tie-break: the higher card
        if value > best_value:
            best, best_value = c, value
    if None in legal and n_hand > 1 and best_value < -2.5:
        return None  # optional pass (domino_must_play=false): hold a pure blocker
    return best


__all__ = ["blocking_count", "domino_play"]
