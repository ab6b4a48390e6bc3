"""``arbiter ab``: is bot B better than bot A? Paired sets, played until the sequential test decides.

The test is a tournament of the ``ab`` format (:func:`arbiter.tournament.schedule.paired_sets`)
played by the one tournament loop (:func:`arbiter.tournament.loop.run_tournament`): its schedule
is :class:`PairedSets`, which grows set by set while the executor has room, and its stop rule
is the observer :class:`SprtRule`, so it is stored in the results database like any tournament
(one lease, one database) and a rerun of the same command continues it. Set r is 8 matches on
the same deals: A with the field in its 4 seat rotations, then B in the very same seats against
the very same field. Its statistic is

    d = (Σ B's match totals − Σ A's match totals) / 4   (points per match),

split by contract from the logs' deal scores (:class:`arbiter.replay.facts.Facts`, read through :func:`barbu.matchlog.read_log`). The sets
feed :class:`arbiter.verdict.sprt.SprtState` in schedule order.

No new set is scheduled once the test has decided or the budget (``--max-matches``) is
scheduled. The sets still in flight when the verdict comes are played, enter the estimate (mean,
CI, contracts) and cannot reverse the verdict, which is the first crossing in schedule order.

Aborted matches (the match watchdog, an internal error; a bot's crash or timeouts are faults and
forfeits, not aborts, and count against it) void their set: the set is left out of the test, in
schedule order, and counted as voided. Voided sets still use the budget. When more than a quarter
of the sets (and at least 4) are voided the test stops with an error: the bots or the time control
need looking at first. A match whose log is missing or changed keeps its total in the test; only
its per-contract split is lost (the total goes to ``unattributed``).

Plain values in and out (no typer, no rich): the command line (:mod:`arbiter.cli.ab`) shows
the test's progress through an :class:`AbReporter`, which the stop rule tells.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from barbu.matchlog import read_log
from barbu.rules import Ruleset, make_ruleset

import arbiter
from arbiter.errors import ConfigError, TournamentError
from arbiter.execution.executors import ExecutorFactory
from arbiter.execution.venues import default_executor
from arbiter.model import MatchOutcome, ScheduledMatch, TimeControl
from arbiter.replay.facts import Facts
from arbiter.tournament.config import DEFAULT_LOG_ROOT, EntrantConfig, TournamentConfig, bot_command
from arbiter.tournament.formats import Format, register
from arbiter.tournament.loop import Observer, Run, Schedule, run_tournament
from arbiter.tournament.recorded import read_match_log
from arbiter.tournament.schedule import MAX_MATCHES, PAIRED_KEY, paired_sets
from arbiter.verdict import DEFAULT_DELTA0, DEFAULT_DELTA1, DEFAULT_MAX_MATCHES, MATCHES_PER_SET
from arbiter.verdict.sprt import UNATTRIBUTED, FixedConfig, SprtConfig, SprtState, Verdict, mean_ci

__all__ = [
    "DEFAULT_DELTA0",
    "DEFAULT_DELTA1",
    "DEFAULT_MAX_MATCHES",
    "MATCHES_PER_SET",
    "AbReporter",
    "AbResult",
    "AbSpec",
    "ab_config",
    "default_field",
    "run_ab",
]

FORMAT = register(
    Format(
        "ab",
        PAIRED_KEY,
        False,
        lambda entrants, sets: MATCHES_PER_SET * sets,
        lambda entrants, sets, seed, challenger: paired_sets(entrants, sets, seed),
    )
)
"""``arbiter ab``'s paired sets (keyed ``s4-b2``: set 4, B's side, rotation 2)."""

DEFAULT_FIELD_SCRIPT = ("sample_bots", "heuristic_bot.py")
VOID_LIMIT = 0.25  # stop when more than this share of the sets (and at least VOID_MINIMUM) are voided
VOID_MINIMUM = 4


@dataclass(frozen=True)
class AbSpec:
    """What the user asked for. ``test`` holds the budget: ``SprtConfig.max_sets`` (required
    here) or ``FixedConfig.sets``. Commands are as typed; they run in ``base_dir`` (default: the
    current folder), except the default field, which runs in the project's folder."""

    a: str
    b: str
    test: SprtConfig | FixedConfig
    field: tuple[str, ...] = ()  # empty: the heuristic sample bot
    rules: Ruleset = dataclasses.field(default_factory=lambda: make_ruleset("standard"))
    seed: int = 0
    name: str | None = None  # default: ab-<hash of the commands, rules, seed and time control>
    database: str | None = None
    log_folder: Path | None = None  # default: logs/<name> in the current folder
    jobs: int | None = None  # matches at once here; with ``cluster``, matches asked of it per batch
    cluster: str | None = None  # a Dask scheduler's address: the matches are played there
    time_control: TimeControl = TimeControl()
    base_dir: Path | None = None
    check_commands: bool = True  # False: commands are taken as they are (tests with in-process players)

    @property
    def budget_sets(self) -> int:
        if isinstance(self.test, FixedConfig):
            return self.test.sets
        if self.test.max_sets is None:
            raise ConfigError("an A/B test needs a budget (max_sets)")
        return self.test.max_sets


