"""Playing a tournament's matches on a Dask cluster (``arbiter run --cluster tcp://HOST:PORT``).

The coordinator (the ``arbiter run`` process) keeps everything a local run keeps: the schedule,
the lease, the log folder, the database and the ratings. Only the playing moves: every pending
match becomes one Dask task (:func:`play_on_worker`) that asks for one unit of the worker
resource ``arena`` (``dask worker ... --resources arena=N``: N matches at once on that worker).
docs/cluster.md says how to set a cluster up.

On a worker, a task plays its match exactly as a local pool worker does: in a child process of
the Dask worker, set up by the runner's own ``_worker_init`` and playing through its
``run_task(play, task)`` (launcher, limits, isolation, time control, faults). The child is kept
for the next match of the same worker thread; it dies with the worker (parent-death signal) and
is stopped, bots and all, when the scheduler cancels its task. The task returns the outcome,
the match log and each seat's captured output, zlib-compressed (:class:`ClusterResult`).

The coordinator checks each log (its digest, :func:`barbu.matchlog.verify`, that it is this
match and says what the outcome says), writes it to the log folder as a worker would
(:class:`~arbiter.referee.logfile.AtomicLogFile`), and hands the outcome to the runner's own
``finished``: recording and ratings are those of a local run. A match is recorded once by its
number whatever Dask retried; a worker that dies mid-match has its match played elsewhere.

The entrants' files travel as content-addressed bundles (:mod:`arbiter.tournament.bundle`),
held by the scheduler as Dask variables while the run lasts; a worker unpacks each into its
cache once. A program that is not in the entrant's folder (``node``, ``/usr/bin/java``) must be
on the worker at the same path with the same version (``--version``, or the file's digest), and
the worker's Barbu Arena must be the coordinator's (:func:`project_identity`); else the match is
refused with a message naming the entrant and the worker.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import pickle
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arbiter.errors import ArbiterError, ConfigError, TournamentError
from arbiter.text import printable
from arbiter.tournament import bundle as bundles
from arbiter.tournament.config import INTERPRETERS, TournamentConfig, _scripts
from arbiter.tournament.runner import BotEntry, MatchOutcome, MatchTask

log = logging.getLogger(__name__)

RESOURCE = "arena"  # the Dask worker resource a match takes one unit of
CONNECT_SECONDS = 10.0  # to reach the scheduler
WORKER_WAIT_SECONDS = 30.0  # at the start, for a worker offering RESOURCE
NO_WORKER_SECONDS = 300.0  # mid-run, with no worker offering RESOURCE: give up
BUNDLE_SECONDS = 300.0  # for a worker to fetch a bundle from the scheduler
LOG_LEVEL = 6  # zlib level of the logs shipped back
MAX_SHIPPED_LOG = 64 << 20  # a log a worker returns, uncompressed (as arbiter.referee.logfile.MAX_LOG_BYTES)
MAX_SHIPPED_OUTPUT = 1 << 40
VERSION_SECONDS = 10.0
IDLE_SECONDS = 10.0  # a worker's match process (and the bots it keeps) idle this long is stopped: in a run
# the next match follows within a second, so this long means its coordinator is gone


# ---- what travels: plain, picklable values ----------------------------------------------------
@dataclass(frozen=True)
class Word:
    """One word of a bot's command line as a worker writes it."""

    text: str
    kind: str = "text"  # "text": as is; "file": a path inside the bundle; "python": the worker's interpreter


@dataclass(frozen=True)
class Program:
    """A program a bot needs that its bundle does not hold: the same path and version on a worker."""

    name: str  # as the command names it
    path: str  # where the coordinator finds it
    version: str  # its --version line, or sha256:<digest> of the file


@dataclass(frozen=True)
class RemoteBot:
    name: str
    argv: tuple[Word, ...]
    bundle: str  # the digest of the entrant's folder
    program: Program | None = None


@dataclass(frozen=True)
class ClusterJob:
    task: MatchTask  # as the local pool gets it (its bots and log path are the coordinator's)
    bots: tuple[RemoteBot, ...]  # seat order
    play: Callable[[MatchTask], MatchOutcome]
    project: str  # the coordinator's project_identity()
    run: str  # this run's id: the bundles' Dask variables are named after it


