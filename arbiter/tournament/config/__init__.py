"""Tournament files: read a YAML file, validate it, and check it against this machine.

Three steps, each its own module: :mod:`.yamltree` reads the YAML keeping every value's line;
:mod:`.schema` (pydantic models) checks what the file says and :func:`parse_config` builds the
:class:`TournamentConfig`, reading the deal file it names (:mod:`.deals`); then
:func:`resolve_environment` (:mod:`.environment`) checks programs, users, folders and the sandbox
here, and chooses the isolation when the file chose none. Every mistake is one
:class:`~arbiter.errors.ConfigError` naming the file, the line and the key, e.g.
``league.yaml:12: entrants[2].command: no such file: bots/x.py``. Paths written in the file (bot
scripts, the deal file, the log folder, an SQLite database) resolve against the file's folder.
docs/tournaments.md describes every key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from barbu.rules import make_ruleset
from pydantic import ValidationError

from arbiter.errors import ConfigError
from arbiter.files import read_text
from arbiter.process.limits import Limits
from arbiter.storage.dburl import without_password
from arbiter.text import printable
from arbiter.tournament.config.checks import NAME_RE, cluster_address_problem
from arbiter.tournament.config.deals import read_deals
from arbiter.tournament.config.environment import bot_command, resolve_environment
from arbiter.tournament.config.model import (
    DEFAULT_LOG_ROOT,
    EntrantConfig,
    LobbySettings,
    TournamentConfig,
)
from arbiter.tournament.config.schema import LIMITS, SharedFile, TournamentFile, file_path, given, validate
from arbiter.tournament.config.yamltree import Lines, dotted, read_tree

MAX_FILE_BYTES = 1 << 20  # a tournament file
TOP_KEYS = tuple(TournamentFile.model_fields)
LIMIT_KEYS = tuple(LIMITS.model_fields)


def load_config(path: str | os.PathLike[str], *, check_commands: bool = True) -> TournamentConfig:
    """Read and validate a tournament file; raises ConfigError naming file, line and key.
    ``check_commands``: then check it against this machine (:func:`resolve_environment`)."""
    path = Path(path)
    text = read_file(path, "tournament file")
    config = parse_config(text, display=printable(str(path)), base_dir=path.resolve().parent, check_commands=False)
    config = override(config, path=path)
    return resolve_environment(config) if check_commands else config


def read_file(path: Path, kind: str) -> str:
    """The text of the ``kind`` of file at ``path`` (at most :data:`MAX_FILE_BYTES`)."""
    if not str(path).strip() or str(path) == ".":
        raise ConfigError(f"the {kind} name is empty")
    return read_text(path, MAX_FILE_BYTES, kind)


def parse_config(
    text: str, *, display: str = "tournament.yaml", base_dir: Path | None = None, check_commands: bool = True
) -> TournamentConfig:
    """The tournament file ``text`` as a config (``check_commands``: :func:`resolve_environment` too)."""
    base = (base_dir or Path.cwd()).resolve()
    data, lines = read_tree(text, display)
    config = _build(validate(data, lines, TournamentFile, base), lines, text, base)
    return resolve_environment(config) if check_commands else config


def _build(file: TournamentFile, lines: Lines, text: str, base: Path) -> TournamentConfig:
    """The config the validated ``file`` describes (paths resolved against ``base``)."""
    deals = deals_file = None
    if file.deals is not None:
        deals_path = file_path(file.deals, base)
        deals_per_match = (file.rules or make_ruleset("standard")).deals_per_match
        try:
            deals = read_deals(deals_path, deals_per_match)
        except ConfigError as e:
            raise lines.error(("deals",), str(e)) from None
        deals_file = str(deals_path)
    return build_config(
        file,
        lines,
        text,
        base,
        format=file.format,
        rounds=file.rounds,
        challenger=file.challenger,
        copies=file.copies,
        deals=deals,
        deals_file=deals_file,
        standings_every=file.standings_every,
    )


def build_config(
    file: SharedFile, lines: Lines, text: str, base: Path, *, kept: tuple[str, ...] = (), **own: Any
) -> TournamentConfig:
    """The config of the keys every file shares (paths resolved against ``base``), with the
    file's ``own`` fields (a tournament's format and rounds, say); ``kept``: more keys whose
    ``file:line`` later checks against this machine name (``config.where``)."""
    name = file.name if file.name is not None else Path(lines.display).stem
    kept = (
        "log_folder",
        "isolation",
        "limits.user",
        "lobby.listen",
        "lobby.tls.cert",
        "lobby.tls.key",
        *(f"entrants[{i}].command" for i in range(len(file.entrants))),
        *kept,
    )
    where = {key: lines.where(loc) for loc in lines.nodes if (key := dotted(loc)) in kept}
    return TournamentConfig(
        name=name,
        entrants=file.entrants,
        rules=file.rules if file.rules is not None else make_ruleset("standard"),
        seed=file.seed,
        time_control=file.time_control,
        fault_policy=file.faults,
        parallelism=file.parallelism,
        database=None if file.database is None else _database(file.database, base),
        log_folder=Path(DEFAULT_LOG_ROOT) / name if file.log_folder is None else file_path(file.log_folder, base),
        limits=file.limits,
        isolation=file.isolation,
        cluster=file.cluster,
        lobby=file.lobby,
        remote_wait=file.remote_wait,
        rating=file.rating,
        description=file.description,
        source=_kept_source(text, file.database, lines),
        where=where,
        **own,
    )


def limits_from(pairs: Sequence[str], option: str = "--limit") -> Limits:
    """Limits given as ``KEY=VALUE`` texts (``memory=2GiB``, ``cpu=600``, ``processes=unlimited``),
    the keys and values of a tournament file's ``limits:``, checked as the file's are; the keys not
    given keep their defaults. A ConfigError names the pair it cannot take."""
    values: dict[str, object] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not key or not value:
            raise ConfigError(f"{option} {printable(pair)}: expected KEY=VALUE, e.g. memory=2GiB")
        try:
            LIMITS.model_validate({key: int(value) if value.isdigit() else value})
        except ValidationError as e:
            error = e.errors(include_url=False)[0]
            message = (error.get("ctx") or {}).get("message") or error["msg"]
            raise ConfigError(f"{option} {printable(pair)}: {printable(str(message))}") from None
        values[key] = int(value) if value.isdigit() else value
    return given(Limits)(LIMITS.model_validate(values), Path.cwd())


def _database(text: str, base: Path) -> str:
    if "://" not in text:
        return str(file_path(text, base))
    if text.startswith("sqlite:///") and not text.startswith("sqlite:////"):
        rest = text[len("sqlite:///") :]
        if rest and not rest.startswith(":memory:"):
            return "sqlite:///" + str(file_path(rest, base))
    return text


def _kept_source(text: str, database: str | None, lines: Lines) -> str:
    """The file's text as the database keeps it: never with the database's password."""
    if database is None or "://" not in database or (hidden := without_password(database)) == database:
        return text
    node = lines.nodes[("database",)][1]
    return text[: node.start_mark.index] + json.dumps(hidden) + text[node.end_mark.index :]


def override(config: TournamentConfig, **changes: Any) -> TournamentConfig:
    """A copy with some fields replaced (tests, benchmarks)."""
    return replace(config, **changes)


__all__ = [
    "DEFAULT_LOG_ROOT", "EntrantConfig", "LIMIT_KEYS", "LobbySettings", "NAME_RE", "TOP_KEYS",
    "TournamentConfig", "bot_command", "build_config", "cluster_address_problem", "file_path",
    "load_config", "override", "parse_config", "read_file", "resolve_environment",
]  # fmt: skip
