"""The tournament loop with in-process matches: record, rate, resume, parallel workers."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from barbu.matchlog import verify

from arbiter.errors import ConfigError, TournamentInterrupted
from arbiter.execution.play import file_sha256
from arbiter.referee.logfile import read_log_lines
from arbiter.storage import Repo, open_database
from arbiter.tournament.config import override, parse_config
from arbiter.tournament.formats import build_schedule
from arbiter.tournament.loop import run_tournament

from . import inproc
from .conftest import ROOT


def config(tmp_path, entrants=None, extra="", name="t"):
    entrants = entrants or {"a": "random", "b": "first", "c": "random", "d": "first", "e": "random"}
    lines = "\n".join(f"  - {{name: {n}, command: {c}}}" for n, c in entrants.items())
    text = textwrap.dedent(
        f"""
        name: {name}
        entrants:
        {{entrants}}
        rules: {{preset: standard, contracts: [barbu]}}
        seed: 5
        log_folder: logs
        """
    ).replace("{entrants}", lines)
    return parse_config(text + extra, display="t.yaml", base_dir=tmp_path, check_commands=False)


def db(tmp_path, name="r.db"):
    return f"sqlite:///{tmp_path / name}"


def stored(url, name="t"):
    engine = open_database(url)
    try:
        repo = Repo(engine)
        t = repo.tournament(name)
        return t, repo.match_rows(t.id), repo.final_ratings(t.id), repo.rating_history(t.id), repo.faults(t.id)
    finally:
        engine.dispose()


def test_a_whole_tournament_in_process(tmp_path):
    cfg = config(tmp_path)
    summary = run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    schedule = build_schedule("round_robin", list("abcde"), 1, 5)
    assert summary.complete and summary.total == len(schedule) == 20 and summary.played == 20
    t, rows, final, history, faults = stored(db(tmp_path))
    assert t.finished_at is not None and t.total_matches == 20
    assert [r.number for r in rows] == list(range(20))
    for r, m in zip(rows, schedule, strict=True):
        assert r.seats == list(m.seats) and r.key == m.key and r.seed == m.seed
        assert r.log_sha256 == file_sha256(r.log_path)
        report = verify(read_log_lines(r.log_path))
        assert report.valid and report.complete and report.totals == r.totals
    # the stored rating history ends where the standings' replay ends
    assert {s.name: (s.mu, s.sigma) for s in summary.standings} == final
    assert len(history) == 20 * 4
    assert not list((tmp_path / "logs").glob("*.part"))


def test_interrupted_then_resumed_gives_the_same_ratings(tmp_path, monkeypatch):
    cfg = config(tmp_path)
    # another database, so another log folder (a folder holds one database's logs)
    ref_cfg = override(cfg, log_folder=tmp_path / "ref-logs")
    reference = run_tournament(
        ref_cfg, database=db(tmp_path, "ref.db"), executor=inproc.in_process(inproc.play_inprocess)
    )
    assert reference.complete
    monkeypatch.setenv("STOP_AT", "7")
    with pytest.raises(TournamentInterrupted, match="7 of 20 matches are recorded; run the same command again"):
        run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_then_interrupt))
    t, rows, *_ = stored(db(tmp_path))
    assert len(rows) == 7 and t.finished_at is None
    monkeypatch.delenv("STOP_AT")
    resumed = run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    assert resumed.recorded_before == 7 and resumed.played == 13 and resumed.complete
    _, rows, final, history, _ = stored(db(tmp_path))
    _, ref_rows, ref_final, ref_history, _ = stored(db(tmp_path, "ref.db"))
    assert [r.number for r in rows] == list(range(20))
    assert final == ref_final and history == ref_history
    assert [(s.name, s.mu, s.sigma) for s in resumed.standings] == [
        (s.name, s.mu, s.sigma) for s in reference.standings
    ]
    assert [(r.totals, r.places) for r in rows] == [(r.totals, r.places) for r in ref_rows]
    again = run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    assert again.played == 0 and again.recorded_before == 20  # nothing counted twice


def test_worker_processes_play_and_the_parent_records(tmp_path):
    cfg = config(tmp_path, {"a": "random", "b": "first", "c": "random"}, extra="format: duplicate\n")
    inline_cfg = override(cfg, log_folder=tmp_path / "inline-logs")  # another database, another log folder
    inline = run_tournament(
        inline_cfg, database=db(tmp_path, "inline.db"), executor=inproc.in_process(inproc.play_inprocess)
    )
    pooled = run_tournament(cfg, database=db(tmp_path), jobs=2, executor=inproc.in_workers(inproc.pid_of_worker))
    assert pooled.complete and pooled.played == inline.played == 12
    _, rows, final, _, _ = stored(db(tmp_path))
    pids = {r.reason for r in rows}
    assert f"pid {os.getpid()}" not in pids and 1 <= len(pids) <= 2  # played in up to 2 workers
    assert final == stored(db(tmp_path, "inline.db"))[2]  # same games, same ratings, whatever the order


def test_a_forfeiting_entrant_is_last_and_its_faults_are_stored(tmp_path):
    cfg = config(tmp_path, {"a": "random", "b": "forfeit", "c": "first", "d": "random"})
    summary = run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    assert summary.standings[-1].name == "b"
    b = next(s for s in summary.standings if s.name == "b")
    assert b.forfeits == 4 and b.faults == 4
    _, rows, _, _, faults = stored(db(tmp_path))
    assert {f.kind for f in faults} == {"crash"} and len(faults) == 4
    for r in rows:
        seats = r.seats
        assert r.places[seats.index("b")] >= 1


def test_duplicate_with_a_deal_file(tmp_path):
    (tmp_path / "deals.jsonl").write_text((ROOT / "tests" / "tournament" / "deals.jsonl").read_text())
    cfg = config(tmp_path, {"a": "random", "b": "first"}, extra="format: duplicate\nrounds: 2\ndeals: deals.jsonl\n")
    run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    _, rows, *_ = stored(db(tmp_path))
    file_deals = [json.loads(line)["hands"] for line in (tmp_path / "deals.jsonl").read_text().splitlines()]

    def deals_of(row):
        return [sorted(map(sorted, o["hands"])) for o in map(json.loads, open(row.log_path)) if o["type"] == "deal"]

    assert len(rows) == 4
    assert deals_of(rows[0]) == deals_of(rows[1]) == [sorted(map(sorted, h)) for h in file_deals[0:4]]
    assert deals_of(rows[2]) == deals_of(rows[3]) == [sorted(map(sorted, h)) for h in file_deals[4:8]]
    held = {}
    for row in rows[:2]:
        for o in map(json.loads, Path(row.log_path).read_text().splitlines()):
            if o["type"] == "deal":
                for seat, name in enumerate(row.seats):
                    held.setdefault(name, set()).add((o["deal"], seat))
    assert held["a"] == held["b"] == {(d, s) for d in range(4) for s in range(4)}  # every hand, both entrants


def test_resuming_checks_the_configuration(tmp_path):
    cfg = config(tmp_path, {"a": "random", "b": "first"})
    run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    changed = config(tmp_path, {"a": "random", "b": "first"}, extra="time_control: {per_decision: 3}\n")
    with pytest.raises(ConfigError, match="already holds a tournament named 't' played with a different configuration"):
        run_tournament(changed, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    more = override(cfg, rounds=3)
    summary = run_tournament(more, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    assert summary.recorded_before == 2 and summary.played == 4 and summary.complete
    with pytest.raises(ConfigError, match="rounds can grow, not shrink"):
        run_tournament(cfg, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    # another tournament in the same database is independent
    other = config(tmp_path, {"a": "random", "b": "first"}, name="other")
    assert run_tournament(other, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess)).played == 2


def test_unreachable_databases(tmp_path):
    cfg = config(tmp_path)
    with pytest.raises(ConfigError, match=r"cannot reach database postgresql\+psycopg://u:\*\*\*@127.0.0.1:1/x: "):
        run_tournament(
            cfg, database="postgresql://u:secret@127.0.0.1:1/x", executor=inproc.in_process(inproc.play_inprocess)
        )
    with pytest.raises(ConfigError, match="unsupported database mysql"):
        run_tournament(cfg, database="mysql://u@h/x", executor=inproc.in_process(inproc.play_inprocess))


INTERRUPTIBLE = """
import sys
from pathlib import Path
from arbiter.tournament.config import parse_config
from arbiter.errors import TournamentInterrupted
from arbiter.tournament.loop import run_tournament
from tests.tournament import inproc

