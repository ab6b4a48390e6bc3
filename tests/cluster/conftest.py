"""A real Dask cluster on 127.0.0.1 for the tests: one ``dask scheduler`` and ``dask worker``
processes (``--nthreads 1 --resources arena=1``) on free ports, each worker with its own bundle
cache (so a bot's folder tells which worker plays it); all stopped at the end. The PostgreSQL
fixtures are the tournament tests' own."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import alive, command_line
from tests.tournament.conftest import pg_url, postgres_server  # noqa: F401 - fixtures used here too

DASK = str(Path(sys.executable).with_name("dask"))
START_SECONDS = 180


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                pass
    return found


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working folder is inside ``folder`` (bots run in their bundle)."""
    found = []
    prefix = str(folder.resolve()) + os.sep
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cwd = os.readlink(f"/proc/{entry.name}/cwd")
            except OSError:
                continue
            if (cwd + os.sep).startswith(prefix) and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


class DaskCluster:
    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.caches: list[Path] = []

    def _spawn(self, argv: list[str], name: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        with open(self.root / f"{name}.log", "ab") as log:  # the child holds its own copy
            return subprocess.Popen(
                argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, cwd=self.root, env=env, start_new_session=True
            )

    def start_scheduler(self) -> None:
        self.scheduler = self._spawn(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard", "--no-show"],
            "scheduler",
        )

    def add_worker(self) -> int:
        n = len(self.workers)
        cache = self.root / f"cache{n}"
        scratch = self.root / f"scratch{n}"
        scratch.mkdir(exist_ok=True)
        env = dict(os.environ, BARBU_BUNDLE_CACHE=str(cache))
        self.workers.append(
            self._spawn(
                [
                    DASK,
                    "worker",
                    self.address,
                    "--nthreads",
                    "1",
                    "--resources",
                    "arena=1",
                    "--name",
                    f"w{n}",
                    "--no-dashboard",
                    "--local-directory",
                    str(scratch),
                    "--host",
                    "127.0.0.1",
                ],
                f"worker{n}",
                env,
            )
        )
        self.caches.append(cache)
        return n

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        deadline = time.monotonic() + START_SECONDS
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                with Client(self.address, timeout=10, set_as_default=False) as client:
                    while time.monotonic() < deadline:
                        if len(client.scheduler_info(n_workers=-1)["workers"]) >= n:
                            return
                        time.sleep(0.3)
            except OSError as e:
                last = e
                time.sleep(0.5)
        pytest.fail(f"the Dask cluster did not come up with {n} workers: {last}\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.root.glob("*.log"))
        )

    def kill_worker(self, n: int) -> None:
        """SIGKILL worker ``n``: its nanny and the worker process (the match it plays is a child of
        the worker process: it sees its parent die and stops its bots, as after a machine's crash of
        the worker alone)."""
        nanny = self.workers[n]
        for pid in [nanny.pid, *children(nanny.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        nanny.wait(10)

    def kill_scheduler(self) -> None:
        assert self.scheduler is not None
        self.scheduler.send_signal(signal.SIGKILL)
        self.scheduler.wait(10)

    def stop(self) -> None:
        procs = [p for p in [*self.workers, self.scheduler] if p is not None]
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(max(0.1, deadline - time.monotonic()))
        for p in procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            if p.poll() is None:
                p.kill()
                p.wait(10)


def start_cluster(workers: int) -> DaskCluster:
    cluster = DaskCluster(Path(tempfile.mkdtemp(prefix="barbu-dask-")))
    cluster.start_scheduler()
    for _ in range(workers):
        cluster.add_worker()
    cluster.wait_for_workers(workers)
    return cluster


def finish_cluster(cluster: DaskCluster) -> None:
    """Stop it; then no bot may be left in any worker's bundles, and no process of the cluster."""
    cluster.stop()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(processes_in(c) for c in cluster.caches):
        time.sleep(0.2)
    left = [p for c in cluster.caches for p in processes_in(c)]
    shutil.rmtree(cluster.root, ignore_errors=True) if not left else None
    assert not left, f"bot processes left on the workers: {[command_line(p) for p in left]}"


@pytest.fixture(scope="module")
def dask_cluster():
    """A scheduler and two workers, shared by a module's tests that do not break them."""
    cluster = start_cluster(2)
    try:
        yield cluster
    finally:
        finish_cluster(cluster)


@pytest.fixture
def own_cluster():
    """A cluster of its own for a test that kills part of it: ``own_cluster(workers)``."""
    made: list[DaskCluster] = []

    def make(workers: int = 2) -> DaskCluster:
        made.append(start_cluster(workers))
        return made[-1]

    try:
        yield make
    finally:
        for cluster in made:
            finish_cluster(cluster)
