"""A scheduled match as the task an executor plays, and a finished log read back as its outcome."""

from __future__ import annotations

from pathlib import Path

from arbiter.errors import ConfigError, LogFileError
from arbiter.execution.play import file_sha256, logged_deals, logged_result
from arbiter.model import MatchOutcome, MatchTask, ScheduledMatch
from arbiter.process.sandbox import strongest_isolation
from arbiter.referee.logfile import read_log_lines
from arbiter.text import printable
from arbiter.tournament.config import TournamentConfig
from arbiter.tournament.schedule import block_deals


def make_task(config: TournamentConfig, m: ScheduledMatch, log_folder: Path) -> MatchTask:
    """What an executor needs to play ``m``: its bots, rules, deals, limits and where its log goes."""
    deals = None
    if config.deals is not None:
        deals = tuple(tuple(d) for d in block_deals(config.deals, m.deal_block, config.rules.deals_per_match))
    return MatchTask(
        number=m.number,
        key=m.key,
        match_id=f"{config.name}/{m.key}",
        bots=tuple(config.entrant(name).spec for name in m.seats),
        rules=config.rules.to_json(),
        seed=m.seed,
        deals=deals,
        first_declarer=m.first_declarer,
        log_path=str(log_folder / f"{config.name}-{m.key}.jsonl"),
        time_control=config.time_control,
        max_strikes=config.fault_policy.max_strikes,
        limits=config.limits,
        isolation=config.isolation or strongest_isolation(),  # a config resolve_environment did not see
    )


def reconcile_log(task: MatchTask, config: TournamentConfig) -> MatchOutcome:
    """The outcome of a pending match whose finished log exists (a kill came between the
    worker's rename and the parent's commit), read from that log; a log that is not that match
    is a ConfigError: it is left as it is, for a person to look at."""
    path = Path(task.log_path)
    try:
        lines = list(read_log_lines(path)) if path.is_file() and not path.is_symlink() else []
    except LogFileError:
        lines = []
    found = logged_result(lines, task)
    if found is None:
        raise ConfigError(
            f"log folder {printable(str(path.parent))} holds {printable(path.name)}, which this database does not "
            f"record and which is not a finished log of match {task.key} of tournament {config.name!r}; it is "
            "left as it is: move it away (or give the tournament another log_folder) and run again"
        )
    deals = logged_deals(path.read_bytes(), task.rules) if found.complete else ()
    return MatchOutcome(task.number, found, str(path), file_sha256(path), deals=deals)