if __name__ == "__main__":
    folder = Path(sys.argv[1])
    text = "name: t\\nentrants:\\n  - {name: a, command: random}\\n  - {name: b, command: first}\\n" \\
           "rules: {contracts: [barbu]}\\nrounds: 4\\nlog_folder: logs\\n"
    config = parse_config(text, base_dir=folder, check_commands=False)
    try:
        s = run_tournament(config, database=f"sqlite:///{folder}/r.db", jobs=2, executor=inproc.in_workers(inproc.play_slowly))
    except TournamentInterrupted as e:
        print(e, file=sys.stderr)
        sys.exit(130)
    print("complete", s.played)
"""


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == pgid and fields[0] != b"Z":
                members.append(int(entry.name))
    return members


def test_ctrl_c_stops_the_workers_and_keeps_what_is_recorded(tmp_path):
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    script = tmp_path / "interruptible.py"
    script.write_text(INTERRUPTIBLE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,  # its own process group, as a terminal's foreground job
    )  # fmt: skip
    recorded = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and recorded < 2:
        time.sleep(0.05)
        try:
            with sqlite3.connect(tmp_path / "r.db", timeout=5) as c:
                recorded = c.execute("select count(*) from matches").fetchone()[0]
        except sqlite3.OperationalError:
            pass
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    end = time.monotonic() + 10
    while _group_members(proc.pid) and time.monotonic() < end:
        time.sleep(0.05)
    left = {p: Path(f"/proc/{p}/cmdline").read_bytes() for p in _group_members(proc.pid)}
    assert left == {}  # the workers are gone too
    assert "of 8 matches are recorded; run the same command again to finish" in err and "Traceback" not in err
    _, rows, *_ = stored(db(tmp_path))
    assert 2 <= len(rows) < 8
    text = "name: t\nentrants:\n  - {name: a, command: random}\n  - {name: b, command: first}\n" \
           "rules: {contracts: [barbu]}\nrounds: 4\nlog_folder: logs\n"  # fmt: skip
    again = parse_config(text, base_dir=tmp_path, check_commands=False)
    summary = run_tournament(again, database=db(tmp_path), executor=inproc.in_process(inproc.play_inprocess))
    assert summary.recorded_before == len(rows) and summary.played == 8 - len(rows)
    _, rows, *_ = stored(db(tmp_path))
    assert [r.number for r in rows] == list(range(8))


def test_the_cli_reports_an_interruption_in_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import arbiter.tournament.loop as tournament

    from .conftest import cli_app

    def interrupted(*args, **kwargs):
        raise TournamentInterrupted(3, 8)

    monkeypatch.setattr(tournament, "run_tournament", interrupted)
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "t.yaml").write_text(
        "entrants:\n  - {name: a, command: python bot.py}\n  - {name: b, command: python bot.py}\n"
    )
    result = CliRunner().invoke(cli_app(), ["run", str(tmp_path / "t.yaml")])
    assert result.exit_code == 130
    assert result.stderr.strip() == "interrupted: 3 of 8 matches are recorded; run the same command again to finish"
