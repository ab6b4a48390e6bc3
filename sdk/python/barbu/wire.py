"""Conversions between the rules engine's values and the protocol's messages (``barbu.v1``).

Pure functions, no I/O. Both sides of the wire use them: the arbiter to build views and read
replies, the SDK runner to rebuild a :class:`barbu.rules.View` for the bot and to send its
action back.

The round trip is exact: ``view_from_proto(view_to_proto(v), v.rules, v.legal) == v``.

Malformed messages raise :class:`WireError`: a message that is not an action for the phase
(the wrong kind, an empty one, a Domino pass in trick play), bad notation (a card, suit or
rank not written as the protocol says), an unspecified or unknown contract, a double target
that is not a seat. Everything that is well-formed but against the rules (a card not in hand,
a trump named with a contract that takes none, a seat listed twice, an illegal target) is
converted faithfully and left to the referee, which says why it is illegal.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar, cast

from .rules.actions import Action, Declaration, Phase
from .rules.cards import CARD_NAMES, RANKS, SUITS, cards_of
from .rules.contracts import Contract
from .rules.errors import BarbuError
from .rules.ruleset import Ruleset
from .rules.scoring import DealResult
from .rules.tricks import Trick, play_order
from .rules.view import View
from .v1 import arbiter_pb2 as pb

PROTOCOL_VERSION = 1
"""The protocol version a hello announces (docs/protocol.md)."""

__all__ = [
    "PROTOCOL_VERSION",
    "WireError",
    "action_from_proto",
    "action_to_proto",
    "legal_from_proto",
    "legal_to_proto",
    "pb",
    "phase_from_proto",
    "phase_to_proto",
    "view_from_proto",
    "view_to_proto",
]


class WireError(BarbuError):
    """A protocol message that is malformed: the message says what is wrong with it."""


# ---- enums --------------------------------------------------------------------------------
_PHASE_TO_PB = {
    Phase.DEAL: pb.DEAL,
    Phase.DECLARE: pb.DECLARE,
    Phase.DOUBLE: pb.DOUBLE,
    Phase.PLAY: pb.PLAY,
    Phase.DOMINO: pb.DOMINO_PLAY,
    Phase.OVER: pb.OVER,
}
_PHASE_FROM_PB: dict[int, Phase] = {v: k for k, v in _PHASE_TO_PB.items()}
_CONTRACT_TO_PB = cast("dict[Contract, pb.Contract]", {c: pb.Contract.Value(c.name) for c in Contract})
_CONTRACT_FROM_PB: dict[int, Contract] = {v: k for k, v in _CONTRACT_TO_PB.items()}
_PASS: dict[str, Any] = {"pass": True}  # ``pass`` is a Python keyword: set through ** unpacking

_CARD_BY_NAME = {name: c for c, name in enumerate(CARD_NAMES)}
_CARD_BIT = {name: 1 << c for c, name in enumerate(CARD_NAMES)}
_ACTION_KIND = {Phase.DECLARE: "declare", Phase.DOUBLE: "double", Phase.PLAY: "play", Phase.DOMINO: "play"}


def phase_to_proto(phase: Phase) -> int:
    """The engine's Phase -> the protocol's Phase value (Phase.DOMINO is DOMINO_PLAY)."""
    return _PHASE_TO_PB[phase]


def phase_from_proto(value: int) -> Phase:
    """A protocol Phase value -> the engine's Phase; WireError for PHASE_UNSPECIFIED or unknown."""
    try:
        return _PHASE_FROM_PB[value]
    except KeyError:
        name = pb.Phase.Name(value) if value in pb.Phase.values() else str(value)
        raise WireError(f"view phase {name} is not a phase of the game") from None


def _contract_from_pb(value: int) -> Contract:
    try:
        return _CONTRACT_FROM_PB[value]
    except KeyError:
        if value == pb.CONTRACT_UNSPECIFIED:
            raise WireError("the contract is unspecified (CONTRACT_UNSPECIFIED): name one") from None
        raise WireError(f"unknown contract number {value}") from None


# ---- cards ----------------------------------------------------------------------------------
def _bad_card(text: object) -> WireError:
    return WireError(f"bad card {text!r}: a card is a rank 2-9 T J Q K A then a suit C D H S, e.g. 'TH'")


def _card(text: str) -> int:
    """Strict wire notation: rank then suit, upper case, e.g. "TH"."""
    try:
        return _CARD_BY_NAME[text]
    except KeyError:
        raise _bad_card(text) from None


