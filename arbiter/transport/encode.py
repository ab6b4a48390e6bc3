"""Decision requests encoded straight from the match state: the arbiter's hot path.

A request carries the seat's whole view (``observe(state, seat)`` without past results) and its
legal actions. Building the :class:`~barbu.rules.View` and then its protobuf message costs more
than the gRPC round trip itself; most of a view does not change from one request to the next
(the declaration, the doubles, the completed tricks, the totals). So the encoder keeps the
protobuf bytes of each part, made once by protobuf itself (a ``View`` with only that part set,
serialized), and joins them: protobuf's wire format lets a message be the concatenation of the
encodings of its fields, and a repeated field be sent in several runs, in order.

The bytes parse to exactly ``ArbiterMessage(request=DecisionRequest(view=view_to_proto(
replace(observe(state, seat), results=())), legal=legal_to_proto(legal), …))``:
tests/arbiter/test_encode.py checks it on every request of many random matches of every preset.
"""

from __future__ import annotations

import struct
from typing import Any

from barbu import wire
from barbu.rules import Contract, MatchState, Phase
from barbu.rules.cards import CARD_NAMES, cards_of
from barbu.v1 import arbiter_pb2 as pb

_CONTRACT_INDEX = {c: i for i, c in enumerate(Contract)}
_PHASE = {p: wire.phase_to_proto(p) for p in Phase}
_DOMINO = Contract.DOMINO
_DOUBLE = struct.Struct("<d")
_LEGAL: dict[Any, bytes] = {}  # an action -> its encoding as one entry of DecisionRequest.legal


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _legal(action: Any) -> bytes:
    data = _LEGAL.get(action)
    if data is None:
        data = pb.DecisionRequest(legal=[wire.action_to_proto(action)]).SerializeToString()
        if len(_LEGAL) < 4096:
            _LEGAL[action] = data
    return data


def _view(**fields: Any) -> bytes:
    return pb.View(**fields).SerializeToString()


def _names(mask: int) -> list[str]:
    return [CARD_NAMES[c] for c in cards_of(mask)]


# Hand-made encodings of the parts that change with every request (field numbers of
# proto/barbu/v1/arbiter.proto's View); tests/arbiter/test_encode.py holds them to protobuf's.
_SMALL = [_varint(i) for i in range(1 << 14)]  # every one- and two-byte varint


def _int(n: int) -> bytes:
    """A varint (int32/uint32; a negative int32 takes ten bytes, as protobuf writes it)."""
    if 0 <= n < 16384:
        return _SMALL[n]
    return _varint(n & 0xFFFFFFFFFFFFFFFF)


def _scalar(tag: bytes, n: int) -> bytes:
    return tag + _int(n) if n else b""


def _packed(tag: bytes, values: Any) -> bytes:
    payload = b"".join([_int(v) for v in values])
    return tag + _int(len(payload)) + payload if payload else b""


_FOUR: dict[tuple[bytes, tuple[int, ...]], bytes] = {}  # packed per-seat counts, by value


def _four(tag: bytes, values: tuple[int, ...]) -> bytes:
    """A packed field of per-seat counts (hand sizes, tricks won, seats out), kept once encoded."""
    key = (tag, values)
    data = _FOUR.get(key)
    if data is None:
        data = _packed(tag, values)
        if len(_FOUR) < 1 << 16:
            _FOUR[key] = data
    return data


def _card_field(field: int) -> tuple[bytes, ...]:
    tag = _varint(field << 3 | 2)
    return tuple(tag + b"\x02" + name.encode() for name in CARD_NAMES)


_HAND, _TRICK, _LAYOUT = _card_field(7), _card_field(17), _card_field(20)
_SEAT, _PHASE_TAG, _DEAL, _DECLARER, _DEALER, _TURN = b"\x08", b"\x10", b"\x18", b"\x20", b"\x28", b"\x30"
_DECLARATIONS_LEFT, _TRICK_LEADER = b"\x60", b"\x80\x01"
_HAND_SIZES, _TRICKS_WON, _TOTALS, _FINISHED = b"\x42", b"\x9a\x01", b"\xba\x01", b"\xaa\x01"


