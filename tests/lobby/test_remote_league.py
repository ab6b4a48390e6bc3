"""Leagues with remote entrants, end to end: `arbiter run` with a lobby over TLS (certificates made
by the test), remote entrants each behind `arbiter connect` with a key from `arbiter key new`,
real bot processes on both sides, everything on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from barbu.matchlog import verify

from arbiter.referee.logfile import read_log_lines

from ..cluster.conftest import free_port
from ..conftest import descendants
from ..tournament.conftest import ROOT, cli_command

BOTS = ROOT / "sample_bots"
PROGRAMS = {  # deterministic bots: a league plays the same way wherever they run
    "heuristic": [sys.executable, str(BOTS / "heuristic_bot.py")],
    "random": ["env", "BARBU_SEED=1", sys.executable, str(BOTS / "random_bot.py")],
    "heuristic2": [sys.executable, str(BOTS / "heuristic_bot.py")],
    "random2": ["env", "BARBU_SEED=2", sys.executable, str(BOTS / "random_bot.py")],
    "crash": [sys.executable, str(ROOT / "tests" / "bots" / "crash_bot.py")],
    "random3": ["env", "BARBU_SEED=3", sys.executable, str(BOTS / "random_bot.py")],
    "bigmsg": ["env", "BARBU_MODE=bigmsg", sys.executable, str(ROOT / "tests" / "bots" / "hostile_raw.py")],
}
TIMEOUT = 300


def write_league(folder: Path, certs, port: int, remote: set[str], names=tuple(PROGRAMS)[:4], **extra) -> Path:
    entrants = [
        {"name": n, "remote": True} if n in remote else {"name": n, "command": " ".join(PROGRAMS[n])} for n in names
    ]
    config = {
        "name": "remote",
        "entrants": entrants,
        "format": "duplicate",
        "rounds": 1,
        "seed": 7,
        "rules": {"preset": "standard", "contracts": ["no_tricks", "no_hearts", "barbu"]},
        "time_control": {"per_decision": 2.0, "reserve": 10, "connect": 20, "match_limit": 300},
        "parallelism": 2,
        "lobby": {"listen": f"127.0.0.1:{port}", "tls": {"cert": str(certs.server_cert), "key": str(certs.server_key)}},
        "remote_wait": 60,
        "log_folder": str(folder / "logs"),
        **extra,
    }
    path = folder / "league.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def arbiter(*args: str, cwd: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(cli_command(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout)


def new_key(folder: Path, db: str, name: str) -> Path:
    made = arbiter("key", "new", name, "--db", db, cwd=folder)
    assert made.returncode == 0, made.stderr
    path = folder / f"{name}.key"
    path.write_text(made.stdout.strip().splitlines()[-1] + "\n")
    return path


def connect(folder: Path, port: int, key: Path, ca: Path, program: list[str], *more: str) -> subprocess.Popen:
    out = folder / f"connect-{key.stem}"
    command = cli_command(
        "connect", "--lobby", f"127.0.0.1:{port}", "--key-file", str(key), "--ca", str(ca), "--out", str(out), *more,
        "--", *program,
    )  # fmt: skip
    env = {**os.environ, "TMPDIR": str(folder)}  # the relay's socket folder: a SIGKILLed bridge cannot remove it
    return subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stop(bridges: list[subprocess.Popen]) -> list[str]:
    """Stop the bridges; what each wrote on stderr."""
    errors = []
    for b in bridges:
        if b.poll() is None:
            b.send_signal(signal.SIGTERM)
        try:
            _, err = b.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            b.kill()
            _, err = b.communicate(timeout=30)
        errors.append(err)
    return errors


def rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("select number, seats, totals, places, log_path from matches order by number").fetchall()


def faults(db: Path) -> list[tuple]:
    found = []
    for *_, log_path in rows(db):
        for line in Path(log_path).read_text().splitlines():
            obj = json.loads(line)
            if obj["type"] == "fault":
                found.append((obj["seat"], obj["kind"], obj["action"]))
    return found


def comparable(summary: dict) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "faults_detail"} for row in summary["standings"]]


def test_a_league_with_two_remote_entrants_equals_the_same_league_played_locally_even_after_a_kill(tmp_path, certs):
    local_dir, remote_dir = tmp_path / "local", tmp_path / "remote"
    local_dir.mkdir()
    remote_dir.mkdir()
    port = free_port()
    reference = arbiter("run", str(write_league(local_dir, certs, port, remote=set())), "--json", cwd=local_dir)
    assert reference.returncode == 0, reference.stderr

    db = remote_dir / "r.db"
    url = f"sqlite:///{db}"
    league = write_league(remote_dir, certs, port, remote={"heuristic2", "random2"}, database=url)
    keys = {name: new_key(remote_dir, url, name) for name in ("heuristic2", "random2")}
    bridges = [
        connect(remote_dir, port, keys[name], certs.ca_cert, PROGRAMS[name], "--capacity", "2")
        for name in ("heuristic2", "random2")
    ]
    try:
        # Killed once some matches are recorded; the bridges stay and reconnect to the rerun.
        run = subprocess.Popen(
            cli_command("run", str(league), "--json"), cwd=remote_dir, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and run.poll() is None:
            if db.exists():
                try:
                    if len(rows(db)) >= 1:
                        break
                except sqlite3.OperationalError:
                    pass
            time.sleep(0.1)
        assert run.poll() is None, run.communicate(timeout=60)[1]
        run.send_signal(signal.SIGKILL)
        run.wait(10)
        recorded = len(rows(db))
        assert 1 <= recorded < 4
        time.sleep(1)
        gone = [b.communicate(timeout=10) for b in bridges if b.poll() is not None]
        assert not gone, gone  # the lobby went away; the bridges did not
        resumed = arbiter("run", str(league), "--json", cwd=remote_dir)
        assert resumed.returncode == 0, resumed.stderr
    finally:
        errors = stop(bridges)
    summary, expected = json.loads(resumed.stdout), json.loads(reference.stdout)
    assert summary["complete"] and summary["recorded_before"] == recorded
    assert comparable(summary) == comparable(expected)
    assert [r[1:4] for r in rows(db)] == [r[1:4] for r in rows(local_dir / "logs" / "arbiter.db")]  # match by match
    assert faults(db) == []
    for *_, log_path in rows(db):
        assert verify(read_log_lines(log_path)).valid
    assert all("Traceback" not in e for e in errors), errors
    assert any("connected" in e for e in errors)


def test_an_entrant_that_never_connects_is_absent_and_the_league_still_finishes(tmp_path, certs):
    port = free_port()
    league = write_league(tmp_path, certs, port, remote={"random2"}, remote_wait=1)
    done = arbiter("run", str(league), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["complete"]
    db = Path(summary["database"].removeprefix("sqlite:///"))
    seen = faults(db)
    assert len(seen) == 4 and {kind for _, kind, _ in seen} == {"absent"}  # once per match, its seat taken over
    assert {action for *_, action in seen} == {"forfeit"}
    by_name = {row["name"]: row for row in summary["standings"]}
    assert by_name["random2"]["faults"] == 4 and by_name["heuristic"]["faults"] == 0
    # the run says it waits, once for the whole absence, not once per match
    waits = [line for line in done.stderr.splitlines() if "waits up to 1 s for random2" in line]
    assert len(waits) == 1 and waits[0].startswith("warning: match "), done.stderr


def test_a_remote_bot_that_dies_mid_match_gets_the_fault_a_local_one_gets_and_capacity_two_plays_two_at_once(
    tmp_path, certs
):
    local_dir, remote_dir = tmp_path / "local", tmp_path / "remote"
    local_dir.mkdir()
    remote_dir.mkdir()
    port = free_port()
    names = ("heuristic", "random", "heuristic2", "crash")
    reference = arbiter("run", str(write_league(local_dir, certs, port, set(), names)), "--json", cwd=local_dir)
    assert reference.returncode == 0, reference.stderr

    url = f"sqlite:///{remote_dir / 'r.db'}"
    league = write_league(remote_dir, certs, port, remote={"crash"}, names=names, database=url)
    bridge = connect(remote_dir, port, new_key(remote_dir, url, "crash"), certs.ca_cert, PROGRAMS["crash"],
                     "--capacity", "2")  # fmt: skip
    most = 0
    try:
        run = subprocess.Popen(cli_command("run", str(league), "--json"), cwd=remote_dir, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
        while run.poll() is None:
            most = max(most, len(descendants(bridge.pid)))
            time.sleep(0.02)
        out, err = run.communicate()
        assert run.returncode == 0, err
    finally:
        stop([bridge])
    local_faults = faults(local_dir / "logs" / "arbiter.db")
    remote_faults = faults(remote_dir / "r.db")
    assert local_faults and [(s, k) for s, k, _ in remote_faults] == [(s, k) for s, k, _ in local_faults]
    assert {k for _, k, _ in remote_faults} == {"crash"}
    assert most >= 2  # two bot processes (each under its `env`/python) at once: capacity 2 was used
    assert comparable(json.loads(out)) == comparable(json.loads(reference.stdout))


@pytest.mark.parametrize("case", ["wrong key", "revoked key", "plaintext", "wrong CA", "not remote"])
def test_the_bridge_says_in_one_line_why_the_lobby_refused_it(tmp_path, certs, case):
    port = free_port()
    url = f"sqlite:///{tmp_path / 'r.db'}"
    league = write_league(tmp_path, certs, port, remote={"random2"}, database=url, remote_wait=30)
    key = new_key(tmp_path, url, "heuristic" if case == "not remote" else "random2")  # heuristic plays here
    if case == "wrong key":
        key.write_text("bk1.0123456789abcdef." + "A" * 43 + "\n")
    if case == "revoked key":
        assert arbiter("key", "revoke", "random2", "--db", url, cwd=tmp_path).returncode == 0
    run = subprocess.Popen(cli_command("run", str(league)), cwd=tmp_path, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        ca = certs.other_ca_cert if case == "wrong CA" else certs.ca_cert
        extra = ["--plaintext"] if case == "plaintext" else []
        command = cli_command("connect", "--lobby", f"127.0.0.1:{port}", "--key-file", str(key), *extra,
                              *([] if extra else ["--ca", str(ca)]), "--", *PROGRAMS["random2"])  # fmt: skip
        time.sleep(2)  # the lobby is up once the run has started its first match
        bridge = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    finally:
        run.send_signal(signal.SIGINT)
        run.wait(60)
    lines = [line for line in bridge.stderr.splitlines() if line.strip()]
    assert bridge.returncode != 0 and "Traceback" not in bridge.stderr
    assert lines[-1].startswith("error: "), bridge.stderr
    expected = {
        "wrong key": "unknown key", "revoked key": "revoked", "plaintext": "TLS", "wrong CA": "CA",
        "not remote": "'heuristic' is not a remote entrant of remote",
    }[case]  # fmt: skip
    assert expected in lines[-1], lines[-1]


def test_a_remote_bots_oversized_message_is_the_protocol_fault_a_local_bots_is(tmp_path, certs):
    """A bot behind `arbiter connect` sends a 100 MB message: the bridge refuses it at once (the
    arbiter's own limit, on the author's machine), says so to the lobby, and the seat gets the
    `protocol` fault a local bot gets for it, not a `disconnect`."""
    port = free_port()
    url = f"sqlite:///{tmp_path / 'r.db'}"
    names = ("heuristic", "random", "heuristic2", "bigmsg")
    league = write_league(tmp_path, certs, port, remote={"bigmsg"}, names=names, database=url, rounds=1)
    bridge = connect(tmp_path, port, new_key(tmp_path, url, "bigmsg"), certs.ca_cert, PROGRAMS["bigmsg"])
    try:
        done = arbiter("run", str(league), "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    finally:
        errors = stop([bridge])
    seen = faults(tmp_path / "r.db")
    assert seen and {kind for _, kind, _ in seen} == {"protocol"}, (seen, errors)
    for *_, log_path in rows(tmp_path / "r.db"):
        details = [json.loads(line).get("detail", "") for line in Path(log_path).read_text().splitlines()]
        assert any("larger than 1 MiB" in d for d in details if d), details


def test_a_finished_league_ends_its_bridges_and_a_bridge_killed_mid_run_leaves_no_traceback(tmp_path, certs):
    """Two remote entrants; one's bridge is killed (SIGKILL) while its bot plays: the run goes on
    (that seat faulted, its later matches played absent) and ends without a word from asyncio; the
    other bridge is told the tournament is over and exits 0 by itself, saying so in one line. The
    summary gives the bots' CPU per local seat, the remote seats' as unknown."""
    port = free_port()
    url = f"sqlite:///{tmp_path / 'r.db'}"
    league = write_league(tmp_path, certs, port, remote={"heuristic2", "random2"}, database=url, remote_wait=2)
    keys = {name: new_key(tmp_path, url, name) for name in ("heuristic2", "random2")}
    doomed, staying = (connect(tmp_path, port, keys[n], certs.ca_cert, PROGRAMS[n]) for n in ("heuristic2", "random2"))
    orphans: set[int] = set()
    try:
        run = subprocess.Popen(cli_command("run", str(league)), cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 60
        while not any(" in match " in f.read_text() for f in tmp_path.glob("connect-heuristic2/*.stderr")):
            assert time.monotonic() < deadline, "the bridge's bot never started its match"
            time.sleep(0.02)
        orphans = descendants(doomed.pid)
        doomed.send_signal(signal.SIGKILL)
        out, err = run.communicate(timeout=TIMEOUT)
        assert run.returncode == 0, err
        _, said = staying.communicate(timeout=30)  # exits by itself: the lobby said the tournament is over
    finally:
        stop([doomed, staying])
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    for words in ("Task was destroyed", "Event loop is closed", "Traceback", "Exception ignored"):
        assert words not in err, err
    assert "seat" in err and "heuristic2" in err  # the killed bridge's seat was faulted, and said so
    assert staying.returncode == 0, said
    last = said.strip().splitlines()[-1]
    assert last == f"tournament 'remote' is over: disconnected from 127.0.0.1:{port}", said
    assert "retrying" not in said.split("connected to remote", 1)[1]  # connected once, and never lost
    summary = " ".join(out.split())  # (the terminal's width wraps it)
    assert "bots " in summary and "CPU per local seat, unknown for the 8 remote seats (their own machines')" in summary
