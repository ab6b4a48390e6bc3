"""`arbiter serve --cluster`: the ladder's matches on a real Dask cluster, a version submitted
after the start shipped to the workers as a bundle and played there."""

from __future__ import annotations

import json
import signal

import pytest

from tests.arena.test_serve import Server, author, leaderboard, new_bot, recorded, submit, write_arena


@pytest.mark.slow
def test_an_arena_on_a_cluster_plays_a_version_submitted_after_its_start(dask_cluster, tmp_path):
    write_arena(tmp_path)
    server = Server(tmp_path, "--cluster", dask_cluster.address)
    try:
        token = author(tmp_path, "alice")
        assert submit(tmp_path, server, new_bot(tmp_path, "late"), token)["status"] == "active"
        server.until(lambda: leaderboard(server).get("late@1", {}).get("matches", 0) >= 2, "late@1 to play")
        code, err = server.stop(signal.SIGTERM)
        assert code == 0, err + dask_cluster.logs()
    finally:
        if server.proc.poll() is None:
            server.stop(signal.SIGKILL)
    assert any("late@1" in json.loads(seats) for _, _, seats, *_ in recorded(tmp_path))
    # the workers played it: its bundle was unpacked in a worker's cache
    unpacked = [p for c in dask_cluster.caches if c.exists() for p in c.iterdir() if not p.name.startswith(".")]
    assert any((p / "files" / "entrant.yaml").is_file() for p in unpacked)
