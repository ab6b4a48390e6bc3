"""The arena's API over real HTTP: a uvicorn server on loopback, over an SQLite database that a
real tournament of the sample bots (real processes, real logs) filled, its entrants named as
the arena names versions (``NAME@VERSION``), with authors and submissions in the arena's tables.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
import socket
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from select import select as readable

import httpx
import pytest
import yaml
from sqlmodel import Session, select

from arbiter.arena.api import create_app
from arbiter.arena.config import UploadLimits
from arbiter.arena.guards import FORM_LIMIT
from arbiter.arena.matchmaking import SWISS_START
from arbiter.arena.quotas import Uploads
from arbiter.arena.service import ArenaService
from arbiter.arena.views import public_id
from arbiter.arena.webserver import WebServer
from arbiter.lobby.ratelimit import FailureLimiter
from arbiter.storage import Repo, open_database, row_id
from arbiter.storage.arena import ArenaStore
from arbiter.storage.credentials import AuthorTokens
from arbiter.storage.models import Match
from arbiter.tournament.config import override, parse_config
from arbiter.tournament.loop import run_tournament
from arbiter.tournament.ratings import standings

ROOT = Path(__file__).resolve().parents[2]
ARENA = "ladder"
UPLOAD_LIMIT = 256 << 10


def _tournament_file(folder: Path) -> str:
    """Three versions at one table (copies fill the fourth seat): the house heuristic, alice's
    first version and bob's, which writes a line to stderr before it plays."""
    bob = folder / "bob_bot.py"
    bob.write_text(
        "import runpy, sys\n"
        "print('bob was here', file=sys.stderr, flush=True)\n"
        f"runpy.run_path({str(ROOT / 'sample_bots' / 'random_bot.py')!r}, run_name='__main__')\n"
    )
    bots = ROOT / "sample_bots"
    return yaml.safe_dump(
        {
            "name": ARENA,
            "entrants": [
                {"name": "heuristic", "command": f"python {bots / 'heuristic_bot.py'}"},
                {"name": "alice", "command": f"env BARBU_SEED=1 python {bots / 'random_bot.py'}"},
                {"name": "bob", "command": f"env BARBU_SEED=2 python {bob}"},
            ],
            "format": "duplicate",
            "rounds": 1,
            "seed": 7,
            "rules": {"preset": "standard", "contracts": ["no_tricks", "no_hearts", "barbu"]},
            "time_control": {"per_decision": 2.0, "reserve": 10, "connect": 20, "match_limit": 120},
            "log_folder": str(folder / "logs"),
            "parallelism": 2,
        }
    )


def _bundle(name: str) -> bytes:
    """A bot's folder as a .tar.gz: its entrant.yaml and the script it names."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path, data in (("entrant.yaml", yaml.safe_dump({"name": name, "command": "python bot.py"}).encode()),
                           ("bot.py", b"print('a bot')\n")):  # fmt: skip
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@dataclasses.dataclass
class Arena:
    url: str
    folder: Path
    engine: object
    service: ArenaService
    tokens: dict[str, str]
    queued: list[int]

    def get(self, path: str, token: str | None = None, **params: object) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.get(self.url + path, headers=headers, params=params, timeout=30)

    def post(self, path: str, token: str | None = None, **kwargs: object) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.post(self.url + path, headers=headers, timeout=30, **kwargs)  # type: ignore[arg-type]

    def matches(self) -> list[Match]:
        with Session(self.engine) as s:  # type: ignore[arg-type]
            return list(s.exec(select(Match).order_by(Match.number)))  # a match's public id: number + 1


@contextmanager
def serving(app, **options) -> Iterator[str]:
    """``app`` served as ``arbiter serve`` serves it (arbiter.arena.webserver: a real uvicorn with
    the arena's bounds) on a free loopback port, for the ``with`` block: its URL."""
    server = WebServer(app, "127.0.0.1:0", **options)
    server.start()
    assert server.server.started, "the API server did not start"
    try:
        yield f"http://{server.address}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arena")
    config = parse_config(_tournament_file(folder), display="arena.yaml", base_dir=folder)
    versioned = [dataclasses.replace(e, name=f"{e.name}@1") for e in config.entrants]
    db = f"sqlite:///{folder / 'arena.db'}"
    run_tournament(override(config, entrants=versioned), database=db, jobs=2)
    engine = open_database(db)
    store = ArenaStore(engine)
    tokens = {name: AuthorTokens(store.engine).issue(name) for name in ("alice", "bob", "carol")}
    for author, versions in (("alice", 2), ("bob", 1), ("carol", 1)):
        for _ in range(versions):
            row = store.open_submission(ARENA, author, author, "0" * 64, "python bot.py", house=["heuristic"])
            store.decide(row.id, True, json.dumps({"passed": True, "checks": ["all"]}))
    queued: list[int] = []
    uploads = Uploads(
        ARENA, store, folder / "store", enqueue=queued.append, house=["heuristic"],
        limits=UploadLimits(archive=UPLOAD_LIMIT),
    )  # fmt: skip
    service = ArenaService(
        engine, ARENA, folder / "logs", uploads=uploads, house=["heuristic"], in_flight=lambda: 2,
        limiter=FailureLimiter(max_failures=1000),
    )  # fmt: skip
    with serving(create_app(service)) as url:
        yield Arena(url, folder, engine, service, tokens, queued)


