"""Card play in trick contracts.

Negative contracts (and salad) share one model: every card in hand carries a *danger*, the
points it is expected to cost if kept (the tricks it may still win, the penalty cards those
tricks may hold, its own penalty if I end up capturing it). A play is worth the danger it sheds
minus what it risks now (the chance it wins this trick times the trick's expected penalty).
The scoring values come from the ruleset, so house scores and salad work unchanged.

Trumps is plain "win cheaply": cash masters, draw trumps when long, ruff low, keep honours.
"""

from __future__ import annotations

from barbu.rules import Contract
from barbu.rules.cards import HEARTS, SUIT_MASKS

from .knowledge import ABOVE, BELOW, Knowledge, highest, lowest

# ---- the penalty model ----------------------------------------------------------------------

# Tuning constants, set by duplicate A/B runs (same deals, one seat changed) against earlier
# versions of this bot.
COVER = 0.75  # each lower card of the suit I hold makes a card that much less likely to win later
SHARPNESS = 1.5  # opponents duck: the chance of winning grows faster than the share of lower cards
SUIT_PEN = 0.45  # share of the suit's lower penalty cards that fall under a winning card
DUMP_W = 0.6  # share of a void opponent's worst card expected on a trick won later
DUMP_W_HEARTS = 1.0  # ... in No Hearts, where many small penalty cards keep coming
DUMP_W_QUEENS = 0.3  # ... in No Queens, where the few big ones are soon gone
OWN_MIN = 0.25  # the least chance of having to capture one's own penalty card
NOW_DECAY = 0.7  # per later seat holding a higher card: chance he cannot duck under mine
FOLLOW_PEN = 0.35  # a later follower's share of the suit's penalty cards below my card


class Penalties:
    """Per-card capture costs and per-trick costs of a negative contract (positive numbers)."""

    __slots__ = ("card", "dump", "dump_w", "penalty_mask", "trick")

    def __init__(self, rules, contract: Contract):
        v = dict(
            zip(
                ("trick", "heart", "heart_ace", "queen", "king", "t12", "t13", "trump"),
                rules.score_values,
                strict=True,
            )
        )
        salad = contract is Contract.SALAD
        card = [0.0] * 52
        if contract is Contract.NO_HEARTS or salad:
            for c in range(26, 39):
                card[c] += -v["heart"]
            card[HEARTS * 13 + 12] += -v["heart_ace"] - (-v["heart"])
        if contract is Contract.NO_QUEENS or salad:
            for s in range(4):
                card[s * 13 + 10] += -v["queen"]
        if contract is Contract.BARBU or salad:
            card[HEARTS * 13 + 11] += -v["king"]
        trick = [0.0] * 13
        if contract is Contract.NO_TRICKS or salad:
            trick = [-float(v["trick"])] * 13
        if contract is Contract.NO_LAST_TWO or salad:
            trick[11] += -v["t12"]
            trick[12] += -v["t13"]
        self.card = card
        self.trick = trick
        self.penalty_mask = sum(1 << c for c in range(52) if card[c] > 0)
        self.dump = 0.0
        # how much a void opponent's discard weighs on a card kept for later
        self.dump_w = (
            DUMP_W_HEARTS
            if contract is Contract.NO_HEARTS
            else (DUMP_W_QUEENS if contract is Contract.NO_QUEENS else DUMP_W)
        )

    def cost(self, mask: int) -> float:
        total = 0.0
        m = mask & self.penalty_mask
        while m:
            low = m & -m
            total += self.card[low.bit_length() - 1]
            m ^= low
        return total


def _prepare(k: Knowledge, pen: Penalties) -> None:
    """What a void opponent is expected to throw on a trick he cannot follow."""
    out = k.unseen & pen.penalty_mask
    if not out:
        pen.dump = 0.0
        return
    worst = max(pen.card[c] for c in range(52) if out >> c & 1)
    # he throws his worst penalty card if he has one: about a third of the unseen ones are his
    pen.dump = min(worst, pen.cost(out) / 3.0 + 0.25 * worst)


