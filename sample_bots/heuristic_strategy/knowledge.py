"""Card counting from a view: played and unseen cards, known voids, the trick so far."""

from __future__ import annotations

from barbu.rules import View
from barbu.rules.cards import FULL_DECK, SUIT_MASKS

# Masks of the cards above / below a card inside its own suit.
ABOVE = tuple(SUIT_MASKS[c // 13] & ~((2 << c) - 1) for c in range(52))
BELOW = tuple(SUIT_MASKS[c // 13] & ((1 << c) - 1) for c in range(52))


def highest(mask: int) -> int:
    return mask.bit_length() - 1


def lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


class Knowledge:
    """Everything the bot derives from one view of trick play."""

    __slots__ = (
        "after",
        "best",
        "hand",
        "leader",
        "led",
        "me",
        "played",
        "trick",
        "trick_no",
        "trump",
        "unseen",
        "view",
        "voids",
        "winner",
    )

    def __init__(self, view: View):
        self.view = view
        self.me = view.seat
        self.hand = view.hand
        decl = view.declaration
        self.trump = decl.trump if decl is not None else None
        played = 0
        voids = [0, 0, 0, 0]  # per seat: mask of suits (bit s) it is known to lack
        for t in view.tricks:
            led = t.cards[0] // 13
            for i, c in enumerate(t.cards):
                played |= 1 << c
                if c // 13 != led:
                    voids[(t.leader + i) % 4] |= 1 << led
        self.trick = view.trick
        self.leader = view.trick_leader
        self.led = self.trick[0] // 13 if self.trick else -1
        best = -1
        winner = -1
        for i, c in enumerate(self.trick):
            played |= 1 << c
            seat = (self.leader + i) % 4
            if c // 13 != self.led:
                voids[seat] |= 1 << self.led
            if (
                best < 0
                or (c // 13 == best // 13 and c > best)
                or (self.trump is not None and c // 13 == self.trump and best // 13 != self.trump)
            ):
                best, winner = c, seat
        self.played = played
        self.unseen = FULL_DECK & ~played & ~self.hand
        self.voids = voids
        self.best = best
        self.winner = winner
        self.trick_no = len(view.tricks)
        # the seats still to play to this trick after me
        n = len(self.trick)
        self.after = tuple((self.me + k) % 4 for k in range(1, 4 - n))

    # ---- questions about the cards ----------------------------------------------------------
    def unseen_in(self, suit: int) -> int:
        return self.unseen & SUIT_MASKS[suit]

    def can_follow(self, seat: int, suit: int) -> bool:
        """False when the seat is known void in the suit (or nobody else holds any)."""
        return not self.voids[seat] >> suit & 1 and bool(self.unseen & SUIT_MASKS[suit])

    def p_void(self, seat: int, suit: int) -> float:
        """Chance that the seat holds no card of the suit (a uniform guess over the unseen cards)."""
        if self.voids[seat] >> suit & 1:
            return 1.0
        u = (self.unseen & SUIT_MASKS[suit]).bit_count()
        if not u:
            return 1.0
        n = self.unseen.bit_count()
        for s in range(4):
            if self.voids[seat] >> s & 1:
                n -= (self.unseen & SUIT_MASKS[s]).bit_count()
        h = self.view.hand_sizes[seat]
        p = 1.0
        for i in range(h):
            if n - i <= 0:
                break
            p *= max(0.0, (n - u - i) / (n - i))
        return p

    def followers(self, suit: int, seats) -> int:
        return sum(1 for s in seats if self.can_follow(s, suit))

    def any_void(self, suit: int, seats) -> bool:
        """Some of the seats cannot follow the suit (known void, or the suit is nearly out)."""
        out = self.unseen_in(suit).bit_count()
        return any(self.voids[s] >> suit & 1 for s in seats) or out < len(tuple(seats))

    def is_master(self, c: int) -> bool:
        """No unseen card of the suit beats ``c``."""
        return not self.unseen & ABOVE[c]

    def lower_unseen(self, c: int) -> int:
        return (self.unseen & BELOW[c]).bit_count()

    def higher_unseen(self, c: int) -> int:
        return (self.unseen & ABOVE[c]).bit_count()
