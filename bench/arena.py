"""The arena's capacity, side by side in one run: how fast the ladder records whatever its
history's size, how fast its API answers while matches play, and what a second API process adds.

1. **The recorder's rate against the history**: the arena's own loop (arbiter.tournament.loop with
   the ladder's :class:`~arbiter.arena.ladder.ArenaSchedule`, its matchmaking, the recorder, the
   lease, TrueSkill and the standings table) with the matches' play replaced by synthetic outcomes
   made at once: what is left is the database side. Into a database that already holds
   ``--history`` matches (0, 10 000 and 100 000 by default), SQLite and PostgreSQL (a throwaway
   server, started as the test suite starts one: tests/tournament/conftest.py). The history is
   written by a bulk loader (:func:`load_history`: duplicate sets of four of the arena's entrants,
   rows inserted as the recorder writes them) and its standings by the repair tool
   (``arbiter standings --rebuild``: the replay); the run then takes them up at its start (it
   reads the stored matches once, timed apart) and records ``--matches`` more, whose rate is
   matches recorded per second from the first to the last, and over its first and last tenth.
2. **Reads while the ladder plays**, on the PostgreSQL database with the largest history: a real
   ``arbiter serve`` (port 0), ``--entrants`` house entrants (the sample heuristic and random bots)
   playing; ``--clients`` concurrent clients (asyncio, httpx, kept-alive connections) ask, for
   ``--seconds`` each, ``GET /api/health`` (the trivial endpoint: a constant from an ``async``
   route of the same app, behind the same middlewares, on the same uvicorn), the leaderboard, an
   entrant (and again with its ``ETag`` in ``If-None-Match``: 304) and ``GET
   /api/matches?limit=50``: p50 and p99 latency, requests per second, and each p99 as a multiple
   of the trivial endpoint's. Goal: the leaderboard's p99 within 2x.
3. **API processes apart**: the ladder stopped, one ``arbiter serve --api-only`` process, then two
   (the clients split between them), each asked ``GET /api/leaderboard`` for ``--seconds``:
   requests per second, two against one. Goal: 1.7x. The client is one Python process on the same
   machine: on few cores it competes with the servers.

The machine's load is printed first: the figures shift with it; compare only figures of one run.
Last line: ``arena: recorder N/s at 0, M/s at 100k stored; leaderboard p99 X ms = R x a trivial
endpoint at 50 clients; 2 API processes S x one`` (SQLite's recorder; ``100k``: the largest
``--history``).

    .venv/bin/python bench/arena.py [--history 0,10000,100000] [--matches 1000] [--entrants 200] [--clients 50] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from arbiter.arena.config import ArenaConfig, load_arena

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.arena.synthetic import load_history, record_synthetic, write_arena  # noqa: E402
from tests.tournament.conftest import PostgresServer, pg_bindir  # noqa: E402  (the test suite's throwaway server)

PY = sys.executable
START_SECONDS = 300  # the server reads the whole history before it listens
STOP_SECONDS = 120
QUICK = ["--history", "0,200", "--matches", "30", "--entrants", "4", "--clients", "2", "--seconds", "1"]
"""--quick: a run of seconds that tests/test_benches.py makes."""


def recorder_rate(arena: ArenaConfig, url: str, label: str, matches: int) -> float:
    """Matches recorded per second by one run into the database ``url``, from its first recorded
    match to its last (its start, which reads the stored matches once, is timed apart)."""
    n, start_seconds, stop = record_synthetic(arena, url, matches)
    times = stop.times
    tenth = max(2, n // 10)
    first, last = times[:tenth], times[-tenth:]
    rate = (n - 1) / (times[-1] - times[0])
    cpu_rate = (n - 1) / max(1e-9, stop.cpu[-1] - stop.cpu[0])
    print(
        f"recorder, {label}: started in {start_seconds:.1f}s, then {n} matches at {rate:.0f}/s "
        f"({cpu_rate:.0f} per CPU second of this process); first tenth {(tenth - 1) / (first[-1] - first[0]):.0f}/s, "
        f"last tenth {(tenth - 1) / (last[-1] - last[0]):.0f}/s",
        flush=True,
    )
    return rate


# ---- the API under load -----------------------------------------------------------------------
class Served:
    """``arbiter serve ARGS`` in a subprocess; its stderr goes to a file."""

    def __init__(self, arena_file: Path, url: str, name: str, *extra: str):
        self.errors_path = arena_file.parent / f"{name}.stderr"
        self.errors = self.errors_path.open("w+")
        self.proc = subprocess.Popen(
            [PY, "-m", "arbiter", "serve", str(arena_file), "--db", url, *extra], cwd=arena_file.parent,
            stdout=subprocess.DEVNULL, stderr=self.errors,
        )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while not (found := re.search(r"serving (http://\S+)", self.errors_path.read_text())):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"arbiter serve {name} did not start: {self.errors_path.read_text()[-2000:]}")
            time.sleep(0.2)
        self.url = found.group(1)

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.errors.close()
        return self.proc.returncode


async def load(
    urls: list[str], clients: int, seconds: float, headers: dict[str, str]
) -> tuple[list[float], int, float]:
    """``clients`` clients (spread over ``urls``) asking one request after another for
    ``seconds``: the latencies of the answered requests (200 or 304), the failed ones, the wall."""
    latencies: list[float] = []
    failed = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60, headers=headers) as http:
        deadline = time.perf_counter() + seconds

        async def client(url: str) -> None:
            nonlocal failed
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                try:
                    ok = (await http.get(url)).status_code in (200, 304)
                except httpx.HTTPError:
                    ok = False
                if ok:
                    latencies.append(time.perf_counter() - started)
                else:
                    failed += 1

        started = time.perf_counter()
        await asyncio.gather(*(client(urls[i % len(urls)]) for i in range(clients)))
    return latencies, failed, time.perf_counter() - started


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def measured(
    label: str, urls: list[str], args: argparse.Namespace, headers: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """p50 and p99 (ms) and requests per second of ``urls`` under the clients' load; printed."""
    latencies, failed, wall = asyncio.run(load(urls, args.clients, args.seconds, headers or {}))
    if not latencies:
        raise SystemExit(f"{label}: no request answered ({failed} failed)")
    p50, p99, rate = 1000 * percentile(latencies, 50), 1000 * percentile(latencies, 99), len(latencies) / wall
    print(
        f"{label}: {args.clients} clients, {wall:.1f}s: {len(latencies)} answered ({rate:.0f} req/s), {failed} "
        f"failed; p50 {p50:.1f} ms, p99 {p99:.1f} ms",
        flush=True,
    )
    return p50, p99, rate