def _one_line_error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str) and detail and "\n" not in detail
    return detail


def test_openapi_lists_every_route(arena):
    paths = arena.get("/openapi.json").json()["paths"]
    assert set(paths) >= {
        "/api/leaderboard", "/api/state", "/api/entrants/{name}", "/api/entrants/{name}/retire", "/api/matches",
        "/api/matches/{match_id}", "/api/matches/{match_id}/log", "/api/matches/{match_id}/stderr/{seat}",
        "/api/submissions", "/api/submissions/{submission_id}",
    }  # fmt: skip
    assert "post" in paths["/api/submissions"] and "bundle" in json.dumps(arena.get("/openapi.json").json())


def test_leaderboard_lists_each_active_version_with_its_standing(arena):
    board = arena.get("/api/leaderboard").json()
    rows = {r["name"]: r for r in board["entrants"]}
    assert set(rows) == {"heuristic", "alice", "bob", "carol"}
    assert (rows["heuristic"]["version"], rows["heuristic"]["author"]) == (1, None)
    assert (rows["alice"]["version"], rows["alice"]["author"], rows["alice"]["matches"]) == (2, "alice", 0)
    played = arena.matches()
    assert board["matches"] == len(played) > 0
    repo = Repo(arena.engine)
    t = repo.tournament(ARENA)
    expected = {s.name: s for s in standings(repo.entrant_names(row_id(t)), repo.matches(row_id(t)))}
    bob = rows["bob"]
    assert set(bob) == {
        "rank", "name", "version", "author", "mu", "sigma", "conservative", "matches", "mean_score", "ci95", "faults",
        "margin", "margin_sd", "provisional",
    }  # fmt: skip
    assert bob["mu"] == pytest.approx(expected["bob@1"].mu, abs=1e-4)
    assert bob["conservative"] == pytest.approx(bob["mu"] - 3 * bob["sigma"], abs=1e-3)
    assert bob["margin"] == pytest.approx(expected["bob@1"].margin, abs=1e-3) and bob["margin"] != 0
    assert bob["margin_sd"] == pytest.approx(expected["bob@1"].margin_sd, abs=1e-3)
    assert bob["matches"] == expected["bob@1"].matches > 0 and bob["ci95"][0] <= bob["mean_score"] <= bob["ci95"][1]
    # ordered by μ (not μ − 3σ); alice@2 has not played: provisional, at the prior's μ and margin 0
    assert board["rating"] == "trueskill"
    ranks = [r["mu"] for r in board["entrants"]]
    assert ranks == sorted(ranks, reverse=True) and [r["rank"] for r in board["entrants"]] == [1, 2, 3, 4]
    assert all(r["provisional"] == (r["matches"] < SWISS_START) for r in board["entrants"])
    assert (rows["alice"]["provisional"], rows["alice"]["mu"], rows["alice"]["margin"]) == (True, 25.0, 0.0)