@dataclass(frozen=True)
class ClusterResult:
    outcome: MatchOutcome
    log: bytes  # the match log, zlib
    outputs: tuple[bytes, ...]  # each seat's captured output, zlib
    worker: str  # the Dask worker's address
    overhead: float  # seconds of the task spent beyond the match (bundles, compressing)


def variable_name(digest: str, run: str) -> str:
    return f"barbu-bundle-{digest}-{run}"


# ---- both sides: what a worker must share with the coordinator --------------------------------
_identity: str | None = None


def project_identity(fresh: bool = False) -> str:
    """This installation of Barbu Arena: its version, the Python version, and a digest of the
    sources that decide a match: the SDK (the rules engine, the match log, the bots' library) and
    the referee."""
    global _identity
    if _identity is None or fresh:
        import barbu

        import arbiter.referee

        h = hashlib.sha256()
        for package in (barbu, arbiter.referee):
            base = Path(package.__file__ or "").parent
            for path in sorted(base.rglob("*.py")):
                if "__pycache__" in path.parts:
                    continue
                h.update(path.relative_to(base).as_posix().encode() + b"\0")
                h.update(path.read_bytes())
        try:
            version = importlib.metadata.version("barbu-arena")
        except importlib.metadata.PackageNotFoundError:
            version = "(not installed)"
        _identity = f"Barbu Arena {version} (sources {h.hexdigest()[:12]}) on Python {sys.version_info[0]}.{sys.version_info[1]}"
    return _identity


def program_version(path: str) -> str:
    """What identifies a system program's version: an interpreter's ``--version`` line, else the
    file's SHA-256."""
    if INTERPRETERS.match(os.path.basename(path)):
        try:
            r = subprocess.run(
                [path, "--version"], capture_output=True, timeout=VERSION_SECONDS, stdin=subprocess.DEVNULL
            )
            lines = [line.strip() for line in (r.stdout + r.stderr).decode("utf-8", "replace").splitlines()]
            first = next((line for line in lines if line), "")
            if r.returncode == 0 and first:
                return first[:200]
        except (OSError, subprocess.SubprocessError):
            pass
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        return f"unreadable ({e.strerror})"
    return "sha256:" + h.hexdigest()[:16]


# ---- the coordinator: entrants to bundles -----------------------------------------------------
def remote_bots(config: TournamentConfig) -> tuple[dict[str, RemoteBot], dict[str, bundles.Bundle]]:
    """Each entrant's command as a worker runs it, and the bundles of their folders by digest."""
    bots: dict[str, RemoteBot] = {}
    by_folder: dict[str, bundles.Bundle] = {}
    for e in config.entrants:
        if e.launch is None:  # a remote entrant: the runner refuses those first
            raise ConfigError(f"entrant {e.name!r} has no command to run on a cluster worker")
        argv = shlex.split(e.launch)
        i = 0
        if argv[:1] == ["env"]:
            i = 1
            while i < len(argv) and ("=" in argv[i] or argv[i].startswith("-")):
                i += 1
        if i >= len(argv):
            raise ConfigError(f"entrant {e.name!r}: its command {printable(e.launch)!r} names no program")
        cwd = Path(e.cwd).resolve()
        program = argv[i]
        scripts = _scripts(argv[i:])
        if scripts:
            folder = (cwd / scripts[0]).resolve().parent
        elif "/" in program:
            folder = (cwd / program).resolve().parent
        else:
            folder = cwd
        pack = by_folder.get(str(folder))
        if pack is None:
            pack = by_folder[str(folder)] = bundles.pack(folder, e.name)
        words: list[Word] = [Word(w) for w in argv[:i]]
        needs: Program | None = None
        if program == sys.executable:
            words.append(Word("python", "python"))
        elif (inside := _inside(cwd / program, folder)) is not None and "/" in program:
            words.append(Word(inside, "file"))
        else:
            found = program if "/" in program else shutil.which(program)
            if found is None:
                raise ConfigError(f"entrant {e.name!r}: program {printable(program)!r} is not on PATH")
            found = os.path.abspath(found)
            needs = Program(program, found, program_version(found))
            words.append(Word(program))
        for w in argv[i + 1 :]:
            candidate = cwd / w
            if w.startswith("-") or os.path.isabs(w) or not os.path.lexists(candidate):
                words.append(Word(w))
                continue
            inside = _inside(candidate, folder)
            if inside is None:
                raise ConfigError(
                    f"entrant {e.name!r}: its command names {printable(w)}, outside its folder {printable(str(folder))}; "
                    "only that folder travels to the cluster's workers: move the file into it"
                )
            words.append(Word(inside, "file"))
        bots[e.name] = RemoteBot(e.name, tuple(words), pack.digest, needs)
    return bots, {b.digest: b for b in by_folder.values()}