def reads_while_playing(args: argparse.Namespace, arena_file: Path, url: str) -> float:
    """Part 2: the leaderboard's p99 (ms) as a multiple of the trivial endpoint's, printed."""
    ladder = Served(arena_file, url, "ladder")
    try:
        base = ladder.url
        entrant = f"{base}/api/entrants/heuristic01"
        tag = httpx.get(entrant, timeout=60).headers["etag"]
        figures = {
            "trivial": measured("GET /api/health (trivial)", [f"{base}/api/health"], args),
            "leaderboard": measured("GET /api/leaderboard", [f"{base}/api/leaderboard"], args),
            "entrant": measured("GET /api/entrants/heuristic01", [entrant], args),
            "entrant 304": measured(
                "GET /api/entrants/heuristic01, If-None-Match", [entrant], args, {"If-None-Match": tag}
            ),
            "matches": measured("GET /api/matches?limit=50", [f"{base}/api/matches?limit=50"], args),
        }
        trivial = figures["trivial"][1]
        print(
            "p99 / the trivial endpoint's p99: "
            + ", ".join(f"{name} {p99 / trivial:.1f}x" for name, (_, p99, _) in figures.items() if name != "trivial"),
            flush=True,
        )
    finally:
        code = ladder.stop()
        print(f"the ladder's arbiter serve: exit {code}", flush=True)
    return figures["leaderboard"][1], figures["leaderboard"][1] / trivial