def test_an_arena_file_may_order_the_leaderboard_by_the_margin_rating(arena):
    """What ``rating: margins`` and ``matchmaking.provisional`` give the service (arbiter serve
    passes the arena file's): the same standings, ordered by the margin rating."""
    service = ArenaService(arena.engine, ARENA, arena.folder / "logs", uploads=arena.service.uploads,
                           house=["heuristic"], rating="margins", provisional=1)  # fmt: skip
    board = service.leaderboard()
    by_mu = {r.name: r for r in arena.service.leaderboard().entrants}
    assert board.rating == "margins"
    margins = [r.margin for r in board.entrants]
    assert margins == sorted(margins, reverse=True) and [r.rank for r in board.entrants] == [1, 2, 3, 4]
    for row in board.entrants:
        assert (row.mu, row.margin, row.margin_sd) == (
            by_mu[row.name].mu,
            by_mu[row.name].margin,
            by_mu[row.name].margin_sd,
        )
        assert row.provisional == (row.matches < 1)


def test_an_entrant_page_has_versions_history_contract_scores_and_matches(arena):
    page = arena.get("/api/entrants/alice").json()
    assert page["author"] == "alice" and page["active_version"] == 2
    played = arena.matches()
    versions = [(v["version"], v["status"], v["matches"]) for v in page["versions"]]
    assert versions == [(1, "retired", len(played)), (2, "active", 0)]  # three entrants: alice@1 sat at every table
    assert page["history"] and {p["version"] for p in page["history"]} == {1}
    scores = page["contract_scores"]
    assert scores["matches"] == len(played) and scores["contracts"] == ["no_tricks", "no_hearts", "barbu"]
    first = scores["by_version"]["1"]
    assert first["all"]["n"] == len(played) * 12 and all(first[c]["n"] > 0 for c in scores["contracts"])
    assert scores["by_version"]["2"]["all"]["n"] == 0
    _check_doubling(arena, page, len(played))
    ids = {m.id for m in played}
    assert {m["id"] for m in page["recent_matches"]} == ids
    assert arena.get("/api/entrants/heuristic").json()["versions"][0]["status"] == "active"
    _one_line_error(arena.get("/api/entrants/nobody"), 404)
    _one_line_error(arena.get("/api/entrants/" + "x" * 65), 400)
    _one_line_error(arena.get("/api/entrants/bad%20name"), 400)


def _check_doubling(arena, alice: dict, played: int) -> None:
    """Every entrant's doubling record covers every match here (fewer than the recent matches an
    entrant page reads), so the records balance: each doubled pair is one double made and either
    a redouble or a pair doubled by others, and every settlement is won by one side, lost by the other."""
    assert played <= 20 and alice["doubling"]["matches"] == played
    assert alice["doubling"]["by_version"]["2"] == {
        "doubles": 0, "redoubles": 0, "pairs": 0, "won": 0, "lost": 0, "net": 0, "mean": None, "ci95": None,
        "doubled_pairs": 0, "doubled_mean": None,
    }  # fmt: skip
    records = [
        row
        for name in ("heuristic", "alice", "bob")
        for row in arena.get(f"/api/entrants/{name}").json()["doubling"]["by_version"].values()
    ]
    doubles = sum(r["doubles"] for r in records)
    assert doubles > 0  # the standard quota forces doubles
    assert doubles == sum(r["doubled_pairs"] + r["redoubles"] for r in records)
    assert all(r["pairs"] == r["doubles"] + r["redoubles"] >= r["won"] + r["lost"] for r in records)
    passive = sum(r["doubled_mean"] * r["doubled_pairs"] for r in records if r["doubled_pairs"])
    assert sum(r["net"] for r in records) + passive == pytest.approx(0, abs=0.1 * len(records))


def test_matches_are_listed_newest_first_filtered_and_paged(arena):
    rows = arena.matches()
    listed = arena.get("/api/matches").json()
    assert [m["id"] for m in listed["matches"]] == [public_id(m.number) for m in reversed(rows)]
    first = listed["matches"][-1]
    assert [s["name"] for s in first["seats"]] == [n.split("@")[0] for n in rows[0].seats]
    assert first["totals"] == rows[0].totals and first["log"] == f"/api/matches/{public_id(rows[0].number)}/log"
    paged, before = [], None
    while True:
        page = arena.get("/api/matches", limit=5, **({"before": before} if before else {})).json()
        assert len(page["matches"]) <= 5
        paged += [m["id"] for m in page["matches"]]
        if (before := page["next_before"]) is None:
            break
    assert paged == [m["id"] for m in listed["matches"]]
    assert len(arena.get("/api/matches", entrant="bob@1").json()["matches"]) == len(rows)
    assert arena.get("/api/matches", since="2999-01-01T00:00:00Z").json()["matches"] == []
    assert "limit" in _one_line_error(arena.get("/api/matches", limit=201), 400)
    _one_line_error(arena.get("/api/matches", entrant="carol"), 404)
    detail = arena.get(f"/api/matches/{public_id(rows[0].number)}").json()
    assert detail["deals"] == 12 and detail["status"] == "complete"
    faults = [f for f in Repo(arena.engine).faults(rows[0].tournament_id) if f.match_id == row_id(rows[0])]
    assert [(f["seat"], f["deal"], f["kind"]) for f in detail["fault_list"]] == [
        (f.seat, f.deal, f.kind) for f in faults
    ]
    _one_line_error(arena.get("/api/matches/999999"), 404)
    _one_line_error(arena.get("/api/matches/0"), 400)


