"""``arbiter ab``: the driver (arbiter.verdict.ab) and the command, on in-process players and on
the real sample bots.

In-process players make the driver's logic fast to test (pairing, resume, voided sets, the
per-contract split, fixed count); the slow tests play the real bot processes through the command
line: the heuristic bot against the random bot accepts H1 within 16 sets (interrupted with
Ctrl-C after its first set and resumed), and the random bot against itself (two seeds) accepts H0.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from barbu.matchlog import MatchStatus
from barbu.rules import make_ruleset
from typer.testing import CliRunner

from arbiter.cli import app
from arbiter.errors import ConfigError, TournamentError
from arbiter.execution.play import file_sha256, task_setup
from arbiter.match.blocking import run_blocking
from arbiter.model import MatchOutcome, MatchTask
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import Referee
from arbiter.referee.players import Player, RandomPlayer, StrategyPlayer
from arbiter.verdict.ab import MATCHES_PER_SET, AbSpec, ab_config, default_field, run_ab
from arbiter.verdict.sprt import UNATTRIBUTED, FixedConfig, SprtConfig, Verdict

from ..tournament import inproc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "sample_bots"))
from heuristic_bot import HeuristicBot  # noqa: E402

SHORT = make_ruleset("standard", {"contracts": ["no_tricks", "no_hearts", "barbu"]})  # 12 deals a match
SHORT_SET = "contracts=[no_tricks,no_hearts,barbu]"
RANDOM = f"python {ROOT / 'sample_bots' / 'random_bot.py'}"
HEURISTIC = f"python {ROOT / 'sample_bots' / 'heuristic_bot.py'}"


# ---- in-process players -------------------------------------------------------------------------
def player(command: str) -> Player:
    """``heuristic``; ``random:N`` (a fresh Random(N) every match, as the random bot process with
    BARBU_SEED=N); ``first`` (the first legal action)."""
    if command == "heuristic":
        return StrategyPlayer(HeuristicBot().decide, "heuristic")
    if command.startswith("random:"):
        return RandomPlayer(seed=int(command.split(":")[1]), name="random")
    if command == "first":
        return StrategyPlayer(lambda view: view.legal[0], "first")
    raise ValueError(command)


def play(task: MatchTask) -> MatchOutcome:
    started = time.perf_counter()
    setup, policy = task_setup(task)
    control = task.time_control
    players = [player(b.command) for b in task.bots]
    sink = AtomicLogFile(Path(task.log_path))
    seats = [{"seat": s, "entrant": b.name} for s, b in enumerate(task.bots)]
    result = run_blocking(Referee(setup, players, sink, seats=seats, time_control=control, fault_policy=policy).play())
    path = sink.commit()
    return MatchOutcome(task.number, result, str(path), file_sha256(path), wall_seconds=time.perf_counter() - started)


ABORT_AT: set[int] = set()


def play_aborting(task: MatchTask) -> MatchOutcome:
    """As ``play``, but the matches numbered in ABORT_AT end aborted (as the watchdog ends one)."""
    from dataclasses import replace

    outcome = play(task)
    if task.number not in ABORT_AT:
        return outcome
    return replace(outcome, result=replace(outcome.result, status=MatchStatus.ABORTED, reason="match limit"))


def spec(tmp_path: Path, a: str, b: str, test, **kw) -> AbSpec:
    kw.setdefault("field", ("first",))  # instant; the field's strength does not matter here
    return AbSpec(
        a=a, b=b, test=test, rules=SHORT, database=f"sqlite:///{tmp_path}/ab.db", log_folder=tmp_path / "logs",
        check_commands=False, name="t", **kw,
    )  # fmt: skip


def sprt(max_sets: int, delta1: float = 100.0, min_sets: int = 8) -> SprtConfig:
    return SprtConfig(0.0, delta1, max_sets=max_sets, min_sets=min_sets)


def stored_totals(tmp_path: Path) -> list[tuple[int, list[str], list[int]]]:
    with sqlite3.connect(tmp_path / "ab.db") as c:
        rows = c.execute("select number, seats, totals from matches order by number").fetchall()
    return [(n, json.loads(s), json.loads(t)) for n, s, t in rows]


# ---- the driver -------------------------------------------------------------------------------
def test_the_test_is_a_tournament_of_paired_sets(tmp_path):
    config = ab_config(spec(tmp_path, "first", "heuristic", sprt(16)), 3)
    assert config.format == "ab" and config.entrant_names == ["A", "B", "field"] and config.rounds == 3
    command, folder = default_field()
    assert (
        command == "python sample_bots/heuristic_bot.py" and Path(folder, "sample_bots", "heuristic_bot.py").is_file()
    )
    default = ab_config(AbSpec(a=RANDOM, b=HEURISTIC, test=sprt(16)))
    assert default.entrant("field").command == command and default.entrant("field").cwd == folder
    assert (
        default.name.startswith("ab-") and default.name == ab_config(AbSpec(a=RANDOM, b=HEURISTIC, test=sprt(99))).name
    )
    assert default.name != ab_config(AbSpec(a=RANDOM, b=HEURISTIC, test=sprt(16), seed=1)).name
    with pytest.raises(ConfigError, match="--b"):
        ab_config(AbSpec(a=RANDOM, b="python no/such/bot.py", test=sprt(16)))


def test_a_bot_against_itself_differs_by_exactly_nothing_and_accepts_h0(tmp_path):
    # The heuristic bot is deterministic: on the same deals from the same seats, A and B play the
    # very same game, so every set's difference is 0 — the pairing removes all the luck.
    test = spec(tmp_path, "heuristic", "heuristic", sprt(16, min_sets=4), field=("heuristic",))
    result = run_ab(test, executor=inproc.in_process(play))
    assert result.verdict is Verdict.H0 and result.state.decided_at == 4
    assert [s.diff for s in result.sets] == [0.0] * 4
    assert all(abs(v) < 1e-9 for v in result.state.contract_means().values())
    assert result.played == 4 * MATCHES_PER_SET


def test_the_difference_and_its_contracts_come_from_the_recorded_matches(tmp_path):
    result = run_ab(spec(tmp_path, "random:1", "heuristic", sprt(16, min_sets=4)), executor=inproc.in_process(play))
    assert result.verdict is Verdict.H1 and result.state.decided_at == 4  # a rout: decided at min_sets
    rows = stored_totals(tmp_path)
    assert len(rows) == 4 * MATCHES_PER_SET
    for s in result.sets:
        mine = rows[s.number * 8 : s.number * 8 + 8]
        a = sum(t[seats.index("A")] for _, seats, t in mine[:4])
        b = sum(t[seats.index("B")] for _, seats, t in mine[4:])
        assert "A" not in mine[4][1] and mine[0][1].index("A") == 0 and mine[4][1].index("B") == 0
        assert s.diff == (b - a) / 4
        assert set(s.contracts) == {"no_tricks", "no_hearts", "barbu"}  # every log read: nothing unattributed
        assert math.isclose(sum(s.contracts.values()), s.diff)
    means = result.state.contract_means()
    assert math.isclose(sum(means.values()), result.state.mean)
    data = result.to_json(with_history=True)
    assert data["verdict"] == "H1" and data["sets_played"] == 4 and len(data["history"]) == 4
    assert set(data["contracts_ci95"]) == set(means)


def test_a_rerun_continues_and_ends_where_one_run_would(tmp_path):
    # two seeds of the random player, and a δ1 far too small to decide in a few sets
    first = run_ab(spec(tmp_path / "1", "random:1", "random:2", sprt(3, 5.0, 2)), executor=inproc.in_process(play))
    assert first.verdict is Verdict.MAX_REACHED and len(first.sets) == 3
    again = run_ab(spec(tmp_path / "1", "random:1", "random:2", sprt(5, 5.0, 2)), executor=inproc.in_process(play))
    assert again.recorded_before == 3 * MATCHES_PER_SET and again.played == 2 * MATCHES_PER_SET
    once = run_ab(spec(tmp_path / "2", "random:1", "random:2", sprt(5, 5.0, 2)), executor=inproc.in_process(play))
    assert again.verdict == once.verdict == Verdict.MAX_REACHED and again.state.history == once.state.history
    assert [s.diff for s in again.sets] == [s.diff for s in once.sets] and len(once.sets) == 5
    # the budget played: a rerun plays nothing and says the same
    third = run_ab(spec(tmp_path / "2", "random:1", "random:2", sprt(5, 5.0, 2)), executor=inproc.in_process(play))
    assert third.played == 0 and third.verdict == once.verdict and third.state.history == once.state.history


def test_an_aborted_match_voids_its_set(tmp_path):
    ABORT_AT.clear()
    ABORT_AT.add(2 * MATCHES_PER_SET + 5)  # set 3, B's second match
    try:
        result = run_ab(
            spec(tmp_path, "random:1", "heuristic", sprt(16, min_sets=4)), executor=inproc.in_process(play_aborting)
        )
    finally:
        ABORT_AT.clear()
    assert result.voided == [2] and result.sets[2].diff is None
    assert result.state.n == len(result.sets) - 1 == 4  # a fifth set was played to reach min_sets
    assert result.verdict is Verdict.H1
    assert result.to_json(with_history=True)["set_diffs"][2] == [3, None]


def test_too_many_aborted_matches_stop_the_test(tmp_path):
    ABORT_AT.clear()
    ABORT_AT.update(r * MATCHES_PER_SET for r in range(0, 8, 2))  # every other set
    try:
        with pytest.raises(TournamentError, match="4 of 8 sets had an aborted match"):
            run_ab(spec(tmp_path, "random:1", "first", sprt(16)), executor=inproc.in_process(play_aborting))
    finally:
        ABORT_AT.clear()


def test_a_missing_log_leaves_its_total_unattributed(tmp_path):
    result = run_ab(spec(tmp_path, "random:1", "first", sprt(2, min_sets=2)), executor=inproc.in_process(play))
    log = next((tmp_path / "logs").glob("t-s2-b3.jsonl"))
    log.unlink()
    again = run_ab(spec(tmp_path, "random:1", "first", sprt(2, min_sets=2)), executor=inproc.in_process(play))
    assert again.played == 0 and again.state.mean == result.state.mean
    assert UNATTRIBUTED in again.sets[1].contracts and UNATTRIBUTED not in again.sets[0].contracts
    assert math.isclose(sum(again.sets[1].contracts.values()), again.sets[1].diff)
    assert math.isclose(sum(again.state.contract_means().values()), again.state.mean)


def test_fixed_count_plays_the_count_without_a_test(tmp_path):
    result = run_ab(spec(tmp_path, "first", "heuristic", FixedConfig(3)), executor=inproc.in_process(play))
    data = result.to_json()
    assert data["mode"] == "fixed" and "llr" not in data and data["target_sets"] == 3
    assert len(result.sets) == 3 and result.verdict is Verdict.MAX_REACHED and data["ci95"] is not None


# ---- the command --------------------------------------------------------------------------------
def invoke(*args: str):
    result = CliRunner().invoke(app, ["ab", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--fixed", "64", "--delta1", "50"], "--fixed plays a fixed count without a test: drop --delta1"),
        (["--max-matches", "60"], "allows 7 sets of 8; the test gives no verdict before 8 sets: allow at least 64"),
        (["--delta0", "10", "--delta1", "5"], "the test: need finite delta0 < delta1"),
        (["--alpha", "0"], "the test: need 0 < alpha"),
        (["--name", "no/slash"], "--name 'no/slash': use letters"),
        (["--field", "x", "--field", "x", "--field", "x", "--field", "x"], "the field has 1 to 3 bots, got 4"),
        (["--set", "contracts=[nope]"], "nope"),
    ],
)
def test_the_command_refuses_what_cannot_be_tested(tmp_path, args, message):
    code, out, err = invoke("--a", RANDOM, "--b", HEURISTIC, "--db", str(tmp_path / "x.db"), *args)
    assert code == 2 and message in err and out == ""
    assert not (tmp_path / "x.db").exists()


def test_the_command_names_a_missing_bot(tmp_path):
    code, _, err = invoke("--a", "python no/such/bot.py", "--b", HEURISTIC, "--db", str(tmp_path / "x.db"))
    assert code == 2 and err.startswith("error: --a 'python no/such/bot.py': no such file: no/such/bot.py")


def test_another_database_never_takes_over_the_tests_logs(tmp_path):
    """The log folder is its database's (as for every tournament): a run of the same test with
    another database refuses at once, and the recorded logs stay as they were."""
    first = spec(tmp_path, "random:1", "random:2", FixedConfig(1))
    run_ab(first, executor=inproc.in_process(play))
    logs = {p: p.read_bytes() for p in (tmp_path / "logs").glob("t-s1-*.jsonl")}
    assert len(logs) == MATCHES_PER_SET
    other = dataclasses.replace(first, database=f"sqlite:///{tmp_path}/other.db")
    with pytest.raises(ConfigError, match="does not record, e.g. t-s1-"):
        run_ab(other, executor=inproc.in_process(play))
    assert {p: p.read_bytes() for p in (tmp_path / "logs").glob("t-s1-*.jsonl")} == logs


# ---- real bots --------------------------------------------------------------------------------
def arbiter_ab(*args: str) -> list[str]:
    return [sys.executable, "-m", "arbiter", "ab", *args]


def recorded(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return c.execute("select count(*) from matches").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.slow
def test_heuristic_against_random_accepts_h1_within_16_sets_across_an_interruption(tmp_path):
    args = arbiter_ab(
        "--a", f"env BARBU_SEED=1 {RANDOM}", "--b", HEURISTIC, "--set", SHORT_SET, "--db", str(tmp_path / "ab.db"),
        "--jobs", "2", "--json", "--html", str(tmp_path / "ab.html"),
    )  # fmt: skip
    proc = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and recorded(tmp_path / "ab.db") < MATCHES_PER_SET:
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate(timeout=60)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == "", err
    assert "run the same command again to finish" in err and "Traceback" not in err
    before = recorded(tmp_path / "ab.db")
    assert MATCHES_PER_SET <= before < 8 * MATCHES_PER_SET

    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["verdict"] == "H1" and data["decided_at"] <= 16, data
    # a match whose log was finished but not yet recorded when Ctrl-C came is recorded from its log
    assert data["recorded_before"] == before and data["played_now"] + data["reconciled"] == data["matches"] - before
    assert data["mean"] > data["delta1"] and data["ci95"][0] > 0
    assert set(data["contracts"]) == {"no_tricks", "no_hearts", "barbu"}
    assert (tmp_path / "ab.html").stat().st_size > 10_000 and data["html"] == str(tmp_path / "ab.html")
    print(f"heuristic vs random: H1 after {data['decided_at']} sets, mean {data['mean']:+.1f} {data['ci95']}")


@pytest.mark.slow
def test_random_against_itself_never_accepts_h1_and_accepts_h0(tmp_path):
    # Two seeds of the same random bot: the same player, so δ = 0. SD per set ≈ 80 here, so with
    # δ1 = 100 the test needs about 8 to 12 sets for H0 (P(H1) ≈ 1%, P(no verdict in 32) small).
    done = subprocess.run(
        arbiter_ab(
            "--a", f"env BARBU_SEED=1 {RANDOM}", "--b", f"env BARBU_SEED=2 {RANDOM}", "--set", SHORT_SET,
            "--delta1", "100", "--max-matches", "256", "--db", str(tmp_path / "ab.db"), "--jobs", "2", "--json",
        ),
        cwd=tmp_path, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["verdict"] == "H0", data
    assert all(p[1] < data["upper"] for p in data["history"])  # H1's bound never reached
    print(f"random vs random: H0 after {data['decided_at']} sets, mean {data['mean']:+.1f} {data['ci95']}")


def test_fixed_count_draws_no_llr(tmp_path):
    from arbiter.verdict.sprt import FixedConfig
    from arbiter.web.ab import render_ab_page

    fixed = run_ab(spec(tmp_path, "first", "random:1", FixedConfig(2)), executor=inproc.in_process(play))
    html = render_ab_page(fixed.to_json(with_history=True))
    assert 'id="llr-chart"' not in html and 'id="ci-chart"' in html and "fixed count" in html


def test_the_command_lines_progress_is_an_observer_of_the_run_like_any_tournament(tmp_path):
    """The rich reporter is handed to the tournament loop beside the stop rule: it hears each
    match (the bar), each set (one line), and a resumed run says what it found recorded."""
    from io import StringIO

    from rich.console import Console

    from arbiter.cli.ab_output import RichAbReporter

    first = spec(tmp_path, "random:1", "random:2", FixedConfig(1))
    run_ab(first, executor=inproc.in_process(play))
    out = StringIO()
    again = dataclasses.replace(first, test=FixedConfig(2))
    result = run_ab(again, reporter=RichAbReporter(Console(file=out, width=120), 2), executor=inproc.in_process(play))
    text = out.getvalue()
    assert len(result.sets) == 2
    assert f"A/B test, at most {2 * MATCHES_PER_SET} matches (2 sets of {MATCHES_PER_SET})" in text
    assert f"resuming with {MATCHES_PER_SET} recorded" in text
    assert "set   1" in text and "set   2" in text and f"{2 * MATCHES_PER_SET}/{2 * MATCHES_PER_SET}" in text
