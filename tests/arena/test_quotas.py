"""The arena's quotas and its store's sweep (arbiter/arena/quotas.py): real uploads (.tar.gz
archives opened into a real store), a real SQLite file, and the API over real HTTP (uvicorn on
loopback) for what an author is told: which quota, its value, when to try again, in one line,
with the status and Retry-After that fit."""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from arbiter.arena.api import create_app
from arbiter.arena.config import Quotas, UploadLimits
from arbiter.arena.disk import DiskWatch
from arbiter.arena.quotas import OverQuota, TooManyUploads, Uploads
from arbiter.arena.service import ArenaService
from arbiter.errors import SubmissionRefused
from arbiter.storage import open_database
from arbiter.storage.arena import ArenaStore
from arbiter.storage.credentials import AuthorTokens

from .test_api import serving

ARENA = "ladder"
MiB = 1 << 20


def bot(name: str, zeros: int = 0, salt: str = "") -> bytes:
    """A bot's folder as a .tar.gz: a script that exits 3 (check-bot rejects it) and ``zeros``
    bytes of zeros, which pack to almost nothing (the probe's 97 KB upload of 95 MiB)."""
    out = io.BytesIO()
    files = [
        ("entrant.yaml", f"name: {name}\ncommand: python bot.py\n".encode()),
        ("bot.py", f"raise SystemExit(3)  # {salt}\n".encode()),
    ]
    if zeros:
        files.append(("zeros.bin", bytes(zeros)))
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path, data in files:
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def bundles(folder: Path) -> list[str]:
    """The bundles the store holds (and nothing else of its own but the session key)."""
    return sorted(p.name for p in folder.iterdir() if len(p.name) == 64)


def store_bytes(folder: Path) -> int:
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _, files in os.walk(folder) for f in files)


class Arena:
    """Uploads over a real store and database; ``queued`` collects what is sent to the checker."""

    def __init__(self, home: Path, quotas: Quotas, *, disk: DiskWatch | None = None, in_play=lambda: ()):
        self.folder = home / "store"
        self.engine = open_database(f"sqlite:///{home / 'arena.db'}")
        self.store = ArenaStore(self.engine)
        self.tokens = {name: AuthorTokens(self.store.engine).issue(name) for name in ("alice", "bob")}
        self.queued: list[int] = []
        self.uploads = Uploads(
            ARENA, self.store, self.folder, enqueue=self.queued.append, house=["heuristic"],
            limits=UploadLimits(unpacked=200 * MiB), quotas=quotas, disk=disk, in_play=in_play,
        )  # fmt: skip


@pytest.fixture
def make(tmp_path):
    made: list[Arena] = []

    def arena(quotas: Quotas | None = None, **kwargs) -> Arena:
        made.append(Arena(tmp_path / f"arena{len(made)}", quotas or Quotas(), **kwargs))
        return made[-1]

    yield arena
    for a in made:
        a.engine.dispose()


def test_a_rejected_bundle_is_removed_after_keep_seconds_and_its_row_stays(make):
    """Finding: a 97 KB upload of 95 MiB of zeros and a bot that exits 3 added 99.6 MB to the
    store each time, kept for ever though rejected."""
    arena = make(Quotas(keep_seconds=1.5))
    row = arena.uploads.submit("alice", bot("zeros", 95 * MiB))
    assert arena.queued == [row.id] and bundles(arena.folder) == [row.bundle]
    assert store_bytes(arena.folder) >= 95 * MiB
    arena.store.decide(row.id, False, json.dumps({"ok": False, "error": "exited with code 3"}))
    assert arena.uploads.sweep() == [] and bundles(arena.folder) == [row.bundle]  # kept for keep_seconds
    time.sleep(1.6)
    assert arena.uploads.sweep() == [row.bundle]
    assert bundles(arena.folder) == [] and store_bytes(arena.folder) < 64 << 10
    kept = arena.store.submission(row.id)
    assert kept is not None and kept.status == "rejected" and "code 3" in kept.report  # the record stays


