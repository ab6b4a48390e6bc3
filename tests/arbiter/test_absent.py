"""The seat of a remote entrant that never came (AbsentPlayer): one ``absent`` fault at deal 0,
the fallback plays the seat from the first card, the entrant forfeits, and the log verifies and
replays like any other."""

from __future__ import annotations

from barbu.matchlog import FaultKind, verify
from barbu.rules import make_ruleset
from typer.testing import CliRunner

from arbiter.cli import app
from arbiter.match.blocking import run_blocking
from arbiter.model import FaultRecord
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import MatchSetup, Referee
from arbiter.referee.players import AbsentPlayer, RandomPlayer
from arbiter.replay.model import load_replay

SHORT = make_ruleset("standard", {"contracts": ["barbu"]})  # 4 deals a match
DETAIL = "alice was not connected after 60s"


def test_an_absent_seat_forfeits_at_once_and_the_log_verifies_and_replays(tmp_path):
    players = [RandomPlayer(seed=0), AbsentPlayer("alice", DETAIL), RandomPlayer(seed=2), RandomPlayer(seed=3)]
    sink = AtomicLogFile(tmp_path / "m.jsonl")
    result = run_blocking(Referee(MatchSetup(SHORT, seed=5), players, sink, log_times=False).play())
    path = sink.commit()

    assert result.status == "complete" and result.deals == 4
    assert result.faults == (FaultRecord(0, 1, FaultKind.ABSENT, DETAIL, "forfeit"),)
    assert result.forfeits == (1,)
    assert result.decisions > 0  # the three others were asked; the absent seat never was

    lines = path.read_text().splitlines(keepends=True)
    verification = verify(lines)
    assert verification.valid and verification.complete, verification.error
    faults = [line for line in lines if '"type":"fault"' in line.replace(" ", "")]
    assert len(faults) == 1 and '"absent"' in faults[0]
    replay = load_replay(lines)
    assert replay.valid and [e.line.kind for e in replay.events if e.kind == "fault"] == [FaultKind.ABSENT]

    shown = CliRunner().invoke(app, ["replay", str(path)], env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert shown.exit_code == 0, shown.output
    assert f"absent: {DETAIL} → forfeit" in shown.output and "valid: complete" in shown.output
