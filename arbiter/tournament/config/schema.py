"""The tournament file's schema: pydantic models of what each key may hold.

:class:`SharedFile` holds the keys an arena file shares with a tournament file (same names, same
forms: arbiter.arena.config builds its ``ArenaFile`` on it); :class:`TournamentFile` adds the
tournament's own.

A section that is a value of the domain (``time_control``: a
:class:`~arbiter.model.TimeControl`, ``limits``, ``faults``, an entrant, the lobby) is validated
straight into that frozen value: :func:`section` takes its keys and defaults from the domain
dataclass itself, so a key is declared once, and :func:`held` makes the file's field hold the
domain value, not a copy to convert later.

Only the file's own content is checked here (types, bounds, names, how the keys fit together);
what depends on this machine (programs, users, the sandbox, folders) is
:mod:`arbiter.tournament.config.environment`'s. Every message is ours (:mod:`.checks`), and
:func:`validate` turns the first into one ``file:line: key: message`` ConfigError.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, TypeVar

from barbu.rules import SWITCHES, BarbuError, Ruleset, make_ruleset
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetPydanticSchema,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import core_schema

from arbiter.addresses import host_port, is_loopback
from arbiter.errors import ConfigError
from arbiter.lobby.server import LobbySettings
from arbiter.model import RATINGS, Limits, TimeControl, Transport, seconds_problem
from arbiter.process.command import BotCommand
from arbiter.process.sandbox import Isolation
from arbiter.referee.faults import FaultPolicy
from arbiter.text import printable
from arbiter.tournament.config import checks
from arbiter.tournament.config.checks import MAX_INT, problem
from arbiter.tournament.config.environment import launch_command
from arbiter.tournament.config.model import DEFAULT_REMOTE_WAIT, EntrantConfig
from arbiter.tournament.config.yamltree import Lines, Loc, LongNumber, describe
from arbiter.tournament.formats import file_formats, format_of
from arbiter.tournament.schedule import MAX_MATCHES

MAX_PARALLELISM = 1024
MAX_STRIKES = 1000
# The smallest sensible limits: below them no bot starts (or a unit was forgotten).
LIMIT_MINIMUMS = {"memory": 16 << 20, "file_size": 1 << 10, "cpu": 1, "processes": 4, "open_files": 16, "output": 0}
# The largest: what the kernel accepts (open files, processes) and what any machine has.
LIMIT_MAXIMUMS = {
    "memory": 1 << 50, "file_size": 1 << 50, "output": 1 << 40, "cpu": 10**7, "processes": 1 << 22,
    "open_files": 1 << 20,
}  # fmt: skip
UNLIMITED = "unlimited"


def known_keys(data: Any, known: tuple[str, ...], refused: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``data`` as a mapping of known keys; anything else is a problem naming the key (a
    ``refused`` key: with the message given for it)."""
    if not isinstance(data, dict):
        raise problem(f"expected a mapping of keys ({', '.join(known)}), got {describe(data)}")
    for key in data:
        if refused and key in refused:
            raise problem(refused[key], node=(key,), at_key=True)
        if key not in known:
            hint = difflib.get_close_matches(key, known, n=1)
            did = f"; did you mean {hint[0]!r}?" if hint else ""
            raise problem(f"unknown key{did} (known keys: {', '.join(known)})", node=(key,), at_key=True)
    return data