def test_what_is_needed_stays_and_what_nobody_uses_goes(make):
    """Active and checking versions keep their files; a retired one while a match not yet recorded
    seats it; a bundle no submission uses (a kill between unpacking and recording) goes too."""
    seated: set[str] = set()
    arena = make(Quotas(keep_seconds=0, queued=5), in_play=lambda: seated)
    active = arena.uploads.submit("alice", bot("alpha", salt="1"))
    arena.store.decide(active.id, True, "{}")
    waiting = arena.uploads.submit("alice", bot("beta", salt="2"))
    retired = arena.uploads.submit("bob", bot("gamma", salt="3"))
    arena.store.decide(retired.id, True, "{}")
    arena.store.retire(ARENA, "bob", "gamma")
    seated.add("gamma@1")
    orphan = arena.folder / ("f" * 64) / "files"
    orphan.mkdir(parents=True)
    (orphan / "bot.py").write_text("print()\n")
    assert arena.uploads.sweep() == ["f" * 64]
    assert bundles(arena.folder) == sorted([active.bundle, waiting.bundle, retired.bundle])
    seated.clear()  # its last match is recorded
    assert arena.uploads.sweep() == [retired.bundle]
    assert bundles(arena.folder) == sorted([active.bundle, waiting.bundle])


def test_leftovers_of_uploads_cut_short_are_removed_at_any_depth(make):
    """Finding: a kill -9 during an upload left `.upload-*` folders (157 MB) that a restart never
    removed; an older arbiter may have left one 1000 levels deep, read-only."""
    arena = make()
    arena.folder.mkdir()
    deep = arena.folder / ".upload-abc123"
    path = deep
    deep.mkdir()
    for _ in range(1000):  # a level at a time: Path.mkdir(parents=True) recurses per level
        path = path / "a"
        path.mkdir()
    (path / "x.bin").write_bytes(bytes(1 << 20))
    for name in (".unpack-0123456789ab-x", ".trash-0123"):
        (arena.folder / name / "files").mkdir(parents=True)
        (arena.folder / name / "files" / "bot.py").write_text("x")
        os.chmod(arena.folder / name / "files", 0o555)
    os.chmod(deep, 0o555)
    (arena.folder / "session.key").write_bytes(b"k" * 32)
    arena.uploads.sweep()
    assert sorted(p.name for p in arena.folder.iterdir()) == ["session.key"]


def test_an_author_over_the_store_quota_is_refused_and_told_when_room_returns(make):
    arena = make(Quotas(author_store=10 * MiB, store=15 * MiB, keep_seconds=600, queued=5))
    first = arena.uploads.submit("alice", bot("one", 6 * MiB, "a"))
    arena.store.decide(first.id, False, "{}")
    with pytest.raises(OverQuota) as e:
        arena.uploads.submit("alice", bot("two", 6 * MiB, "b"))
    message = str(e.value)
    assert message.startswith("your bots would keep 12.0 MiB in the arena's store with this one's 6.0 MiB; each ")
    assert "may keep 10.0 MiB (quotas.author_store)" in message and "go 10 min after their decision" in message
    assert "\n" not in message and str(arena.folder) not in message
    assert 590 < e.value.retry_after < 700  # when the rejected one's files go, and the sweep after
    assert bundles(arena.folder) == [first.bundle]  # the refused upload's files went at once
    small = arena.uploads.submit("alice", bot("three", 3 * MiB, "c"))  # what fits is taken
    arena.store.decide(small.id, True, "{}")
    # The store for all: bob's 7 MiB would bring it to 16 MiB of 15.
    with pytest.raises(OverQuota, match=r"the arena's store is full: its bots would keep 16.0 MiB .*\(quotas.store\)"):
        arena.uploads.submit("bob", bot("four", 7 * MiB, "d"))
    # At the quota already: refused before anything is unpacked.
    full = make(Quotas(queued=5))
    full.uploads.submit("alice", bot("five", 3 << 10))
    full.uploads.quotas = Quotas(author_store=2 << 10, queued=5)
    with pytest.raises(
        OverQuota, match=r"^your bots keep 3.1 KiB in the arena's store; .* retire a version, then"
    ) as e:
        full.uploads.submit("alice", b"not even an archive")
    assert e.value.retry_after is None  # a checking version's files stay: nothing frees them by itself