# ---- the tournament behind the test -----------------------------------------------------------
def default_field() -> tuple[str, str]:
    """The default field's command and the folder it runs in: the heuristic sample bot of this
    project (next to the ``arbiter`` package), else ``sample_bots/`` of the current folder."""
    command = "python " + "/".join(DEFAULT_FIELD_SCRIPT)
    for root in (Path(arbiter.__file__).resolve().parents[1], Path.cwd()):
        if root.joinpath(*DEFAULT_FIELD_SCRIPT).is_file():
            return command, str(root)
    raise ConfigError(
        "the default field, the heuristic sample bot (sample_bots/heuristic_bot.py), is not found next to the "
        "arbiter package nor in the current folder; give the field with --field"
    )


def field_names(count: int) -> list[str]:
    return ["field"] if count == 1 else [f"field{i + 1}" for i in range(count)]


def _entrants(spec: AbSpec) -> tuple[EntrantConfig, ...]:
    base = (spec.base_dir or Path.cwd()).resolve()
    if len(spec.field) > 3:
        raise ConfigError(f"the field has 1 to 3 bots (--field), got {len(spec.field)}")

    def launch(command: str, folder: Path, where: str) -> str:
        return bot_command(command, folder, where) if spec.check_commands else command

    out = [
        EntrantConfig("A", spec.a, launch(spec.a, base, "--a"), str(base)),
        EntrantConfig("B", spec.b, launch(spec.b, base, "--b"), str(base)),
    ]
    if spec.field:
        for name, command in zip(field_names(len(spec.field)), spec.field, strict=True):
            out.append(EntrantConfig(name, command, launch(command, base, "--field"), str(base)))
    else:
        command, root = default_field()
        out.append(EntrantConfig("field", command, launch(command, Path(root), "--field"), root))
    return tuple(out)


def default_name(spec: AbSpec, entrants: Sequence[EntrantConfig]) -> str:
    """``ab-`` and a hash of what fixes the games: the same command line resumes the same test."""
    tc = spec.time_control
    data = {
        "entrants": [[e.name, e.command, e.cwd] for e in entrants],
        "rules": spec.rules.to_json(),
        "seed": spec.seed,
        "time_control": [tc.per_decision, tc.reserve, tc.connect, tc.match_limit],
    }
    return "ab-" + hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]


def ab_config(spec: AbSpec, sets: int = 1, entrants: tuple[EntrantConfig, ...] | None = None) -> TournamentConfig:
    """The tournament of ``sets`` paired sets (format ``ab``: entrants A, B, field…); the
    entrants' commands are checked unless ``entrants`` gives them checked already."""
    entrants = entrants or _entrants(spec)
    name = spec.name or default_name(spec, entrants)
    test = spec.test
    if isinstance(test, FixedConfig):
        design = f"fixed: {test.sets} sets"
    else:
        design = (
            f"SPRT δ0={test.delta0:g} δ1={test.delta1:g} α={test.alpha:g} β={test.beta:g}, at most {test.max_sets} sets"
        )
    source = {  # kept in the database as the tournament's text: what the test is
        "command": "arbiter ab",
        "name": name,
        "entrants": [{"name": e.name, "command": e.command, "cwd": e.cwd} for e in entrants],
        "rules": spec.rules.to_json(),
        "seed": spec.seed,
        "sets": sets,
        "test": design,
    }
    return TournamentConfig(
        name=name,
        entrants=entrants,
        rules=spec.rules,
        format=FORMAT.name,
        rounds=sets,
        seed=spec.seed,
        time_control=spec.time_control,
        parallelism=spec.jobs,
        cluster=spec.cluster,
        database=spec.database,
        log_folder=spec.log_folder or Path(DEFAULT_LOG_ROOT) / name,
        description=f"A/B test: is B ({spec.b}) better than A ({spec.a})? {design}",
        source=json.dumps(source, ensure_ascii=False, indent=1) + "\n",
    )


