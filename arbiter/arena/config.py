"""Arena files: what ``arbiter serve`` runs, read and checked as a tournament file is.

An arena file shares a tournament file's keys (``name``, ``entrants``, ``rules``,
``time_control``, ``limits``, ``isolation``, ``faults``, ``lobby``, ...: the tournament schema's
:class:`~arbiter.tournament.config.schema.SharedFile`), so entrants and rules paste from one into
the other unchanged, and adds the arena's own: ``matchmaking``, ``web``, ``proxies``, ``store``,
``uploads``, ``quotas``, ``free_space``, ``check``, ``drain_seconds`` and ``human_tables``. Its house entrants may be
none: submissions fill the ladder.
A tournament's keys that mean nothing to a ladder (``format``, ``rounds``, ...) are refused with
the reason. Every mistake is one :class:`~arbiter.errors.ConfigError` naming the file, the line
and the key. docs/arena.md ("The arena file") describes every key.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, model_validator

from arbiter.addresses import host_port
from arbiter.arena.ladder import FORMAT
from arbiter.arena.matchmaking import Matchmaking
from arbiter.errors import ConfigError
from arbiter.files import output_folder
from arbiter.text import printable
from arbiter.tournament.config import (
    TournamentConfig,
    build_config,
    checks,
    file_path,
    read_file,
    resolve_environment,
)
from arbiter.tournament.config.checks import problem
from arbiter.tournament.config.schema import (
    Section,
    SharedFile,
    given,
    held,
    listen_address,
    not_empty,
    section,
    shown_size,
    validate,
)
from arbiter.tournament.config.yamltree import read_tree

DEFAULT_WEB = "127.0.0.1:8080"
DEFAULT_STORE = "bundles"  # beside the arena file
DEFAULT_CHECK_TIME_LIMIT = 2.0
DEFAULT_DRAIN_SECONDS = 60.0
MAX_DRAIN_SECONDS = 86400.0
MAX_CHECK_TIME_LIMIT = 3600.0  # a tournament's per_decision is at most an hour too
# μ lives within some tens of points of 25: a window of 1000 already holds everyone.
MAX_WINDOW = 1000.0
# The window's half-width is window / U ** tail with U ≥ 2⁻⁵³ (random.random()): up to tail 10
# that stays finite (U ** 10 ≥ 2⁻⁵³⁰); far beyond, U ** tail underflows to 0.
MAX_TAIL = 10.0
MAX_REMATCH = 1000.0  # places of μ: far more than any field's length already forbids every avoidable rematch
ANY_ADDRESS = {"0.0.0.0", "::"}  # a server listening there takes the port on every address
MIN_UPLOAD_BYTES = 1 << 10
MAX_ARCHIVE_BYTES = 1 << 30  # an upload is held in memory while it is checked
MAX_UNPACKED_BYTES = 64 << 30
MAX_UPLOAD_FILES = 1_000_000
MAX_STORE_BYTES = 64 << 40
MAX_UPLOADS_PER_HOUR = 1_000_000
MAX_QUEUED = 1000
MAX_KEEP_SECONDS = 7 * 86400.0
DEFAULT_FREE_SPACE = 1 << 30
DEFAULT_HUMAN_TABLES = 2
MAX_HUMAN_TABLES = 100


@dataclass(frozen=True)
class UploadLimits:
    """What one submission may hold (docs/security.md): checked while the archive is read."""

    archive: int = 10 << 20  # bytes of the uploaded .tar.gz
    unpacked: int = 100 << 20  # bytes of all its files once unpacked
    files: int = 2000  # members of the archive (files and folders)


@dataclass(frozen=True)
class Quotas:
    """What the arena's store and checker give each author (docs/arena.md, "Quotas"): on by
    default, so that one author can neither fill the disk nor keep the checker to itself."""

    author_store: int = 1 << 30  # bytes of files one author's submissions keep in the store
    store: int = 10 << 30  # bytes of files all submissions keep in the store
    uploads_per_hour: int = 10  # uploads per author in any hour
    queued: int = 1  # submissions per author waiting for their check (or in it)
    keep_seconds: float = 3600.0  # how long a rejected or retired version's files stay in the store


@dataclass(frozen=True)
class ArenaConfig:
    """An arena file, validated. ``tournament`` holds the keys a tournament file shares, as the
    ladder's tournament row (format ``arena``, the house entrants) records them."""

    tournament: TournamentConfig
    matchmaking: Matchmaking = Matchmaking()
    web: str = DEFAULT_WEB  # HOST:PORT where the API listens (port 0: any free port)
    proxies: tuple[str, ...] = ()  # addresses or networks whose X-Forwarded-For the API believes
    store: Path = Path(DEFAULT_STORE)  # the bundle store: submitted bots, content-addressed
    uploads: UploadLimits = UploadLimits()
    quotas: Quotas = Quotas()
    free_space: int = DEFAULT_FREE_SPACE  # the ladder pauses while a disk of the arena has less free
    check_time_limit: float = DEFAULT_CHECK_TIME_LIMIT  # check-bot's per-decision limit, seconds
    drain_seconds: float = DEFAULT_DRAIN_SECONDS  # how long matches in flight may finish on a stop
    seed: int = 0  # every set's deals derive from it (arbiter.arena.matchmaking.set_seed)
    human_tables: int = DEFAULT_HUMAN_TABLES  # people's tables at once (/play, arbiter.arena.play); 0: none
    path: Path | None = None
    source: str = ""  # the file's text (a database password hidden), as the database keeps it

    @property
    def name(self) -> str:
        return self.tournament.name