def _inside(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (POSIX), or None if it is not inside it."""
    resolved = path.resolve()
    if resolved == folder:
        return "."
    if folder not in resolved.parents:
        return None
    return resolved.relative_to(folder).as_posix()


# ---- the coordinator: the run -----------------------------------------------------------------
def run_on_cluster(
    config: TournamentConfig,
    tasks: Sequence[MatchTask],
    play: Callable[[MatchTask], MatchOutcome],
    log_folder: Path,
    finished: Callable[[MatchOutcome], None],
) -> None:
    """Play ``tasks`` on the Dask cluster at ``config.cluster``; ``finished`` runs here, in the
    coordinator, once per match, as the local pool calls it."""
    address = config.cluster
    if not address:
        raise ConfigError("no cluster address")
    bots, packs = remote_bots(config)
    identity = project_identity()
    with _dask_logging(log_folder / "arbiter.log"):
        from distributed import Variable

        client = _connect(address)
        variables: list[Any] = []
        run_id = uuid.uuid4().hex[:12]
        try:
            try:
                _wait_for_workers(client, address, WORKER_WAIT_SECONDS)
                for digest, pack in packs.items():
                    variable = Variable(variable_name(digest, run_id), client=client)
                    variable.set(pack.data)
                    variables.append(variable)
            except (OSError, TimeoutError, CancelledError) as e:
                raise TournamentError(
                    f"lost the Dask scheduler at {address} ({_one_line(e)}); run the same command again to resume"
                ) from None
            _Coordinator(client, address, bots, play, identity, finished, run_id).run(tasks)
        finally:
            _close(client, variables)


def _connect(address: str) -> Any:
    from distributed import Client

    try:
        return Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise TournamentError(
            f"cannot reach the Dask scheduler at {address}: {_one_line(e)}; is `dask scheduler` running there "
            "and reachable from here?"
        ) from None


def _arena_slots(client: Any) -> int:
    info = client.scheduler_info(n_workers=-1)
    return int(sum(w.get("resources", {}).get(RESOURCE, 0) for w in info.get("workers", {}).values()))


def _wait_for_workers(client: Any, address: str, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while True:
        slots = _arena_slots(client)
        if slots > 0:
            return slots
        if time.monotonic() > deadline:
            raise TournamentError(
                f"no worker of the Dask cluster at {address} offers the {RESOURCE!r} resource (waited {seconds:g}s): "
                f"start workers with `dask worker {address} --nthreads N --resources {RESOURCE}=N` (docs/cluster.md)"
            )
        time.sleep(0.5)


def _close(client: Any, variables: list[Any]) -> None:
    try:  # the bots kept for a next match leave with the run
        if client.status == "running":
            client.run(retire_idle, 0.0, wait=True)
    except Exception:  # a worker or the scheduler may be gone: their reapers do it
        pass
    for variable in variables:
        try:
            variable.delete()
        except Exception:  # the scheduler may be gone
            pass
    try:
        client.close(timeout=5)
    except Exception:
        pass


class _Coordinator:
    def __init__(
        self,
        client: Any,
        address: str,
        bots: dict[str, RemoteBot],
        play: Callable[[MatchTask], MatchOutcome],
        identity: str,
        finished: Callable[[MatchOutcome], None],
        run_id: str,
    ):
        self.client = client
        self.address = address
        self.bots = bots
        self.play = play
        self.identity = identity
        self.finished = finished
        self.run_id = run_id
        self.recorded: set[int] = set()
        self.slots = 1
        self.slots_at = 0.0
        self.no_worker_since: float | None = None

    def lost(self, why: str) -> TournamentError:
        return TournamentError(
            f"lost the Dask scheduler at {self.address} ({why}); the matches recorded so far stay: run the same "
            "command again to resume"
        )

    def window(self) -> int:
        """Matches submitted at once: two per arena slot (the cluster may grow or shrink)."""
        now = time.monotonic()
        if now - self.slots_at > 2.0:
            try:
                self.slots = _arena_slots(self.client)
            except Exception as e:
                raise self.lost(_one_line(e)) from None
            self.slots_at = now
            if self.slots > 0:
                self.no_worker_since = None
            elif self.no_worker_since is None:
                self.no_worker_since = now
            elif now - self.no_worker_since > NO_WORKER_SECONDS:
                raise TournamentError(
                    f"no worker of the Dask cluster at {self.address} has offered the {RESOURCE!r} resource for "
                    f"{NO_WORKER_SECONDS:g}s; start workers, then run the same command again to resume"
                )
        return max(2, 2 * self.slots)

    def submit(self, task: MatchTask) -> Any:
        job = ClusterJob(task, tuple(self.bots[b.name] for b in task.bots), self.play, self.identity, self.run_id)
        return self.client.submit(
            play_on_worker,
            job,
            key=f"barbu-match-{task.match_id}-{self.run_id}",
            resources={RESOURCE: 1},
            pure=False,
        )

    def run(self, tasks: Sequence[MatchTask]) -> None:
        from distributed import wait

        queue = list(reversed(tasks))
        running: dict[Any, MatchTask] = {}
        try:
            while queue or running:
                limit = self.window()
                while queue and len(running) < limit:
                    task = queue.pop()
                    running[self.submit(task)] = task
                if self.client.status not in ("running", "newly-created"):
                    raise self.lost(f"the client is {self.client.status}")
                try:
                    with self.client.as_current():
                        done = wait(list(running), timeout=1.0, return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    continue
                except (CancelledError, OSError) as e:  # FuturesCancelledError: scheduler-connection-lost
                    raise self.lost(
                        "the connection to it was lost" if isinstance(e, CancelledError) else _one_line(e)
                    ) from None
                for future in sorted(done, key=lambda f: running[f].number):
                    self.collect(future, running.pop(future))
        finally:
            if running:  # stopping early: the workers stop these matches (and their bots)
                try:
                    self.client.cancel(list(running), force=True)
                except Exception:
                    pass

    def collect(self, future: Any, task: MatchTask) -> None:
        from distributed import KilledWorker

        status = future.status
        if status == "cancelled":
            raise self.lost("its tasks were cancelled: the connection to it was lost")
        if status == "error":
            e = future.exception()
            if isinstance(e, KilledWorker):
                raise TournamentError(
                    f"match {task.key}: the Dask workers playing it died one after the other ({_one_line(e)}); "
                    "run the same command again to resume"
                )
            if isinstance(e, ArbiterError):
                raise TournamentError(f"match {task.key} could not be played on the cluster: {e}")
            raise TournamentError(f"match {task.key} failed on a Dask worker: {type(e).__name__}: {_one_line(e)}")
        try:
            result = future.result()
        except Exception as e:  # the connection went while the result was on its way
            raise self.lost(_one_line(e)) from None
        if task.number in self.recorded:  # never twice, whatever was retried
            return
        outcome = receive(result, task)
        self.finished(outcome)
        self.recorded.add(task.number)


def receive(result: ClusterResult, task: MatchTask) -> MatchOutcome:
    """Check a match a worker returns and write its log (and seats' output) to the log folder; the
    outcome with its log's path here."""
    from barbu.matchlog import verify

    from arbiter.referee.logfile import AtomicLogFile

    outcome = result.outcome
    where = f"match {task.key} from Dask worker {result.worker}"
    if not isinstance(outcome, MatchOutcome) or outcome.number != task.number:
        raise TournamentError(f"{where}: the result is not this match's")
    raw = _inflate(result.log, MAX_SHIPPED_LOG, where)
    if hashlib.sha256(raw).hexdigest() != outcome.log_sha256 or not raw.endswith(b"\n"):
        raise TournamentError(f"{where}: the log does not match its digest")
    try:
        lines = raw.decode("utf-8").split("\n")[:-1]
    except UnicodeDecodeError:
        raise TournamentError(f"{where}: the log is not UTF-8") from None
    report = verify(lines)
    if not report.valid:
        raise TournamentError(f"{where}: the log does not verify (line {report.line}: {report.error})")
    header = report.header or {}
    listed = header.get("seats")
    seats: list[Any] = listed if isinstance(listed, list) else []
    fits = (
        header.get("match_id") == task.match_id
        and [s.get("entrant") if isinstance(s, dict) else None for s in seats] == [b.name for b in task.bots]
        and header.get("seed") == task.seed
        and header.get("rules") == task.rules
        and report.status == outcome.status
        and list(report.totals) == list(outcome.totals)
        and list(report.places) == list(outcome.places)
    )
    if not fits:
        raise TournamentError(f"{where}: the log is not of this match, or does not say what its outcome says")
    sink = AtomicLogFile(task.log_path)
    for line in lines:
        sink(line)
    path = sink.commit()
    stem = path.name.removesuffix(".jsonl")
    for seat, data in enumerate(result.outputs[:4]):
        with open(path.with_name(f"{stem}.seat{seat}.stderr"), "wb") as f:
            f.write(_inflate(data, MAX_SHIPPED_OUTPUT, where))
    return replace(outcome, log_path=str(path))


def _inflate(data: bytes, limit: int, where: str) -> bytes:
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data, limit + 1)
    except (zlib.error, TypeError) as e:
        raise TournamentError(f"{where}: damaged in transit ({e})") from None
    if len(raw) > limit or inflater.unconsumed_tail:
        raise TournamentError(f"{where}: larger than {limit} bytes")
    return raw


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return printable(text[:300])


@contextmanager
def _dask_logging(log_file: Path) -> Iterator[None]:
    """Dask's own messages go to the arbiter's log file, not the terminal: the run prints its
    progress and, if it stops, one ``error:`` line."""
    import warnings

    names = ("distributed", "tornado", "asyncio")
    saved = [(logging.getLogger(n), logging.getLogger(n).handlers[:], logging.getLogger(n).propagate) for n in names]
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_file)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(name)s %(levelname)s: %(message)s"))
    for logger, _, _ in saved:
        logger.handlers = [handler]
        logger.propagate = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers = handlers
            logger.propagate = propagate
        handler.close()


