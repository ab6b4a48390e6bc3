"""What one seat may know: ``observe(state, seat)``.

A view holds the seat's own hand and everything public (declarations, doubles, played cards,
tricks, the Domino layout, scores). It never holds another seat's unplayed cards, nor the
dealt hands; hand sizes are public because every played card is.

A bot receives a view with every decision (``Bot.decide(view)``); the arbiter builds it with
:func:`observe`, and a bot can do the same on states it simulates:

>>> import random
>>> from barbu.rules import make_ruleset, new_match, deal, shuffle_hands, hand_names
>>> state = new_match(make_ruleset("standard"))
>>> deal(state, shuffle_hands(random.Random(1)))
>>> view = observe(state, 0)
>>> view.phase.name, view.turn, view.hand_sizes, len(hand_names(view.hand))
('DECLARE', 0, (13, 13, 13, 13), 13)
>>> view.legal[0], observe(state, 1).legal  # only the seat to act has legal actions
(Declaration(contract=<Contract.NO_TRICKS: 'no_tricks'>, trump=None, start_rank=None), ())
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .actions import Action, Declaration, Phase
from .contracts import Contract
from .ruleset import Ruleset
from .scoring import DealResult
from .state import MatchState
from .tricks import Trick


@dataclass(frozen=True)
class View:
    """What seat ``seat`` knows at one moment of the match (cards are numbers, hands masks:
    see :mod:`barbu.rules.cards`). Immutable; ``dataclasses.replace`` makes altered copies."""

    seat: int
    """The seat this view belongs to (0-3)."""
    rules: Ruleset
    """The match's rules."""
    phase: Phase
    deal: int
    """0-based index of the current (or next) deal."""
    declarer: int
    """The current deal's declarer."""
    dealer: int
    """A label only: the declarer, or the seat to his right (``dealer_seat``)."""
    turn: int
    """The seat to act, -1 when nobody is."""
    hand: int
    """The mask of this seat's cards."""
    hand_sizes: tuple[int, ...]
    """Every seat's number of cards in hand."""
    declaration: Declaration | None
    """The current deal's declaration, None before it is made."""
    declared: tuple[tuple[Contract, ...], ...]
    """Per seat, the contracts it has declared so far in the match."""
    quota_doubles: tuple[int, ...]
    """Per seat: the declarer's earlier deals in which it doubled him (the quota, X7)."""
    declarations_left: int
    """The declarer's deals still to come, this one included."""
    doubles: tuple[tuple[int, tuple[int, ...]], ...]
    """This deal's doubling actions in order: (seat, targets)."""
    levels: tuple[tuple[int, ...], ...]
    """Pair levels: ``levels[a][b]`` is 0, 1 (doubled) or 2 (redoubled)."""
    plays: tuple[tuple[int, int | None], ...]
    """This deal's turns in order: (seat, card), or (seat, None) for a Domino pass."""
    trick_leader: int
    """The seat that led the trick in progress, -1 when none is."""
    trick: tuple[int, ...]
    """The trick in progress, in play order."""
    tricks: tuple[Trick, ...]
    """This deal's completed tricks."""
    tricks_won: tuple[int, ...]
    """Per seat, the tricks won in this deal."""
    layout: int
    """Domino: the mask of the cards on the table."""
    finished: tuple[int, ...]
    """Domino: the seats that have gone out, in finishing order."""
    results: tuple[DealResult, ...]
    """Every scored deal so far."""
    totals: tuple[int, ...]
    """Per seat, the match total so far."""
    legal: tuple[Action, ...]
    """This seat's legal actions when it is to act, else ``()``: a decision returns one of them."""

    @property
    def contract(self) -> Contract | None:
        """The current deal's contract, None before the declaration."""
        return self.declaration.contract if self.declaration else None


def observe(state: MatchState, seat: int) -> View:
    """Seat ``seat``'s view of ``state``: its hand and everything public, with its legal
    actions when it is the seat to act."""
    to_act = state.turn == seat and state.phase not in (Phase.DEAL, Phase.OVER)
    return View(
        seat=seat,
        rules=state.rules,
        phase=state.phase,
        deal=state.deal_index,
        declarer=state.declarer,
        dealer=state.dealer,
        turn=state.turn,
        hand=state.hands[seat],
        hand_sizes=tuple(h.bit_count() for h in state.hands),
        declaration=state.declaration,
        declared=tuple(
            tuple(c for c in state.rules.contracts if state.declared[s] & (1 << _CONTRACT_INDEX[c])) for s in range(4)
        ),
        quota_doubles=tuple(state.quota_doubles[state.declarer]),
        declarations_left=state.declarations_left(state.declarer),
        doubles=tuple(state.double_actions),
        levels=tuple(tuple(r) for r in state.levels),
        plays=tuple(
            state.plays
            if state.phase is Phase.DOMINO or state.contract is Contract.DOMINO
            else state.trick_play_history()
        ),
        trick_leader=state.leader if state.trick else -1,
        trick=tuple(state.trick),
        tricks=tuple(state.tricks),
        tricks_won=tuple(state.tricks_won),
        layout=state.layout,
        finished=tuple(state.finished),
        results=tuple(state.results),
        totals=tuple(state.totals),
        legal=tuple(state.legal_actions()) if to_act else (),
    )


_CONTRACT_INDEX = {c: i for i, c in enumerate(Contract)}


def visible_cards(view: View) -> Sequence[int]:
    """Every card this view shows: the own hand plus the played ones (for leak checks)."""
    played = [c for _, c in view.plays if c is not None]
    return [c for c in range(52) if view.hand >> c & 1] + played
