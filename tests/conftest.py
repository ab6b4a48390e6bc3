"""What test folders share: the one headless Chromium of the browser tests, finding a run's
processes (by the tag in their environment, or as descendants), and what keeps a run honest on a
loaded machine: no process outlives the session, a hung test's stacks are shown even when it
killed its xdist worker, and gRPC's own chatter stays out of the output.

Set up with ``scripts/setup_browser.sh``. Without Chromium or playwright the browser tests FAIL,
with a message saying so: they are part of the suite, not optional.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import shutil
import signal
import tempfile
import threading
import uuid
from pathlib import Path

import pytest
import pytest_timeout

# Every process the tests start inherits this: what is still running at the session's end is reaped.
SESSION_TAG = "BARBU_TEST_SESSION"
HUNG_FOLDER = "BARBU_TEST_HUNG_FOLDER"  # where a hung test's worker writes its stacks for the controller
REAPED: list[str] = []  # what this process's session reaped: shown in the summary (a worker's, through xdist)


def pytest_configure(config) -> None:
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # no "Got goaway" INFO lines from any process
    os.environ[SESSION_TAG] = uuid.uuid4().hex  # each xdist worker its own: a worker reaps only its own
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist): once per run
        os.environ[HUNG_FOLDER] = tempfile.mkdtemp(prefix="barbu-hung-")


def pytest_report_header(config) -> list[str]:
    """Which build the tests import (compiled, mypyc, or pure Python: docs/speed.md), and how
    much the ample wall-clock limits are stretched for this machine's load (tests/timing.py)."""
    from barbu.build import describe

    from tests.timing import SLOWNESS

    load = os.getloadavg()[0]
    return [
        f"barbu build: {describe()}",
        f"machine: load {load:.1f} on {os.cpu_count()} cores: ample limits x{SLOWNESS:.1f}",
    ]


# ---- the summary says how many slow tests the default run (-m 'not slow') left out
SLOW_LEFT_OUT = pytest.StashKey[int]()


def pytest_deselected(items) -> None:
    """Count the slow tests a marker expression deselects (where collection runs: a worker under xdist)."""
    if items and "not slow" in (items[0].config.getoption("markexpr") or ""):
        stash = items[0].config.stash
        stash[SLOW_LEFT_OUT] = stash.get(SLOW_LEFT_OUT, 0) + sum(1 for i in items if i.get_closest_marker("slow"))


def pytest_sessionfinish(session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)  # an xdist worker: tell the controller
    if workeroutput is not None:
        workeroutput["slow_left_out"] = session.config.stash.get(SLOW_LEFT_OUT, 0)
        workeroutput["reaped"] = list(REAPED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """Each xdist worker collected every test: any one's count is the run's."""
    left_out = getattr(node, "workeroutput", {}).get("slow_left_out", 0)
    REAPED.extend(getattr(node, "workeroutput", {}).get("reaped", []))
    node.config.stash[SLOW_LEFT_OUT] = max(node.config.stash.get(SLOW_LEFT_OUT, 0), left_out)


def pytest_terminal_summary(terminalreporter, config) -> None:
    if REAPED:
        terminalreporter.write_line(f"reaped {len(REAPED)} process(es) the tests left running:", yellow=True)
        for line in REAPED:
            terminalreporter.write_line(f"  {line}")
    left_out = config.stash.get(SLOW_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f'{left_out} slow test{"s" * (left_out != 1)} left out (run with -m "" to include them)'
        )


def pytest_unconfigure(config) -> None:
    if not hasattr(config, "workerinput") and HUNG_FOLDER in os.environ:
        shutil.rmtree(os.environ.pop(HUNG_FOLDER), ignore_errors=True)


# ---- a hung test: pytest-timeout's dump is lost with an xdist worker's captured output, so the
# worker also writes every thread's stack to a file the controller adds to the crash report
def _stacks_file(worker: str) -> Path:
    return Path(os.environ[HUNG_FOLDER]) / f"{worker}.txt"


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None or settings.method != "thread" or HUNG_FOLDER not in os.environ:
        return None  # pytest-timeout's own timer: its dump reaches the terminal

    def dump_then_exit() -> None:
        with open(_stacks_file(worker), "w") as f:
            f.write(f"{item.nodeid} ran past {settings.timeout:g} s; every thread's stack, innermost first:\n")
            f.flush()
            faulthandler.dump_traceback(file=f, all_threads=True)
        pytest_timeout.timeout_timer(item, settings)  # its own dump, then os._exit

    timer = threading.Timer(settings.timeout, dump_then_exit)
    timer.name = f"timeout {item.nodeid}"
    timer.daemon = True

    def cancel() -> None:
        timer.cancel()
        timer.join()

    item.cancel_timeout = cancel
    timer.start()
    return True


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched) -> None:
    """A worker that died: its hung test's stacks, if it wrote them, go into the failure's report."""
    path = _stacks_file(report.node.gateway.id)
    if path.exists():
        report.longrepr = f"{report.longrepr}\n{path.read_text(errors='replace')}"
        path.unlink()


