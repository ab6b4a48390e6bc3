"""Tournament files: load, validate, and turn a YAML file into a :class:`TournamentConfig`.

Every mistake is reported as one :class:`~arbiter.errors.ConfigError` naming the file, the line
and the key, e.g. ``league.yaml:12: entrants[2].command: no such file: bots/x.py``. The file is
composed with PyYAML's node API (not loaded straight into dicts) so that every value keeps its
line number. Paths written in the file (bot scripts, the deal file, the log folder, an SQLite
database) resolve against the file's folder. docs/tournaments.md describes every key.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from barbu.rules import BarbuError, Ruleset, make_ruleset
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from arbiter.errors import ConfigError
from arbiter.files import output_folder, read_text
from arbiter.process.command import with_own_python
from arbiter.process.limits import Limits
from arbiter.process.sandbox import ISOLATIONS, Isolation, bubblewrap_problem
from arbiter.process.users import resolve_user
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.logfile import line_problem
from arbiter.referee.timecontrol import MAX_SECONDS, TimeControl
from arbiter.text import printable
from arbiter.tournament.schedule import MAX_MATCHES, schedule_size

FORMATS = ("round_robin", "gauntlet", "duplicate")
TOP_KEYS = (
    "name", "description", "entrants", "rules", "format", "challenger", "copies", "rounds", "seed",
    "deals", "time_control", "faults", "parallelism", "database", "log_folder", "standings_every",
    "limits", "isolation", "cluster",
)  # fmt: skip
ENTRANT_KEYS = ("name", "command", "remote")
TIME_KEYS = ("per_decision", "reserve", "connect", "match_limit")
FAULT_KEYS = ("max_strikes",)
LIMIT_KEYS = ("memory", "cpu", "processes", "open_files", "file_size", "output", "user")
SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB)?\s*$")
SIZE_UNITS = {None: 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
              "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}  # fmt: skip
# The smallest sensible values: below them no bot starts (or a unit was forgotten).
LIMIT_MINIMUMS = {"memory": 16 << 20, "file_size": 1 << 10, "cpu": 1, "processes": 4, "open_files": 16, "output": 0}
# The largest: what the kernel accepts (open files, processes) and what any machine has.
LIMIT_MAXIMUMS = {
    "memory": 1 << 50,
    "file_size": 1 << 50,
    "output": 1 << 40,
    "cpu": 10**7,
    "processes": 1 << 22,
    "open_files": 1 << 20,
}
MAX_INT = 2**63 - 1  # the largest whole number the results database holds (seeds, counts)
MAX_PARALLELISM = 1024
MAX_STRIKES = 1000
MAX_FILE_BYTES = 1 << 20  # a tournament file
MAX_DEAL_BYTES = 64 << 20  # a deal file
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
# Interpreters whose first non-option argument is a script file that must exist.
INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|bash|sh|Rscript|lua)$")
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".sh", ".jar", ".lua", ".R")

DEFAULT_LOG_ROOT = "logs"  # relative to the current directory when the file names no log_folder


@dataclass(frozen=True)
class EntrantConfig:
    name: str
    command: str | None  # as written in the file (stored in the database)
    launch: str | None  # the command actually started: ``python`` is the arbiter's own interpreter
    cwd: str  # bots run in the tournament file's folder
    remote: bool = False
    line: int = 0


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    entrants: tuple[EntrantConfig, ...]
    rules: Ruleset
    format: str = "round_robin"
    rounds: int = 1
    seed: int = 0
    challenger: str | None = None
    copies: bool = True
    deals: tuple[tuple[int, int, int, int], ...] | None = None  # hands from the deal file
    deals_file: str | None = None
    time_control: TimeControl = TimeControl()
    fault_policy: FaultPolicy = FaultPolicy()
    parallelism: int | None = None  # None: as many as cores
    database: str | None = None  # a URL or an SQLite path; None: the default database
    log_folder: Path = Path(DEFAULT_LOG_ROOT)
    standings_every: int = 0  # 0: every max(4, total // 8) matches
    limits: Limits = Limits()  # resource limits of every launched bot (docs/security.md)
    isolation: str = Isolation.NONE
    cluster: str | None = None  # a Dask scheduler address (tcp://HOST:PORT): play there (docs/cluster.md)
    description: str = ""
    path: Path | None = None
    source: str = ""  # the file's text, kept in the database

    @property
    def entrant_names(self) -> list[str]:
        return [e.name for e in self.entrants]

    def entrant(self, name: str) -> EntrantConfig:
        for e in self.entrants:
            if e.name == name:
                return e
        raise KeyError(name)

    def fingerprint(self, legacy: bool = False) -> str:
        """What fixes the games: a resumed run must have the same (``rounds`` may grow).

        ``legacy``: the fingerprint stored before it covered ``limits`` and ``isolation`` (a
        database written then is taken as having been played with the file's current ones)."""
        tc = self.time_control
        data = {
            "entrants": [[e.name, e.command, e.remote] for e in self.entrants],
            "rules": self.rules.to_json(),
            "format": self.format,
            "challenger": self.challenger,
            "copies": self.copies,
            "seed": self.seed,
            "deals": hashlib.sha256(json.dumps(self.deals).encode()).hexdigest() if self.deals else None,
            "time_control": [tc.per_decision, tc.reserve, tc.connect, tc.match_limit],
            "max_strikes": self.fault_policy.max_strikes,
        }
        if not legacy:
            data["limits"] = self.limits.to_json()
            data["isolation"] = str(self.isolation)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


# ---- loading -----------------------------------------------------------------------------
def load_config(path: str | os.PathLike[str], *, check_commands: bool = True) -> TournamentConfig:
    """Read and validate a tournament file; raises ConfigError naming file, line and key."""
    path = Path(path)
    display = printable(str(path))
    if not str(path).strip() or str(path) == ".":
        raise ConfigError("the tournament file name is empty")
    text = read_text(path, MAX_FILE_BYTES, "tournament file")
    config = parse_config(text, display=display, base_dir=path.resolve().parent, check_commands=check_commands)
    return override(config, path=path)


def parse_config(
    text: str, *, display: str = "tournament.yaml", base_dir: Path | None = None, check_commands: bool = True
) -> TournamentConfig:
    base_dir = (base_dir or Path.cwd()).resolve()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        if e.context_mark is not None and mark is not None and mark.line >= len(text.splitlines()):
            mark = e.context_mark  # the file ended inside something: point at where it began
        line = mark.line + 1 if mark else 1
        problem = e.problem or e.context or "not valid YAML"
        raise ConfigError(f"{display}:{line}: not valid YAML: {problem}") from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow
        line = text[: e.position].count("\n") + 1
        raise ConfigError(f"{display}:{line}: not valid YAML: character {e.character!r} is not allowed") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{display}: not valid YAML: {' '.join(str(e).split())}") from None
    except RecursionError:
        raise ConfigError(f"{display}: nested too deeply to be a tournament file") from None
    if root is None:
        raise ConfigError(f"{display}:1: the file is empty; it needs at least 'entrants'")
    _check_shape(root, display)
    return _Parser(display, base_dir, check_commands).tournament(root, text)


MAX_YAML_VALUES = 100_000  # values a file may expand to, YAML aliases counted at every use
MAX_YAML_DEPTH = 64


def _check_shape(root: Node, display: str) -> None:
    """Refuse, before anything is built from it, a document PyYAML would choke on: a value that
    contains itself (``&a [*a]``), aliases that multiply into millions of values (a "billion
    laughs"), or nesting deeper than any tournament file needs."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, int, bool]] = [(root, 0, False)]

    def children(node: Node) -> list[Node]:
        if isinstance(node, MappingNode):
            return [n for pair in node.value for n in pair]
        return list(node.value) if isinstance(node, SequenceNode) else []

    def fail(node: Node, message: str) -> ConfigError:
        return ConfigError(f"{display}:{node.start_mark.line + 1}: {message}")

    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children(node))
            if sizes[key] > MAX_YAML_VALUES:
                raise fail(
                    node,
                    f"this value expands to more than {MAX_YAML_VALUES} values (YAML aliases): not a tournament file",
                )
            continue
        if key in sizes:
            continue
        if depth > MAX_YAML_DEPTH:
            raise fail(node, f"nested more than {MAX_YAML_DEPTH} levels deep: not a tournament file")
        on_path.add(key)
        stack.append((node, depth, True))
        for child in children(node):
            if id(child) in on_path:
                raise fail(child, "a value that contains itself (a recursive YAML alias)")
            if id(child) not in sizes:
                stack.append((child, depth + 1, False))


class _Parser:
    def __init__(self, display: str, base_dir: Path, check_commands: bool):
        self.display = display
        self.base = base_dir
        self.check_commands = check_commands
        self.constructor = yaml.constructor.SafeConstructor()

    # -- errors and primitive types --
    def fail(self, node: Node, where: str, message: str) -> ConfigError:
        prefix = f"{where}: " if where else ""
        if node.start_mark is None:  # a command line option, not a file (bot_command)
            return ConfigError(f"{prefix}{message}")
        return ConfigError(f"{self.display}:{node.start_mark.line + 1}: {prefix}{message}")

    def mapping(self, node: Node, where: str, known: tuple[str, ...]) -> dict[str, tuple[Node, Node]]:
        """A mapping's entries by key, as (key node, value node); unknown or repeated keys fail."""
        if not isinstance(node, MappingNode):
            raise self.fail(node, where, f"expected a mapping of keys ({', '.join(known)}), got {_kind(node)}")
        out: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, ScalarNode) else None
            if not isinstance(key, str) or key_node.tag != "tag:yaml.org,2002:str":
                raise self.fail(key_node, where, f"keys must be names, got {_kind(key_node)}")
            full = f"{where}.{key}" if where else key
            if key in out:
                raise self.fail(key_node, full, "this key is given twice")
            if key not in known:
                hint = difflib.get_close_matches(key, known, n=1)
                did = f"; did you mean {hint[0]!r}?" if hint else ""
                raise self.fail(key_node, full, f"unknown key{did} (known keys: {', '.join(known)})")
            out[key] = (key_node, value_node)
        return out

    def value(self, node: Node) -> Any:
        return self.constructor.construct_object(node, deep=True)

    def string(self, node: Node, where: str) -> str:
        if not isinstance(node, ScalarNode) or node.tag != "tag:yaml.org,2002:str":
            raise self.fail(node, where, f"expected text, got {_kind(node)}")
        return node.value

    def integer(self, node: Node, where: str, minimum: int | None = None, maximum: int = MAX_INT) -> int:
        if not isinstance(node, ScalarNode) or node.tag != "tag:yaml.org,2002:int":
            raise self.fail(node, where, f"expected a whole number, got {_kind(node)}")
        if len(node.value) > 80:  # beyond any limit below (and Python's int parsing limit)
            raise self.fail(node, where, f"must be at most {maximum}, got a number of {len(node.value)} digits")
        number = self.value(node)
        if minimum is not None and number < minimum:
            raise self.fail(node, where, f"must be at least {minimum}, got {number}")
        if number > maximum:
            raise self.fail(node, where, f"must be at most {maximum}, got {number}")
        return number

    def number(self, node: Node, where: str) -> float:
        if not isinstance(node, ScalarNode) or node.tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
            raise self.fail(node, where, f"expected a number of seconds, got {_kind(node)}")
        if len(node.value) > 80:
            raise self.fail(node, where, "expected a number of seconds, got a number far too long")
        try:
            value = float(self.value(node))
        except (ValueError, OverflowError):
            value = math.inf
        if not math.isfinite(value):
            raise self.fail(node, where, f"must be a finite number of seconds, got {node.value}")
        return value

    def boolean(self, node: Node, where: str) -> bool:
        if not isinstance(node, ScalarNode) or node.tag != "tag:yaml.org,2002:bool":
            raise self.fail(node, where, f"expected true or false, got {_kind(node)}")
        return self.value(node)

    def path(self, text: str) -> Path:
        p = Path(os.path.expanduser(text))
        return p if p.is_absolute() else self.base / p

    # -- the file --
    def tournament(self, root: Node, text: str) -> TournamentConfig:
        top = self.mapping(root, "", TOP_KEYS)
        if "entrants" not in top:
            raise self.fail(
                root, "", "the key 'entrants' is missing: list at least 2 bots, each with a name and a command"
            )
        name = self.string(top["name"][1], "name") if "name" in top else Path(self.display).stem
        if "name" in top and not NAME_RE.match(name):
            raise self.fail(top["name"][1], "name", f"{name!r}: use letters, digits, '_', '-', '.', '+' (at most 64)")
        kw: dict[str, Any] = {"name": name, "source": text}
        if "description" in top:
            kw["description"] = self.string(top["description"][1], "description")
        kw["rules"] = self.rules(top["rules"][1]) if "rules" in top else make_ruleset("standard")
        if "format" in top:
            node = top["format"][1]
            fmt = self.string(node, "format")
            if fmt not in FORMATS:
                raise self.fail(node, "format", f"{fmt!r} is not a format; use one of {', '.join(FORMATS)}")
            kw["format"] = fmt
        fmt = kw.get("format", "round_robin")
        if "rounds" in top:
            kw["rounds"] = self.integer(top["rounds"][1], "rounds", minimum=1)
        if "seed" in top:
            kw["seed"] = self.integer(top["seed"][1], "seed", minimum=0)
        if "copies" in top:
            kw["copies"] = self.boolean(top["copies"][1], "copies")
        if "deals" in top:
            node = top["deals"][1]
            deals_path = self.path(self.string(node, "deals"))
            kw["deals"] = self.deal_file(node, deals_path, kw["rules"].deals_per_match)
            kw["deals_file"] = str(deals_path)
        if "time_control" in top:
            kw["time_control"] = self.time_control(top["time_control"][1])
        if "faults" in top:
            entries = self.mapping(top["faults"][1], "faults", FAULT_KEYS)
            if "max_strikes" in entries:
                kw["fault_policy"] = FaultPolicy(
                    self.integer(entries["max_strikes"][1], "faults.max_strikes", 1, maximum=MAX_STRIKES)
                )
        if "parallelism" in top:
            node = top["parallelism"][1]
            if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:str" and node.value == "auto":
                kw["parallelism"] = None
            else:
                kw["parallelism"] = self.integer(node, "parallelism", minimum=1, maximum=MAX_PARALLELISM)
        if "database" in top:
            node = top["database"][1]
            value = self.string(node, "database")
            if not value.strip():
                raise self.fail(node, "database", "the database name is empty: give an SQLite file or a database URL")
            kw["database"] = self.database(value, node)
            hidden = hide_password(value)
            if hidden != value:  # the file's text is kept in the database: never with a password
                kw["source"] = text[: node.start_mark.index] + json.dumps(hidden) + text[node.end_mark.index :]
        if "log_folder" in top:
            node = top["log_folder"][1]
            value = self.string(node, "log_folder")
            if not value.strip():
                raise self.fail(node, "log_folder", "the folder name is empty")
            kw["log_folder"] = self.path(value)
            try:
                output_folder(kw["log_folder"], "log_folder")  # a folder or a new path
            except ConfigError as e:
                raise self.fail(node, "", str(e)) from None
        else:
            kw["log_folder"] = Path(DEFAULT_LOG_ROOT) / name
        if "standings_every" in top:
            kw["standings_every"] = self.integer(top["standings_every"][1], "standings_every", minimum=0)
        if "limits" in top:
            kw["limits"] = self.limits(top["limits"][1])
        if "isolation" in top:
            kw["isolation"] = self.isolation(top["isolation"][1], kw.get("limits", Limits()))
        if "cluster" in top:
            node = top["cluster"][1]
            value = self.string(node, "cluster").strip()
            problem = cluster_address_problem(value)
            if problem:
                raise self.fail(node, "cluster", problem)
            kw["cluster"] = value

        entrants_key, entrants_node = top["entrants"]
        kw["entrants"] = entrants = self.entrants(entrants_node)
        copies = kw.get("copies", True)
        names = [e.name for e in entrants]
        if len(entrants) < 2:
            raise self.fail(entrants_key, "entrants", f"a tournament needs at least 2 entrants, got {len(entrants)}")
        if fmt == "gauntlet":
            if "challenger" not in top:
                raise self.fail(
                    top["format"][0], "challenger", "the gauntlet format needs a 'challenger': one entrant's name"
                )
            node = top["challenger"][1]
            challenger = self.string(node, "challenger")
            if challenger not in names:
                raise self.fail(node, "challenger", f"{challenger!r} is not an entrant (entrants: {', '.join(names)})")
            kw["challenger"] = challenger
            if len(entrants) < 4 and not copies:
                raise self.fail(
                    entrants_key, "entrants",
                    f"a gauntlet needs the challenger and at least 3 others when 'copies' is false, got {len(entrants)} entrants",
                )  # fmt: skip
        else:
            if "challenger" in top:
                raise self.fail(
                    top["challenger"][0], "challenger", f"only the gauntlet format has a challenger, not {fmt}"
                )
            if len(entrants) < 4 and not copies:
                raise self.fail(
                    entrants_key, "entrants",
                    f"the {fmt} format needs at least 4 entrants when 'copies' is false "
                    f"(copies of an entrant fill a table otherwise), got {len(entrants)}",
                )  # fmt: skip
        rounds = kw.get("rounds", 1)
        per_round = schedule_size(fmt, len(entrants), 1)
        if per_round * rounds > MAX_MATCHES:
            node = top["rounds"][1] if "rounds" in top and per_round <= MAX_MATCHES else entrants_key
            raise self.fail(
                node, "rounds" if node is not entrants_key else "entrants",
                f"{rounds} round(s) of {per_round} matches ({len(entrants)} entrants, {fmt}) make {per_round * rounds} "
                f"matches; a tournament has at most {MAX_MATCHES}",
            )  # fmt: skip
        return TournamentConfig(**kw)

    def rules(self, node: Node) -> Ruleset:
        if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:str":
            try:
                return make_ruleset(node.value)
            except BarbuError as e:
                raise self.fail(node, "rules", str(e)) from None
        if not isinstance(node, MappingNode):
            raise self.fail(
                node, "rules", f"expected a preset name or a mapping (preset and switches), got {_kind(node)}"
            )
        from barbu.rules import SWITCHES

        entries = self.mapping(node, "rules", ("preset", *SWITCHES))
        preset = "standard"
        if "preset" in entries:
            preset = self.string(entries["preset"][1], "rules.preset")
            try:
                make_ruleset(preset)
            except BarbuError as e:
                raise self.fail(entries["preset"][1], "rules.preset", str(e)) from None
        overrides = {}
        for key, (_, value_node) in entries.items():
            if key == "preset":
                continue
            value = self.value(value_node)
            try:
                make_ruleset(preset, {key: value})
            except BarbuError as e:
                raise self.fail(value_node, f"rules.{key}", str(e)) from None
            overrides[key] = value
        return make_ruleset(preset, overrides)

    def time_control(self, node: Node) -> TimeControl:
        entries = self.mapping(node, "time_control", TIME_KEYS)
        values = {}
        for key, (_, value_node) in entries.items():
            values[key] = self.number(value_node, f"time_control.{key}")
            if not values[key] > 0:
                raise self.fail(value_node, f"time_control.{key}", f"must be more than 0 seconds, got {values[key]:g}")
            if values[key] > MAX_SECONDS[key]:
                raise self.fail(
                    value_node,
                    f"time_control.{key}",
                    f"must be at most {MAX_SECONDS[key]:g} seconds, got {values[key]:g}",
                )
        try:
            return TimeControl(**values)
        except ValueError as e:
            raise self.fail(node, "time_control", str(e)) from None

    def limits(self, node: Node) -> Limits:
        entries = self.mapping(node, "limits", LIMIT_KEYS)
        values: dict[str, Any] = {}
        for key, (_, value_node) in entries.items():
            where = f"limits.{key}"
            if key == "user":
                values[key] = self.user(value_node, where)
                continue
            if (
                key != "output"
                and isinstance(value_node, ScalarNode)
                and value_node.tag == "tag:yaml.org,2002:str"
                and value_node.value == "unlimited"
            ):
                values[key] = None
                continue
            if key in ("memory", "file_size", "output"):
                value = self.size(value_node, where, allow_unlimited=key != "output")
            elif key == "cpu":
                value = self.limit_integer(value_node, where, "a whole number of CPU seconds")
            else:
                value = self.limit_integer(value_node, where, "a whole number")
            minimum = LIMIT_MINIMUMS[key]
            if value > LIMIT_MAXIMUMS[key]:
                most = LIMIT_MAXIMUMS[key]
                shown = f"{most >> 40} TiB" if key in ("memory", "file_size", "output") else str(most)
                raise self.fail(value_node, where, f"must be at most {shown}, got {value_node.value}")
            if value < minimum:
                shown = (
                    f"{minimum >> 20} MiB"
                    if key == "memory"
                    else f"{minimum >> 10} KiB"
                    if key == "file_size"
                    else str(minimum)
                )
                unitless = value_node.tag == "tag:yaml.org,2002:int"
                hint = (
                    "; sizes are in bytes unless a unit is given, e.g. 2GiB"
                    if key in ("memory", "file_size") and unitless
                    else ""
                )
                raise self.fail(value_node, where, f"must be at least {shown}, got {value_node.value}{hint}")
            values[key] = value
        return Limits(**values)

    def limit_integer(self, node: Node, where: str, what: str) -> int:
        if not isinstance(node, ScalarNode) or node.tag != "tag:yaml.org,2002:int":
            raise self.fail(node, where, f"expected {what} or 'unlimited', got {_kind(node)}")
        return self.integer(node, where)

    def size(self, node: Node, where: str, allow_unlimited: bool = True) -> int:
        """A number of bytes: a whole number, or text with a unit (512MiB, 2GiB, 1.5GB)."""
        unlimited = " or 'unlimited'" if allow_unlimited else ""
        if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:int":
            return self.integer(node, where)
        if isinstance(node, ScalarNode) and len(str(node.value)) > 80:
            raise self.fail(node, where, "expected a size in bytes, got a value far too long")
        match = (
            SIZE_RE.match(node.value) if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:str" else None
        )
        if match is None:
            raise self.fail(
                node, where, f"expected a size in bytes, e.g. 2GiB, 512MiB or 1048576{unlimited}, got {_kind(node)}"
            )
        return int(float(match.group(1)) * SIZE_UNITS[match.group(2)])

    def user(self, node: Node, where: str) -> str:
        if not isinstance(node, ScalarNode) or node.tag not in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int"):
            raise self.fail(node, where, f"expected a user name or a numeric user id, got {_kind(node)}")
        text = str(node.value).strip()
        if not text or (node.tag == "tag:yaml.org,2002:int" and not text.isdigit()):
            raise self.fail(node, where, f"expected a user name or a numeric user id, got {_kind(node)}")
        if self.check_commands:
            try:
                user = resolve_user(text)
            except ConfigError as e:
                raise self.fail(node, where, str(e)) from None
            if user.is_other and os.geteuid() != 0:
                raise self.fail(node, where, f"running bots as user {user.name} needs the arbiter to run as root")
        return text

    def isolation(self, node: Node, limits: Limits) -> str:
        value = self.string(node, "isolation")
        if value not in ISOLATIONS:
            raise self.fail(node, "isolation", f"{value!r} is not an isolation; use one of {', '.join(ISOLATIONS)}")
        if value == Isolation.BUBBLEWRAP and self.check_commands:
            problem = bubblewrap_problem(resolve_user(limits.user))
            if problem:
                raise self.fail(
                    node, "isolation",
                    f"bubblewrap cannot run here ({problem}); bots would not be isolated: install the 'bubblewrap' "
                    "package and allow user namespaces, or remove this key",
                )  # fmt: skip
        return value

    def database(self, text: str, node: Node) -> str:
        if "://" not in text:
            return str(self.path(text))
        if text.startswith("sqlite:///") and not text.startswith("sqlite:////"):
            rest = text[len("sqlite:///") :]
            if rest and not rest.startswith(":memory:"):
                return "sqlite:///" + str(self.path(rest))
        return text

    def entrants(self, node: Node) -> tuple[EntrantConfig, ...]:
        if not isinstance(node, SequenceNode):
            raise self.fail(
                node, "entrants", f"expected a list of entrants (each a name and a command), got {_kind(node)}"
            )
        out: list[EntrantConfig] = []
        seen: dict[str, int] = {}
        for i, item in enumerate(node.value):
            where = f"entrants[{i}]"
            entries = self.mapping(item, where, ENTRANT_KEYS)
            if "name" not in entries:
                raise self.fail(item, where, "the key 'name' is missing")
            name_node = entries["name"][1]
            name = self.string(name_node, f"{where}.name")
            if not NAME_RE.match(name):
                raise self.fail(
                    name_node, f"{where}.name", f"{name!r}: use letters, digits, '_', '-', '.', '+' (at most 64)"
                )
            if name in seen:
                raise self.fail(name_node, f"{where}.name", f"{name!r} is already the name of entrants[{seen[name]}]")
            seen[name] = i
            remote = self.boolean(entries["remote"][1], f"{where}.remote") if "remote" in entries else False
            command = launch = None
            if remote:
                if "command" in entries:
                    raise self.fail(
                        entries["command"][0],
                        f"{where}.command",
                        "a remote entrant has no command: it connects by itself",
                    )
            else:
                if "command" not in entries:
                    raise self.fail(
                        item,
                        where,
                        "the key 'command' is missing (or say 'remote: true' for a bot that connects by itself)",
                    )
                cmd_node = entries["command"][1]
                command = self.string(cmd_node, f"{where}.command")
                launch = self.command(command, cmd_node, f"{where}.command")
            out.append(EntrantConfig(name, command, launch, str(self.base), remote, item.start_mark.line + 1))
        return tuple(out)

    def command(self, command: str, node: Node, where: str) -> str:
        """The command to launch; checks that its program and script exist."""
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise self.fail(node, where, f"cannot split {command!r} into words: {e}") from None
        if not argv:
            raise self.fail(node, where, "the command is empty")
        i = 0
        if argv[0] == "env":  # env NAME=value ... program args
            i = 1
            while i < len(argv) and ("=" in argv[i] or argv[i].startswith("-")):
                i += 1
            if i == len(argv):
                raise self.fail(node, where, "'env' names no program to run")
        argv = with_own_python(argv)
        program = argv[i]
        if self.check_commands:
            self.check_program(program, node, where)
            for script in _scripts(argv[i:]):
                target = self.path(script)
                if not target.is_file():
                    raise self.fail(node, where, f"no such file: {script} (looked for {target})")
        return shlex.join(argv)

    def check_program(self, program: str, node: Node, where: str) -> None:
        if "/" in program:
            target = self.path(program)
            if not target.is_file():
                raise self.fail(node, where, f"no such file: {program} (looked for {target})")
            if not os.access(target, os.X_OK):
                raise self.fail(
                    node, where, f"{program} is not executable (chmod +x it, or run it with its interpreter)"
                )
        elif shutil.which(program) is None:
            raise self.fail(node, where, f"program {program!r} is not on PATH")

    def deal_file(self, node: Node, path: Path, per_match: int) -> tuple[tuple[int, int, int, int], ...]:
        from barbu.matchlog import hands_from_deal_line

        try:
            lines = read_text(path, MAX_DEAL_BYTES, "deal file").splitlines()
        except ConfigError as e:
            raise self.fail(node, "deals", str(e)) from None
        deals: list[tuple[int, int, int, int]] = []
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            problem = line_problem(text)
            if problem:
                raise self.fail(node, "deals", f"{printable(path.name)}:{number}: {problem}")
            try:
                obj = json.loads(text)
            except (ValueError, RecursionError):
                raise self.fail(node, "deals", f"{printable(path.name)}:{number}: not a JSON line") from None
            if not isinstance(obj, dict) or obj.get("type") != "deal":
                continue  # a whole match log is a deal file too: only its deal lines count
            try:
                seat0, seat1, seat2, seat3 = hands_from_deal_line(obj)  # four hands, checked
                deals.append((seat0, seat1, seat2, seat3))
            except BarbuError as e:
                raise self.fail(node, "deals", f"{path.name}:{number}: {e}") from None
        if len(deals) < per_match:
            raise self.fail(
                node, "deals", f"{path.name} holds {len(deals)} deal lines; a match under these rules needs {per_match}"
            )
        return tuple(deals)