# ---- from recorded matches to the sets' differences -------------------------------------------
@dataclass(frozen=True)
class MatchInfo:
    """What the test needs of one recorded match."""

    number: int
    status: str
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    log_path: str
    log_sha256: str
    tournament: str  # whose log folder holds the log


@dataclass(frozen=True)
class SetResult:
    """One set: its difference B − A per match and per contract, or voided (an aborted match)."""

    number: int  # 0-based set (the schedule's round)
    diff: float | None  # None: voided
    contracts: dict[str, float] = dataclasses.field(default_factory=dict)


def _contract_totals(info: MatchInfo, seat: int, rules: Ruleset) -> dict[str, float]:
    """The seat's deal scores summed per contract, from the match's log; what the log cannot
    account for (no log, a changed log, a total that is not the sum of its deals) is
    ``unattributed``."""
    total = float(info.totals[seat])
    out: dict[str, float] = {}
    log = read_match_log(info.log_path, info.log_sha256, "", info.tournament, FORMAT.name) if info.log_path else None
    if log is not None and log.status == "ok":
        try:
            verification, deals = read_log(log.lines, Facts(rules))
        except (ValueError, RecursionError):
            verification, deals = None, []
        if verification is not None and verification.valid:
            for d in deals:
                key = d.contract or UNATTRIBUTED
                out[key] = out.get(key, 0.0) + d.scores[seat]
    rest = total - math.fsum(out.values())
    if abs(rest) > 1e-9:
        out[UNATTRIBUTED] = out.get(UNATTRIBUTED, 0.0) + rest
    return out


def set_result(number: int, infos: Sequence[MatchInfo], rules: Ruleset) -> SetResult:
    """The set's difference from its 8 matches (A's 4, then B's 4, in schedule order)."""
    if any(i.status != "complete" for i in infos):
        return SetResult(number, None)
    sums = {"A": 0.0, "B": 0.0}
    contracts: dict[str, float] = {}
    for info in infos:
        player = "A" if "A" in info.seats else "B"
        seat = info.seats.index(player)
        sign = 1.0 if player == "B" else -1.0
        sums[player] += info.totals[seat]
        for name, value in _contract_totals(info, seat, rules).items():
            contracts[name] = contracts.get(name, 0.0) + sign * value / 4
    diff = (sums["B"] - sums["A"]) / 4
    return SetResult(number, diff, {k: v for k, v in contracts.items() if v != 0.0 or k != UNATTRIBUTED})


