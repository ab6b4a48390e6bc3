"""The coordinator's side of a cluster run: :class:`DaskExecutor` and :func:`receive`.

Each match is one Dask task (one unit of the worker resource ``arena``: ``dask worker ...
--resources arena=N`` plays N at once); the executor hands back a
:class:`concurrent.futures.Future` that :func:`receive` settles once the log the worker shipped
back is checked (its digest, :func:`barbu.matchlog.verify`, that it is this match and says what
the outcome says) and written to the log folder: the tournament loop waits on it as on any
executor's, and records and rates. The entrants' folders travel as bundles
(:mod:`arbiter.execution.bundle`) held by the scheduler as Dask variables while the run lasts.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, Future, InvalidStateError, wait
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

from arbiter.errors import ArbiterError, TournamentError
from arbiter.execution import bundle as bundles
from arbiter.execution.cluster.plugin import PLUGIN, ArenaPlugin, play_on_worker, retire_idle_matches
from arbiter.execution.cluster.shipping import (
    RESOURCE,
    ClusterJob,
    ClusterResult,
    entrant_bots,
    project_identity,
    variable_name,
)
from arbiter.execution.play import logged_result
from arbiter.model import BotSpec, MatchOutcome, MatchTask
from arbiter.text import printable

CONNECT_SECONDS = 10.0  # to reach the scheduler
WORKER_WAIT_SECONDS = 30.0  # at the start, for a worker offering RESOURCE
NO_WORKER_SECONDS = 300.0  # mid-run, with no worker offering RESOURCE: give up
WATCH_SECONDS = 2.0  # how often the executor looks at the cluster (its slots, its scheduler)
MAX_SHIPPED_LOG = 64 << 20  # a log a worker returns, uncompressed (as arbiter.referee.logfile.MAX_LOG_BYTES)
MAX_SHIPPED_OUTPUT = 1 << 40


class DaskExecutor:
    """Matches of ``entrants`` played on the Dask cluster at ``address`` as a local pool plays them
    (the same job, logs and outcomes). Dask's own messages go to the log folder's ``arbiter.log``
    while it is open; ``slots`` follows the cluster's ``arena`` units as workers come and go."""

    def __init__(self, entrants: Sequence[BotSpec], address: str, log_folder: Path):
        self.address = address
        self.bots, packs = entrant_bots(entrants)  # a command a worker cannot run stops us before connecting
        self.identity = project_identity()
        self.run_id = uuid.uuid4().hex[:12]
        self.slots = 1
        self._matches: dict[Any, tuple[Any, Future[MatchOutcome]]] = {}  # by Dask key: its future and ours
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._resources = ExitStack()  # closed in reverse: bundles, kept bots, the client, logging
        self._resources.enter_context(_dask_logging(Path(log_folder).resolve() / "arbiter.log"))
        try:
            self.client = _connect(address)
            self._resources.callback(_quietly, self.client.close, timeout=5)
            self._resources.callback(_quietly, self._retire_kept_bots)
            self.slots = _wait_for_workers(self.client, address, WORKER_WAIT_SECONDS)
            self.client.register_plugin(ArenaPlugin(), name=PLUGIN)
            self._publish(packs)
        except (OSError, TimeoutError, CancelledError) as e:
            self._resources.close()
            raise TournamentError(
                f"lost the Dask scheduler at {address} ({_one_line(e)}); run the same command again to resume"
            ) from None
        except BaseException:
            self._resources.close()
            raise
        threading.Thread(target=self._watch, name="barbu-cluster-watch", daemon=True).start()

    def _publish(self, packs: dict[str, bundles.Bundle]) -> None:
        """Put bundles where the workers fetch them (Dask variables of this run)."""
        from distributed import Variable

        for digest, pack in packs.items():
            variable = Variable(variable_name(digest, self.run_id), client=self.client)
            variable.set(pack.data)
            self._resources.callback(_quietly, variable.delete)

    def _ship_late(self, task: MatchTask) -> None:
        """Entrants that joined after the start (an arena's new versions): packed and shipped now."""
        late = [b for b in task.bots if b.name not in self.bots and not b.remote]
        if late:
            bots, packs = entrant_bots(late)
            self._publish(packs)
            self.bots |= bots

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        self._ship_late(task)
        job = ClusterJob(task, tuple(self.bots[b.name] for b in task.bots), self.identity, self.run_id)
        theirs = self.client.submit(
            play_on_worker, job, key=f"barbu-match-{task.match_id}-{self.run_id}", resources={RESOURCE: 1}, pure=False
        )
        ours: Future[MatchOutcome] = Future()
        with self._lock:
            self._matches[theirs.key] = (theirs, ours)
        theirs.add_done_callback(lambda done: self._settle(done, task, ours))
        return ours

    def connected(self) -> dict[str, int]:
        return {}  # remote entrants play where the lobby is, not on the cluster

    def close(self, *, cancel: bool, over: bool = False) -> None:
        """``cancel``: stop now (the workers stop the matches in play, and their bots); else wait
        for the matches submitted. Either way the bots kept for a next match leave with the run."""
        if self._closed.is_set():
            return
        if not cancel:
            wait([ours for _, ours in self._in_flight()])
        self._closed.set()
        matches = self._in_flight()
        for _, ours in matches:
            ours.cancel()
        if matches:
            _quietly(self.client.cancel, [theirs for theirs, _ in matches], force=True)
        self._resources.close()

    def lost(self, why: str) -> TournamentError:
        return TournamentError(
            f"lost the Dask scheduler at {self.address} ({why}); the matches recorded so far stay: run the same "
            "command again to resume"
        )

    def _settle(self, theirs: Any, task: MatchTask, ours: Future[MatchOutcome]) -> None:
        """Dask's future is done (in Dask's callback thread): ours gets the checked outcome, or
        the error to stop the run with. A match gets one Dask key, so it is settled, and recorded
        by the loop, once whatever Dask retried."""
        with self._lock:
            self._matches.pop(theirs.key, None)
        if ours.done():  # failed by the watch, or cancelled by close
            return
        with suppress(InvalidStateError):  # settled meanwhile: failed by the watch, or cancelled by close
            try:
                outcome = receive(self._result(theirs, task), task)
            except Exception as e:
                ours.set_exception(e)
            else:
                ours.set_result(outcome)

    def _result(self, theirs: Any, task: MatchTask) -> ClusterResult:
        from distributed import KilledWorker

        if theirs.status == "cancelled":
            raise self.lost("its tasks were cancelled: the connection to it was lost")
        if theirs.status == "error":
            e = theirs.exception()
            if isinstance(e, KilledWorker):
                raise TournamentError(
                    f"match {task.key}: the Dask workers playing it died one after the other ({_one_line(e)}); "
                    "run the same command again to resume"
                )
            if isinstance(e, ArbiterError):
                raise TournamentError(f"match {task.key} could not be played on the cluster: {e}")
            raise TournamentError(f"match {task.key} failed on a Dask worker: {type(e).__name__}: {_one_line(e)}")
        try:
            result: ClusterResult = theirs.result()
        except Exception as e:  # the connection went while the result was on its way
            raise self.lost(_one_line(e)) from None
        return result

    def _watch(self) -> None:
        """Every few seconds until closed: ``slots`` from the cluster's workers; a lost scheduler,
        or no worker offering ``arena`` for NO_WORKER_SECONDS, fails every match in flight."""
        no_worker_since: float | None = None
        while not self._closed.wait(WATCH_SECONDS):
            try:
                if self.client.status not in ("running", "newly-created"):
                    raise self.lost(f"the client is {self.client.status}")
                slots = _arena_slots(self.client)
            except Exception as e:
                self._fail_all(e if isinstance(e, TournamentError) else self.lost(_one_line(e)))
                continue
            self.slots = max(1, slots)  # none now: a match waits for a worker in the scheduler
            now = time.monotonic()
            if slots:
                no_worker_since = None
            elif no_worker_since is None:
                no_worker_since = now
            elif now - no_worker_since > NO_WORKER_SECONDS:
                self._fail_all(
                    TournamentError(
                        f"no worker of the Dask cluster at {self.address} has offered the {RESOURCE!r} resource for "
                        f"{NO_WORKER_SECONDS:g}s; start workers, then run the same command again to resume"
                    )
                )

    def _in_flight(self) -> list[tuple[Any, Future[MatchOutcome]]]:
        with self._lock:
            return list(self._matches.values())

    def _fail_all(self, error: Exception) -> None:
        for _, ours in self._in_flight():
            with suppress(InvalidStateError):  # settled meanwhile
                ours.set_exception(error)

    def _retire_kept_bots(self) -> None:
        if self.client.status == "running":
            self.client.run(retire_idle_matches, wait=True)


def _quietly(action: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Clean-up that may find a worker or the scheduler gone (their own clean-up then does it)."""
    with suppress(Exception):
        action(*args, **kwargs)


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
    logged = logged_result(lines, task)
    said = outcome.result
    fits = logged is not None and (logged.status, logged.totals, logged.places) == (
        said.status,
        said.totals,
        said.places,
    )
    if not fits:
        raise TournamentError(f"{where}: the log is not of this match, or does not say what its outcome says")
    sink = AtomicLogFile(task.log_path)  # never over an existing file: it is somebody's record
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
