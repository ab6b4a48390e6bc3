"""One match between sample bots written in other languages and the Python ones, checked end to
end: shared by tests/node, tests/go and tests/java."""

from __future__ import annotations

import json
from pathlib import Path

from barbu.matchlog import verify
from barbu.rules import make_ruleset

from arbiter.match.blocking import play_bot_match
from arbiter.match.play import BotMatch, BotSpec
from arbiter.referee.logfile import read_log_lines
from arbiter.referee.loop import MatchSetup


def play_checked_match(
    commands: list[str], match_id: str, log_folder: Path, *, seed: int, listen: str | None = None
) -> BotMatch:
    """Play the four commands (seat order) on standard rules, the arbiter on ``listen`` (default:
    a Unix socket); the match must complete without a fault, its log verify with the same
    result, and its header name the commands."""
    bots = [BotSpec(f"seat{s}", c) for s, c in enumerate(commands)]
    played = play_bot_match(
        bots,
        MatchSetup(make_ruleset(), seed=seed, match_id=match_id),
        log_folder / f"{match_id}.jsonl",
        listen=listen,
    )
    r = played.result
    assert r.status == "complete" and r.deals == 28, r
    assert r.faults == () and r.forfeits == ()
    assert sum(r.totals) == 0
    report = verify(read_log_lines(played.log_path))
    assert report.valid and report.complete, report
    assert tuple(report.totals) == r.totals and tuple(report.places) == r.places
    header = json.loads(played.log_path.read_text().splitlines()[0])
    assert [s["command"] for s in header["seats"]] == commands
    return played
