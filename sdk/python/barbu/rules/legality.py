"""Checking a seat's action before the state machine applies it, and saying why an illegal
one is refused: each ``checked_*`` returns the action in the form
:class:`~barbu.rules.state.MatchState` applies, or raises IllegalActionError with a reason a
bot author can act on. A legal card in trick play, the hot path, is accepted by
``MatchState.apply`` itself and never comes here.
"""

from __future__ import annotations

from typing import Protocol

from .actions import PASS, Declaration, Phase
from .cards import CARD_NAMES, RANKS, SUIT_MASKS, SUITS, cards_of
from .contracts import CONTRACT_BITS, Contract
from .errors import IllegalActionError
from .ruleset import Ruleset


class _State(Protocol):
    """What the checks read of a :class:`~barbu.rules.state.MatchState` (which imports them)."""

    rules: Ruleset
    phase: Phase
    turn: int
    declarer: int
    contract: Contract | None
    hands: list[int]
    trick: list[int]
    declared: list[int]
    doubled: list[int]
    redoubled: list[int]
    double_round: int

    def legal_mask(self) -> int: ...
    def double_targets(self) -> tuple[int, int]: ...
    def _domino_must_play(self) -> bool: ...


_SEATS_OF_MASK = tuple(tuple(s for s in range(4) if m >> s & 1) for m in range(16))


def checked_card(state: _State, card: object) -> int:
    """The card if it is legal now; otherwise an IllegalActionError saying why."""
    if type(card) is not int or not 0 <= card < 52:
        raise IllegalActionError(f"expected a card, got {card!r}")
    if not state.legal_mask() >> card & 1:
        raise IllegalActionError(_why_illegal(state, card))
    return card


def checked_domino(state: _State, card: object) -> int | None:
    """A Domino card or pass (``None``) if it is legal now; otherwise an IllegalActionError."""
    if card is PASS:
        if state.legal_mask() and state._domino_must_play():
            raise IllegalActionError("you may not pass while you hold a playable card")
        return PASS
    return checked_card(state, card)


def _why_illegal(state: _State, card: int) -> str:
    name = CARD_NAMES[card]
    hand = state.hands[state.turn]
    if not hand >> card & 1:
        return f"{name} is not in your hand"
    legal = " ".join(CARD_NAMES[c] for c in cards_of(state.legal_mask()))
    if state.phase is Phase.DOMINO:
        return f"{name} does not fit the layout; playable: {legal}"
    if state.trick and card // 13 != state.trick[0] // 13 and hand & SUIT_MASKS[state.trick[0] // 13]:
        return f"{name} does not follow the led suit {SUITS[state.trick[0] // 13]}; legal: {legal}"
    contract = state.contract
    assert contract is not None
    if not state.trick:
        return f"{name} may not be led in {contract.value} now; legal: {legal}"
    return f"{name} breaks a {contract.value} obligation (trump or K♥ rule); legal: {legal}"


def checked_targets(state: _State, action: object) -> tuple[int, tuple[int, ...]]:
    """(mask, ascending seat tuple) of a legal doubling action; else IllegalActionError."""
    try:
        targets = list(action)  # type: ignore[call-overload]  # anything iterable; else TypeError
    except TypeError:
        raise IllegalActionError(f"a doubling action is a list of seats, got {action!r}") from None
    mask = 0
    for t in targets:
        if type(t) is not int or not 0 <= t < 4:
            raise IllegalActionError(f"double target {t!r} is not a seat 0-3")
        if mask >> t & 1:
            raise IllegalActionError(f"seat {t} is listed twice")
        mask |= 1 << t
    legal, forced = state.double_targets()
    seat = state.turn
    for t in targets:
        if not legal >> t & 1:
            raise IllegalActionError(_why_bad_target(state, seat, t))
    if mask & forced != forced:
        raise IllegalActionError(
            f"seat {seat} must double the declarer (seat {state.declarer}) in this deal to meet the "
            f"quota of {state.rules.double_quota} doubles per declarer"
        )
    return mask, _SEATS_OF_MASK[mask]


def _why_bad_target(state: _State, seat: int, t: int) -> str:
    if t == seat:
        return f"seat {seat} may not double itself"
    if state.doubled[seat] >> t & 1 or state.redoubled[seat] >> t & 1:
        return f"seat {seat} has already doubled or redoubled seat {t} in this deal"
    if seat == state.declarer or state.double_round == 1:
        return f"seat {seat} may only redouble seats that doubled it, and seat {t} did not"
    contract = state.contract
    assert contract is not None
    return f"seat {seat} may not double seat {t} in {contract.value}: only the declarer may be doubled"


def checked_declaration(state: _State, action: object) -> Declaration:
    """The action as a Declaration if the declarer may make it now; otherwise an IllegalActionError."""
    if not isinstance(action, tuple) or len(action) != 3:
        raise IllegalActionError(f"expected a declaration, got {action!r}")
    try:
        decl = Declaration(Contract(action[0]), *action[1:])
    except ValueError:
        raise IllegalActionError(f"unknown contract {action[0]!r}") from None
    c = decl.contract
    fixed = state.rules.fixed_domino_rank()
    if (
        c not in state.rules.contracts
        or state.declared[state.declarer] & CONTRACT_BITS[c]
        or (decl.trump is None) == (c is Contract.TRUMPS)
        or (decl.start_rank is None) == (c is Contract.DOMINO)
        or (decl.trump is not None and decl.trump not in (0, 1, 2, 3))
        or (decl.start_rank is not None and decl.start_rank not in (range(13) if fixed is None else (fixed,)))
    ):
        raise IllegalActionError(_why_bad_declaration(state, decl))
    return decl


def _why_bad_declaration(state: _State, decl: Declaration) -> str:
    c = decl.contract
    if c not in state.rules.contracts:
        return f"{c} is not a contract of these rules"
    if state.declared[state.declarer] & CONTRACT_BITS[c]:
        return f"seat {state.declarer} has already declared {c.value}"
    if c is Contract.TRUMPS and decl.trump is None:
        return "trumps needs a trump suit (C D H S)"
    if c is Contract.DOMINO and decl.start_rank is None:
        return "domino needs a start rank"
    fixed = state.rules.fixed_domino_rank()
    if c is Contract.DOMINO and fixed is not None and decl.start_rank != fixed:
        return f"these rules fix the domino start rank at {RANKS[fixed]}"
    if decl.trump is not None and decl.trump not in (0, 1, 2, 3):
        return f"bad trump suit {decl.trump!r}: expected a suit index 0-3 (C D H S)"
    if decl.start_rank is not None and decl.start_rank not in range(13):
        return f"bad domino start rank {decl.start_rank!r}: expected a rank index 0-12 (2 .. A)"
    return f"{decl} is malformed: a trump goes with trumps only, a start rank with domino only"
