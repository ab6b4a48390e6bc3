"""Replay page speed: building the page of a full match, and stepping through it in Chromium.

A full standard 28-deal match is played in-process by random players; its log becomes the
self-contained HTML viewer, whose building is timed in CPU seconds of this process. The page is
then opened in headless Chromium (``scripts/setup_browser.sh``) and timed three ways: 200 steps
inside the page (each drawn and laid out, one by one), 200 key presses sent from here (each a
round trip through the browser's input pipeline), and a jump from the first step to the last and
back.

    .venv/bin/python bench/replay_page.py

The last line is ``replay page: built in B s, P MB, step median M ms (p90 Q ms), 200 keys K s``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from barbu.rules import make_ruleset

from arbiter.match.blocking import run_blocking
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import MatchSetup, Referee
from arbiter.referee.players import RandomPlayer
from arbiter.replay.model import load_replay
from arbiter.web import render_html

QUICK = ["--rounds", "1"]  # --quick: a run of seconds that tests/test_benches.py makes

CHROMIUM = os.environ.get("BARBU_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
STEP_TIMES = """() => { barbuReplay.go(0); document.body.offsetHeight; const out = [];
    for (let i = 0; i < 200; i++) { const t = performance.now(); barbuReplay.step(1);
        document.body.offsetHeight; out.push(performance.now() - t); }
    return out; }"""
FAR_JUMP = """() => { const t = performance.now(); barbuReplay.go(barbuReplay.count - 1);
    document.body.offsetHeight; barbuReplay.go(0); document.body.offsetHeight;
    return performance.now() - t; }"""


def full_match_log(folder: Path, seed: int) -> list[str]:
    setup = MatchSetup(make_ruleset("standard"), seed=seed, first_declarer=0, match_id=f"selfplay-{seed}")
    players = [RandomPlayer(seed=f"{seed}/{s}", name=f"random-{s}") for s in range(4)]
    sink = AtomicLogFile(folder / "full.jsonl")
    run_blocking(Referee(setup, players, sink).play())
    return sink.commit().read_text(encoding="utf-8").splitlines(keepends=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="times each measurement is repeated")
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines = full_match_log(folder, args.seed)
        builds = []
        for _ in range(args.rounds):
            t0 = time.process_time()
            page_text, steps = render_html(load_replay(lines))
            builds.append(time.process_time() - t0)
        out = folder / "full.html"
        out.write_text(page_text, encoding="utf-8")
        size_mb = len(page_text.encode()) / 1e6
        print(f"page: {len(lines)} log lines, {steps} steps, {size_mb:.2f} MB, "
              f"built in {statistics.median(builds):.2f} s CPU (median of {args.rounds})")  # fmt: skip
        step_times: list[float] = []
        keys, far = [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(out.as_uri())
            page.wait_for_function("() => window.barbuReplay && document.body.dataset.step !== undefined")
            for _ in range(args.rounds):
                step_times += page.evaluate(STEP_TIMES)
                far.append(page.evaluate(FAR_JUMP))
                page.evaluate("barbuReplay.go(0)")
                t0 = time.perf_counter()
                for _ in range(200):
                    page.keyboard.press("ArrowRight")
                page.wait_for_function("document.body.dataset.step === '200'")
                keys.append(time.perf_counter() - t0)
            browser.close()
        step_times.sort()
        median = statistics.median(step_times)
        p90 = step_times[int(len(step_times) * 0.9)]
        print(f"steps in the page: median {median:.1f} ms, p90 {p90:.1f} ms ({len(step_times)} steps); "
              f"first to last and back: {statistics.median(far):.0f} ms")  # fmt: skip
        print(
            f"replay page: built in {statistics.median(builds):.2f} s, {size_mb:.2f} MB, step median "
            f"{median:.1f} ms (p90 {p90:.1f} ms), 200 keys {statistics.median(keys):.2f} s"
        )


if __name__ == "__main__":
    main()
