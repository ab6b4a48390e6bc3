"""A tournament (or arena) file's YAML as plain values, each remembered with the line it came from.

The file is composed with PyYAML's node API (not loaded straight into dicts) so that every value
keeps its line: :func:`read_tree` returns the values for the schema and a :class:`Lines` that
turns a schema error's location (``("entrants", 2, "command")``) back into ``file:line: key``.
No number is converted before its length is bounded: a whole number of more than
:data:`MAX_DIGITS` characters becomes a :class:`LongNumber` that every check refuses.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from arbiter.errors import ConfigError
from arbiter.text import printable

MAX_YAML_VALUES = 100_000  # values a file may expand to, YAML aliases counted at every use
MAX_YAML_DEPTH = 64
MAX_DIGITS = 40  # longer whole numbers exceed every bound of a tournament file (2**63 has 19 digits)

Loc = tuple[str | int, ...]

_STR, _INT, _FLOAT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_PLAIN_TAGS = {
    _STR, _FLOAT, "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:binary",
}  # fmt: skip


@dataclass(frozen=True)
class LongNumber:
    """A whole number too long to be converted (``digits`` characters): never any key's value."""

    digits: int
    negative: bool

    def __str__(self) -> str:
        return f"a number of {self.digits} digits"


def describe(value: Any) -> str:
    """What a value is, for "expected …, got …" messages."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, LongNumber):
        return str(value)
    if isinstance(value, bool):
        kind, shown = "true/false", "true" if value else "false"
    elif isinstance(value, int):
        kind, shown = "a whole number", str(value)
    elif isinstance(value, float):
        kind, shown = "a number", repr(value)
    elif isinstance(value, str):
        kind, shown = "text", value
    elif isinstance(value, datetime.date):
        kind, shown = "a date", str(value)
    else:
        kind, shown = type(value).__name__, repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"{kind} {shown!r}"


class Lines:
    """The file's nodes by location: where each key and value was written."""

    def __init__(self, display: str):
        self.display = display
        self.nodes: dict[Loc, tuple[Node | None, Node]] = {}

    def line(self, loc: Loc, at_key: bool = False) -> int | None:
        """The line of the value at ``loc`` (or of its key), else of the nearest enclosing value."""
        for n in range(len(loc), -1, -1):
            if loc[:n] in self.nodes:
                key, value = self.nodes[loc[:n]]
                node = key if at_key and key is not None and n == len(loc) else value
                return node.start_mark.line + 1 if node.start_mark is not None else None
        return None

    def error(self, loc: Loc, message: str, *, where: Loc | None = None, at_key: bool = False) -> ConfigError:
        """``file:line: key: message`` (``where``: the key named, when not the one pointed at)."""
        key = dotted(loc if where is None else where)
        prefix = f"{key}: " if key else ""
        line = self.line(loc, at_key)
        place = f"{self.display}:{line}" if line is not None else self.display
        return ConfigError(f"{place}: {prefix}{message}" if self.display else f"{prefix}{message}")

    def where(self, loc: Loc) -> str:
        """``file:line`` of the value at ``loc`` (kept in the config for later checks)."""
        line = self.line(loc)
        return f"{self.display}:{line}" if line is not None else self.display


def dotted(loc: Loc) -> str:
    """``("entrants", 2, "command")`` -> ``entrants[2].command``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def compose(text: str, display: str, kind: str = "tournament file") -> Node | None:
    """The file's node tree (None: the file holds nothing); a ConfigError naming the line for
    anything that is not YAML, or not a ``kind``."""
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
        raise ConfigError(f"{display}: nested too deeply to be a {kind}") from None
    if root is not None:
        _check_shape(root, display, kind)
    return root


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, SequenceNode) else []


def _check_shape(root: Node, display: str, kind: str) -> None:
    """Refuse, before anything is built from it, a document PyYAML would choke on: a value that
    contains itself (``&a [*a]``), aliases that multiply into millions of values (a "billion
    laughs"), or nesting deeper than any such file needs."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, int, bool]] = [(root, 0, False)]

    def fail(node: Node, message: str) -> ConfigError:
        return ConfigError(f"{display}:{node.start_mark.line + 1}: {message}")

    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[key] > MAX_YAML_VALUES:
                raise fail(
                    node,
                    f"this value expands to more than {MAX_YAML_VALUES} values (YAML aliases): not a {kind}",
                )
            continue
        if key in sizes:
            continue
        if depth > MAX_YAML_DEPTH:
            raise fail(node, f"nested more than {MAX_YAML_DEPTH} levels deep: not a {kind}")
        on_path.add(key)
        stack.append((node, depth, True))
        for child in _children(node):
            if id(child) in on_path:
                raise fail(child, "a value that contains itself (a recursive YAML alias)")
            if id(child) not in sizes:
                stack.append((child, depth + 1, False))


class _Reader:
    def __init__(self, lines: Lines):
        self.lines = lines
        self.constructor = yaml.constructor.SafeConstructor()

    def value(self, node: Node, loc: Loc, key: Node | None = None) -> Any:
        self.lines.nodes[loc] = (key, node)
        if isinstance(node, MappingNode):
            return self.mapping(node, loc)
        if isinstance(node, SequenceNode):
            return [self.value(item, (*loc, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, ScalarNode)
        if node.tag == _INT and len(node.value) > MAX_DIGITS:
            return LongNumber(len(node.value.lstrip("+-")), node.value.startswith("-"))
        if node.tag not in _PLAIN_TAGS and node.tag != _INT:
            raise self.lines.error(loc, f"unsupported YAML tag {printable(node.tag)}")
        try:
            return self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError) as e:  # e.g. !!binary that is not base64
            raise self.lines.error(loc, f"not a valid value: {printable(' '.join(str(e).split()))[:200]}") from None

    def mapping(self, node: MappingNode, loc: Loc) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag != _STR:
                shown = describe(self.value(key_node, (*loc, "?"))) if isinstance(key_node, ScalarNode) else "a list"
                raise self.lines.error((*loc, "?"), f"keys must be names, got {shown}", where=loc)
            key = key_node.value
            if key in out:
                self.lines.nodes[(*loc, key)] = (key_node, value_node)
                raise self.lines.error((*loc, key), "this key is given twice", at_key=True)
            out[key] = self.value(value_node, (*loc, key), key_node)
        return out


def read_tree(
    text: str, display: str, *, kind: str = "tournament file", needs: str | None = "'entrants'"
) -> tuple[Any, Lines]:
    """The file's values (dicts, lists, scalars) and where each was written. An empty file is
    a mistake when the ``kind`` of file ``needs`` a key; otherwise it is an empty mapping."""
    root = compose(text, display, kind)
    lines = Lines(display)
    if root is None:
        if needs is not None:
            raise ConfigError(f"{display}:1: the file is empty; it needs at least {needs}")
        return {}, lines
    return _Reader(lines).value(root, ()), lines
