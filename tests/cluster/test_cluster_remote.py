"""A league with a remote entrant on a real Dask cluster (`arbiter run --cluster`): the matches
with the remote seat are played on the coordinator, where the lobby listens; the others on the
workers; the standings equal those of the same league played locally."""

from __future__ import annotations

import json

import pytest

from tests.lobby.certs import make_certs
from tests.lobby.test_remote_league import PROGRAMS, arbiter, connect, new_key, rows, stop, write_league

from .conftest import free_port

NAMES = ("heuristic", "random", "heuristic2", "random2", "random3")


@pytest.mark.slow
def test_a_remote_entrant_on_a_cluster_plays_from_the_coordinator_and_the_league_equals_a_local_one(
    dask_cluster, tmp_path
):
    certs = make_certs(tmp_path / "certs")
    local_dir, remote_dir = tmp_path / "local", tmp_path / "remote"
    local_dir.mkdir()
    remote_dir.mkdir()
    port = free_port()
    rules = {"rules": {"preset": "standard", "contracts": ["barbu"]}, "format": "round_robin"}
    reference = arbiter(
        "run", str(write_league(local_dir, certs, port, set(), NAMES, **rules)), "--json", cwd=local_dir
    )
    assert reference.returncode == 0, reference.stderr

    url = f"sqlite:///{remote_dir / 'r.db'}"
    league = write_league(remote_dir, certs, port, {"random2"}, NAMES, database=url, **rules)
    bridge = connect(remote_dir, port, new_key(remote_dir, url, "random2"), certs.ca_cert, PROGRAMS["random2"])
    try:
        done = arbiter("run", str(league), "--json", "--cluster", dask_cluster.address, cwd=remote_dir)
    finally:
        (bridge_err,) = stop([bridge])
    assert done.returncode == 0, done.stderr + dask_cluster.logs()
    summary, expected = json.loads(done.stdout), json.loads(reference.stdout)
    assert summary["complete"] and summary["standings"] == expected["standings"]
    assert [r[1:4] for r in rows(remote_dir / "r.db")] == [r[1:4] for r in rows(local_dir / "logs" / "arbiter.db")]
    with_remote = [r for r in rows(remote_dir / "r.db") if "random2" in json.loads(r[1])]
    assert 0 < len(with_remote) < len(rows(remote_dir / "r.db"))
    assert bridge_err.count("invit") >= len(with_remote), bridge_err  # one invitation per match it was in
    # the workers played the others: the entrants' folder was unpacked there
    assert any(p for c in dask_cluster.caches if c.exists() for p in c.iterdir() if not p.name.startswith("."))