def _cards(texts: Iterable[str]) -> tuple[int, ...]:
    try:
        return tuple(map(_CARD_BY_NAME.__getitem__, texts))
    except KeyError as e:
        raise _bad_card(e.args[0]) from None


def _mask(texts: Iterable[str]) -> int:
    try:
        return functools.reduce(operator.or_, map(_CARD_BIT.__getitem__, texts), 0)
    except KeyError as e:
        raise _bad_card(e.args[0]) from None


def _names(mask: int) -> list[str]:
    return [CARD_NAMES[c] for c in cards_of(mask)]


def _seat(value: int, what: str) -> int:
    if value > 3:
        raise WireError(f"{what} {value} is not a seat 0-3")
    return value


# ---- decoding, remembered ------------------------------------------------------------------
_M = TypeVar("_M")
_T = TypeVar("_T")


_encoding: Callable[[Any], bytes] = operator.methodcaller("SerializeToString")


def _remembered(
    decode: Callable[[_M], _T], key: Callable[[_M], Hashable] = _encoding, size: int = 4096
) -> Callable[[_M], _T]:
    """``decode`` with its results kept by ``key`` (by default the message's encoding), up to
    ``size`` of them. A bot is sent the same tricks, declarations, levels and legal actions in
    view after view, and reading the fields of a protobuf message costs several times what
    encoding the whole small message does. ``decode`` is pure, so a kept result is the one it
    would give again; an error is raised each time, never kept."""
    cache: dict[Hashable, _T] = {}

    def remembered(msg: _M) -> _T:
        k = key(msg)
        try:
            return cache[k]
        except KeyError:
            value = decode(msg)
            if len(cache) < size:
                cache[k] = value
            return value

    return remembered


# ---- declarations ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _declare_to_proto(decl: Declaration) -> pb.Declare:
    try:
        contract = Contract(decl.contract)
    except ValueError:
        raise WireError(f"unknown contract {decl.contract!r}") from None
    trump, rank = decl.trump, decl.start_rank
    if trump is not None and not (isinstance(trump, int) and 0 <= trump < 4):
        raise WireError(f"bad trump suit {trump!r}: expected a suit index 0-3 (C D H S)")
    if rank is not None and not (isinstance(rank, int) and 0 <= rank < 13):
        raise WireError(f"bad start rank {rank!r}: expected a rank index 0-12 (2 .. A)")
    return pb.Declare(
        contract=_CONTRACT_TO_PB[contract],
        trump="" if trump is None else SUITS[trump],
        start_rank="" if rank is None else RANKS[rank],
    )


def _declare_from_proto(msg: pb.Declare) -> Declaration:
    contract = _contract_from_pb(msg.contract)
    trump = start_rank = None
    if msg.trump:
        if len(msg.trump) != 1 or msg.trump not in SUITS:
            raise WireError(f"bad trump suit {msg.trump!r}: expected one of C D H S")
        trump = SUITS.index(msg.trump)
    if msg.start_rank:
        if len(msg.start_rank) != 1 or msg.start_rank not in RANKS:
            raise WireError(f"bad start rank {msg.start_rank!r}: expected one of 2-9 T J Q K A")
        start_rank = RANKS.index(msg.start_rank)
    return Declaration(contract, trump, start_rank)


# ---- levels ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def _levels_to_proto(levels: tuple[tuple[int, ...], ...]) -> tuple[pb.PairLevel, ...]:
    return tuple(
        pb.PairLevel(a=a, b=b, level=levels[a][b]) for a in range(4) for b in range(a + 1, 4) if levels[a][b] > 0
    )


def _levels_from_proto(pairs: Iterable[pb.PairLevel]) -> tuple[tuple[int, ...], ...]:
    m = [[0] * 4 for _ in range(4)]
    for p in pairs:
        a, b = _seat(p.a, "pair level seat"), _seat(p.b, "pair level seat")
        if a == b:
            raise WireError(f"a pair level needs two different seats, got {a} and {b}")
        m[a][b] = m[b][a] = p.level
    return tuple(tuple(r) for r in m)


_levels = _remembered(_levels_from_proto, key=lambda pairs: tuple(map(_encoding, pairs)))


