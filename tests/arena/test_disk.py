"""A full disk (arbiter/arena/disk.py, the ladder, uploads, `arbiter serve`): real small
filesystems (tmpfs, mounted here; it needs root, as CI's container has), filled for real until
writes fail with ENOSPC, and a real `arbiter serve` whose logs, database and store are on one.
Only the clock is the test's own, where a wait of RETRY_SECONDS would prove nothing more."""

from __future__ import annotations

import errno
import hashlib
import io
import logging
import os
import re
import signal
import sqlite3
import subprocess
import tarfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

import httpx
import pytest

from arbiter.arena.api import create_app
from arbiter.arena.config import Quotas
from arbiter.arena.disk import LOOK_SECONDS, PAUSED, RESUME_BYTES, RETRY_SECONDS, DiskWatch, disk_full
from arbiter.arena.ladder import ArenaSchedule
from arbiter.arena.matchmaking import Matchmaking
from arbiter.arena.quotas import Uploads
from arbiter.arena.service import ArenaService
from arbiter.errors import TournamentError
from arbiter.storage import open_database
from arbiter.storage.arena import ArenaStore
from arbiter.storage.credentials import AuthorTokens
from arbiter.tournament.config import parse_config
from arbiter.tournament.loop import Observer, run_tournament

from ..tournament import inproc
from .test_api import serving
from .test_ladder import BASE, Field, StopAfter, entrant
from .test_serve import Server, _multipart, author, leaderboard, recorded, write_arena

MiB = 1 << 20


@pytest.fixture
def small_disk(tmp_path):
    """``mount(mib)``: a fresh tmpfs of that size, unmounted after the test."""
    mounted: list[Path] = []

    def mount(mib: int) -> Path:
        folder = tmp_path / f"disk{len(mounted)}"
        folder.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0755", "tmpfs", str(folder)],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"cannot mount a tmpfs ({done.stderr.strip()}): the full-disk tests need root")
        mounted.append(folder)
        return folder

    yield mount
    for folder in reversed(mounted):
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


def fill(disk: Path) -> Path:
    """Write zeros to a file on ``disk`` until the disk refuses them (ENOSPC); the file."""
    filler = disk / "filler.bin"
    with open(filler, "wb", buffering=0) as out:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while out.write(bytes(size)):
                    pass
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
    assert os.statvfs(disk).f_bavail == 0
    return filler


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def passes(self, seconds: float) -> None:
        self.now += seconds


def test_below_the_floor_the_arena_pauses_and_resumes_when_space_returns(small_disk, caplog):
    disk, clock = small_disk(32), Clock()
    watch = DiskWatch({"the match logs": disk / "logs", "the bundle store": disk / "store"}, 16 * MiB, clock=clock)
    assert watch.paused() is None
    (disk / "big.bin").write_bytes(bytes(20 * MiB))
    assert watch.paused() is None  # looked at a moment ago
    clock.passes(LOOK_SECONDS)
    with caplog.at_level(logging.WARNING, logger="arbiter.arena.disk"):
        assert watch.paused() == PAUSED
        clock.passes(LOOK_SECONDS)
        assert watch.paused() == PAUSED  # said once
        (disk / "big.bin").unlink()
        clock.passes(LOOK_SECONDS)
        assert watch.paused() is None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2, said
    assert said[0].startswith(f"arena paused: the disk of the match logs ({disk / 'logs'}) has ")
    assert "MiB free, under the floor of 16.0 MiB; no new match, check or upload starts" in said[0]
    assert said[1] == "arena resumed: its disks have room again"
    assert DiskWatch({"the match logs": disk}, 0).paused() is None  # no floor