# ---- nothing outlives the session
@pytest.fixture(scope="session", autouse=True)
def _reap_what_the_session_started():
    """At the session's end, kill what the tests started and left running (bridges, servers, bots
    that escaped their group): this process's descendants and every process carrying the session's
    tag. A test that leaves one behind is a defect; the summary names each one reaped."""
    yield
    tag = os.environ.get(SESSION_TAG)
    left = descendants(os.getpid()) | (set(processes_tagged(tag, SESSION_TAG)) if tag else set())
    if not left:
        return
    named = {pid: command_line(pid) for pid in left}
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    REAPED.extend(f"{pid}: {cmd[:200]}" for pid, cmd in sorted(named.items()))


@pytest.fixture(scope="session", autouse=True)
def _temporary_folders_readable_by_bots(tmp_path_factory) -> None:
    """Every tmp_path and mktemp folder as a user's folder would be (0755, not pytest's 0700): a
    root arbiter's sandboxed bots run as uids of their own and read their folders as anyone may."""
    make = tmp_path_factory.mktemp

    def mktemp(basename: str, numbered: bool = True) -> Path:
        path = make(basename, numbered)
        os.chmod(path, 0o755)
        return path

    tmp_path_factory.mktemp = mktemp


CHROMIUM = os.environ.get("BARBU_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SETUP = "run scripts/setup_browser.sh (apt-get install chromium; pip install playwright==1.65.2 into .venv)"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One persistent Chromium context (fresh profile) for the module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(f"the replay browser tests need the Python package 'playwright': {SETUP}", pytrace=False)
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"the replay browser tests need Chromium at {CHROMIUM}: {SETUP}", pytrace=False)
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        try:
            context = p.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000}, device_scale_factor=1,
            )  # fmt: skip
        except Exception as e:
            pytest.fail(f"cannot start Chromium ({CHROMIUM}): {e}\n{SETUP}", pytrace=False)
        yield context
        context.close()


class OpenedPage:
    """A page of ours opened from its file:// URL in the shared browser, with every request and
    console error recorded (a self-contained page makes no request but its own URL)."""

    def __init__(self, browser, path: Path, ready: str):
        self.context = browser
        self.requests: list[str] = []
        self.errors: list[str] = []
        self._on_request = lambda r: self.requests.append(r.url)
        browser.on("request", self._on_request)
        self.page = browser.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.url = path.resolve().as_uri()
        try:
            self.page.goto(self.url)
            self.page.wait_for_function(ready)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.page.close()
        self.context.remove_listener("request", self._on_request)


def processes_tagged(tag: str, variable: str = "BARBU_TEST_TAG") -> list[int]:
    """Live (not zombie) processes, this one aside, whose environment carries BARBU_TEST_TAG=tag:
    a run's arbiter, its workers and their bots all inherit it."""
    needle = f"{variable}={tag}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        with open(f"/proc/{entry.name}/stat", "rb") as s:
                            if s.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                                found.append(int(entry.name))
            except OSError:
                continue
    return found


def descendants(pid: int) -> set[int]:
    """Live (not zombie) descendants of a process, found by their parent ids."""
    parents, states = {}, {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                parents[int(entry.name)], states[int(entry.name)] = int(fields[1]), fields[0]
            except (OSError, IndexError, ValueError):
                pass
    tree, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier}
        tree |= frontier
    return {p for p in tree if states.get(p) != b"Z"}


def command_line(pid: int) -> str:
    """A process's command line, for messages ("" when it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False