class SetBook:
    """The recorded matches, and the test fed with the complete sets in schedule order."""

    def __init__(self, test: SprtConfig | FixedConfig, rules: Ruleset, budget: int):
        self.rules = rules
        self.budget = budget
        self.infos: dict[int, MatchInfo] = {}
        self.state = SprtState.start(test)
        self.sets: list[SetResult] = []  # evaluated, in order (voided ones included)

    def add(self, info: MatchInfo) -> None:
        self.infos[info.number] = info

    @property
    def next_set(self) -> int:
        return len(self.sets)

    def advance(self) -> list[tuple[SetResult, SprtState]]:
        """Feed every newly complete set (in order, within the budget) to the test; each with
        the test's state after it."""
        new: list[tuple[SetResult, SprtState]] = []
        while self.next_set < self.budget:
            r = self.next_set
            numbers = range(r * MATCHES_PER_SET, (r + 1) * MATCHES_PER_SET)
            if not all(n in self.infos for n in numbers):
                break
            result = set_result(r, [self.infos[n] for n in numbers], self.rules)
            self.sets.append(result)
            if result.diff is not None:
                self.state = self.state.add(result.diff, result.contracts)
            new.append((result, self.state))
        return new

    @property
    def voided(self) -> list[int]:
        return [s.number for s in self.sets if s.diff is None]

    def contract_cis(self) -> dict[str, tuple[float, float] | None]:
        """Each contract's contribution with its 95% CI over the sets (Student's t)."""
        used = [s.contracts for s in self.sets if s.diff is not None]
        names = sorted({k for c in used for k in c})
        out: dict[str, tuple[float, float] | None] = {}
        for name in names:
            values = [c.get(name, 0.0) for c in used]
            if len(values) < 2:
                out[name] = None
                continue
            m = math.fsum(values) / len(values)
            sd = math.sqrt(math.fsum((v - m) ** 2 for v in values) / (len(values) - 1))
            out[name] = mean_ci(len(values), m, sd)
        return out


def info_from_outcome(m: ScheduledMatch, outcome: MatchOutcome, tournament: str) -> MatchInfo:
    r = outcome.result
    return MatchInfo(m.number, r.status, tuple(m.seats), r.totals, outcome.log_path, outcome.log_sha256, tournament)


# ---- progress and result --------------------------------------------------------------------
class AbReporter(Observer, Protocol):
    """What the command line shows of a test: the loop's progress (an observer of the run, as for
    any tournament) and each set as the test takes it."""

    def set_done(self, result: SetResult, state: SprtState) -> None: ...


@dataclass
class AbResult:
    name: str
    database: str
    log_folder: str
    entrants: dict[str, str]  # name -> command, as written
    launched: dict[str, dict[str, str]]  # name -> the command that ran and its folder
    rules: dict[str, Any]
    seed: int
    state: SprtState
    verdict: Verdict
    sets: list[SetResult]
    budget_sets: int
    contract_cis: dict[str, tuple[float, float] | None]
    played: int  # matches played by this run
    recorded_before: int
    wall_seconds: float
    reconciled: int = 0  # finished logs a stopped run left unrecorded, recorded from the log by this run

    @property
    def voided(self) -> list[int]:
        return [s.number for s in self.sets if s.diff is None]

    def to_json(self, with_history: bool = False) -> dict[str, Any]:
        out = self.state.summary(with_history=with_history)
        out.update(
            verdict=self.verdict.value,
            name=self.name,
            database=self.database,
            log_folder=self.log_folder,
            entrants=self.entrants,
            launched=self.launched,
            rules=self.rules,
            seed=self.seed,
            sets_played=len(self.sets),
            sets_voided=self.voided,
            matches=len(self.sets) * MATCHES_PER_SET,
            max_matches=self.budget_sets * MATCHES_PER_SET,
            played_now=self.played,
            recorded_before=self.recorded_before,
            reconciled=self.reconciled,
            wall_seconds=round(self.wall_seconds, 3),
            contracts_ci95={k: (list(v) if v is not None else None) for k, v in self.contract_cis.items()},
        )
        if with_history:
            out["set_diffs"] = [[s.number + 1, s.diff] for s in self.sets]
        return out