def _future_trick_cost(k: Knowledge, pen: Penalties) -> float:
    """The average cost of one of the remaining tricks, weighted towards the end (L2)."""
    rest = pen.trick[k.trick_no :]
    if not rest:
        return 0.0
    if rest[-1] > rest[0]:  # last-two style: a card kept late meets the expensive tricks
        return 0.5 * max(rest) + 0.5 * sum(rest) / len(rest)
    return sum(rest) / len(rest)


def p_win_later(k: Knowledge, c: int) -> float:
    """Rough chance that keeping ``c`` makes me win a trick with it later."""
    lower = k.lower_unseen(c)
    higher = k.higher_unseen(c)
    mine_below = (k.hand & BELOW[c]).bit_count()
    p = 0.5 if lower + higher == 0 else ((lower + 0.5) / (lower + higher + 1)) ** SHARPNESS
    return p * COVER**mine_below


def danger(k: Knowledge, pen: Penalties, c: int, trick_cost: float) -> float:
    """Expected points that keeping card ``c`` will cost."""
    p = p_win_later(k, c)
    # penalty cards of the same suit that may fall under it
    suit_pen = pen.cost(k.unseen & BELOW[c]) * SUIT_PEN
    extra = suit_pen + pen.dump * pen.dump_w
    own = pen.card[c]
    return p * (trick_cost + extra) + own * max(OWN_MIN, p)


def _p_win_now(k: Knowledge, c: int) -> float:
    """Chance that ``c``, beating the trick so far, still wins it (the later seats may duck)."""
    if not k.after:
        return 1.0
    suit = c // 13
    followers = k.followers(suit, k.after)
    if followers == 0 or k.is_master(c):
        return 1.0
    higher = k.higher_unseen(c)
    return NOW_DECAY ** min(higher, followers)


def _incoming(k: Knowledge, pen: Penalties, c: int) -> float:
    """Penalty expected from the seats still to play if ``c`` wins the trick."""
    suit = c // 13
    total = 0.0
    out_below = k.unseen & BELOW[c]
    suit_pen = pen.cost(out_below & SUIT_MASKS[suit])
    for s in k.after:
        pv = k.p_void(s, suit)
        total += pv * pen.dump + (1.0 - pv) * suit_pen * FOLLOW_PEN
    return total


def _lead_p_win(k: Knowledge, c: int) -> float:
    suit = c // 13
    others = tuple(s for s in range(4) if s != k.me)
    if k.followers(suit, others) == 0 or k.is_master(c):
        return 1.0
    lower = k.lower_unseen(c)
    higher = k.higher_unseen(c)
    return (lower / (lower + higher)) ** 2


def negative_play(view, k: Knowledge | None = None) -> int:
    k = k or Knowledge(view)
    legal = view.legal
    if len(legal) == 1:
        return legal[0]
    pen = Penalties(view.rules, view.contract)
    _prepare(k, pen)
    future = _future_trick_cost(k, pen)
    now_cost = pen.trick[k.trick_no] if k.trick_no < 13 else 0.0

    best_card, best_value = legal[0], float("-inf")
    if not k.trick:
        for c in legal:
            p = _lead_p_win(k, c)
            risk = now_cost + pen.card[c] + _incoming(k, pen, c)
            value = danger(k, pen, c, future) - p * risk
            if value > best_value:
                best_card, best_value = c, value
        return best_card

    in_trick = pen.cost(sum(1 << c for c in k.trick))
    for c in legal:
        d = danger(k, pen, c, future)
        beats = c // 13 == k.led and c > k.best
        if not beats:
            value = d
        else:
            p = _p_win_now(k, c)
            risk = now_cost + in_trick + pen.card[c] + _incoming(k, pen, c)
            value = d - p * risk
        # tie-break towards shedding the higher card
        value += c % 13 * 1e-3
        if value > best_value:
            best_card, best_value = c, value
    return best_card


# ---- trumps ---------------------------------------------------------------------------------