def test_a_write_that_failed_for_want_of_space_pauses_until_there_is_room_again(small_disk, tmp_path):
    disk, clock = small_disk(32), Clock()
    with sqlite3.connect(disk / "arena.db") as database:  # made before the disk fills
        database.execute("create table t (x blob)")
    filler = fill(disk)
    with pytest.raises(OSError) as caught:
        (disk / "more.txt").write_text("x" * 10000)
    assert disk_full(caught.value)
    with pytest.raises(sqlite3.OperationalError) as sqlite_full, sqlite3.connect(disk / "arena.db") as database:
        database.execute("insert into t values (?)", (bytes(MiB),))
    assert disk_full(sqlite_full.value), sqlite_full.value
    # As a match's failure arrives from its worker process: as text.
    assert disk_full(
        TournamentError(f"match a1-1 could not be played: cannot write x.jsonl: {os.strerror(errno.ENOSPC)}")
    )
    assert not disk_full(TournamentError("match a1-1 could not be played: cannot write x.jsonl: Permission denied"))

    watch = DiskWatch({"the database": disk}, 0, clock=clock)  # no floor: only the failed write pauses
    assert watch.paused() is None
    watch.failed(caught.value)
    assert watch.paused() == PAUSED
    filler.unlink()
    clock.passes(LOOK_SECONDS)
    assert watch.paused() == PAUSED  # room, but not for RETRY_SECONDS yet
    clock.passes(RETRY_SECONDS)
    assert watch.paused() is None
    # Too little room after a failed write: paused until RESUME_BYTES are free.
    (disk / "most.bin").write_bytes(bytes(32 * MiB - RESUME_BYTES + MiB))
    watch.failed(caught.value)
    clock.passes(RETRY_SECONDS)
    assert watch.paused() == PAUSED
    (disk / "most.bin").unlink()
    clock.passes(LOOK_SECONDS)
    assert watch.paused() is None