# ---- a worker -----------------------------------------------------------------------------------
class MatchCancelled(Exception):
    """The scheduler no longer wants this match (the coordinator stopped or went away)."""


_checked_programs: set[Program] = set()
_bundle_lock = threading.Lock()
_processes: dict[int, _MatchProcess] = {}  # this worker's match processes, by the Dask thread that owns each
_processes_lock = threading.Lock()
_reaper: threading.Thread | None = None
_work_root: str | None = None


def play_on_worker(job: ClusterJob) -> ClusterResult:
    """The Dask task: play one match on this worker as a local pool worker plays it."""
    from distributed import get_worker

    started = time.perf_counter()
    worker = get_worker()
    key = worker.get_current_task()
    _check_project(job.project, worker.address)
    bots = tuple(_worker_bot(b, job.run, worker) for b in job.bots)
    work = Path(tempfile.mkdtemp(prefix="m-", dir=_work_folder(worker)))
    try:
        task = replace(job.task, bots=bots, log_path=str(work / Path(job.task.log_path).name))
        before = time.perf_counter() - started
        process = _match_process(worker)
        try:
            outcome = process.play(job.play, task, lambda: not _wanted(worker, key))
        finally:
            process.done()
        after = time.perf_counter()
        log_path = Path(outcome.log_path)
        shipped = zlib.compress(log_path.read_bytes(), LOG_LEVEL)
        stem = log_path.name.removesuffix(".jsonl")
        outputs = []
        for seat in range(4):
            try:
                outputs.append(zlib.compress((work / f"{stem}.seat{seat}.stderr").read_bytes(), LOG_LEVEL))
            except FileNotFoundError:
                outputs.append(zlib.compress(b""))
        overhead = before + time.perf_counter() - after
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ClusterResult(outcome, shipped, tuple(outputs), worker.address, overhead)


