"""A greedy playout for Monte-Carlo bots: cheap, perfect-information card play to the deal's end.

A Monte-Carlo bot spends its time playing sampled deals out, so this policy works on the
engine's masks directly (no views, no action lists) and is compiled with the engine
(docs/speed.md). It is a heuristic player in miniature: in the negative contracts duck under the
trick with the highest card that does, shed the most costly card when void, lead low (No Last
Two: play high until the last tricks); in Trumps draw trumps with the master, cash masters, ruff
low, win cheaply; in Domino play towards one's own cards. A deal played out this way costs about
what a uniformly random playout (:func:`barbu.rules.random_playout`) costs, and its scores are
far closer to what real play gives.

>>> import random
>>> from barbu.rules import make_ruleset, new_match, shuffle_hands
>>> state = new_match(make_ruleset("standard"))
>>> state.deal(shuffle_hands(random.Random(1)))
>>> state.apply(state.legal_actions()[0])  # the declarer's first declaration
>>> greedy_playout(state)
>>> len(state.results)
1
"""

from __future__ import annotations

from typing import Final

from barbu.rules.actions import Phase
from barbu.rules.cards import HEARTS, SUIT_MASKS
from barbu.rules.contracts import Contract
from barbu.rules.domino import frontier_steps, ordinal
from barbu.rules.state import MatchState

