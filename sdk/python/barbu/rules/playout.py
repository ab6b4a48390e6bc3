"""Random play: uniformly shuffled deals, and the inner loop of Monte-Carlo bots.

>>> import random
>>> from barbu.rules import make_ruleset, new_match
>>> state = new_match(make_ruleset("standard"))
>>> random_playout(state, random.Random(1), to_deal_end=True) > 0, len(state.results)
(True, 1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from . import tricks
from .actions import PASS, Phase
from .cards import SEVEN_OF_DIAMONDS, SUIT_MASKS
from .contracts import Contract

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
_SUIT_MASKS: Final = SUIT_MASKS
_SUIT_COUNTS: Final = tuple([pattern.bit_count() for pattern in range(1 << 13)])  # cards in each suit pattern
_NO_HEARTS: Final = Contract.NO_HEARTS
_SALAD: Final = Contract.SALAD
_BARBU: Final = Contract.BARBU


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
    legal mask (a uniformly random set bit), with no action lists built, and a deal's card
    play runs in one loop (:func:`_play_tricks`, :func:`_play_domino`), so it runs several
    times faster than ``apply(state, rng.choice(legal_actions(state)))``, with the same
    distribution over legal actions.
    """
    decisions = 0
    deals = len(state.results)
    getrandbits = rng.getrandbits
    while True:
        phase = state.phase
        if phase is _PLAY:
            decisions += _play_tricks(state, getrandbits)
        elif phase is _DOMINO:
            decisions += _play_domino(state, getrandbits)
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


def _random_card(legal: int, n: int, getrandbits: Callable[[int], int]) -> int:
    """A uniformly random card of the mask ``legal`` of ``n`` cards: its k-th set bit, k
    drawn only when there is a choice."""
    if n > 1:
        for _ in range(_below(getrandbits, n)):
            legal &= legal - 1  # drop the lowest card: pick the k-th legal card
    return (legal & -legal).bit_length() - 1


def _play_tricks(state: MatchState, getrandbits: Callable[[int], int]) -> int:
    """Play the deal's trick play out with random legal cards; returns the cards played.

    A card at a time, this is ``state._play_card``; here a trick's four cards are played on
    locals (the hands excepted) and recorded at once by ``state._take_trick``: the same
    draws, the same final state. A trick already begun is finished card by card first.
    Counting the legal cards is most of a card's work (``int.bit_count`` is a Python call
    from compiled code): at a trick's lead every hand holds ``13 - len(tricks)`` cards, a
    suit's count is one table lookup, and ``bit_count`` is left for the other masks.
    """
    played = 0
    while state.trick and state.phase is _PLAY:
        legal = state._trick_legal()
        state._play_card(_random_card(legal, legal.bit_count(), getrandbits))
        played += 1
    rules, contract, hands, plain = state.rules, state.contract, state.hands, state._plain_follow
    assert contract is not None  # trick play follows a declaration
    trump = -1 if state.trump is None else state.trump
    free_lead = contract is not _NO_HEARTS and contract is not _SALAD and contract is not _BARBU
    while state.phase is _PLAY:
        leader = seat = state.turn
        hand, left = hands[seat], 13 - len(state.tricks)
        legal = hand if free_lead else tricks.legal_lead(rules, contract, hand, state.hearts_broken)
        best = led_card = _random_card(legal, left if legal == hand else legal.bit_count(), getrandbits)
        hands[seat] = hand ^ 1 << best
        led = best // 13
        led_mask, shift, mask = _SUIT_MASKS[led], 13 * led, 1 << best
        winner = seat
        c1 = c2 = card = -1
        for i in range(3):
            seat = (seat + 1) & 3
            hand = hands[seat]
            if plain:
                legal = hand & led_mask or hand
            else:
                legal = tricks.legal_follow(rules, contract, state.trump, hand, led, best, mask)
            if legal == hand:
                n = left
            elif legal & led_mask == legal:
                n = _SUIT_COUNTS[legal >> shift]
            else:
                n = legal.bit_count()
            card = _random_card(legal, n, getrandbits)
            bit = 1 << card
            hands[seat] = hand ^ bit
            mask |= bit
            if i == 0:
                c1 = card
            elif i == 1:
                c2 = card
            # P3: a higher card of the winning card's suit, or the first trump, takes the lead
            suit = card // 13
            if suit == best // 13:
                if card > best:
                    best, winner = card, seat
            elif suit == trump:
                best, winner = card, seat
        state.leader, state.best, state._legal = leader, best, -1
        state._take_trick((led_card, c1, c2, card), mask, winner)
        played += 4
    return played


def _play_domino(state: MatchState, getrandbits: Callable[[int], int]) -> int:
    """Play the deal's Domino out with random legal turns; returns the turns taken. The
    turn-by-turn loop of ``random_playout`` with the rules' switches read once."""
    turns = 0
    rules, hands = state.rules, state.hands
    must_play, seven_start = rules.domino_must_play, rules.domino_start == "seven_of_diamonds"
    while state.phase is _DOMINO:
        legal = hands[state.turn] & state.frontier
        if seven_start and not state.layout:
            legal &= 1 << SEVEN_OF_DIAMONDS
        if not legal or (
            not must_play
            and state.domino_passes < 4 - len(state.finished)
            and not _below(getrandbits, legal.bit_count() + 1)
        ):
            state._domino_turn(PASS)
        else:
            state._domino_turn(_random_card(legal, legal.bit_count(), getrandbits))
        turns += 1
    return turns