def test_the_log_is_served_byte_for_byte_and_only_as_recorded(arena):
    row = arena.matches()[0]
    path = Path(row.log_path)
    original = path.read_bytes()
    response = arena.get(f"/api/matches/{public_id(row.number)}/log")
    assert response.status_code == 200 and response.content == original
    assert hashlib.sha256(response.content).hexdigest() == row.log_sha256
    try:
        path.write_bytes(original.replace(b'"no_tricks"', b'"no_hearts"', 1))
        assert "SHA-256" in _one_line_error(arena.get(f"/api/matches/{public_id(row.number)}/log"), 410)
    finally:
        path.write_bytes(original)
    outside = arena.folder / path.name  # the same bytes, outside the log folder
    shutil.copy(path, outside)
    with Session(arena.engine) as s:
        stored = s.get_one(Match, row_id(row))
        stored.log_path = str(outside)
        s.add(stored)
        s.commit()
    try:
        assert "log folder" in _one_line_error(arena.get(f"/api/matches/{public_id(row.number)}/log"), 404)
    finally:
        with Session(arena.engine) as s:
            stored = s.get_one(Match, row_id(row))
            stored.log_path = str(path)
            s.add(stored)
            s.commit()
    assert arena.get(f"/api/matches/{public_id(row.number)}/log").content == original


def test_a_bots_output_is_for_its_author_alone(arena):
    row = arena.matches()[0]
    seats = row.seats
    bob_seat, house_seat = seats.index("bob@1"), seats.index("heuristic@1")
    url = f"/api/matches/{public_id(row.number)}/stderr/{bob_seat}"
    response = arena.get(url, arena.tokens["bob"])
    assert response.status_code == 200 and b"bob was here" in response.content
    assert response.content == Path(row.log_path.removesuffix(".jsonl") + f".seat{bob_seat}.stderr").read_bytes()
    for token in (arena.tokens["alice"], None):
        _one_line_error(arena.get(url, token), 404)
    _one_line_error(arena.get(f"/api/matches/{public_id(row.number)}/stderr/{house_seat}", arena.tokens["bob"]), 404)
    _one_line_error(arena.get(f"/api/matches/{public_id(row.number)}/stderr/4", arena.tokens["bob"]), 400)
    _one_line_error(arena.get(url, "ba1_not_a_token"), 401)


def test_a_submission_is_stored_queued_and_shown_to_its_author(arena):
    files = {"bundle": ("bot.tar.gz", _bundle("bob"), "application/gzip")}
    _one_line_error(arena.post("/api/submissions", files=files), 401)
    _one_line_error(arena.post("/api/submissions", "ba1_wrong", files=files), 401)
    response = arena.post("/api/submissions", arena.tokens["bob"], files=files)
    assert response.status_code == 201, response.text
    made = response.json()
    assert (made["name"], made["version"], made["status"], made["author"]) == ("bob", 2, "checking", "bob")
    assert arena.queued[-1] == made["id"] and response.headers["location"] == f"/api/submissions/{made['id']}"
    seen_by_alice = arena.get(f"/api/submissions/{made['id']}", arena.tokens["alice"]).json()
    # an author's name is public, as on the leaderboard; the bundle and the report are its own
    assert (seen_by_alice["status"], seen_by_alice["author"], seen_by_alice["bundle"]) == ("checking", "bob", None)
    assert arena.get(f"/api/submissions/{made['id']}").json()["author"] == "bob"
    store = ArenaStore(arena.engine)
    store.decide(made["id"], False, json.dumps({"passed": False, "failures": ["illegal play"]}))
    assert arena.get(f"/api/submissions/{made['id']}").json()["report"] is None
    own = arena.get(f"/api/submissions/{made['id']}", arena.tokens["bob"]).json()
    assert own["status"] == "rejected" and own["report"] == {"passed": False, "failures": ["illegal play"]}
    for name in ("alice", "heuristic"):
        files = {"bundle": ("bot.tar.gz", _bundle(name), "application/gzip")}
        assert name in _one_line_error(arena.post("/api/submissions", arena.tokens["bob"], files=files), 403)
    _one_line_error(arena.get("/api/submissions/999999"), 404)