# ---- views ----------------------------------------------------------------------------------
def view_to_proto(view: View) -> pb.View:
    """The protocol form of a view (its rules and legal actions travel separately)."""
    return pb.View(
        seat=view.seat,
        phase=_PHASE_TO_PB[view.phase],
        deal=view.deal,
        declarer=view.declarer,
        dealer=view.dealer,
        turn=view.turn,
        hand=_names(view.hand),
        hand_sizes=view.hand_sizes,
        declaration=_declare_to_proto(view.declaration) if view.declaration is not None else None,
        declared=[_seat_contracts_to_proto(cs) for cs in view.declared],
        quota_doubles=view.quota_doubles,
        declarations_left=view.declarations_left,
        doubles=[_double_to_proto(d) for d in view.doubles],
        levels=_levels_to_proto(view.levels),
        # Trick play is already in `tricks` and `trick`; only Domino turns (passes) need `plays`.
        plays=[_played_to_proto(s, c) for s, c in view.plays] if _is_domino(view.declaration) else (),
        trick_leader=view.trick_leader,
        trick=[CARD_NAMES[c] for c in view.trick],
        tricks=[_trick_to_proto(t) for t in view.tricks],
        tricks_won=view.tricks_won,
        layout=_names(view.layout),
        finished=view.finished,
        results=[_result_to_proto(r) for r in view.results],
        totals=view.totals,
    )


# The parts of a view that never change once made (a completed trick, a doubling action, a
# declaration) are encoded once: a match re-sends each of them in many views.
@functools.lru_cache(maxsize=4096)
def _trick_to_proto(t: Trick) -> pb.Trick:
    return pb.Trick(index=t.index, leader=t.leader, cards=[CARD_NAMES[c] for c in t.cards], winner=t.winner)


@functools.lru_cache(maxsize=256)
def _double_to_proto(action: tuple[int, tuple[int, ...]]) -> pb.DoubleAction:
    return pb.DoubleAction(seat=action[0], targets=action[1])


@functools.lru_cache(maxsize=1024)
def _seat_contracts_to_proto(contracts: tuple[Contract, ...]) -> pb.SeatContracts:
    return pb.SeatContracts(contracts=[_CONTRACT_TO_PB[c] for c in contracts])


def _played_to_proto(seat: int, card: int | None) -> pb.PlayedCard:
    # ``pass`` is a Python keyword: the field is set through keyword unpacking.
    if card is None:
        return pb.PlayedCard(seat=seat, **_PASS)
    return pb.PlayedCard(seat=seat, card=CARD_NAMES[card])


def _result_to_proto(r: DealResult) -> pb.DealResult:
    return pb.DealResult(
        deal=r.deal,
        declarer=r.declarer,
        declaration=_declare_to_proto(r.declaration),
        levels=_levels_to_proto(r.levels),
        reason=r.reason,
        raw=r.raw,
        scores=r.scores,
        totals=r.totals,
    )


def _result_from_proto(msg: pb.DealResult) -> DealResult:
    if not msg.HasField("declaration"):
        raise WireError(f"the result of deal {msg.deal} has no declaration")
    return DealResult(
        deal=msg.deal,
        declarer=msg.declarer,
        declaration=_declare_from_proto(msg.declaration),
        levels=_levels_from_proto(msg.levels),
        reason=msg.reason,
        raw=tuple(msg.raw),
        scores=tuple(msg.scores),
        totals=tuple(msg.totals),
    )


def _played_from_proto(msg: pb.PlayedCard) -> tuple[int, int | None]:
    if getattr(msg, "pass"):
        if msg.card:
            raise WireError(f"a played turn is a card or a pass, not both (card {msg.card!r} with pass)")
        return (msg.seat, None)
    return (msg.seat, _card(msg.card))


def _is_domino(declaration: Declaration | None) -> bool:
    return declaration is not None and declaration.contract is Contract.DOMINO


def _trick_from_proto(msg: pb.Trick) -> Trick:
    return Trick(msg.index, msg.leader, _cards(msg.cards), msg.winner)


def _seat_contracts_from_proto(msg: pb.SeatContracts) -> tuple[Contract, ...]:
    return tuple(map(_contract_from_pb, msg.contracts))


def _double_from_proto(msg: pb.DoubleAction) -> tuple[int, tuple[int, ...]]:
    return (msg.seat, tuple(msg.targets))


_declaration = _remembered(_declare_from_proto)
_trick = _remembered(_trick_from_proto)
_seat_contracts = _remembered(_seat_contracts_from_proto)
_double = _remembered(_double_from_proto)
_played = _remembered(_played_from_proto)
_result = _remembered(_result_from_proto)