def _zeros_bot(mib: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path, data in (
            ("entrant.yaml", b"name: zeros\ncommand: python bot.py\n"),
            ("bot.py", b"print('hi')\n"),
            ("zeros.bin", bytes(mib * MiB)),
        ):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_a_store_that_fills_mid_upload_is_503_with_retry_after_and_leaves_nothing(small_disk, tmp_path):
    """Finding: a store filling mid-unpack was an HTTP 500 with a traceback. The upload's files
    fit its temporary folder, not the bundle made of them (the unpacking); a larger one fails at
    its first write."""
    disk = small_disk(8)
    engine = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    store = ArenaStore(engine)
    token = AuthorTokens(store.engine).issue("alice")
    watch = DiskWatch({"the bundle store": disk}, 0)
    uploads = Uploads("ladder", store, disk / "store", enqueue=lambda _: None, quotas=Quotas(queued=5), disk=watch)
    service = ArenaService(engine, "ladder", tmp_path / "logs", uploads=uploads)
    try:
        with serving(create_app(service)) as url:
            for mib in (5, 12):
                uploads.disk = watch = DiskWatch({"the bundle store": disk}, 0)  # a fresh watch: not paused yet
                response = httpx.post(
                    url + "/api/submissions", headers={"Authorization": f"Bearer {token}"},
                    files={"bundle": ("bot.tar.gz", _zeros_bot(mib), "application/gzip")}, timeout=60,
                )  # fmt: skip
                assert response.status_code == 503, response.text
                assert response.json() == {
                    "detail": "the arena's disk has no room for this upload now: try again later"
                }
                assert int(response.headers["retry-after"]) >= 1
                assert sorted(p.name for p in (disk / "store").iterdir()) == []  # nothing left behind
                assert watch.paused() == PAUSED  # and the arena knows its disk is full
    finally:
        engine.dispose()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_full_disk_pauses_arbiter_serve_keeps_its_api_and_loses_nothing(small_disk, tmp_path):
    """Finding: a full disk stopped the arena (`serve` exited 1, the API went down) and it did not
    come back when space was freed. Here the logs, the database and the store share a 64 MiB
    disk, with no floor (free_space: 0), so that only the real ENOSPC pauses it."""
    disk = small_disk(64)
    write_arena(disk)
    arena_file = disk / "arena.yaml"
    arena_file.write_text(arena_file.read_text() + "free_space: 0\n")
    token = author(disk, "alice").read_text().strip()
    server = Server(disk)
    try:
        server.until(lambda: len(recorded(disk)) >= 4, "four matches")
        filler = fill(disk)
        server.until(lambda: server.get("/api/state")["paused"], "the arena to say it is paused", 120)
        before = recorded(disk)
        assert server.proc.poll() is None  # it goes on, paused
        status, page = _get(server.url + "/")
        assert status == 200 and 'id="paused"' in page and "short of disk space" in page
        assert leaderboard(server)["heuristic@1"]["matches"] >= 1
        body, kind = _multipart(_zeros_bot(0))
        code, answer = server.post("/api/submissions", body, token, kind)
        assert code == 503 and "short of space" in answer["detail"], answer
        assert "arena paused: " in server.stderr and "Traceback" not in server.stderr

        filler.unlink()
        server.until(lambda: not server.get("/api/state")["paused"], "the arena to resume", 120)
        server.until(lambda: len(recorded(disk)) >= len(before) + 4, "four more matches")
        assert "arena resumed" in server.stderr
        code, err = server.stop(signal.SIGTERM)
        assert code == 0, err
    finally:
        if server.proc.poll() is None:
            server.stop(signal.SIGKILL)
    after = recorded(disk)
    assert after[: len(before)] == before  # every row recorded before the disk filled, unchanged
    keys = [key for _, key, *_ in after]
    assert len(keys) == len(set(keys))
    for *_, path, sha in after:
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == sha
    assert not list((disk / "matches").glob("*.part"))
    paused = next(line for line in server.stderr.splitlines() if "arena paused: a write failed" in line)
    failed = re.search(r"\bmatch (\d+)\b", paused)  # its log, or its row (or else the next set, stored late)
    assert failed is None or failed.group(1) in keys, paused  # the match the full disk kept: played again


@pytest.mark.parametrize("after", [2, 4])
def test_a_ladder_whose_database_fills_holds_what_it_could_not_write(small_disk, tmp_path, caplog, after):
    """The tournament loop with the ladder's schedule, in process: the database alone on a small
    disk that fills after ``after`` matches: in the middle of a set, the next match's row cannot
    be written (its log is); at a set's end, the ladder's growth cannot. Both are held, not lost:
    once the disk has room the match is recorded from its log, the growth stored and played."""
    disk = small_disk(32)  # more than RESUME_BYTES: room to resume on
    field = Field(entrant("a", "random"), entrant("b", "first"), entrant("c", "random"), entrant("d", "first"))
    config = parse_config(BASE, base_dir=tmp_path, check_commands=False)
    watch = DiskWatch({"the database": disk}, 0)
    schedule = ArenaSchedule(config, Matchmaking(provisional=4), 7, field, field.lookup, watch)
    filled: list[Path] = []

    class FillAfterFour(Observer):
        def started(self, run) -> None:
            pass

        def match_done(self, run, m, outcome) -> None:
            if len(run.records) == after and not filled:
                filled.append(fill(disk))
                threading.Timer(3, filled[0].unlink).start()  # space comes back while the ladder waits

        def stopped(self, run) -> None:
            pass

    summary = run_tournament(
        schedule.config, database=f"sqlite:///{disk}/r.db", executor=inproc.in_process(inproc.play_inprocess),
        schedule=schedule, observers=[FillAfterFour(), StopAfter(schedule, 16)],
    )  # fmt: skip
    assert filled
    paused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("arena paused")]
    assert len(paused) == 1 and "database or disk is full" in paused[0], paused
    if after == 2:
        assert (
            "cannot record match 3:" in paused[0] and summary.reconciled == 1
        )  # set 0, rotation 3: recorded from its log
    else:
        assert "cannot record" not in paused[0] and summary.reconciled == 0  # the next set, stored late
    with sqlite3.connect(disk / "r.db") as c:
        keys = [k for (k,) in c.execute("select key from matches order by number")]
        games = dict(c.execute("select game, count(*) from matches group by game").fetchall())
    assert len(keys) == len(set(keys)) >= 16
    assert sorted(games.values())[:-2] == [4] * (len(games) - 2)  # whole sets, but for those the drain cut short


def test_the_operator_log_on_a_full_disk_loses_lines_from_its_file_only(small_disk, capsys):
    """Found under load: a line logged while the arena's disk was full printed Python's
    "--- Logging error ---" and a traceback on stderr, as if the arena had failed."""
    from arbiter.arena.serve import operator_log

    disk = small_disk(1)
    path = disk / "logs" / "arbiter.log"
    with operator_log(path):
        logging.getLogger("arbiter.arena").info("before the disk fills")
        fill(disk)
        logging.getLogger("arbiter.arena").info("x" * 65536)  # more than the file's buffer: written at once
    errors = capsys.readouterr().err
    assert "Logging error" not in errors and "Traceback" not in errors, errors
    assert "before the disk fills" in path.read_text()