def _raw_post(arena: Arena, head: bytes, body_parts: list[bytes]) -> bytes:
    """Send a request's head, then its body a part at a time until the server answers; read the answer."""
    host, port = arena.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head)
        for part in body_parts:
            if readable([sock], [], [], 0.3)[0]:  # answered: it reads no further
                break
            sock.sendall(part)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def test_an_upload_over_the_limit_is_refused_before_it_is_read(arena):
    token = arena.tokens["carol"].encode()
    head = (
        b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + b"\r\n"
        b"Content-Type: multipart/form-data; boundary=b\r\nConnection: close\r\nContent-Length: 1000000000\r\n\r\n"
    )
    queued, started = len(arena.queued), time.monotonic()
    answer = _raw_post(arena, head, [])  # a gigabyte declared, nothing sent: answered at once
    assert answer.startswith(b"HTTP/1.1 413") and b"limit" in answer and time.monotonic() - started < 5
    chunk = b"x" * 65536
    chunked = head.replace(b"Content-Length: 1000000000", b"Transfer-Encoding: chunked")
    part = b'--b\r\nContent-Disposition: form-data; name="bundle"; filename="bot.tar.gz"\r\n\r\n'
    over = 2 * (UPLOAD_LIMIT + FORM_LIMIT) // len(chunk)  # a streamed body twice the limit
    framed = [b"%x\r\n%s\r\n" % (len(data), data) for data in [part] + [chunk] * over]
    answer = _raw_post(arena, chunked, framed)  # no length: refused before its first byte is read
    assert answer.startswith(b"HTTP/1.1 411") and b"Content-Length" in answer
    small = head.replace(b"/api/submissions", b"/api/entrants/carol/retire").replace(
        b"1000000000", b"%d" % (FORM_LIMIT + 1)
    )
    assert _raw_post(arena, small, []).startswith(b"HTTP/1.1 413")  # elsewhere, 64 KiB at most
    assert len(arena.queued) == queued  # nothing was stored or queued


def test_retiring_is_for_the_author_of_an_active_version(arena):
    _one_line_error(arena.post("/api/entrants/carol/retire"), 401)
    _one_line_error(arena.post("/api/entrants/carol/retire", arena.tokens["bob"]), 403)
    _one_line_error(arena.post("/api/entrants/heuristic/retire", arena.tokens["carol"]), 403)
    retired = arena.post("/api/entrants/carol/retire", arena.tokens["carol"])
    assert retired.status_code == 200 and retired.json()["status"] == "retired"
    assert "carol" not in {r["name"] for r in arena.get("/api/leaderboard").json()["entrants"]}
    _one_line_error(arena.post("/api/entrants/carol/retire", arena.tokens["carol"]), 409)


def test_state_counts_matches_and_wrong_tokens_are_rate_limited(arena):
    state = arena.get("/api/state").json()
    played = len(arena.matches())
    assert state == {
        "arena": ARENA, "matches": played, "in_flight": 2, "last_hour": played, "active": state["active"], "paused": None,
    }  # fmt: skip
    generous = arena.service.tokens.limiter
    arena.service.tokens.limiter = FailureLimiter(max_failures=3, window=60)
    try:
        for _ in range(3):
            _one_line_error(arena.get("/api/submissions/1", "ba1_wrong"), 401)
        refused = arena.get("/api/submissions/1", "ba1_wrong")
        assert "too many" in _one_line_error(refused, 429) and int(refused.headers["retry-after"]) > 0
        assert arena.get("/api/submissions/1", arena.tokens["bob"]).status_code == 200  # named nobody: bob goes on
    finally:
        arena.service.tokens.limiter = generous
