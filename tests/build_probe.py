"""What a build computes, as digests: run once per build (``BARBU_PURE=1`` and not), compare.

    python tests/build_probe.py MATCHES

Prints the build this process loaded, then one ``name: sha256`` line per part: the logs of
MATCHES random matches (every preset in turn, the engine and MatchLogWriter), random playouts
(whole matches and deals from their first card), the sampler's determinizations at points of
those matches, each played out at random and by the greedy policy (``barbu.rollout``), and the verifier's reports on the oracle logs (tests/data/golden). Two builds
that behave the same print the same lines after the first.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from barbu.build import describe  # noqa: E402
from barbu.matchlog import verify  # noqa: E402
from barbu.rollout import greedy_playout  # noqa: E402
from barbu.rules import PRESETS, Phase, make_ruleset, new_match, observe, random_playout, shuffle_hands  # noqa: E402
from barbu.sampler import Sampler  # noqa: E402

from tests.rules.kit import play_random_match  # noqa: E402


def digest(lines: list[str]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
        h.update(b"\n")
    return h.hexdigest()


def matches(n: int) -> str:
    h = hashlib.sha256()
    presets = sorted(PRESETS)
    for seed in range(n):
        _, lines, _ = play_random_match(make_ruleset(presets[seed % len(presets)]), seed, first_declarer=seed % 4)
        h.update(digest(lines).encode())
    return h.hexdigest()


def playouts(n: int) -> str:
    out = []
    for seed in range(n):
        rules = make_ruleset(sorted(PRESETS)[seed % len(PRESETS)])
        state = new_match(rules, first_declarer=seed % 4)
        rng = random.Random(seed)
        decisions = random_playout(state, rng)
        out.append(f"{decisions} {state.totals} {[r.reason for r in state.results]} {rng.random()}")
    return digest(out)


def sampler(n: int) -> str:
    """Determinizations sampled at each 7th decision of n random matches (seat to act's view),
    played out at random and, once a contract is declared, by the greedy policy."""
    out = []
    for seed in range(n):
        rng = random.Random(seed)
        state = new_match(make_ruleset(sorted(PRESETS)[seed % len(PRESETS)]), first_declarer=seed % 4)
        step = 0
        while state.phase is not Phase.OVER:
            if state.phase is Phase.DEAL:
                state.deal(shuffle_hands(rng))
                continue
            if step % 7 == 0:
                s = Sampler(observe(state, state.turn))
                for _ in range(3):
                    hands = s.sample(rng)
                    sim = s.determinize(hands)
                    played = random_playout(sim, rng, to_deal_end=True)
                    out.append(f"{hands} {played} {sim.totals}")
                    if state.phase is not Phase.DECLARE:
                        greedy = s.determinize(hands)
                        greedy_playout(greedy, len(out) & 3)
                        out.append(f"{greedy.results[-1]} {greedy.totals}")
            actions = state.legal_actions()
            state.apply(actions[rng.randrange(len(actions))])
            step += 1
    return digest(out)


def golden() -> str:
    reports = []
    for path in sorted((ROOT / "tests" / "data" / "golden").glob("*.jsonl")):
        report = verify(path.read_text(encoding="utf-8").splitlines(keepends=True))
        reports.append(json.dumps(report.to_json(), sort_keys=True))
    return digest(reports)


def main() -> None:
    n = int(sys.argv[1])
    print(f"build: {describe()}")
    print(f"matches {n}: {matches(n)}")
    print(f"playouts {n}: {playouts(n)}")
    print(f"sampler {max(1, n // 50)}: {sampler(max(1, n // 50))}")
    print(f"golden: {golden()}")


if __name__ == "__main__":
    main()
