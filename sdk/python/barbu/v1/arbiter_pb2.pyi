from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Contract(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTRACT_UNSPECIFIED: _ClassVar[Contract]
    NO_TRICKS: _ClassVar[Contract]
    NO_HEARTS: _ClassVar[Contract]
    NO_QUEENS: _ClassVar[Contract]
    BARBU: _ClassVar[Contract]
    NO_LAST_TWO: _ClassVar[Contract]
    TRUMPS: _ClassVar[Contract]
    DOMINO: _ClassVar[Contract]
    SALAD: _ClassVar[Contract]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    DEAL: _ClassVar[Phase]
    DECLARE: _ClassVar[Phase]
    DOUBLE: _ClassVar[Phase]
    PLAY: _ClassVar[Phase]
    DOMINO_PLAY: _ClassVar[Phase]
    OVER: _ClassVar[Phase]
CONTRACT_UNSPECIFIED: Contract
NO_TRICKS: Contract
NO_HEARTS: Contract
NO_QUEENS: Contract
BARBU: Contract
NO_LAST_TWO: Contract
TRUMPS: Contract
DOMINO: Contract
SALAD: Contract
PHASE_UNSPECIFIED: Phase
DEAL: Phase
DECLARE: Phase
DOUBLE: Phase
PLAY: Phase
DOMINO_PLAY: Phase
OVER: Phase

class BotMessage(_message.Message):
    __slots__ = ("hello", "reply")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    reply: Reply
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., reply: _Optional[_Union[Reply, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("protocol_version", "token", "bot_name", "bot_version", "multi_match")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    MULTI_MATCH_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    token: str
    bot_name: str
    bot_version: str
    multi_match: bool
    def __init__(self, protocol_version: _Optional[int] = ..., token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., multi_match: _Optional[bool] = ...) -> None: ...

class Reply(_message.Message):
    __slots__ = ("request_id", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: Action
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class ArbiterMessage(_message.Message):
    __slots__ = ("match_start", "request", "deal_end", "match_end")
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    DEAL_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    match_start: MatchStart
    request: DecisionRequest
    deal_end: DealEnd
    match_end: MatchEnd
    def __init__(self, match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., deal_end: _Optional[_Union[DealEnd, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "seat", "rules_json", "entrants", "deals", "decision_seconds", "reserve_seconds", "view")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULES_JSON_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    DECISION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RESERVE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    rules_json: str
    entrants: _containers.RepeatedScalarFieldContainer[str]
    deals: int
    decision_seconds: float
    reserve_seconds: float
    view: View
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., rules_json: _Optional[str] = ..., entrants: _Optional[_Iterable[str]] = ..., deals: _Optional[int] = ..., decision_seconds: _Optional[float] = ..., reserve_seconds: _Optional[float] = ..., view: _Optional[_Union[View, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "view", "legal", "decision_seconds", "reserve_seconds")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    DECISION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RESERVE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    view: View
    legal: _containers.RepeatedCompositeFieldContainer[Action]
    decision_seconds: float
    reserve_seconds: float
    def __init__(self, request_id: _Optional[int] = ..., view: _Optional[_Union[View, _Mapping]] = ..., legal: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., decision_seconds: _Optional[float] = ..., reserve_seconds: _Optional[float] = ...) -> None: ...

class DealEnd(_message.Message):
    __slots__ = ("view",)
    VIEW_FIELD_NUMBER: _ClassVar[int]
    view: View
    def __init__(self, view: _Optional[_Union[View, _Mapping]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("status", "totals", "places", "view", "reason")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    status: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    view: View
    reason: str
    def __init__(self, status: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., view: _Optional[_Union[View, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("declare", "double", "play")
    DECLARE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    declare: Declare
    double: Double
    play: Play
    def __init__(self, declare: _Optional[_Union[Declare, _Mapping]] = ..., double: _Optional[_Union[Double, _Mapping]] = ..., play: _Optional[_Union[Play, _Mapping]] = ...) -> None: ...

class Declare(_message.Message):
    __slots__ = ("contract", "trump", "start_rank")
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    START_RANK_FIELD_NUMBER: _ClassVar[int]
    contract: Contract
    trump: str
    start_rank: str
    def __init__(self, contract: _Optional[_Union[Contract, str]] = ..., trump: _Optional[str] = ..., start_rank: _Optional[str] = ...) -> None: ...

class Double(_message.Message):
    __slots__ = ("targets",)
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    targets: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, targets: _Optional[_Iterable[int]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    card: str
    def __init__(self, card: _Optional[str] = ..., **kwargs) -> None: ...

class View(_message.Message):
    __slots__ = ("seat", "phase", "deal", "declarer", "dealer", "turn", "hand", "hand_sizes", "declaration", "declared", "quota_doubles", "declarations_left", "doubles", "levels", "plays", "trick_leader", "trick", "tricks", "tricks_won", "layout", "finished", "results", "totals")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_FIELD_NUMBER: _ClassVar[int]
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    QUOTA_DOUBLES_FIELD_NUMBER: _ClassVar[int]
    DECLARATIONS_LEFT_FIELD_NUMBER: _ClassVar[int]
    DOUBLES_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    TRICK_LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    LAYOUT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    phase: Phase
    deal: int
    declarer: int
    dealer: int
    turn: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    declaration: Declare
    declared: _containers.RepeatedCompositeFieldContainer[SeatContracts]
    quota_doubles: _containers.RepeatedScalarFieldContainer[int]
    declarations_left: int
    doubles: _containers.RepeatedCompositeFieldContainer[DoubleAction]
    levels: _containers.RepeatedCompositeFieldContainer[PairLevel]
    plays: _containers.RepeatedCompositeFieldContainer[PlayedCard]
    trick_leader: int
    trick: _containers.RepeatedScalarFieldContainer[str]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    layout: _containers.RepeatedScalarFieldContainer[str]
    finished: _containers.RepeatedScalarFieldContainer[int]
    results: _containers.RepeatedCompositeFieldContainer[DealResult]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., deal: _Optional[int] = ..., declarer: _Optional[int] = ..., dealer: _Optional[int] = ..., turn: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., declaration: _Optional[_Union[Declare, _Mapping]] = ..., declared: _Optional[_Iterable[_Union[SeatContracts, _Mapping]]] = ..., quota_doubles: _Optional[_Iterable[int]] = ..., declarations_left: _Optional[int] = ..., doubles: _Optional[_Iterable[_Union[DoubleAction, _Mapping]]] = ..., levels: _Optional[_Iterable[_Union[PairLevel, _Mapping]]] = ..., plays: _Optional[_Iterable[_Union[PlayedCard, _Mapping]]] = ..., trick_leader: _Optional[int] = ..., trick: _Optional[_Iterable[str]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., layout: _Optional[_Iterable[str]] = ..., finished: _Optional[_Iterable[int]] = ..., results: _Optional[_Iterable[_Union[DealResult, _Mapping]]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class SeatContracts(_message.Message):
    __slots__ = ("contracts",)
    CONTRACTS_FIELD_NUMBER: _ClassVar[int]
    contracts: _containers.RepeatedScalarFieldContainer[Contract]
    def __init__(self, contracts: _Optional[_Iterable[_Union[Contract, str]]] = ...) -> None: ...

class DoubleAction(_message.Message):
    __slots__ = ("seat", "targets")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    targets: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., targets: _Optional[_Iterable[int]] = ...) -> None: ...

class PairLevel(_message.Message):
    __slots__ = ("a", "b", "level")
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    a: int
    b: int
    level: int
    def __init__(self, a: _Optional[int] = ..., b: _Optional[int] = ..., level: _Optional[int] = ...) -> None: ...

class PlayedCard(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., **kwargs) -> None: ...

class Trick(_message.Message):
    __slots__ = ("index", "leader", "cards", "winner")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    index: int
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    def __init__(self, index: _Optional[int] = ..., leader: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ...) -> None: ...

class DealResult(_message.Message):
    __slots__ = ("deal", "declarer", "declaration", "levels", "reason", "raw", "scores", "totals")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    DECLARATION_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    deal: int
    declarer: int
    declaration: Declare
    levels: _containers.RepeatedCompositeFieldContainer[PairLevel]
    reason: str
    raw: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, deal: _Optional[int] = ..., declarer: _Optional[int] = ..., declaration: _Optional[_Union[Declare, _Mapping]] = ..., levels: _Optional[_Iterable[_Union[PairLevel, _Mapping]]] = ..., reason: _Optional[str] = ..., raw: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...