# ---- the file's schema -------------------------------------------------------------------------
def _bytes(minimum: int, maximum: int) -> Callable[[Any], int]:
    """A check of a size in bytes (``10 MiB``, ``1048576``) from ``minimum`` to ``maximum``."""

    def check(value: Any) -> int:
        number = checks.size(value)
        if number > maximum:
            raise problem(f"must be at most {shown_size(maximum)}, got {value}")
        if number < minimum:
            raise problem(f"must be at least {shown_size(minimum)}, got {value}")
        return number

    return check


def _proxies(value: Any) -> list[str]:
    """A list of IP addresses or networks (``10.0.0.0/8``), each as ``ipaddress`` writes it."""
    if not isinstance(value, list):
        raise problem("expected a list of IP addresses or networks (e.g. [127.0.0.1, 10.0.0.0/8])")
    out = []
    for item in value:
        try:
            out.append(str(ipaddress.ip_network(checks.text(item).strip(), strict=False)))
        except ValueError:
            raise problem(
                f"{item!r} is not an IP address or network: name the reverse proxies in front of the API "
                "(trusting any address would let every client choose the address its failed tokens count under)"
            ) from None
    return out


MATCHMAKING = section(
    Matchmaking,
    {
        "provisional": checks.whole(minimum=0),
        "min_share": checks.number(0.0, 1.0),
        "window": checks.number(0.0, MAX_WINDOW, above=True),
        "tail": checks.number(0.0, MAX_TAIL, above=True),
        "rematch": checks.number(0.0, MAX_REMATCH),
    },
)
UPLOADS = section(
    UploadLimits,
    {
        "archive": _bytes(MIN_UPLOAD_BYTES, MAX_ARCHIVE_BYTES),
        "unpacked": _bytes(MIN_UPLOAD_BYTES, MAX_UNPACKED_BYTES),
        "files": checks.whole(1, MAX_UPLOAD_FILES),
    },
)
QUOTAS = section(
    Quotas,
    {
        "author_store": _bytes(MIN_UPLOAD_BYTES, MAX_STORE_BYTES),
        "store": _bytes(MIN_UPLOAD_BYTES, MAX_STORE_BYTES),
        "uploads_per_hour": checks.whole(1, MAX_UPLOADS_PER_HOUR),
        "queued": checks.whole(1, MAX_QUEUED),
        "keep_seconds": checks.number(0.0, MAX_KEEP_SECONDS),
    },
)


class CheckFile(Section):
    time_limit: Annotated[float, BeforeValidator(checks.number(0.0, MAX_CHECK_TIME_LIMIT, above=True))] = (
        DEFAULT_CHECK_TIME_LIMIT
    )