def _check_project(expected: str, address: str) -> None:
    if project_identity() != expected and project_identity(fresh=True) != expected:
        raise ConfigError(
            f"Dask worker {address} runs {project_identity()}, the coordinator {expected}: install the same "
            "Barbu Arena (and Python) on every worker"
        )


def _worker_bot(bot: RemoteBot, run: str, worker: Any) -> BotEntry:
    files = _bundle_files(bot.bundle, run)
    if bot.program is not None and bot.program not in _checked_programs:
        _check_program(bot, bot.program, worker.address)
        _checked_programs.add(bot.program)
    argv = [
        sys.executable if w.kind == "python" else str(files / w.text) if w.kind == "file" else w.text for w in bot.argv
    ]
    return BotEntry(bot.name, shlex.join(argv), str(files))


def _check_program(bot: RemoteBot, program: Program, address: str) -> None:
    found = program.name if "/" in program.name else shutil.which(program.name)
    if found is None or not os.path.isfile(found):
        raise ConfigError(
            f"entrant {bot.name!r} runs {printable(program.name)}, which Dask worker {address} does not have "
            f"(the coordinator's is {printable(program.path)}, {printable(program.version)}); install it there"
        )
    found = os.path.abspath(found)
    if found != program.path:
        raise ConfigError(
            f"entrant {bot.name!r} runs {printable(program.name)}: on Dask worker {address} that is "
            f"{printable(found)}, on the coordinator {printable(program.path)}; a worker plays with the same program"
        )
    version = program_version(found)
    if version != program.version:
        raise ConfigError(
            f"entrant {bot.name!r} runs {printable(found)}: version {printable(version)} on Dask worker {address}, "
            f"{printable(program.version)} on the coordinator; a worker plays with the same program"
        )


