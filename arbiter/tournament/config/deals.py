"""A tournament's deal file: the hands of every match, read from a JSON-lines file (a match log
is one too: only its deal lines count)."""

from __future__ import annotations

import json
from pathlib import Path

from barbu.rules import BarbuError

from arbiter.errors import ConfigError
from arbiter.files import read_text
from arbiter.referee.logfile import line_problem
from arbiter.text import printable

MAX_DEAL_BYTES = 64 << 20  # a deal file

Deal = tuple[int, int, int, int]


def read_deals(path: Path, per_match: int) -> tuple[Deal, ...]:
    """The deals of ``path``, at least ``per_match``; a ConfigError saying what is wrong."""
    from barbu.matchlog import hands_from_deal_line

    name = printable(path.name)
    deals: list[Deal] = []
    for number, text in enumerate(read_text(path, MAX_DEAL_BYTES, "deal file").splitlines(), start=1):
        if not text.strip():
            continue
        if problem := line_problem(text):
            raise ConfigError(f"{name}:{number}: {problem}")
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            raise ConfigError(f"{name}:{number}: not a JSON line") from None
        if not isinstance(obj, dict) or obj.get("type") != "deal":
            continue  # a whole match log is a deal file too: only its deal lines count
        try:
            seat0, seat1, seat2, seat3 = hands_from_deal_line(obj)  # four hands, checked
            deals.append((seat0, seat1, seat2, seat3))
        except BarbuError as e:
            raise ConfigError(f"{name}:{number}: {e}") from None
    if len(deals) < per_match:
        raise ConfigError(f"{name} holds {len(deals)} deal lines; a match under these rules needs {per_match}")
    return tuple(deals)
