"""What one seat may know: ``observe(state, seat)``.

A view holds the seat's own hand and everything public (declarations, doubles, played cards,
tricks, the Domino layout, scores). It never holds another seat's unplayed cards, nor the
dealt hands; hand sizes are public because every played card is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .contracts import Contract
from .state import DealResult, Declaration, MatchState, Phase, Trick
from .ruleset import Ruleset


@dataclass(frozen=True)
class View:
    seat: int
    rules: Ruleset
    phase: Phase
    deal: int  # 0-based index of the current (or next) deal
    declarer: int
    dealer: int
    turn: int  # seat to act, -1 when nobody is
    hand: int  # mask of this seat's cards
    hand_sizes: tuple[int, ...]
    declaration: Declaration | None
    declared: tuple[tuple[Contract, ...], ...]  # per seat, contracts declared so far
    quota_doubles: tuple[int, ...]  # per seat: earlier deals in which it doubled the declarer
    declarations_left: int  # the declarer's deals still to come, this one included
    doubles: tuple[tuple[int, tuple[int, ...]], ...]  # (seat, targets) in order, this deal
    levels: tuple[tuple[int, ...], ...]
    plays: tuple[tuple[int, int | None], ...]  # (seat, card or None for a Domino pass)
    trick_leader: int
    trick: tuple[int, ...]  # the current trick, in play order
    tricks: tuple[Trick, ...]
    tricks_won: tuple[int, ...]
    layout: int  # Domino: mask of cards on the table
    finished: tuple[int, ...]  # Domino: seats in finishing order
    results: tuple[DealResult, ...]
    totals: tuple[int, ...]
    legal: tuple[Any, ...]  # this seat's legal actions when it is to act, else ()

    @property
    def contract(self) -> Contract | None:
        return self.declaration.contract if self.declaration else None


def observe(state: MatchState, seat: int) -> View:
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
            tuple(c for c in state.rules.contracts if state.declared[s] & (1 << _CONTRACT_INDEX[c]))
            for s in range(4)
        ),
        quota_doubles=tuple(state.quota_doubles[state.declarer]),
        declarations_left=state.declarations_left(state.declarer),
        doubles=tuple(state.double_actions),
        levels=tuple(tuple(r) for r in state.levels),
        plays=tuple(state.plays if state.phase is Phase.DOMINO or state.contract is Contract.DOMINO else state.trick_play_history()),
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