def _bundle_files(digest: str, run: str) -> Path:
    files = bundles.cached(digest)
    if files is not None:
        return files
    with _bundle_lock:
        files = bundles.cached(digest)
        if files is None:
            from distributed import Variable, get_client

            try:
                data = Variable(variable_name(digest, run), client=get_client()).get(timeout=BUNDLE_SECONDS)
            except TimeoutError:
                data = None
            if not isinstance(data, bytes):
                raise TournamentError(f"bundle {digest[:12]} is not on the scheduler (the coordinator has gone)")
            files = bundles.unpack(digest, data)
    return files


def _work_folder(worker: Any) -> str:
    global _work_root
    if _work_root is None or not os.path.isdir(_work_root):
        _work_root = tempfile.mkdtemp(prefix="barbu-", dir=worker.local_directory)
    return _work_root


def _wanted(worker: Any, key: Any) -> bool:
    ts = worker.state.tasks.get(key)
    return ts is not None and ts.state not in ("cancelled", "released", "forgotten")


def _match_process(worker: Any) -> _MatchProcess:
    """This thread's match process (started if need be), marked busy."""
    global _reaper
    with _processes_lock:
        process = _processes.get(threading.get_ident())
        if process is None or not process.alive():
            process = _MatchProcess(os.path.join(worker.local_directory, "barbu-arbiter.log"))
            _processes[threading.get_ident()] = process
        process.busy = True
        if _reaper is None:
            _reaper = threading.Thread(target=_reap, name="barbu-match-process-reaper", daemon=True)
            _reaper.start()
    return process


