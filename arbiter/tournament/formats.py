"""Tournament formats, registered by name: what each brings.

A format is how a tournament seats its entrants. It brings its schedule (every match known at
the start, or none for one that chooses them as it goes), the pattern of its match keys (a log
folder knows a tournament's logs by it: ``NAME-KEY.jsonl``), whether its rated games are
duplicate sets, whether its field is fixed, and the check of a field against it. Nothing below
knows a format by name: it asks :func:`format_of`.

The tournament file's formats (round_robin, gauntlet, duplicate) are registered here. Others
register where they live: ``arbiter ab``'s paired sets (arbiter.verdict.ab) and an arena's ladder
(arbiter.arena.ladder), found through the ``barbu_arena.formats`` entry points of this package
(pyproject.toml) when a database or log folder names them. A new format is one module holding a
:class:`Format` (and, if it chooses matches as it goes, a Schedule of the loop) plus one entry
point; a test registers one with :func:`register`.
"""

from __future__ import annotations

import importlib.metadata
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from arbiter.model import ScheduledMatch
from arbiter.tournament.schedule import (
    MAX_MATCHES,
    TABLE_KEY,
    field_groups,
    gauntlet_groups,
    table_schedule,
)

ENTRY_POINTS = "barbu_arena.formats"


@dataclass(frozen=True)
class FieldProblem:
    """What a format finds wrong with a field: a message (``{format}`` stands for the format's
    name), the file's key it is about, and whether at the key itself or its value."""

    message: str
    key: str  # "entrants", "challenger" or "format"
    where: str | None = None  # another key the message points to (a missing "challenger")
    at_key: bool = True


Builder = Callable[[Sequence[str], int, int, "str | None"], list[ScheduledMatch]]
"""entrants, rounds, seed, challenger -> every match in schedule order."""


def _no_problem(names: Sequence[str], challenger: str | None, copies: bool) -> FieldProblem | None:
    return None


@dataclass(frozen=True)
class Format:
    name: str
    key_pattern: str  # a regular expression every match key of the format matches
    duplicate_sets: bool  # its rated games are duplicate sets (standings compare who held the same cards)
    count: Callable[[int, int], int]  # entrants, rounds -> matches, without building the schedule
    build: Builder
    check: Callable[[Sequence[str], str | None, bool], FieldProblem | None] = _no_problem  # names, challenger, copies
    in_files: bool = False  # a tournament file may name it
    growing: bool = False  # its field grows as it goes (an arena's): entrants do not fix its games
    schedule: Callable[[Any], Any] | None = None
    """For a format that chooses its matches as it plays (a Swiss system): the loop's Schedule
    for a TournamentConfig (arbiter.tournament.loop); None: every match is known at the start."""


_formats: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Make ``fmt`` known by its name (a later one of the same name replaces it)."""
    _formats[fmt.name] = fmt
    return fmt


def format_of(name: str) -> Format:
    """The format called ``name``; a ValueError naming the known ones otherwise."""
    if name not in _formats:
        for entry in importlib.metadata.entry_points(group=ENTRY_POINTS, name=name):
            loaded = entry.load()
            if isinstance(loaded, Format):
                register(loaded)
    if name not in _formats:
        raise ValueError(f"unknown format {name!r}; known: {', '.join(sorted(_formats))}")
    return _formats[name]


def file_formats() -> list[str]:
    """The formats a tournament file may name."""
    return [f.name for f in _formats.values() if f.in_files]


def build_schedule(
    fmt: str, entrants: Sequence[str], rounds: int, seed: int, challenger: str | None = None
) -> list[ScheduledMatch]:
    """Every match of a tournament of format ``fmt`` in schedule order (none for one that chooses
    them as it goes)."""
    f = format_of(fmt)
    total = f.count(len(entrants), rounds)
    if total > MAX_MATCHES:
        raise ValueError(f"{rounds} round(s) make {total} matches; a tournament has at most {MAX_MATCHES}")
    return f.build(entrants, rounds, seed, challenger)


def plays_duplicate_sets(fmt: str) -> bool:
    """Whether the format's rated games are duplicate sets (its standings then compare each
    entrant with the others who held the same cards)."""
    return format_of(fmt).duplicate_sets


# ---- the tournament file's formats --------------------------------------------------------------
def _field_count(entrants: int, rounds: int) -> int:
    per_round = math.comb(entrants, 4) * 4 if entrants >= 4 else {3: 12, 2: 2}.get(entrants, 0)
    return per_round * rounds


def _gauntlet_count(entrants: int, rounds: int) -> int:
    field = entrants - 1
    return (math.comb(field, 3) * 4 if field >= 3 else {2: 8, 1: 4}.get(field, 0)) * rounds


def _field_check(names: Sequence[str], challenger: str | None, copies: bool) -> FieldProblem | None:
    if challenger is not None:
        return FieldProblem("only the gauntlet format has a challenger, not {format}", "challenger")
    if len(names) < 4 and not copies:
        return FieldProblem(
            "the {format} format needs at least 4 entrants when 'copies' is false (copies of an entrant fill a "
            f"table otherwise), got {len(names)}",
            "entrants",
        )
    return None


def _gauntlet_check(names: Sequence[str], challenger: str | None, copies: bool) -> FieldProblem | None:
    if challenger is None:
        return FieldProblem("the gauntlet format needs a 'challenger': one entrant's name", "format", "challenger")
    if challenger not in names:
        return FieldProblem(
            f"{challenger!r} is not an entrant (entrants: {', '.join(names)})",
            "challenger",
            at_key=False,
        )
    if len(names) < 4 and not copies:
        return FieldProblem(
            f"a gauntlet needs the challenger and at least 3 others when 'copies' is false, got {len(names)} entrants",
            "entrants",
        )
    return None


def _tables(groups: Callable[..., list[tuple[str, ...]]], duplicate: bool) -> Builder:
    def build(entrants: Sequence[str], rounds: int, seed: int, challenger: str | None) -> list[ScheduledMatch]:
        return table_schedule(groups(entrants, challenger), rounds, seed, duplicate=duplicate)

    return build


ROUND_ROBIN = register(
    Format("round_robin", TABLE_KEY, False, _field_count, _tables(field_groups, False), _field_check, in_files=True)
)
GAUNTLET = register(
    Format(
        "gauntlet", TABLE_KEY, False, _gauntlet_count, _tables(gauntlet_groups, False), _gauntlet_check, in_files=True
    )
)
DUPLICATE = register(
    Format("duplicate", TABLE_KEY, True, _field_count, _tables(field_groups, True), _field_check, in_files=True)
)