class Section(BaseModel):
    """A mapping of the file: known keys only; ``required`` names what must be there, and why;
    ``refused`` names keys that look right but have no meaning here, and why."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    required: ClassVar[dict[str, str]] = {}
    refused: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, data: Any) -> Any:
        known_keys(data, tuple(cls.model_fields), cls.refused)
        for key, message in cls.required.items():
            if key not in data:
                raise problem(message)
        return data


Built = TypeVar("Built")


def section(kind: type[object], checks: Mapping[str, Callable[..., Any]]) -> type[Section]:
    """The schema of a mapping whose keys are the fields of the frozen dataclass ``kind`` (names
    and defaults as ``kind`` declares them), each value checked by ``checks[key]``."""
    fields = {f.name: f for f in dataclasses.fields(kind)}  # type: ignore[arg-type]
    if set(fields) != set(checks):
        raise TypeError(f"{kind.__name__}'s keys {sorted(fields)} need one check each, got {sorted(checks)}")
    return create_model(  # type: ignore[call-overload,no-any-return]
        f"{kind.__name__}Section",
        __base__=Section,
        **{key: (Annotated[Any, BeforeValidator(checks[key])], fields[key].default) for key in fields},
    )


def held(build: Callable[[Any, Path], Built], model: type[Section]) -> GetPydanticSchema:
    """A field checked as ``model`` and held as the domain value ``build`` makes of it (with the
    folder the file's paths are relative to, the ``base`` of :func:`validate`)."""

    def value(checked: Section, info: core_schema.ValidationInfo) -> Built:
        return build(checked, (info.context or {}).get("base") or Path.cwd())

    return GetPydanticSchema(
        lambda _type, handler: core_schema.with_info_after_validator_function(value, handler(model))
    )


def given(kind: Callable[..., Built]) -> Callable[[Section, Path], Built]:
    """A builder of ``kind`` from the keys the file gives (the others keep ``kind``'s defaults)."""
    return lambda checked, _base: kind(**{key: getattr(checked, key) for key in checked.model_fields_set})


def command_text(value: Any) -> str:
    """A command line as a file gives it: text whose words parse as a bot command."""
    command = checks.text(value)
    try:
        BotCommand.parse(command)
    except ValueError as e:
        raise problem(str(e)) from None
    return command


def _transport(value: Any) -> Transport:
    text = checks.text(value)
    if text not in tuple(Transport):
        raise problem(
            f"{text!r} is not a transport; use one of {', '.join(Transport)} "
            "(tcp: a loopback TCP address, for stacks that cannot dial a Unix socket)"
        )
    return Transport(text)


class EntrantFile(Section):
    required: ClassVar[dict[str, str]] = {"name": "the key 'name' is missing"}

    name: Annotated[str, BeforeValidator(checks.name)]
    command: Annotated[str | None, BeforeValidator(command_text)] = None
    remote: Annotated[bool, BeforeValidator(checks.flag)] = False
    transport: Annotated[Transport, BeforeValidator(_transport)] = Transport.UNIX

    @model_validator(mode="after")
    def _command_or_remote(self) -> EntrantFile:
        if self.remote and self.command is not None:
            raise problem("a remote entrant has no command: it connects by itself", node=("command",), at_key=True)
        if not self.remote and self.command is None:
            raise problem("the key 'command' is missing (or say 'remote: true' for a bot that connects by itself)")
        return self


def entrant_config(file: EntrantFile, base: Path) -> EntrantConfig:
    """The entrant ``file`` describes, its bot run in the file's folder ``base``."""
    launch = None if file.command is None else launch_command(file.command)
    return EntrantConfig(file.name, file.command, launch, str(base), file.remote, transport=file.transport)


def _seconds(value: Any, info: ValidationInfo) -> float:
    seconds = checks.seconds(value)
    why = seconds_problem(str(info.field_name), seconds)
    if why:
        raise problem(why)
    return seconds


TIME_CONTROL = section(TimeControl, dict.fromkeys(("per_decision", "reserve", "connect", "match_limit"), _seconds))
FAULTS = section(FaultPolicy, {"max_strikes": checks.whole(1, MAX_STRIKES)})


SIZE_KEYS = ("memory", "file_size", "output")


def shown_size(value: int) -> str:
    """A number of bytes as the file would write it: 2 GiB, 512 KiB, 100."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if value >= 1 << shift and value % (1 << shift) == 0:
            return f"{value >> shift} {unit}"
    return str(value)


def _shown(key: str, value: int) -> str:
    return shown_size(value) if key in SIZE_KEYS else str(value)


def _limit(value: Any, info: ValidationInfo) -> int | None:
    """A limit: a whole number or a size within the limit's bounds, or 'unlimited' (None)."""
    key = str(info.field_name)
    if value == UNLIMITED and key != "output":
        return None
    unlimited = "" if key == "output" else " or 'unlimited'"
    if key in SIZE_KEYS:
        number = checks.size(value, unlimited)
    else:
        what = "a whole number of CPU seconds" if key == "cpu" else "a whole number"
        if isinstance(value, bool) or not isinstance(value, (int, LongNumber)):
            raise problem(f"expected {what}{unlimited}, got {describe(value)}")
        number = checks.whole()(value)
    if number > LIMIT_MAXIMUMS[key]:
        raise problem(f"must be at most {_shown(key, LIMIT_MAXIMUMS[key])}, got {value}")
    if number < LIMIT_MINIMUMS[key]:
        unitless = isinstance(value, int) and key in ("memory", "file_size")
        hint = "; sizes are in bytes unless a unit is given, e.g. 2GiB" if unitless else ""
        raise problem(f"must be at least {_shown(key, LIMIT_MINIMUMS[key])}, got {value}{hint}")
    return number


def _user(value: Any) -> str:
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if not text or (isinstance(value, int) and not text.isdigit()):
        raise problem(f"expected a user name or a numeric user id, got {describe(value)}")
    return text


LIMITS = section(Limits, {**dict.fromkeys(LIMIT_MAXIMUMS, _limit), "user": _user})


def _out_of_range(value: Any, loc: Loc = ()) -> tuple[Loc, str] | None:
    """The first whole number in ``value`` beyond what any rule takes, and why."""
    if isinstance(value, LongNumber) or (isinstance(value, int) and not -MAX_INT <= value <= MAX_INT):
        return loc, f"must be from {-MAX_INT} to {MAX_INT}, got {value}"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if found := _out_of_range(item, (*loc, key)):
            return found
    return None


def _rules(value: Any) -> Ruleset:
    if isinstance(value, str):
        try:
            return make_ruleset(value)
        except BarbuError as e:
            raise problem(str(e)) from None
    if not isinstance(value, dict):
        raise problem(f"expected a preset name or a mapping (preset and switches), got {describe(value)}")
    known_keys(value, ("preset", *SWITCHES))
    preset = "standard"
    if "preset" in value:
        if not isinstance(value["preset"], str):
            raise problem(f"expected text, got {describe(value['preset'])}", node=("preset",))
        preset = value["preset"]
        try:
            make_ruleset(preset)
        except BarbuError as e:
            raise problem(str(e), node=("preset",)) from None
    overrides = {key: switch for key, switch in value.items() if key != "preset"}
    for key, switch in overrides.items():
        if found := _out_of_range(switch, (key,)):
            raise problem(found[1], node=found[0], where=(key,))
        try:
            make_ruleset(preset, {key: switch})
        except BarbuError as e:
            raise problem(str(e), node=(key,)) from None
    return make_ruleset(preset, overrides)


def _format(value: Any) -> str:
    text = checks.text(value)
    if text not in file_formats():
        raise problem(f"{text!r} is not a format; use one of {', '.join(file_formats())}")
    return text


def _isolation(value: Any) -> Isolation:
    text = checks.text(value)
    if text not in tuple(Isolation):
        raise problem(f"{text!r} is not an isolation; use one of {', '.join(Isolation)}")
    return Isolation(text)


def _rating(value: Any) -> str:
    text = checks.text(value)
    if text not in RATINGS:
        raise problem(
            f"{text!r} is not a rating; use one of {', '.join(RATINGS)} (trueskill: TrueSkill's μ, "
            "from places; margins: least squares on score margins, opponents adjusted for)"
        )
    return text


def _parallelism(value: Any) -> int | None:
    return None if value == "auto" else checks.whole(1, MAX_PARALLELISM)(value)


def not_empty(what: str) -> BeforeValidator:
    def check(value: Any) -> str:
        if not checks.text(value).strip():
            raise problem(what)
        return str(value)

    return BeforeValidator(check)


def _cluster(value: Any) -> str:
    address = checks.text(value).strip()
    if why := checks.cluster_address_problem(address):
        raise problem(why)
    return address


def listen_address(what: str, example: str) -> BeforeValidator:
    """A check of ``HOST:PORT`` where ``what`` listens (port 0: any free port)."""

    def check(value: Any) -> str:
        address = checks.text(value).strip()
        if host_port(address) is None:
            raise problem(
                f"expected HOST:PORT where {what} listens, e.g. {example} or 127.0.0.1:0 (port 0: any free port), "
                f"got {printable(address)!r}"
            )
        return address

    return BeforeValidator(check)


class TlsFile(Section):
    required: ClassVar[dict[str, str]] = {
        "cert": "the key 'cert' is missing: the lobby's certificate (a PEM file)",
        "key": "the key 'key' is missing: the certificate's private key (a PEM file)",
    }

    cert: Annotated[str, not_empty("the file name is empty")]
    key: Annotated[str, not_empty("the file name is empty")]


class LobbyFile(Section):
    required: ClassVar[dict[str, str]] = {
        "listen": "the key 'listen' is missing: where the lobby listens, HOST:PORT (e.g. 0.0.0.0:7400)"
    }

    listen: Annotated[str, listen_address("the lobby", "0.0.0.0:7400")]
    tls: TlsFile | None = None

    @model_validator(mode="after")
    def _tls_off_loopback(self) -> LobbyFile:
        host, _ = host_port(self.listen) or ("", 0)
        if self.tls is None and not is_loopback(host):
            raise problem(
                f"a lobby listening on {host} needs TLS: add tls: {{cert: FILE, key: FILE}} (only a loopback "
                "address, 127.0.0.1, ::1 or localhost, may go without)",
                node=("listen",),
                where=("tls",),
            )
        return self


def lobby_settings(file: LobbyFile, base: Path) -> LobbySettings:
    """Where the lobby listens, its TLS files found from the file's folder ``base``."""
    if file.tls is None:
        return LobbySettings(file.listen)
    return LobbySettings(file.listen, file_path(file.tls.cert, base), file_path(file.tls.key, base))


def file_path(text: str, base: Path) -> Path:
    """A path written in a file: relative to the file's folder ``base`` unless absolute (``~`` expanded)."""
    path = Path(os.path.expanduser(text))
    if path.is_absolute():
        return path
    joined = base / path
    tidy = Path(os.path.normpath(joined))  # tournaments/../logs is logs, unless a symbolic link says otherwise
    return tidy if ".." not in path.parts or tidy.resolve() == joined.resolve() else joined


def _entrant_list(value: Any) -> Any:
    if not isinstance(value, list):
        raise problem(f"expected a list of entrants (each a name and a command), got {describe(value)}")
    return value


class SharedFile(Section):
    """The keys a tournament file and an arena file share: the same names, forms and meanings,
    so that entrants, rules and limits paste from one into the other unchanged."""

    name: Annotated[str | None, BeforeValidator(checks.name)] = None
    description: Annotated[str, BeforeValidator(checks.text)] = ""
    entrants: Annotated[
        tuple[Annotated[EntrantConfig, held(entrant_config, EntrantFile)], ...], BeforeValidator(_entrant_list)
    ] = ()
    rules: Annotated[Ruleset | None, BeforeValidator(_rules)] = None
    seed: Annotated[int, BeforeValidator(checks.whole(minimum=0))] = 0
    time_control: Annotated[TimeControl, held(given(TimeControl), TIME_CONTROL)] = TimeControl()
    faults: Annotated[FaultPolicy, held(given(FaultPolicy), FAULTS)] = FaultPolicy()
    parallelism: Annotated[int | None, BeforeValidator(_parallelism)] = None
    database: Annotated[str | None, not_empty("the database name is empty: give an SQLite file or a database URL")] = (
        None
    )
    log_folder: Annotated[str | None, not_empty("the folder name is empty")] = None
    limits: Annotated[Limits, held(given(Limits), LIMITS)] = Limits()
    isolation: Annotated[Isolation | None, BeforeValidator(_isolation)] = None
    cluster: Annotated[str | None, BeforeValidator(_cluster)] = None
    lobby: Annotated[LobbySettings | None, held(lobby_settings, LobbyFile)] = None
    remote_wait: Annotated[float, BeforeValidator(_seconds)] = DEFAULT_REMOTE_WAIT
    rating: Annotated[str, BeforeValidator(_rating)] = RATINGS[0]

    @field_validator("entrants")
    @classmethod
    def _unique_names(cls, entrants: tuple[EntrantConfig, ...]) -> tuple[EntrantConfig, ...]:
        seen: dict[str, int] = {}
        for i, entrant in enumerate(entrants):
            if entrant.name in seen:
                raise problem(
                    f"{entrant.name!r} is already the name of entrants[{seen[entrant.name]}]", node=(i, "name")
                )
            seen[entrant.name] = i
        return entrants

    @model_validator(mode="after")
    def _remote_needs_lobby(self) -> SharedFile:
        remote = next((i for i, e in enumerate(self.entrants) if e.remote), None)
        if remote is not None and self.lobby is None:
            raise problem(
                f"{self.entrants[remote].name!r} is a remote entrant: it connects through the lobby, so add a "
                "top-level lobby: {listen: HOST:PORT, tls: {cert: FILE, key: FILE}}",
                node=("entrants", remote, "remote"),
                at_key=True,
            )
        return self


class TournamentFile(SharedFile):
    """The whole file (docs/tournaments.md describes every key)."""

    required: ClassVar[dict[str, str]] = {
        "entrants": "the key 'entrants' is missing: list at least 2 bots, each with a name and a command"
    }

    format: Annotated[str, BeforeValidator(_format)] = "round_robin"
    challenger: Annotated[str | None, BeforeValidator(checks.text)] = None
    copies: Annotated[bool, BeforeValidator(checks.flag)] = True
    rounds: Annotated[int, BeforeValidator(checks.whole(minimum=1))] = 1
    deals: Annotated[str | None, BeforeValidator(checks.text)] = None
    standings_every: Annotated[int, BeforeValidator(checks.whole(minimum=0))] = 0

    @model_validator(mode="after")
    def _fits_together(self) -> TournamentFile:
        names = [e.name for e in self.entrants]
        count, fmt = len(names), self.format
        if count < 2:
            raise problem(f"a tournament needs at least 2 entrants, got {count}", node=("entrants",), at_key=True)
        found = format_of(fmt).check(names, self.challenger, self.copies)
        if found is not None:
            where = (found.where,) if found.where else None
            raise problem(found.message.replace("{format}", fmt), node=(found.key,), where=where, at_key=found.at_key)
        per_round = format_of(fmt).count(count, 1)
        if per_round * self.rounds > MAX_MATCHES:
            at_rounds = "rounds" in self.model_fields_set and per_round <= MAX_MATCHES
            raise problem(
                f"{self.rounds} round(s) of {per_round} matches ({count} entrants, {fmt}) make "
                f"{per_round * self.rounds} matches; a tournament has at most {MAX_MATCHES}",
                node=("rounds",) if at_rounds else ("entrants",),
                at_key=not at_rounds,
            )
        return self


FileT = TypeVar("FileT", bound=Section)


def validate(data: Any, lines: Lines, model: type[FileT], base: Path) -> FileT:
    """The file's values as a ``model`` (a :class:`TournamentFile`, an arena's file), its paths
    relative to the file's folder ``base``; its first mistake as one ConfigError."""
    try:
        return model.model_validate(data, context={"base": base})
    except ValidationError as e:
        raise config_error(e, lines) from None


def config_error(e: ValidationError, lines: Lines) -> ConfigError:
    error = e.errors(include_url=False)[0]
    loc: Loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    if error["type"] != "config":  # a check pydantic made itself (none is expected): its own words
        return lines.error(loc, printable(error["msg"]))
    node = (*loc, *ctx["node"])
    where = None if ctx["where"] is None else (*loc, *ctx["where"])
    return lines.error(node, ctx["message"], where=where, at_key=ctx["at_key"])
