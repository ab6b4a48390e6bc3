"""The one log reader: typed lines handed to visitors (barbu.matchlog.read_log)."""

from __future__ import annotations

import json
from pathlib import Path

from barbu.loglines import (
    DealEnd,
    Dealt,
    Decision,
    Declared,
    Doubled,
    Fault,
    FaultKind,
    Header,
    LogLine,
    MatchEnd,
    Played,
    TrickDone,
)
from barbu.matchlog import Outcome, Verification, Visitor, read_log, verify
from barbu.rules import MatchState, card_name, hand_names

FIXED_LOG = Path(__file__).resolve().parents[1] / "replay" / "data" / "nq-domino-seed1.jsonl"


def lines_of(path: Path = FIXED_LOG) -> list[str]:
    with open(path, encoding="utf-8", newline="") as f:
        return f.readlines()


class Collect(Visitor[tuple[list[LogLine], Verification]]):
    def __init__(self) -> None:
        self.lines: list[LogLine] = []

    def visit(self, line: LogLine, state: MatchState) -> None:
        self.lines.append(line)

    def end(self, verification: Verification) -> tuple[list[LogLine], Verification]:
        return self.lines, verification


def test_every_line_typed_as_written():
    """Each line comes as its type, its fields those of the line as written (kept in ``obj``)."""
    text = lines_of()
    typed, v = read_log(text, Collect())
    assert v == verify(text) and v.valid and v.complete
    assert [t.number for t in typed] == list(range(1, len(text) + 1))
    assert [t.obj for t in typed] == [json.loads(line) for line in text]
    kinds = {type(t) for t in typed}
    assert kinds == {Header, Dealt, Declared, Doubled, Played, TrickDone, DealEnd, MatchEnd, Fault}
    for t in typed:
        o = t.obj
        assert o["type"] == t.TYPE
        if isinstance(t, Header):
            assert t.entrants == tuple(s["entrant"] for s in o["seats"]) and t.match_id == o["match_id"]
            assert t.rules.to_json() == o["rules"] and t.first_declarer == o["first_declarer"] and t.seed == o["seed"]
        elif isinstance(t, Dealt):
            assert [hand_names(h) for h in t.hands] == o["hands"] and t.declarer == o["declarer"]
        elif isinstance(t, Decision):
            assert (t.deal, t.seat, t.auto) == (o["deal"], o["seat"], o.get("auto", False))
            assert t.ms == o.get("ms") and (t.ms is None or isinstance(t.ms, float))
            if isinstance(t, Played):
                assert (None if t.card is None else card_name(t.card)) == o["card"]
            elif isinstance(t, Doubled):
                assert list(t.targets) == o["targets"]
            else:
                assert isinstance(t, Declared) and t.declaration.contract.value == o["contract"]
        elif isinstance(t, TrickDone):
            assert [card_name(c) for c in t.cards] == o["cards"] and (t.index, t.winner) == (o["index"], o["winner"])
        elif isinstance(t, DealEnd):
            assert (list(t.raw), list(t.scores), list(t.totals)) == (o["raw"], o["scores"], o["totals"])
        elif isinstance(t, Fault):
            assert t.kind is FaultKind(o["kind"]) and (t.detail, t.action) == (o["detail"], o["action"])
        else:
            assert isinstance(t, MatchEnd) and t.status == "complete" and list(t.places or ()) == o["places"]


def test_a_visitor_never_sees_a_refused_line():
    text = lines_of()
    bad = next(i for i, line in enumerate(text) if '"type":"play"' in line)
    obj = json.loads(text[bad])
    obj["card"] = "XX"
    text[bad] = json.dumps(obj) + "\n"
    typed, v = read_log(text, Collect())
    assert not v.valid and v.line == bad + 1
    assert [t.number for t in typed] == list(range(1, bad + 1))


def test_a_finished_log_of_a_task_gives_its_result_and_no_other_does():
    """What a run records from a finished log nobody recorded (and what a cluster's worker
    returns is checked against): ``Outcome``'s result, for the log of this task's match only."""
    from dataclasses import replace

    from arbiter.execution.play import logged_result
    from arbiter.model import BotSpec, MatchTask, TimeControl

    found = read_log(lines_of(), Outcome())
    assert found is not None
    h, result = found.header, found.result
    assert result.faults and result.decisions > 0 and any(result.think_seconds)
    assert list(result.forfeits) == sorted({f.seat for f in result.faults if f.action == "forfeit"})
    task = MatchTask(
        0,
        "k",
        h.match_id or "",
        tuple(BotSpec(n, "") for n in h.entrants),
        h.obj["rules"],
        h.seed or 0,
        None,
        h.first_declarer,
        "m.jsonl",
        TimeControl(),
        3,
    )
    assert logged_result(lines_of(), task) == result
    for other in (replace(task, seed=task.seed + 1), replace(task, match_id="x"), replace(task, bots=task.bots[::-1])):
        assert logged_result(lines_of(), other) is None
    cut = lines_of()[:-1]  # not a finished log
    assert read_log(cut, Outcome()) is None and verify(cut).valid and logged_result(cut, task) is None