def retire_idle(idle_seconds: float = 0.0) -> int:
    """Stop this worker's match processes that have not played for ``idle_seconds``: the bots
    they keep for the next match (bots that play several matches) go with them. The coordinator
    runs it on every worker at the end of a run (``Client.run``); a reaper thread runs it every few
    seconds with :data:`IDLE_SECONDS`, for a coordinator that died. Returns how many stopped."""
    now = time.monotonic()
    with _processes_lock:
        idle = [(k, p) for k, p in _processes.items() if not p.busy and now - p.last_used >= idle_seconds]
        for k, _ in idle:
            del _processes[k]
    for _, p in idle:
        p.terminate()
    for _, p in idle:
        p.stop()
    return len(idle)


def _reap() -> None:  # pragma: no cover - a daemon thread of a Dask worker
    while True:
        time.sleep(5)
        try:
            retire_idle(IDLE_SECONDS)
        except Exception:
            log.exception("retiring idle match processes failed")


_CHILD = "import sys; from arbiter.tournament.cluster import child_main; child_main(sys.argv[1:])"


class _MatchProcess:
    """A child process of the Dask worker that plays matches as a local pool worker does."""

    def __init__(self, log_file: str):
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        with open(log_file, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(requests_r), str(replies_w), str(os.getpid()), log_file],
                pass_fds=(requests_r, replies_w),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
            )
        os.close(requests_r)
        os.close(replies_w)
        self.requests = os.fdopen(requests_w, "wb", buffering=0)
        self.replies = os.fdopen(replies_r, "rb", buffering=0)
        self.busy = False
        self.last_used = time.monotonic()

    def done(self) -> None:
        with _processes_lock:
            self.busy = False
            self.last_used = time.monotonic()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def play(
        self, play: Callable[[MatchTask], MatchOutcome], task: MatchTask, cancelled: Callable[[], bool]
    ) -> MatchOutcome:
        try:
            _write_frame(self.requests, pickle.dumps((play, task)))
            while not select.select([self.replies], [], [], 0.5)[0]:
                if cancelled():
                    self.stop()
                    raise MatchCancelled(task.key)
            frame = _read_frame(self.replies)
        except OSError:
            frame = None
        if frame is None:
            code = self.stop()
            raise TournamentError(f"the process playing match {task.key} died (exit status {code})")
        kind, value = pickle.loads(frame)
        if kind == "error":
            raise value
        return value

    def terminate(self) -> None:
        """SIGTERM: the child kills its bots and leaves (the runner's _worker_terminated)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> int | None:
        """Terminate the child and wait for it (then SIGKILL); close the pipes."""
        if self.proc.poll() is None:
            self.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.requests, self.replies):
            try:
                f.close()
            except OSError:
                pass
        return self.proc.returncode


def _write_frame(out: Any, data: bytes) -> None:
    out.write(struct.pack(">Q", len(data)))
    view = memoryview(data)
    while view:
        n = out.write(view)
        view = view[n:]


def _read_exactly(f: Any, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = f.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_frame(f: Any) -> bytes | None:
    head = _read_exactly(f, 8)
    if head is None:
        return None
    return _read_exactly(f, struct.unpack(">Q", head)[0])


def child_main(args: list[str]) -> None:
    """The match process: the local pool worker's set-up, then one match per request."""
    from arbiter.tournament import runner

    requests_fd, replies_fd, parent, log_file = int(args[0]), int(args[1]), int(args[2]), args[3]
    runner._worker_init(parent, log_file)  # signals, parent-death watch, private temp folder, logging
    requests = os.fdopen(requests_fd, "rb", buffering=0)
    replies = os.fdopen(replies_fd, "wb", buffering=0)
    while True:
        frame = _read_frame(requests)
        if frame is None:
            return
        play, task = pickle.loads(frame)
        reply: tuple[str, Any]
        try:
            reply = ("ok", runner.run_task(play, task))
        except Exception as e:
            reply = ("error", e)
        try:
            data = pickle.dumps(reply)
        except Exception:
            data = pickle.dumps(("error", TournamentError(f"{type(reply[1]).__name__}: {reply[1]}")))
        _write_frame(replies, data)