class ArenaFile(SharedFile):
    """The whole file: the tournament file's shared keys and the arena's own."""

    refused: ClassVar[dict[str, str]] = {
        "rounds": "an arena has no rounds: it plays until stopped",
        "format": "an arena has no format: it plays duplicate sets that its matchmaking chooses (docs/arena.md)",
        "challenger": "an arena has no challenger: its matchmaking seats every entrant against the field",
        "deals": "an arena has no deal file: every set deals afresh, so no bot ever sees a deal twice",
        "copies": "an arena has no 'copies' key: with fewer than 4 entrants, copies always fill a table",
        "standings_every": "an arena has no 'standings_every' key: its leaderboard is live (GET /api/leaderboard)",
    }

    matchmaking: Annotated[Matchmaking, held(given(Matchmaking), MATCHMAKING)] = Matchmaking()
    web: Annotated[str, listen_address("the arena's API", "0.0.0.0:8080")] = DEFAULT_WEB
    proxies: Annotated[list[str], BeforeValidator(_proxies)] = []
    store: Annotated[str, not_empty("the folder name is empty")] = DEFAULT_STORE
    uploads: Annotated[UploadLimits, held(given(UploadLimits), UPLOADS)] = UploadLimits()
    quotas: Annotated[Quotas, held(given(Quotas), QUOTAS)] = Quotas()
    free_space: Annotated[int, BeforeValidator(_bytes(0, MAX_STORE_BYTES))] = DEFAULT_FREE_SPACE
    check: CheckFile = CheckFile()
    drain_seconds: Annotated[float, BeforeValidator(checks.number(0.0, MAX_DRAIN_SECONDS))] = DEFAULT_DRAIN_SECONDS
    human_tables: Annotated[int, BeforeValidator(checks.whole(0, MAX_HUMAN_TABLES))] = DEFAULT_HUMAN_TABLES

    @model_validator(mode="after")
    def _web_apart_from_lobby(self) -> ArenaFile:
        web, lobby = host_port(self.web), None if self.lobby is None else host_port(self.lobby.listen)
        if web is None or lobby is None or web[1] != lobby[1] or web[1] == 0:
            return self
        if web[0] == lobby[0] or {web[0], lobby[0]} & ANY_ADDRESS:
            raise problem(
                f"the API and the lobby cannot both listen on {self.web}: give one of them another port",
                node=("web",),
            )
        return self


# ---- reading a file ------------------------------------------------------------------------------
def load_arena(path: str | os.PathLike[str], *, check_commands: bool = True) -> ArenaConfig:
    """Read and validate an arena file; raises ConfigError naming file, line and key.
    ``check_commands``: then check it against this machine (:func:`check_environment`)."""
    path = Path(path)
    text = read_file(path, "arena file")
    config = parse_arena(text, display=printable(str(path)), base_dir=path.resolve().parent, check_commands=False)
    config = replace(config, tournament=replace(config.tournament, path=path), path=path)
    return check_environment(config) if check_commands else config


def parse_arena(
    text: str, *, display: str = "arena.yaml", base_dir: Path | None = None, check_commands: bool = True
) -> ArenaConfig:
    """The arena file ``text`` as a config (``check_commands``: :func:`check_environment` too)."""
    base = (base_dir or Path.cwd()).resolve()
    data, lines = read_tree(text, display, kind="arena file", needs=None)
    file = validate(data, lines, ArenaFile, base)
    tournament = build_config(
        file, lines, text, base, kept=("store",), format=FORMAT.name, provisional=file.matchmaking.provisional
    )
    config = ArenaConfig(
        tournament=tournament,
        matchmaking=file.matchmaking,
        web=file.web,
        proxies=tuple(file.proxies),
        store=file_path(file.store, base),
        uploads=file.uploads,
        quotas=file.quotas,
        free_space=file.free_space,
        check_time_limit=file.check.time_limit,
        drain_seconds=file.drain_seconds,
        seed=file.seed,
        human_tables=file.human_tables,
        source=tournament.source,
    )
    return check_environment(config) if check_commands else config


def check_environment(config: ArenaConfig) -> ArenaConfig:
    """``config`` once this machine can run it: the tournament file's checks
    (:func:`~arbiter.tournament.config.resolve_environment`: programs, lobby files, log folder,
    user, sandbox) and the bundle store (a folder or a new path)."""
    tournament = resolve_environment(config.tournament)
    try:
        output_folder(config.store, "store")
    except ConfigError as e:
        where = tournament.where.get("store", printable(str(config.path or "")))
        raise ConfigError(f"{where}: {e}") from None
    return replace(config, tournament=tournament)