class RequestEncoder:
    """Encodes the decision requests of one match (one per match: its caches follow the match's
    state from deal to deal)."""

    def __init__(self) -> None:
        self._seconds: dict[tuple[float, float], bytes] = {}
        self._results = b""  # the match's scored deals, encoded (DealEnd views carry them all)
        self._results_n = 0
        self._state_id = 0
        self._deal = -1
        self._reset()

    def _reset(self) -> None:
        self._parts: dict[Any, bytes] = {}  # small parts of this deal, by what they encode
        self._tricks = b""  # the completed tricks of this deal, encoded
        self._tricks_n = 0
        self._plays = b""  # Domino turns of this deal, encoded
        self._plays_n = 0

    def request(
        self, state: MatchState, seat: int, request_id: int, decision: float, reserve: float, legal: Any = None
    ) -> bytes:
        """The serialized ``ArbiterMessage`` of a decision request to ``seat`` (whose turn it is);
        ``legal``: the state's legal actions, if the caller has them already."""
        view = self.view(state, seat)
        if legal is None:
            legal = state.legal_actions()
        seconds = self._seconds.get((decision, reserve))
        if seconds is None:
            seconds = self._seconds[(decision, reserve)] = (b"\x21" + _DOUBLE.pack(decision) if decision else b"") + (
                b"\x29" + _DOUBLE.pack(reserve) if reserve else b""
            )
        body = b"".join(
            (
                b"\x08" + _int(request_id) if request_id else b"",
                b"\x12" + _int(len(view)) + view,
                b"".join([_LEGAL.get(a) or _legal(a) for a in legal]),
                seconds,
            )
        )
        return b"\x12" + _int(len(body)) + body

    def deal_end(self, state: MatchState, seat: int) -> bytes:
        """The serialized ``ArbiterMessage`` of a DealEnd to ``seat``: its view, past results
        included (each scored deal is encoded once, for the four seats and every later deal)."""
        view = self.view(state, seat)
        results = state.results
        if len(results) < self._results_n:  # not the match these results were encoded for
            self._results, self._results_n = b"", 0
        if len(results) != self._results_n:
            self._results += b"".join([_view(results=[wire._result_to_proto(r)]) for r in results[self._results_n :]])
            self._results_n = len(results)
        view += self._results
        body = b"\x0a" + _int(len(view)) + view
        return b"\x1a" + _int(len(body)) + body

    def view(self, state: MatchState, seat: int) -> bytes:
        """The serialized ``View`` of ``seat``, without past results (as in a request)."""
        if id(state) != self._state_id or state.deal_index != self._deal:
            if id(state) != self._state_id:
                self._results, self._results_n = b"", 0
            self._state_id, self._deal = id(state), state.deal_index
            self._reset()
        parts = self._parts
        declarer = state.declarer
        head_key = (seat, state.phase, declarer, state.turn, state.leader if state.trick else -1)
        head = parts.get(head_key)
        if head is None:
            head = parts[head_key] = b"".join(
                (
                    _scalar(_SEAT, seat),
                    _scalar(_PHASE_TAG, _PHASE[state.phase]),
                    _scalar(_DEAL, state.deal_index),
                    _scalar(_DECLARER, declarer),
                    _scalar(_DEALER, state.dealer),
                    _scalar(_TURN, state.turn),
                    _scalar(_DECLARATIONS_LEFT, state.declarations_left(declarer)),
                    _scalar(_TRICK_LEADER, head_key[4]),
                )
            )
        hand = b"".join([_HAND[c] for c in cards_of(state.hands[seat])])
        hands = state.hands
        sizes = _four(
            _HAND_SIZES, (hands[0].bit_count(), hands[1].bit_count(), hands[2].bit_count(), hands[3].bit_count())
        )
        declaration = state.declaration
        doubles_key = (
            "doubles",
            declaration,
            len(state.double_actions),
            *state.quota_doubles[declarer],
            *state.declared,
        )
        doubles = parts.get(doubles_key)
        if doubles is None:
            # Within a deal the pair levels change only with the doubles.
            contracts = state.rules.contracts
            doubles = parts[doubles_key] = _view(
                declaration=wire._declare_to_proto(declaration) if declaration is not None else None,
                declared=[
                    wire._seat_contracts_to_proto(
                        tuple(c for c in contracts if state.declared[s] & (1 << _CONTRACT_INDEX[c]))
                    )
                    for s in range(4)
                ],
                quota_doubles=state.quota_doubles[declarer],
                doubles=[wire._double_to_proto(d) for d in state.double_actions],
                levels=wire._levels_to_proto(tuple(tuple(r) for r in state.levels)),
            )
        trick = b"".join([_TRICK[c] for c in state.trick])
        tricks = state.tricks
        if len(tricks) < self._tricks_n:  # the DealEnd view of the last deal came first
            self._tricks, self._tricks_n = b"", 0
        if len(tricks) != self._tricks_n:
            self._tricks += b"".join([_view(tricks=[wire._trick_to_proto(t)]) for t in tricks[self._tricks_n :]])
            self._tricks_n = len(tricks)
        won = _four(_TRICKS_WON, tuple(state.tricks_won))
        domino = b""
        if declaration is not None and declaration.contract is _DOMINO:
            plays = state.plays
            if len(plays) < self._plays_n:
                self._plays, self._plays_n = b"", 0
            if len(plays) != self._plays_n:
                self._plays += b"".join([_view(plays=[wire._played_to_proto(s, c)]) for s, c in plays[self._plays_n :]])
                self._plays_n = len(plays)
            domino = self._plays
        layout = b"".join([_LAYOUT[c] for c in cards_of(state.layout)]) if state.layout else b""
        if state.finished:
            layout += _four(_FINISHED, tuple(state.finished))
        totals_key = ("totals", *state.totals)
        totals = parts.get(totals_key)
        if totals is None:
            totals = parts[totals_key] = _packed(_TOTALS, state.totals)
        return b"".join((head, hand, sizes, doubles, trick, self._tricks, won, domino, layout, totals))
