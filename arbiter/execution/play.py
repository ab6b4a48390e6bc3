"""One task played on a match host: the one way every executor plays a match.

:func:`play_task` turns a :class:`~arbiter.model.MatchTask` into the referee's setup, plays it on
a :class:`~arbiter.match.play.MatchHost` (a worker's, or the coordinator's for a match with a
seat played from elsewhere) and returns its :class:`~arbiter.model.MatchOutcome`: the referee's
result, the finished log's path and SHA-256, and what it cost.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path

from barbu.matchlog import MatchResult, Outcome, read_log
from barbu.rules import ruleset_from_json

from arbiter.match.invited import Invitee
from arbiter.match.play import MatchHost, MatchOptions
from arbiter.model import BotSpec, DealSummary, MatchOutcome, MatchTask
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.loop import MatchSetup
from arbiter.referee.players import Player


def task_setup(task: MatchTask) -> tuple[MatchSetup, FaultPolicy]:
    """The referee's MatchSetup and FaultPolicy for a task."""
    setup = MatchSetup(
        ruleset_from_json(task.rules),
        seed=task.seed,
        first_declarer=task.first_declarer,
        match_id=task.match_id,
        deals=[list(d) for d in task.deals] if task.deals is not None else None,
    )
    return setup, FaultPolicy(task.max_strikes)


async def play_task(
    host: MatchHost, task: MatchTask, seats: Sequence[BotSpec | Player | Invitee] | None = None
) -> MatchOutcome:
    """Play ``task`` on ``host``; ``seats``: who plays each seat (by default the task's bots; a
    remote entrant's seat is its invitation, or the absent player). ``arbiter_cpu`` is this
    process's CPU while the match played, shared equally among the matches the host played at
    once (one, in a worker)."""
    setup, policy = task_setup(task)
    options = MatchOptions(
        time_control=task.time_control,
        fault_policy=policy,
        limits=task.limits,
        isolation=task.isolation,
        reuse=task.reuse,
    )
    cpu, crowd = time.process_time(), host.playing + 1
    played = await host.play(list(task.bots) if seats is None else seats, setup, Path(task.log_path), options)
    cpu = (time.process_time() - cpu) / max(crowd, host.playing + 1)
    data = Path(played.log_path).read_bytes()
    deals = logged_deals(data, task.rules) if played.result.complete else ()
    return MatchOutcome(
        task.number,
        played.result,
        str(played.log_path),
        hashlib.sha256(data).hexdigest(),
        wall_seconds=played.wall_seconds,
        arbiter_cpu=cpu,
        bots_cpu=played.bots_cpu,
        remote_seats=sum(bot.remote for bot in task.bots),
        deals=deals,
    )


def logged_deals(data: bytes, rules: dict[str, object]) -> tuple[DealSummary, ...]:
    """A finished log's deals, summed into the standings when the match is recorded (read here,
    where the log was written, so that no page reads logs to show them)."""
    from arbiter.replay.facts import deal_summaries

    try:
        lines = data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return ()
    return deal_summaries(lines, ruleset_from_json(rules))


def logged_result(lines: Sequence[str], task: MatchTask) -> MatchResult | None:
    """What a finished log says its match came to, if it is the log of ``task``'s match (its
    match id, seats, seed and rules); None for anything else (not a finished, valid log of it)."""
    try:
        found = read_log(lines, Outcome())
    except (ValueError, RecursionError):
        return None
    if found is None:
        return None
    h = found.header
    mine = h.match_id == task.match_id and list(h.entrants) == [b.name for b in task.bots] and h.seed == task.seed
    return found.result if mine and h.obj.get("rules") == task.rules else None


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
