from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EntrantMessage(_message.Message):
    __slots__ = ("hello", "ping", "pong", "seat_ended", "message_refused")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    SEAT_ENDED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_REFUSED_FIELD_NUMBER: _ClassVar[int]
    hello: LobbyHello
    ping: Ping
    pong: Pong
    seat_ended: SeatEnded
    message_refused: MessageRefused
    def __init__(self, hello: _Optional[_Union[LobbyHello, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., seat_ended: _Optional[_Union[SeatEnded, _Mapping]] = ..., message_refused: _Optional[_Union[MessageRefused, _Mapping]] = ...) -> None: ...

class LobbyHello(_message.Message):
    __slots__ = ("protocol_version", "key", "name", "version", "capacity")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    key: str
    name: str
    version: str
    capacity: int
    def __init__(self, protocol_version: _Optional[int] = ..., key: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., capacity: _Optional[int] = ...) -> None: ...

class SeatEnded(_message.Message):
    __slots__ = ("match_id", "seat", "exit_code", "detail")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    exit_code: int
    detail: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., exit_code: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class MessageRefused(_message.Message):
    __slots__ = ("match_id", "seat")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class LobbyMessage(_message.Message):
    __slots__ = ("welcome", "invitation", "ping", "pong", "over")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    INVITATION_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    invitation: Invitation
    ping: Ping
    pong: Pong
    over: Over
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., invitation: _Optional[_Union[Invitation, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., over: _Optional[_Union[Over, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("entrant", "capacity", "keepalive_seconds", "lobby")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    KEEPALIVE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    LOBBY_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    capacity: int
    keepalive_seconds: float
    lobby: str
    def __init__(self, entrant: _Optional[str] = ..., capacity: _Optional[int] = ..., keepalive_seconds: _Optional[float] = ..., lobby: _Optional[str] = ...) -> None: ...

class Invitation(_message.Message):
    __slots__ = ("match_id", "seat", "token", "address", "rules_json", "decision_seconds", "reserve_seconds", "connect_seconds", "entrants")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    RULES_JSON_FIELD_NUMBER: _ClassVar[int]
    DECISION_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RESERVE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CONNECT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    token: str
    address: str
    rules_json: str
    decision_seconds: float
    reserve_seconds: float
    connect_seconds: float
    entrants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., token: _Optional[str] = ..., address: _Optional[str] = ..., rules_json: _Optional[str] = ..., decision_seconds: _Optional[float] = ..., reserve_seconds: _Optional[float] = ..., connect_seconds: _Optional[float] = ..., entrants: _Optional[_Iterable[str]] = ...) -> None: ...

class Over(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...