# ---- the test in the tournament loop ------------------------------------------------------------
class SprtRule:
    """The stop rule, an observer of the loop: every recorded match goes to the book, every
    complete set to the test (and to the reporter); too many voided sets stop the run."""

    def __init__(self, spec: AbSpec, reporter: AbReporter | None):
        test = spec.test
        self.budget = spec.budget_sets
        self.min_sets = test.min_sets if isinstance(test, SprtConfig) else self.budget
        self.book = SetBook(test, spec.rules, self.budget)
        self.reporter = reporter

    @property
    def wants_more(self) -> bool:
        return not self.book.state.done and self.book.next_set < self.budget

    def started(self, run: Run) -> None:
        for r in run.repo.match_rows(run.tournament_id):  # checked rows: their JSON is sound
            info = MatchInfo(
                r.number, r.status, tuple(r.seats), tuple(r.totals), r.log_path, r.log_sha256, run.config.name
            )
            self.book.add(info)
        self.advance(run)

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        self.book.add(info_from_outcome(m, outcome, run.config.name))
        self.advance(run)

    def advance(self, run: Run) -> None:
        for result, state in self.book.advance():
            if self.reporter is not None:
                self.reporter.set_done(result, state)
        voided, sets = len(self.book.voided), len(self.book.sets)
        if sets >= min(self.min_sets, self.budget) and voided >= VOID_MINIMUM and voided > VOID_LIMIT * sets:
            raise TournamentError(
                f"{voided} of {sets} sets had an aborted match (the match watchdog or an internal error); "
                f"the test stops: see the log folder {run.config.log_folder} (arbiter.log) and the time control"
            )

    def stopped(self, run: Run) -> None:
        pass


class PairedSets(Schedule):
    """The test's schedule: one paired set more whenever the executor has room, until the test
    decides or the budget is scheduled."""

    def __init__(self, spec: AbSpec, rule: SprtRule):
        self.spec, self.rule = spec, rule
        self.entrants = _entrants(spec)  # every command is checked here, before anything is played
        super().__init__(ab_config(spec, 1, self.entrants))

    def resume(self, stored_rounds: int | None, stored_format: str | None) -> None:
        if stored_format is not None and stored_format != FORMAT.name:
            raise ConfigError(
                f"the database holds a tournament named {self.config.name!r} that is not an A/B test "
                f"({stored_format}); give another --name or database"
            )
        self.set_sets(max(stored_rounds or 0, 1))

    def set_sets(self, sets: int) -> None:
        self.config = ab_config(self.spec, sets, self.entrants)
        self.matches = self.build()

    def grow(self, run: Run) -> list[ScheduledMatch]:
        if not self.rule.wants_more or self.config.rounds >= self.rule.budget:
            return []
        known = len(self.matches)
        self.set_sets(self.config.rounds + 1)
        return self.matches[known:]


def run_ab(
    spec: AbSpec,
    *,
    reporter: AbReporter | None = None,
    executor: ExecutorFactory = default_executor,
) -> AbResult:
    """Play the A/B test until a verdict or the budget (resuming what the database holds)."""
    started = time.perf_counter()
    budget = spec.budget_sets
    if budget * MATCHES_PER_SET > MAX_MATCHES:
        raise ConfigError(f"at most {MAX_MATCHES} matches in one test, got {budget * MATCHES_PER_SET}")
    rule = SprtRule(spec, reporter)
    schedule = PairedSets(spec, rule)
    summary = run_tournament(
        schedule.config,
        database=spec.database,
        jobs=spec.jobs,
        observers=[rule]
        if reporter is None
        else [reporter, rule],  # the reporter first: it shows the sets the rule finds
        schedule=schedule,
        executor=executor,
    )
    book = rule.book
    state = book.state
    if state.done:
        verdict = state.verdict
    elif book.next_set >= budget:
        verdict = Verdict.MAX_REACHED
    else:
        verdict = Verdict.CONTINUE
    config = schedule.config
    return AbResult(
        name=config.name,
        database=summary.database,
        log_folder=str(Path(config.log_folder).resolve()),
        entrants={e.name: e.command or "" for e in config.entrants},
        launched={e.name: {"command": e.launch or e.command or "", "cwd": e.cwd} for e in config.entrants},
        rules=spec.rules.to_json(),
        seed=spec.seed,
        state=state,
        verdict=verdict,
        sets=list(book.sets),
        budget_sets=budget,
        contract_cis=book.contract_cis(),
        played=summary.played,
        recorded_before=summary.recorded_before,
        wall_seconds=time.perf_counter() - started,
        reconciled=summary.reconciled,
    )


def contracts_table(result: AbResult) -> list[tuple[str, float, tuple[float, float] | None]]:
    """(contract, contribution per match, its 95% CI), largest contribution first."""
    means: Mapping[str, float] = result.state.contract_means()
    return sorted(
        ((name, value, result.contract_cis.get(name)) for name, value in means.items()), key=lambda r: -abs(r[1])
    )