def _winning(k: Knowledge, c: int) -> bool:
    """Does ``c`` beat the trick so far?"""
    best = k.best
    if c // 13 == best // 13:
        return c > best
    return c // 13 == k.trump


def _sure_now(k: Knowledge, c: int) -> bool:
    """Will ``c`` (beating the trick so far) certainly win it?"""
    if not k.after:
        return True
    trump, suit = k.trump, c // 13
    trumps_out = k.unseen_in(trump)
    if suit == trump:
        return not (k.unseen & ABOVE[c]) or k.followers(trump, k.after) == 0
    if not k.is_master(c) and k.followers(suit, k.after):
        return False
    if not trumps_out:
        return True
    # a later seat void in the led suit may ruff
    return not k.any_void(k.led if k.trick else suit, k.after)


def trumps_play(view, k: Knowledge | None = None) -> int:
    k = k or Knowledge(view)
    legal = view.legal
    if len(legal) == 1:
        return legal[0]
    trump = k.trump
    hand = k.hand
    my_trumps = hand & SUIT_MASKS[trump]
    trumps_out = k.unseen_in(trump)

    if not k.trick:
        return _trumps_lead(view, k, legal, my_trumps, trumps_out)

    winners = [c for c in legal if _winning(k, c)]
    if winners:
        sure = [c for c in winners if _sure_now(k, c)]
        if sure:
            # the cheapest certain winner: a plain card before a trump, low before high
            return min(sure, key=lambda c: (c // 13 == trump, c % 13))
        # not certain: third seat plays high in the led suit; ruff with a master trump if I
        # have one, else as low as possible (A/B: ruffing high lost 0.6 points a deal)
        plain = [c for c in winners if c // 13 != trump]
        if plain and len(k.trick) == 2 and max(plain) % 13 >= 9:
            return max(plain)
        ruffs = [c for c in winners if c // 13 == trump]
        if ruffs and not plain:
            over = [c for c in ruffs if k.is_master(c)]
            return min(over) if over else min(ruffs)
    # cannot (or will not) win: throw the cheapest card
    return _cheapest(k, legal)


def _cheapest(k: Knowledge, legal) -> int:
    trump = k.trump

    def keep_value(c: int) -> tuple:
        suit = c // 13
        length = (k.hand & SUIT_MASKS[suit]).bit_count()
        # never a trump if avoidable; low ranks first; from short suits (to ruff later)
        return (suit == trump, k.is_master(c), c % 13, length)

    return min(legal, key=keep_value)


def _trumps_lead(view, k: Knowledge, legal, my_trumps: int, trumps_out: int) -> int:
    trump = k.trump
    n_mine, n_out = my_trumps.bit_count(), trumps_out.bit_count()
    # draw trumps: cash the master trump, or lead a low one when I hold most of those left
    if my_trumps and trumps_out:
        top = highest(my_trumps)
        if k.is_master(top):
            return top
        if n_mine > n_out + 1 and n_mine >= 4:
            return lowest(my_trumps)
    # cash side-suit masters nobody can ruff
    others = tuple(s for s in range(4) if s != k.me)
    masters = [
        c for c in legal
        if c // 13 != trump and k.is_master(c)
        and (not trumps_out or not k.any_void(c // 13, others))
    ]  # fmt: skip
    if masters:
        return max(masters, key=lambda c: (k.unseen_in(c // 13).bit_count(), c % 13))
    if my_trumps and not trumps_out:
        return highest(my_trumps)
    # otherwise a low card from a short side suit, to ruff it later
    side = [c for c in legal if c // 13 != trump]
    if side:
        if my_trumps:
            return min(side, key=lambda c: ((k.hand & SUIT_MASKS[c // 13]).bit_count(), c % 13))
        return min(side, key=lambda c: (c % 13, -(k.hand & SUIT_MASKS[c // 13]).bit_count()))
    return lowest(my_trumps) if my_trumps else min(legal)


__all__ = ["Penalties", "danger", "negative_play", "trumps_play"]
