"""Random play: uniformly shuffled deals, and the inner loop of Monte-Carlo bots.

>>> import random
>>> from barbu.rules import make_ruleset, new_match
>>> state = new_match(make_ruleset("standard"))
>>> random_playout(state, random.Random(1), to_deal_end=True) > 0, len(state.results)
(True, 1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .actions import PASS, Phase

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from .state import MatchState

# Constants a compiled build reads as C statics (Final), not as module globals and enum lookups.
_PLAY: Final = Phase.PLAY
_DOMINO: Final = Phase.DOMINO
_DEAL: Final = Phase.DEAL
_OVER: Final = Phase.OVER
_CARD_BITS: Final = tuple(1 << c for c in range(52))


def shuffle_hands(rng: random.Random) -> list[int]:
    """A uniformly shuffled deal as 4 hand masks; the RNG is the only source of chance.

    The shuffle is ``random.shuffle``'s own Fisher-Yates with its exact draws, inlined (the
    same seed gives the same deal), which saves a Python call per card.
    """
    deck = list(_CARD_BITS)
    getrandbits = rng.getrandbits
    for i in range(51, 0, -1):
        k = (i + 1).bit_length()
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]
    return [sum(deck[0:13]), sum(deck[13:26]), sum(deck[26:39]), sum(deck[39:52])]


def _below(getrandbits: Callable[[int], int], n: int) -> int:
    """Uniform in range(n), exactly as ``Random._randbelow`` draws it."""
    k = n.bit_length()
    r = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


def random_playout(state: MatchState, rng: random.Random, *, to_deal_end: bool = False) -> int:
    """Play uniformly random legal actions until the match ends (or, with ``to_deal_end``,
    until the current deal is scored); new deals are shuffled from ``rng``. Returns the number
    of decisions made. A state between deals (phase DEAL) deals the next one first: after an
    action that may have ended the deal, compare ``len(state.results)`` before playing on.

    This is the inner loop of Monte-Carlo bots: card choices are drawn straight from the
    legal mask (a uniformly random set bit), with no action lists built, so it runs several
    times faster than ``apply(state, rng.choice(legal_actions(state)))``, with the same
    distribution over legal actions.
    """
    decisions = 0
    deals = len(state.results)
    getrandbits = rng.getrandbits
    while True:
        phase = state.phase
        if phase is _PLAY or phase is _DOMINO:
            legal = state._legal
            if legal < 0:
                legal = state._trick_legal() if phase is _PLAY else state.legal_mask()
            if not legal or (
                phase is _DOMINO and not state._domino_must_play() and not _below(getrandbits, legal.bit_count() + 1)
            ):
                state._domino_turn(PASS)
            else:
                n = legal.bit_count()
                if n > 1:
                    for _ in range(_below(getrandbits, n)):
                        legal &= legal - 1  # drop the lowest card: pick the k-th legal card
                card = (legal & -legal).bit_length() - 1
                if phase is _PLAY:
                    state._play_card(card)
                else:
                    state._domino_turn(card)
        elif phase is _OVER:
            return decisions
        elif phase is _DEAL:
            if to_deal_end and len(state.results) > deals:
                return decisions
            state.deal(shuffle_hands(rng))
            continue
        else:
            actions = state.legal_actions()
            state.apply(actions[_below(getrandbits, len(actions))])
        decisions += 1
        if to_deal_end and len(state.results) > deals:
            return decisions