_PLAY: Final = Phase.PLAY
_DOMINO: Final = Phase.DOMINO
_DOUBLE: Final = Phase.DOUBLE
_DEAL: Final = Phase.DEAL
_OVER: Final = Phase.OVER
_TRUMPS: Final = Contract.TRUMPS
_NO_LAST_TWO: Final = Contract.NO_LAST_TWO
_SUITS: Final = SUIT_MASKS
_BELOW: Final = tuple([SUIT_MASKS[c // 13] & ((1 << c) - 1) for c in range(52)])  # same suit, lower
_ABOVE: Final = tuple([SUIT_MASKS[c // 13] & ~((2 << c) - 1) for c in range(52)])  # same suit, higher
NO_LAST_TWO_FREE_TRICKS: Final = 10  # No Last Two: the tricks before this one cost nothing


def _penalty_keys(contract: Contract) -> tuple[int, ...]:
    """Discard priority per card when void: the contract's costly cards first, then high ranks."""
    keys = []
    for c in range(52):
        rank, suit = c % 13, c // 13
        penalty = 0
        if contract in (Contract.NO_HEARTS, Contract.SALAD) and suit == HEARTS:
            penalty += 2 + 4 * (rank == 12)
        if contract in (Contract.NO_QUEENS, Contract.SALAD) and rank == 10:
            penalty += 6
        if contract in (Contract.BARBU, Contract.SALAD) and c == HEARTS * 13 + 11:
            penalty += 20
        if contract is Contract.BARBU and suit == HEARTS and rank == 12:
            penalty += 3  # the A♥ can only catch the K♥ later
        keys.append(penalty * 16 + rank)
    return tuple(keys)


_PENALTY_KEYS: Final = {contract: _penalty_keys(contract) for contract in Contract}
_DOMINO_TABLES: dict[tuple[int, str], tuple[tuple[int, ...], tuple[int, ...]]] = {}


def greedy_playout(state: MatchState, offset: int = 0) -> None:
    """Play the current deal of ``state`` to its end with the greedy policy, for every seat.

    ``offset`` (0-3) rotates the suit order that breaks ties, so that playouts of one sampled
    deal can share it (common random numbers across the actions compared). A doubling phase met
    on the way passes, unless the quota forces a double.
    """
    if state.phase is _DEAL or state.phase is _OVER:
        return  # the action that led here ended the deal
    deals = len(state.results)
    declaration = state.declaration
    contract = state.contract
    if declaration is None or contract is None:
        raise ValueError("a greedy playout needs a declared contract")
    trump = state.trump if state.trump is not None else -1
    steps: tuple[int, ...] = ()
    onward: tuple[int, ...] = ()
    if declaration.start_rank is not None:  # Domino
        steps, onward = _domino_tables(declaration.start_rank, state.rules.domino_ace)
    keys = _PENALTY_KEYS[contract]
    while len(state.results) == deals:
        phase = state.phase
        if phase is _PLAY:
            legal = state.legal_mask()
            if not legal & (legal - 1):
                state.apply(legal.bit_length() - 1)
            elif contract is _TRUMPS:
                state.apply(_trumps_card(state, trump, legal, offset))
            else:
                state.apply(_negative_card(state, contract, keys, legal, offset))
        elif phase is _DOMINO:
            legal = state.legal_mask()
            if not legal:
                state.apply(None)
            elif legal & (legal - 1):
                state.apply(_domino_card(state, steps, onward, legal, offset))
            else:
                state.apply(legal.bit_length() - 1)
        elif phase is _DOUBLE:
            state.apply(state.legal_actions()[0])  # the least action: the pass, or the forced double
        else:
            raise ValueError(f"a greedy playout cannot play the {phase.name} phase")


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _best_by(keys: tuple[int, ...], mask: int) -> int:
    """The card of ``mask`` with the largest key."""
    best, best_key = -1, -1
    while mask:
        low = mask & -mask
        c = low.bit_length() - 1
        key = keys[c]
        if key > best_key:
            best, best_key = c, key
        mask ^= low
    return best


def _lowest_rank(mask: int, offset: int) -> int:
    """The lowest-ranked card of the mask; equal ranks go by a rotating suit order."""
    best, best_key = -1, 99
    for i in range(4):
        suit = (i + offset) & 3
        m = mask & _SUITS[suit]
        if m:
            c = _lowest(m)
            key = c - 13 * suit
            if key < best_key:
                best, best_key = c, key
    return best


def _highest_rank(mask: int, offset: int) -> int:
    """The highest-ranked card of the mask; equal ranks go by a rotating suit order."""
    best, best_key = -1, -1
    for i in range(4):
        suit = (i + offset) & 3
        m = mask & _SUITS[suit]
        if m:
            c = m.bit_length() - 1
            key = c - 13 * suit
            if key > best_key:
                best, best_key = c, key
    return best


def _negative_card(state: MatchState, contract: Contract, keys: tuple[int, ...], legal: int, offset: int) -> int:
    trick = state.trick
    if contract is _NO_LAST_TWO and len(state.tricks) < NO_LAST_TWO_FREE_TRICKS:
        # the early tricks are free: get rid of high cards, keep the low ones for the end
        if trick and legal & _SUITS[trick[0] // 13]:
            return legal.bit_length() - 1
        return _highest_rank(legal, offset)
    if not trick:
        return _lowest_rank(legal, offset)
    if legal & _SUITS[trick[0] // 13]:  # following (no trumps here: the best card is of the led suit)
        below = legal & _BELOW[state.best]
        if below:
            return below.bit_length() - 1  # duck with the highest card that does
        if len(trick) == 3:
            return legal.bit_length() - 1  # winning anyway: with the highest
        return _lowest(legal)
    return _best_by(keys, legal)


def _trumps_card(state: MatchState, trump: int, legal: int, offset: int) -> int:
    if state.trick:
        return _trumps_follow(state, trump, legal, offset)
    return _trumps_lead(state, trump, legal, offset)


def _trumps_lead(state: MatchState, trump: int, legal: int, offset: int) -> int:
    trumps = _SUITS[trump]
    me = state.turn
    hands = state.hands
    others = 0
    for seat in range(4):
        if seat != me:
            others |= hands[seat]
    mine = legal & trumps
    theirs = others & trumps
    if mine and theirs and mine.bit_length() > theirs.bit_length():
        return mine.bit_length() - 1  # the master trump draws trumps
    master = _safe_master(legal, offset, trump, me, hands, others, theirs)
    if master >= 0:
        return master
    side = legal & ~trumps
    if not side:
        return _lowest(legal)
    if not mine:
        return _lowest_rank(side, offset)
    best, shortest = -1, 99  # a low card of the shortest side suit, to ruff it later
    for i in range(4):
        suit = (i + offset) & 3
        m = side & _SUITS[suit]
        if m:
            held = (hands[me] & _SUITS[suit]).bit_count()
            if held < shortest:
                best, shortest = _lowest(m), held
    return best


def _safe_master(legal: int, offset: int, trump: int, me: int, hands: list[int], others: int, their_trumps: int) -> int:
    """A side-suit master no opponent void in the suit can ruff, or -1."""
    trumps = _SUITS[trump]
    for i in range(4):
        suit = (i + offset) & 3
        if suit == trump:
            continue
        suit_mask = _SUITS[suit]
        m = legal & suit_mask
        if m and m.bit_length() > (others & suit_mask).bit_length():
            safe = True  # a master: safe unless an opponent void in the suit can ruff it
            if their_trumps:
                for seat in range(4):
                    if seat != me and not hands[seat] & suit_mask and hands[seat] & trumps:
                        safe = False
                        break
            if safe:
                return m.bit_length() - 1
    return -1


def _trumps_follow(state: MatchState, trump: int, legal: int, offset: int) -> int:
    trick = state.trick
    best = state.best
    led = trick[0] // 13
    if legal & _SUITS[led]:
        if best // 13 != led:  # ruffed already: following cannot win
            return _lowest(legal)
        above = legal & _ABOVE[best]
        if not above:
            return _lowest(legal)
        still_to_play = 3 - len(trick)
        if not still_to_play:
            return _lowest(above)
        later = 0
        for k in range(1, still_to_play + 1):
            later |= state.hands[(state.turn + k) % 4]
        top_later = (later & _SUITS[led]).bit_length() - 1
        if top_later >= 0:
            above &= ~((2 << top_later) - 1)
        if above:  # the cheapest card that beats everything still to come in the suit
            return _lowest(above)
        return _lowest(legal)
    trumps = legal & _SUITS[trump]
    if trumps:
        over = trumps & _ABOVE[best] if best // 13 == trump else trumps
        if over:
            return _lowest(over)
    side = legal & ~_SUITS[trump]
    if side:
        return _lowest_rank(side, offset)
    return _lowest(legal)


def _domino_tables(start: int, ace: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For a Domino of start rank ``start``: what each card makes playable, and the cards of its
    suit that lie beyond it, away from the start."""
    key = (start, ace)
    tables = _DOMINO_TABLES.get(key)
    if tables is None:
        start_place = ordinal(start, ace)
        onward = []
        for c in range(52):
            place = ordinal(c % 13, ace)
            mask = 0
            for rank in range(13):
                other = ordinal(rank, ace)
                if (
                    (place == start_place and other != start_place)
                    or (start_place < place < other)
                    or (other < place < start_place)
                ):
                    mask |= 1 << (c // 13 * 13 + rank)
            onward.append(mask)
        tables = _DOMINO_TABLES[key] = (frontier_steps(start, ace), tuple(onward))
    return tables


def _domino_card(state: MatchState, steps: tuple[int, ...], onward: tuple[int, ...], legal: int, offset: int) -> int:
    """The card that opens the way to most of one's own cards and least to the others'."""
    hand = state.hands[state.turn]
    others = ~(hand | state.layout)
    best, best_value = -1, -1e9
    mask = legal
    while mask:
        low = mask & -mask
        c = low.bit_length() - 1
        mask ^= low
        beyond = (hand & onward[c]).bit_count()
        step = steps[c]
        exposed = (step & others).bit_count()
        value = 3.5 * beyond + 1.5 * (step & hand).bit_count() - 1.6 * exposed
        if exposed and not beyond:
            value -= 1.0
        value += ((c + offset) % 13) * 0.01
        if value > best_value:
            best, best_value = c, value
    return best