def view_from_proto(
    msg: pb.View, rules: Ruleset, legal: Sequence[Action] = (), results: tuple[DealResult, ...] = ()
) -> View:
    """Rebuild the engine's view from its protocol form, the match's rules and the legal actions.
    ``results``: the past deals' results, for a message that carries none (a decision request:
    the results travel in DealEnd)."""
    declaration = _declaration(msg.declaration) if msg.HasField("declaration") else None
    trick = _cards(msg.trick)
    tricks = tuple(map(_trick, msg.tricks))
    if _is_domino(declaration):
        plays = tuple(map(_played, msg.plays))
    else:
        plays = tuple(play_order(tricks, msg.trick_leader, trick))
    return View(
        seat=_seat(msg.seat, "view seat"),
        rules=rules,
        phase=phase_from_proto(msg.phase),
        deal=msg.deal,
        declarer=msg.declarer,
        dealer=msg.dealer,
        turn=msg.turn,
        hand=_mask(msg.hand),
        hand_sizes=tuple(msg.hand_sizes),
        declaration=declaration,
        declared=tuple(map(_seat_contracts, msg.declared)),
        quota_doubles=tuple(msg.quota_doubles),
        declarations_left=msg.declarations_left,
        doubles=tuple(map(_double, msg.doubles)),
        levels=_levels(msg.levels),
        plays=plays,
        trick_leader=msg.trick_leader,
        trick=trick,
        tricks=tricks,
        tricks_won=tuple(msg.tricks_won),
        layout=_mask(msg.layout),
        finished=tuple(msg.finished),
        results=tuple(map(_result, msg.results)) if msg.results else results,
        totals=tuple(msg.totals),
        legal=tuple(legal),
    )


# ---- actions --------------------------------------------------------------------------------
def action_to_proto(action: object) -> pb.Action:
    """An engine action (a Declaration, a collection of target seats, a card ``int``, or ``None``
    for a Domino pass) -> its protocol form. Raises WireError for anything else: it takes any
    value, since a bot's answer is checked here (typed, it is an :data:`~barbu.rules.Action`).

    >>> from barbu.rules import parse_card
    >>> action_to_proto(parse_card("TH")).play.card
    'TH'
    >>> action_from_proto(action_to_proto([2, 0]), Phase.DOUBLE)  # targets come back ascending
    (0, 2)
    """
    if isinstance(action, Declaration):
        return pb.Action(declare=_declare_to_proto(action))
    if action is None:
        return pb.Action(play=pb.Play(**_PASS))
    if isinstance(action, (tuple, list, set, frozenset)):
        targets = []
        for t in action:
            t = _index(t, "double target")
            if not 0 <= t < 4:
                raise WireError(f"double target {t} is not a seat 0-3")
            targets.append(t)
        return pb.Action(double=pb.Double(targets=sorted(targets)))
    card = _index(action, "action")
    if not 0 <= card < 52:
        raise WireError(f"card {card} is not a card number 0-51")
    return pb.Action(play=pb.Play(card=CARD_NAMES[card]))


def _index(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise WireError(f"{what} {value!r} is not an action: expected a Declaration, target seats, a card or None")
    try:
        return operator.index(value)
    except TypeError:
        raise WireError(
            f"{what} {value!r} is not an action: expected a Declaration, target seats, a card or None"
        ) from None


def action_from_proto(msg: pb.Action, phase: Phase) -> Action:
    """The engine action a protocol action stands for in ``phase``; WireError if malformed.

    Double targets come back ascending (duplicates kept, for the referee to reject)."""
    expected = _ACTION_KIND.get(phase)
    if expected is None:
        raise WireError(f"no action is taken in the {phase.name.lower()} phase")
    kind = msg.WhichOneof("kind")
    if kind != expected:
        got = f"a {kind} action" if kind else "an empty action"
        raise WireError(f"expected a {expected} action in the {phase.name.lower()} phase, got {got}")
    if kind == "declare":
        return _declare_from_proto(msg.declare)
    if kind == "double":
        return tuple(sorted(_seat(t, "double target") for t in msg.double.targets))
    play = msg.play
    if getattr(play, "pass"):
        if play.card:
            raise WireError(f"a play is a card or a pass, not both (card {play.card!r} with pass)")
        if phase is not Phase.DOMINO:
            raise WireError("a pass is a Domino action only: in trick play, play a card")
        return None
    if not play.card:
        raise WireError("a play needs a card (e.g. 'TH'), or pass in Domino")
    return _card(play.card)


def legal_to_proto(actions: Iterable[Action]) -> list[pb.Action]:
    """A list of legal actions in protocol form (a decision request's ``legal``)."""
    return [action_to_proto(a) for a in actions]


_ACTIONS = {phase: _remembered(functools.partial(action_from_proto, phase=phase)) for phase in Phase}


def legal_from_proto(msgs: Iterable[pb.Action], phase: Phase) -> tuple[Action, ...]:
    """A decision request's legal actions as engine actions, in their order."""
    return tuple(map(_ACTIONS[phase], msgs))