def _scripts(argv: list[str]) -> list[str]:
    """The script files a command names (for an interpreter: its first non-option argument)."""
    program = os.path.basename(argv[0])
    if INTERPRETERS.match(program) or program == os.path.basename(sys.executable):
        rest = argv[1:]
        j = 0
        while j < len(rest) and rest[j].startswith("-"):
            if rest[j] in ("-m", "-c", "-e", "--eval", "-"):
                return []  # a module or inline code: nothing to check
            j += 1
        return [rest[j]] if j < len(rest) else []
    return [a for a in argv[1:] if a.endswith(SCRIPT_SUFFIXES) and not a.startswith("-")]


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    tag = node.tag.rsplit(":", 1)[-1]
    names = {"str": "text", "int": "a whole number", "float": "a number", "bool": "true/false", "null": "nothing"}
    shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
    return f"{names.get(tag, tag)} {shown!r}" if tag != "null" else "nothing (null)"


CLUSTER_RE = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$")


def cluster_address_problem(address: str) -> str | None:
    """Why ``address`` is not a Dask scheduler address ``tcp://HOST:PORT`` (or ``tls://``), or None."""
    match = CLUSTER_RE.match(address)
    if match is None or not 0 < int(match.group(3)) <= 65535:
        return (
            f"expected a Dask scheduler address such as tcp://10.0.0.5:8786 (or tls://HOST:PORT), "
            f"got {printable(address)!r}"
        )
    return None


def hide_password(url: str) -> str:
    """A database URL with its password (if any) replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    at = rest.rfind("@")
    if at < 0 or ":" not in rest[:at] or "/" in rest[:at]:
        return url
    user = rest[:at].split(":", 1)[0]
    return f"{scheme}://{user}:***@{rest[at + 1 :]}"


def bot_command(command: str, base_dir: Path | None = None, where: str = "--bot") -> str:
    """The command line to launch for a bot given on the command line (a bare ``python`` made the
    arbiter's own), once its program and script are found, as a tournament file's commands are;
    a ConfigError naming ``where`` otherwise."""
    parser = _Parser("", (base_dir or Path.cwd()).resolve(), check_commands=True)
    return parser.command(command, ScalarNode("tag:yaml.org,2002:str", command), f"{where} {command!r}")


def override(config: TournamentConfig, **changes: Any) -> TournamentConfig:
    """A copy with some fields replaced (tests, benchmarks)."""
    return replace(config, **changes)


__all__ = [
    "EntrantConfig", "FORMATS", "TournamentConfig", "bot_command", "cluster_address_problem", "load_config", "override",
    "parse_config",
]  # fmt: skip
