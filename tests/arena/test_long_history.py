"""An arena with a long history: 100 000 recorded matches, read at the cost of a short one.

The history is loaded in bulk (tests/arena/synthetic.py: whole duplicate sets, rows as the
recorder writes them, standings replayed by the repair tool), then the arena's own loop records
more on top, keeping its standings as it goes; the leaderboard it serves must be the one
``arbiter standings --rebuild``'s full replay gives.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from arbiter.arena.config import load_arena
from arbiter.arena.quotas import Uploads
from arbiter.arena.service import ArenaService
from arbiter.storage import Repo, open_database
from arbiter.storage.arena import ArenaStore
from arbiter.tournament.kept import rebuild_standings
from tests.arena.synthetic import load_history, record_synthetic, write_arena

HISTORY = 100_000
ENTRANTS = 32


def served_leaderboard(url: str, arena_name: str, house: list[str], folder: Path) -> list[dict[str, object]]:
    """The leaderboard's rows as the arena's API serves them (from the kept standings)."""
    engine = open_database(url)
    try:
        uploads = Uploads(arena_name, ArenaStore(engine), folder / "bundles", enqueue=lambda _: None, house=house)
        service = ArenaService(engine, arena_name, folder / "matches", uploads=uploads, house=house)
        board = service.leaderboard()
        assert board.matches >= HISTORY
        return [row.model_dump() for row in board.entrants]
    finally:
        engine.dispose()


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0, abs_tol=1e-9)
    return a == b


@pytest.mark.slow
def test_a_100000_match_history_serves_the_leaderboard_its_rebuild_gives(tmp_path):
    arena = load_arena(write_arena(tmp_path, ENTRANTS, jobs=2), check_commands=False)
    url = f"sqlite:///{tmp_path}/arena.db"
    load_history(arena, url, HISTORY)
    played, _, _ = record_synthetic(arena, url, 40)  # the ladder records on top, keeping its standings
    assert played >= 40
    house = [e.name for e in arena.tournament.entrants]

    served = served_leaderboard(url, arena.name, house, tmp_path)
    engine = open_database(url)
    try:
        rebuild_standings(engine, Repo(engine).require_tournament(arena.name))
    finally:
        engine.dispose()
    rebuilt = served_leaderboard(url, arena.name, house, tmp_path)

    assert len(served) == ENTRANTS
    assert [(r["name"], r["version"]) for r in served] == [(r["name"], r["version"]) for r in rebuilt]
    for kept, replayed in zip(served, rebuilt, strict=True):
        assert kept.keys() == replayed.keys()
        different = [k for k in kept if not same(kept[k], replayed[k])]
        assert not different, (kept["name"], {k: (kept[k], replayed[k]) for k in different})
