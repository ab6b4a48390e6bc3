"""The Monte-Carlo sample bot: legal, reproducible, on time, and a real bot for the arbiter.

In-process tests drive ``MCBot`` with a fixed number of samples (no clock, so they are
deterministic); the end-to-end tests start it as a program: one short real match through
``arbiter match`` (0 faults) and ``arbiter check-bot``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "sample_bots"))

from barbu.bot import Bot  # noqa: E402
from barbu.rules import PRESETS, Phase, apply, deal, make_ruleset, new_match, observe, shuffle_hands  # noqa: E402
from heuristic_bot import HeuristicBot  # noqa: E402
from mc_bot import MCBot  # noqa: E402
from mc_bot import main as mc_main  # noqa: E402
from mc_strategy.search import Clock, Stats  # noqa: E402

ARBITER = [str(Path(sys.executable).with_name("arbiter"))]
MC = f"{sys.executable} {ROOT / 'sample_bots' / 'mc_bot.py'}"


def play_in_process(rules, bots, seed: int, deals: int) -> list[tuple]:
    """Play ``deals`` deals; every decision is checked against the legal set. Returns the actions."""
    rng = random.Random(seed)
    state = new_match(rules, first_declarer=seed % 4)
    actions = []
    while not state.is_over and len(state.results) < deals:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            continue
        view = observe(state, state.turn)
        action = bots[state.turn].decide(view)
        assert action in view.legal, (view.phase, action, view.legal)
        actions.append(action)
        apply(state, action)
    return actions


def test_is_a_bot():
    bot = MCBot(budget_ms=50)
    assert isinstance(bot, Bot) and bot.name == "mc"


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_legal_in_every_phase_under_every_preset(preset):
    # the 7 contracts once each (declarer seat 0's block): declaring, doubling, tricks, Domino
    rules = make_ruleset(preset)
    mc = [MCBot(seed=s, samples=2, strict=True) for s in range(2)]
    bots = [mc[0], HeuristicBot(), mc[1], HeuristicBot()]
    actions = play_in_process(rules, bots, seed=len(preset), deals=7)
    assert len(actions) > 7 * 40


def test_reproducible_with_a_seed_and_fixed_samples():
    rules = make_ruleset("standard", {"contracts": ["no_hearts", "trumps", "domino"]})
    runs = [
        play_in_process(rules, [MCBot(seed=s, samples=3, strict=True) for s in range(4)], seed=3, deals=3)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_time_left_for_a_decision():
    bot = MCBot()
    bot.decision_seconds = 1.0
    assert bot.seconds_for() == pytest.approx(0.8)  # the arbiter's time less the margin
    bot.decision_seconds = 0.1
    assert bot.seconds_for() == pytest.approx(0.07)
    assert MCBot(budget_ms=40).seconds_for() == pytest.approx(0.036)  # the budget caps it, less 10%
    capped = MCBot(budget_ms=500)
    capped.decision_seconds = 0.2
    assert capped.seconds_for() == pytest.approx(0.16)  # never beyond the arbiter's time


def test_clock_stops_before_the_deadline():
    import time

    start = time.perf_counter()
    clock = Clock(start + 0.05, min_samples=3)
    samples = 0
    while clock.more(samples):
        time.sleep(0.004)
        samples += 1
    assert samples >= 3
    assert time.perf_counter() - start < 0.05 + 0.02
    assert not Clock(float("-inf"), 2).more(2) and Clock(float("-inf"), 2).more(1)


def test_stats_keep_the_default_without_evidence():
    stats = Stats(["a", "b"], default="a")
    stats.add(1.0, [0.0, 5.0])
    assert stats.best() == "a"  # one sample: no standard error, the default stays
    for k in range(30):
        stats.add(1.0, [0.0, 5.0 + (k % 3)])
    assert stats.best() == "b"


def test_budget_from_the_environment(monkeypatch):
    seen = {}

    def fake_run(bot):
        seen["bot"] = bot
        return 0

    import barbu.runner

    monkeypatch.setattr(barbu.runner, "run", fake_run)
    monkeypatch.setenv("BARBU_MC_BUDGET_MS", "75")
    assert mc_main([]) == 0
    assert seen["bot"].budget == pytest.approx(0.075)
    assert mc_main(["--budget", "20"]) == 0
    assert seen["bot"].budget == pytest.approx(0.02)


def test_short_real_match_without_faults(tmp_path):
    log = tmp_path / "match.jsonl"
    heuristic = f"{sys.executable} {ROOT / 'sample_bots' / 'heuristic_bot.py'}"
    random_bot = f"env BARBU_SEED=4 {sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
    run = subprocess.run(
        [*ARBITER, "match", "--bot", f"{MC} --budget 15", "--bot", heuristic, "--bot", random_bot, "--bot", heuristic,
         "--set", "contracts=no_tricks,barbu,trumps,domino", "--seed", "7", "--log", str(log), "--json"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["status"] == "complete"
    assert result["faults"] == [] and result["forfeits"] == []
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert sum(1 for x in lines if x["type"] == "deal_end") == 16
    assert not any(x["type"] == "fault" for x in lines)


@pytest.mark.slow
def test_passes_check_bot():
    run = subprocess.run(
        # a fixed seed and sample count: the same play every run, so the situations check-bot looks
        # for (a Domino pass among them) come up whatever the machine's load
        [*ARBITER, "check-bot", "--", sys.executable, str(ROOT / "sample_bots" / "mc_bot.py"), "--seed", "1",
         "--samples", "8"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "all" in run.stdout and "passed" in run.stdout
