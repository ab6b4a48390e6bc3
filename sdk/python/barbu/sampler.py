"""Hidden hands, sampled exactly uniformly from what one seat knows.

A bot that simulates must guess the cards it cannot see. :class:`Sampler` draws complete deals
consistent with a seat's :class:`~barbu.rules.View`, each consistent deal with the same chance:

* the seat's own hand, every card played, and every seat's hand size;
* what each earlier play proves a seat did *not* hold at that moment, and so does not hold now
  (cards only leave hands): a seat that did not follow suit holds none of it; one that did not
  ruff, over-ruff or head a trump lead when the rules would have made it holds no such trump;
  one that led a heart under a lead restriction held only hearts; one that did not shed the K♥
  under ``kh_must_discard`` has not got it; a Domino pass that the rules allow only without a
  playable card proves it held none of the layout's playable cards;
* in Domino with ``seven_of_diamonds``, the seat to move before the first card holds the 7♦.

These facts are read off the engine's own legality functions, not restated: for a play of card
``c`` the forbidden cards are those ``x`` for which ``c`` would have been illegal from the hand
``{c, x}``. Every rule of docs/rules.md has the form "``c`` is legal iff the hand holds none of some
set F", so one-card additions find F exactly.

Uniformity: the unknown cards fall into at most 7 classes by the set of seats that may hold
them. The number of deals is a sum over how many cards of each class each seat gets (a product
of multinomials); a dynamic programme over the classes counts them exactly (Python integers),
a sample picks the per-class split with probability proportional to its count, then shuffles
each class. No rejection, so the cost does not grow with how constrained the position is.

Typical use in a bot::

    sampler = Sampler(view)
    for _ in range(n):
        state = sampler.determinize(sampler.sample(rng))  # a MatchState to simulate on
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable, Sequence
from math import factorial
from typing import Any

from .rules import tricks as _tricks
from .rules.actions import Phase
from .rules.cards import CARD_NAMES, FULL_DECK, SEVEN_OF_DIAMONDS, cards_of
from .rules.contracts import CONTRACT_BITS, Contract
from .rules.domino import frontier_steps, start_cards
from .rules.errors import BarbuError
from .rules.ruleset import Ruleset
from .rules.state import MatchState
from .rules.view import View

__all__ = ["InconsistentView", "Sampler", "hand_constraints", "replay"]

_BIT = tuple(1 << c for c in range(52))


class InconsistentView(BarbuError):
    """No deal fits the view (a corrupted or hand-made view)."""


class Constraints:
    """What a view fixes about the hidden hands.

    ``unknown`` is the mask of cards whose holder the seat cannot see; ``sizes[s]`` how many
    of them seat ``s`` holds (0 for the seat itself); ``forbidden[s]`` the unknown cards seat
    ``s`` provably lacks; ``forced[s]`` unknown cards it provably holds.
    """

    __slots__ = ("seat", "hand", "unknown", "sizes", "forbidden", "forced")

    def __init__(self, seat: int, hand: int, unknown: int, sizes: list[int], forbidden: list[int], forced: list[int]):
        self.seat = seat
        self.hand = hand
        self.unknown = unknown
        self.sizes = sizes
        self.forbidden = forbidden
        self.forced = forced

    def allows(self, hands: Sequence[int]) -> bool:
        """True when the four current hands fit the constraints (for tests and checks)."""
        if hands[self.seat] != self.hand:
            return False
        seen = 0
        for s in range(4):
            if s == self.seat:
                continue
            h = hands[s]
            if h & ~self.unknown or h & seen or h.bit_count() != self.sizes[s]:
                return False
            if h & self.forbidden[s] or self.forced[s] & ~h:
                return False
            seen |= h
        return seen == self.unknown


def _forbidden_by_play(legal: Callable[[int], int], card: int, candidates: int) -> int:
    """The candidate cards whose presence would have made ``card`` illegal (see module doc)."""
    bit = _BIT[card]
    if legal(bit | candidates) >> card & 1:
        return 0  # legal even with every candidate in hand: nothing to learn (the common case)
    out = 0
    for x in cards_of(candidates):
        if not legal(bit | _BIT[x]) >> card & 1:
            out |= _BIT[x]
    return out


def hand_constraints(view: View) -> Constraints:
    """Read every hard fact about the hidden hands off a view."""
    if view.phase in (Phase.DEAL, Phase.OVER):
        raise ValueError("there are no hidden hands between deals")
    me = view.seat
    played = 0
    for _, c in view.plays:
        if c is not None:
            played |= _BIT[c]
    unknown = FULL_DECK & ~played & ~view.hand
    forbidden = [0, 0, 0, 0]
    forced = [0, 0, 0, 0]
    contract = view.contract
    decl = view.declaration
    if contract is Contract.DOMINO and view.phase is Phase.DOMINO and decl is not None and decl.start_rank is not None:
        _domino_facts(view, decl.start_rank, played, unknown, forbidden, forced)
    elif view.phase is Phase.PLAY and contract is not None and decl is not None:
        _play_facts(view, contract, decl.trump, unknown, forbidden)
    sizes = [0 if s == me else view.hand_sizes[s] for s in range(4)]
    return Constraints(me, view.hand, unknown, sizes, forbidden, forced)


def _domino_facts(view: View, start: int, played: int, unknown: int, forbidden: list[int], forced: list[int]) -> None:
    """Domino: a seat that passed holds no card it could have played; the 7♦ holder moves first."""
    me, rules = view.seat, view.rules
    steps = frontier_steps(start, rules.domino_ace)
    frontier = start_cards(start)
    left = [13, 13, 13, 13]
    passes = finished = 0
    for seat, c in view.plays:
        if c is None:
            if seat != me and (rules.domino_must_play or passes >= 4 - finished):
                forbidden[seat] |= frontier & unknown  # no playable card at that moment
            passes += 1
            continue
        frontier = (frontier ^ _BIT[c]) | steps[c]
        passes = 0
        left[seat] -= 1
        if not left[seat]:
            finished += 1
    if rules.domino_start == "seven_of_diamonds" and not played >> SEVEN_OF_DIAMONDS & 1 and view.turn not in (me, -1):
        forced[view.turn] |= _BIT[SEVEN_OF_DIAMONDS]  # the 7♦ holder moves first


def _play_facts(view: View, contract: Contract, trump: int | None, unknown: int, forbidden: list[int]) -> None:
    """Trick contracts: a seat holds no card it would have had to play instead of the one it played."""
    me, rules = view.seat, view.rules
    broken = False
    tricks = [(t.leader, t.cards) for t in view.tricks]
    if view.trick:
        tricks.append((view.trick_leader, view.trick))
    for leader, cards in tricks:
        led = cards[0] // 13
        best = cards[0]
        mask = 0
        for i, c in enumerate(cards):
            seat = (leader + i) % 4
            if seat != me:
                forbidden[seat] |= _forbidden_by_play(
                    _lead_rule(rules, contract, broken)
                    if i == 0
                    else _follow_rule(rules, contract, trump, led, best, mask),
                    c,
                    unknown & ~forbidden[seat],
                )
            if i:  # the engine's P3 update of the winning card
                if c // 13 == best // 13:
                    if c > best:
                        best = c
                elif c // 13 == trump:
                    best = c
            mask |= _BIT[c]
        if len(cards) == 4 and mask & _HEARTS:
            broken = True


_HEARTS = ((1 << 13) - 1) << 26


def _lead_rule(rules: Ruleset, contract: Contract, broken: bool) -> Callable[[int], int]:
    """hand -> legal leads, at one moment of the deal."""
    return lambda hand: _tricks.legal_lead(rules, contract, hand, broken)


def _follow_rule(
    rules: Ruleset, contract: Contract, trump: int | None, led: int, best: int, mask: int
) -> Callable[[int], int]:
    """hand -> legal cards to follow the trick as it stood."""
    return lambda hand: _tricks.legal_follow(rules, contract, trump, hand, led, best, mask)


class Sampler:
    """Uniform sampling of the hidden hands of one view, and determinization.

    Building it reads the view once (constraints, then the counting table); after that each
    :meth:`sample` costs a few random draws and a shuffle, so build one per decision and
    sample from it many times.
    """

    def __init__(self, view: View):
        self.view = view
        k = self.constraints = hand_constraints(view)
        me = view.seat
        self.others = others = tuple(s for s in range(4) if s != me)
        free = k.unknown
        need = list(k.sizes)
        for s in others:
            if k.forced[s] & k.forbidden[s]:
                raise InconsistentView(f"seat {s} must both hold and lack a card")
            free &= ~k.forced[s]
            need[s] -= k.forced[s].bit_count()
        # Group the free cards by the set of seats (bit i = others[i]) that may hold them.
        groups: dict[int, list[int]] = {}
        for c in cards_of(free):
            allowed = 0
            for i, s in enumerate(others):
                if not k.forbidden[s] >> c & 1 and need[s] > 0:
                    allowed |= 1 << i
            if not allowed:
                raise InconsistentView(f"no seat can hold {CARD_NAMES[c]}")
            groups.setdefault(allowed, []).append(c)
        self._classes = [(allowed, tuple(cards)) for allowed, cards in sorted(groups.items())]
        n = self._need = (need[others[0]], need[others[1]], need[others[2]])
        self._forced = tuple(k.forced[s] for s in others)
        if any(x < 0 for x in n) or sum(n) != free.bit_count():
            raise InconsistentView("the hand sizes do not add up to the unseen cards")
        # layers[j][(a, b)]: deals of classes 0..j-1 giving a cards to others[0], b to others[1]
        layers: list[dict[tuple[int, int], int]] = [{(0, 0): 1}]
        splits_of = []
        total = 0
        for allowed, cards in self._classes:
            m = len(cards)
            splits = _splits(m, allowed, n)
            splits_of.append(splits)
            prev = layers[-1]
            nxt: dict[tuple[int, int], int] = {}
            for (a, b), ways in prev.items():
                for x0, x1, _, w in splits:
                    a2, b2 = a + x0, b + x1
                    if a2 > n[0] or b2 > n[1] or total + m - a2 - b2 > n[2]:
                        continue
                    nxt[a2, b2] = nxt.get((a2, b2), 0) + ways * w
            total += m
            layers.append(nxt)
        self.count = layers[-1].get((n[0], n[1]), 0)
        """The number of consistent deals (every one is sampled with chance 1/count)."""
        if not self.count:
            raise InconsistentView("no deal fits the view")
        self._layers = layers
        self._splits = splits_of
        self._pick: dict[tuple[int, int, int], tuple[list[int], list[tuple[int, int, int]]]] = {}
        self._template: MatchState | None = None
        self._played_by = _played_by(view)

    def _choices(self, j: int, a: int, b: int) -> tuple[list[int], list[tuple[int, int, int]]]:
        """Cumulative weights and splits of class j that end at (a, b); built once, then cached."""
        key = (j, a, b)
        got = self._pick.get(key)
        if got is None:
            prev = self._layers[j]
            cum, opts, acc = [], [], 0
            for x0, x1, x2, w in self._splits[j]:
                ways = prev.get((a - x0, b - x1), 0)
                if ways:
                    acc += ways * w
                    cum.append(acc)
                    opts.append((x0, x1, x2))
            got = self._pick[key] = (cum, opts)
        return got

    def sample(self, rng: random.Random) -> list[int]:
        """One deal: the four current hands (masks), uniform over the consistent deals."""
        a, b = self._need[0], self._need[1]
        out = list(self._forced)
        getrandbits = rng.getrandbits
        for j in range(len(self._classes) - 1, -1, -1):
            cum, opts = self._choices(j, a, b)
            if len(opts) == 1:
                x0, x1, x2 = opts[0]
            else:
                top = cum[-1]
                k = top.bit_length()
                r = getrandbits(k)
                while r >= top:
                    r = getrandbits(k)
                x0, x1, x2 = opts[bisect_right(cum, r)]
            cards = self._classes[j][1]
            m = len(cards)
            if x0 == m or x1 == m or x2 == m:
                bits = 0
                for c in cards:
                    bits |= _BIT[c]
                out[0 if x0 == m else 1 if x1 == m else 2] |= bits
            else:
                deck = list(cards)
                # Fisher-Yates on the first x0 + x1 positions only: the rest go to others[2]
                for i in range(x0 + x1):
                    span = m - i
                    kk = span.bit_length()
                    r = getrandbits(kk)
                    while r >= span:
                        r = getrandbits(kk)
                    r += i
                    deck[i], deck[r] = deck[r], deck[i]
                h0 = h1 = h2 = 0
                for c in deck[:x0]:
                    h0 |= _BIT[c]
                for c in deck[x0 : x0 + x1]:
                    h1 |= _BIT[c]
                for c in deck[x0 + x1 :]:
                    h2 |= _BIT[c]
                out[0] |= h0
                out[1] |= h1
                out[2] |= h2
            a -= x0
            b -= x1
        hands = [0, 0, 0, 0]
        hands[self.view.seat] = self.view.hand
        for i, s in enumerate(self.others):
            hands[s] = out[i]
        return hands

    def determinize(self, hands: Sequence[int]) -> MatchState:
        """The engine state of the view with these current hands, ready to simulate on.

        The first call replays the whole public history from the reconstructed deal (which
        checks the hands against every rule); later calls clone that state and swap the hands.
        """
        if self._template is None:
            self._template = replay(self.view, hands)
            return self._template.clone()
        state = self._template.clone()
        state.hands = list(hands)
        state.dealt = tuple(h | p for h, p in zip(hands, self._played_by, strict=True))
        state._legal = -1
        return state


def _splits(m: int, allowed: int, n: tuple[int, int, int]) -> list[tuple[int, int, int, int]]:
    """Every (x0, x1, x2, ways): x_i cards of a class of m to others[i], in m!/(x0!x1!x2!) ways."""
    out = []
    f = factorial
    r0 = range(min(m, n[0]) + 1) if allowed & 1 else (0,)
    for x0 in r0:
        r1 = range(min(m - x0, n[1]) + 1) if allowed & 2 else (0,)
        for x1 in r1:
            x2 = m - x0 - x1
            if x2 and not allowed & 4 or x2 > n[2]:
                continue
            out.append((x0, x1, x2, f(m) // (f(x0) * f(x1) * f(x2))))
    return out


def _played_by(view: View) -> list[int]:
    out = [0, 0, 0, 0]
    for seat, c in view.plays:
        if c is not None:
            out[seat] |= _BIT[c]
    return out


def replay(view: View, hands: Sequence[int], stop: int | None = None) -> MatchState:
    """Rebuild the full engine state of ``view`` with the given current hands.

    The match (deal number, totals, results, declared contracts, doubling quotas) comes from
    the view; the deal is dealt as the hands plus each seat's played cards, and the
    declaration, doubles and plays are replayed through the engine, so an inconsistent guess
    raises :class:`~barbu.rules.IllegalActionError` (or :class:`InconsistentView`).

    ``stop=k`` replays only the deal's first k public actions (the declaration counts as
    one): the state as it was then, e.g. to ask what a seat would have done with its guessed
    hand.
    """
    rules = view.rules
    if view.phase in (Phase.DEAL, Phase.OVER):
        raise ValueError("there is no deal in progress to replay")
    first = next((f for f in range(4) if rules.declarer_of(f, view.deal) == view.declarer), None)
    if first is None:
        raise InconsistentView(f"seat {view.declarer} cannot declare deal {view.deal} under these rules")
    state = MatchState(rules, first)
    state.deal_index = view.deal
    state.results = list(view.results)
    state.totals = list(view.totals)
    declared = [0, 0, 0, 0]
    for s in range(4):
        for c in view.declared[s]:
            declared[s] |= CONTRACT_BITS[c]
    if view.declaration is not None:
        declared[view.declarer] &= ~CONTRACT_BITS[view.declaration.contract]
    state.declared = declared
    quota = [[0] * 4 for _ in range(4)]
    for r in view.results:
        for p in range(4):
            if p != r.declarer and r.levels[p][r.declarer]:
                quota[r.declarer][p] += 1  # the declarer never starts a double: p doubled him
    current = list(view.quota_doubles)
    if len(view.doubles) >= 4:  # the engine counts this deal's doubles once round one ends
        for seat, targets in view.doubles[:4]:
            if view.declarer in targets:
                current[seat] -= 1
    quota[view.declarer] = current
    state.quota_doubles = quota
    played = _played_by(view)
    state.deal([h | p for h, p in zip(hands, played, strict=True)])
    actions: list[tuple[int, Any]] = []
    if view.declaration is not None:
        actions.append((view.declarer, view.declaration))
    actions.extend((seat, tuple(targets)) for seat, targets in view.doubles)
    actions.extend(view.plays)
    for seat, action in actions[:stop]:
        _expect_turn(state, seat)
        state.apply(action)
    if stop is None and (state.phase is not view.phase or state.turn != view.turn):
        raise InconsistentView(
            f"the replay ends in {state.phase.name} with seat {state.turn} to act, "
            f"the view is in {view.phase.name} with seat {view.turn}"
        )
    return state


def _expect_turn(state: MatchState, seat: int) -> None:
    if state.turn != seat:
        raise InconsistentView(f"the view has seat {seat} acting where the engine has seat {state.turn}")