def api_processes(args: argparse.Namespace, arena_file: Path, url: str) -> float:
    """Part 3: requests per second of two API processes against one."""
    rates = []
    for n in (1, 2):
        servers = [Served(arena_file, url, f"api{i}", "--api-only", "--web", "127.0.0.1:0") for i in range(n)]
        try:
            for s in servers:
                httpx.get(s.url + "/api/leaderboard", timeout=60)  # rendered once before the clock starts
            _, _, rate = measured(
                f"{n} API process(es), GET /api/leaderboard", [s.url + "/api/leaderboard" for s in servers], args
            )
            rates.append(rate)
        finally:
            for s in servers:
                s.stop()
    return rates[1] / rates[0]


def stored_label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def rates_by_history(arena: ArenaConfig, urls: dict[int, str], label: str, matches: int) -> dict[int, float]:
    """The recorder's rate into each database of ``urls`` (by the history loaded into it first)."""
    rates = {}
    for history, url in urls.items():
        if history:
            seconds = load_history(arena, url, history)
            print(f"{label}: {history} matches loaded and their standings rebuilt in {seconds:.1f}s", flush=True)
        rates[history] = recorder_rate(arena, url, f"{label}, {history} stored", matches)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--history", default="0,10000,100000", help="matches stored before each recorder run (default 0,10000,100000)"
    )
    parser.add_argument("--matches", type=int, default=1000, help="synthetic matches per recorder run (default 1000)")
    parser.add_argument("--entrants", type=int, default=200, help="house entrants of the arena (default 200)")
    parser.add_argument("--clients", type=int, default=50, help="concurrent API clients (default 50)")
    parser.add_argument("--seconds", type=float, default=10, help="seconds of load per endpoint (default 10)")
    parser.add_argument("--jobs", type=int, default=2, help="matches the server plays at once (default 2)")
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    histories = sorted({int(x) for x in args.history.split(",")} | {0})
    load_avg = os.getloadavg()
    print(f"load: {load_avg[0]:.2f} {load_avg[1]:.2f} {load_avg[2]:.2f}; {os.cpu_count()} cores", flush=True)
    bindir = pg_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL's initdb and pg_ctl were not found (set $BARBU_PG_BIN or install postgresql)")
    with tempfile.TemporaryDirectory(prefix="barbu-bench-") as tmp:
        folder = Path(tmp)
        arena_file = write_arena(folder, args.entrants, args.jobs)
        arena = load_arena(arena_file)
        sqlite_urls = {h: f"sqlite:///{folder}/recorder{h}.db" for h in histories}
        sqlite_rates = rates_by_history(arena, sqlite_urls, "SQLite", args.matches)
        pg = PostgresServer(bindir)
        pg.start()
        try:
            pg_urls = {h: pg.create_database() for h in histories}
            pg_rates = rates_by_history(arena, pg_urls, "PostgreSQL", args.matches)
            most = histories[-1]
            p99, ratio = reads_while_playing(args, arena_file, pg_urls[most])
            scaling = api_processes(args, arena_file, pg_urls[most])
        finally:
            pg.stop()
    top = stored_label(most)
    print(
        f"recorder rate at {top} stored / at 0: SQLite {sqlite_rates[most] / sqlite_rates[0]:.2f}, "
        f"PostgreSQL {pg_rates[most] / pg_rates[0]:.2f} (goal: at least 0.67, and 200/s on SQLite); PostgreSQL "
        f"{pg_rates[0]:.0f}/s at 0, {pg_rates[most]:.0f}/s at {top}"
    )
    print(
        f"arena: recorder {sqlite_rates[0]:.0f}/s at 0, {sqlite_rates[most]:.0f}/s at {top} stored; leaderboard p99 "
        f"{p99:.1f} ms = {ratio:.2f} x a trivial endpoint at {args.clients} clients; 2 API processes "
        f"{scaling:.2f} x one"
    )


if __name__ == "__main__":
    main()