def test_uploads_per_hour_and_the_check_queue(make):
    arena = make(Quotas(uploads_per_hour=3, queued=1))
    first = arena.uploads.submit("alice", bot("one", salt="1"))
    with pytest.raises(TooManyUploads) as e:
        arena.uploads.submit("alice", bot("two", salt="2"))
    assert str(e.value) == (
        f"submission {first.id} is still waiting for its check: 1 submission waits per author (quotas.queued): "
        "try again once it is decided"
    )
    assert e.value.retry_after > 0
    arena.uploads.submit("bob", bot("three", salt="3"))  # another author is not held up
    arena.store.decide(first.id, False, "{}")
    with pytest.raises(SubmissionRefused):  # a refused upload counts: its reading cost the arena too
        arena.uploads.submit("alice", b"not an archive")
    second = arena.uploads.submit("alice", bot("two", salt="2"))
    arena.store.decide(second.id, False, "{}")
    with pytest.raises(TooManyUploads) as e:  # alice's 4th upload in the hour
        arena.uploads.submit("alice", bot("four", salt="4"))
    assert str(e.value).startswith("too many uploads: the arena takes 3 an hour from each author ")
    assert "(quotas.uploads_per_hour): try again in 60 min" in str(e.value)
    assert 3590 < e.value.retry_after <= 3600
    assert len(arena.queued) == 3


def test_over_http_each_refusal_is_one_line_with_its_status_and_retry_after(make, tmp_path):
    """413 over a store quota, 429 over the pace, 503 while the disk is short: each in one line,
    naming the quota, with Retry-After; never the server's folders."""
    roomy = DiskWatch({"the bundle store": tmp_path}, 0)
    arena = make(Quotas(author_store=5 * MiB, uploads_per_hour=10, queued=1, keep_seconds=120), disk=roomy)
    service = ArenaService(arena.engine, ARENA, tmp_path / "logs", uploads=arena.uploads, house=["heuristic"])

    def post(author: str, data: bytes) -> httpx.Response:
        files = {"bundle": ("bot.tar.gz", data, "application/gzip")}
        headers = {"Authorization": f"Bearer {arena.tokens[author]}"}
        return httpx.post(url + "/api/submissions", headers=headers, files=files, timeout=60)

    def refused(response: httpx.Response, status: int) -> tuple[str, int]:
        assert response.status_code == status, response.text
        detail = response.json()["detail"]
        assert "\n" not in detail and str(tmp_path) not in detail and "Traceback" not in detail
        return detail, int(response.headers["retry-after"])

    with serving(create_app(service)) as url:
        first = post("alice", bot("one", 4 * MiB, "a"))
        assert first.status_code == 201, first.text
        detail, wait = refused(post("alice", bot("two", salt="b")), 429)
        assert "(quotas.queued)" in detail and wait == 30
        arena.store.decide(first.json()["id"], False, "{}")
        detail, wait = refused(post("alice", bot("two", 2 * MiB, "b")), 413)
        assert "(quotas.author_store)" in detail and 110 < wait < 200
        arena.uploads.disk = DiskWatch({"the bundle store": tmp_path}, 1 << 60)  # no disk has that much free
        detail, wait = refused(post("bob", bot("three", salt="c")), 503)
        assert detail == "the arena takes no upload now: its disk is short of space; try again later" and wait >= 1
