"""`arbiter serve` end to end: a real server process (its loop, workers, checker and uvicorn) on
127.0.0.1, spoken to over real HTTP and by `arbiter submit`; real bot processes, the sandbox this
machine has, a real SQLite file."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ..tournament.conftest import ROOT, cli_command

TIMEOUT = 120  # a loaded CI machine is slow: every wait below ends as soon as its condition holds
SERVING = re.compile(r"serving (http://\S+)")


def write_arena(folder: Path) -> Path:
    text = f"""
name: ladder
entrants:
  - {{name: heuristic, command: python {ROOT}/sample_bots/heuristic_bot.py}}
  - {{name: random, command: env BARBU_SEED=3 python {ROOT}/sample_bots/random_bot.py}}
rules: {{preset: standard, contracts: [barbu, no_tricks]}}
time_control: {{per_decision: 2, reserve: 10, connect: 20, match_limit: 300}}
web: 127.0.0.1:0
parallelism: 2
drain_seconds: 60
database: {folder}/arena.db
log_folder: {folder}/matches
store: {folder}/bundles
"""
    path = folder / "arena.yaml"
    path.write_text(text)
    return path


class Server:
    """A running `arbiter serve`. Its stderr is read all along (a thread keeps the lines): a pipe
    nobody reads would fill and stall the server, and a server that never says where it serves
    fails the test after TIMEOUT instead of hanging it."""

    def __init__(self, folder: Path, *extra: str, env: dict[str, str] | None = None):
        self.folder = folder
        self.proc = subprocess.Popen(
            cli_command("serve", str(folder / "arena.yaml"), *extra), cwd=folder, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True,  # a process group of its own, as a service manager starts it
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        found = self.until(
            lambda: next((m for line in list(self.lines) if (m := SERVING.search(line))), None), "the address"
        )
        self.url = found.group(1)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def get(self, path: str, token: str | None = None) -> dict:
        request = urllib.request.Request(self.url + path)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def post(self, path: str, body: bytes, token: str, content_type: str) -> tuple[int, dict]:
        request = urllib.request.Request(self.url + path, data=body, method="POST")
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def until(self, condition, what: str, seconds: float = TIMEOUT):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = condition()
            if found:
                return found
            if self.proc.poll() is not None:
                self._reader.join(10)
                pytest.fail(f"the server ended (code {self.proc.returncode}) before {what}:\n{self.stderr}")
            time.sleep(0.3)
        pytest.fail(f"timed out waiting for {what}:\n{self.stderr[-3000:]}")

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, str]:
        self.proc.send_signal(signum)
        self.proc.wait(timeout=TIMEOUT)
        self._reader.join(10)
        return self.proc.returncode, self.stderr


def arbiter(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(cli_command(*args), cwd=folder, capture_output=True, text=True, timeout=TIMEOUT)


def author(folder: Path, name: str) -> Path:
    made = arbiter(folder, "author", "add", name, str(folder / "arena.yaml"))
    assert made.returncode == 0, made.stderr
    path = folder / f"{name}.token"
    path.write_text(made.stdout.splitlines()[-1] + "\n")
    return path


def new_bot(folder: Path, name: str) -> Path:
    made = arbiter(folder, "new-bot", name)
    assert made.returncode == 0, made.stderr
    return folder / name


def submit(folder: Path, server: Server, bot: Path, token: Path, exit_code: int = 0) -> dict:
    sent = arbiter(folder, "submit", str(bot), "--arena", server.url, "--token-file", str(token), "--wait", "--json")
    assert sent.returncode == exit_code, sent.stderr
    return json.loads(sent.stdout)


def leaderboard(server: Server) -> dict[str, dict]:
    return {f"{e['name']}@{e['version']}": e for e in server.get("/api/leaderboard")["entrants"]}


def recorded(folder: Path) -> list[tuple]:
    with sqlite3.connect(folder / "arena.db") as c:
        return c.execute(
            "select number, key, seats, totals, log_path, log_sha256 from matches order by number"
        ).fetchall()


@pytest.fixture
def arena(tmp_path):
    write_arena(tmp_path)
    server = Server(tmp_path)
    yield server
    if server.proc.poll() is None:
        server.stop(signal.SIGKILL)


def test_a_submission_is_checked_joins_plays_and_a_new_version_starts_fresh(arena):
    folder = arena.folder
    token = author(folder, "alice")
    bot = new_bot(folder, "mybot")
    first = submit(folder, arena, bot, token)
    assert first["status"] == "active", first
    arena.until(lambda: leaderboard(arena).get("mybot@1", {}).get("matches", 0) >= 2, "mybot@1 to play")
    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# version 2\n")
    second = submit(folder, arena, bot, token)
    assert second["status"] == "active" and second["version"] == 2

    def second_alone() -> dict | None:  # the leaderboard is rendered again within a second of the decision
        board = leaderboard(arena)
        return board if "mybot@1" not in board and "mybot@2" in board else None

    board = arena.until(second_alone, "mybot@2 listed alone")
    assert board["mybot@2"]["author"] == "alice"
    assert board["mybot@2"]["matches"] < board["heuristic@1"]["matches"]  # a fresh start
    page = arena.get("/api/entrants/mybot")
    versions = {v["version"]: v for v in page["versions"]}
    assert versions[1]["status"] == "retired" and versions[1]["matches"] >= 2  # its history stays
    arena.until(lambda: leaderboard(arena)["mybot@2"]["matches"] >= 1, "mybot@2 to play")
    code, err = arena.stop()
    assert code == 0, err
    # the operator sees what happened, on stderr and in the log folder's arbiter.log
    logged = (folder / "matches" / "arbiter.log").read_text()
    for seen in (err, logged):
        assert re.search(r"submission 1: mybot@1 from alice, [0-9.]+ (KiB|bytes), queued for its check", seen), seen
        assert "submission 1 (mybot@1): active" in seen and "submission 2 (mybot@2): active" in seen
        assert "draining: no new set starts" in seen
    played = {name for _, _, seats, *_ in recorded(folder) for name in json.loads(seats)}
    assert {"mybot@1", "mybot@2", "heuristic@1", "random@1"} <= played


def test_a_failing_bot_is_rejected_with_its_report_and_never_plays(arena):
    folder = arena.folder
    token = author(folder, "mallory")
    bot = folder / "illegal"
    bot.mkdir()
    (bot / "bot.py").write_text((ROOT / "tests" / "bots" / "illegal_bot.py").read_text())
    (bot / "entrant.yaml").write_text("name: illegal\ncommand: python bot.py\n")
    decided = submit(folder, arena, bot, token, exit_code=1)  # --wait: a rejected bot is a failure
    assert decided["status"] == "rejected"
    report = json.loads(decided["report"]) if isinstance(decided["report"], str) else decided["report"]
    assert report and "legal" in json.dumps(report)
    time.sleep(3)
    arena.stop()
    assert not any("illegal@" in seats for _, _, seats, *_ in recorded(folder))


def _tarball(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _multipart(data: bytes) -> tuple[bytes, str]:
    boundary = "barbu-test-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="bundle"; filename="bot.tar.gz"\r\n'
            "Content-Type: application/gzip\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def test_bad_tokens_names_and_archives_are_refused_in_one_line_and_write_nothing_outside_the_store(arena):
    folder = arena.folder
    alice, bob = author(folder, "alice").read_text().strip(), author(folder, "bob").read_text().strip()
    entrant = _file("entrant.yaml", b"name: shared\ncommand: python bot.py\n")
    good = _tarball([entrant, _file("bot.py", b"print('hi')\n")])
    before = {p for p in folder.parent.rglob("*")}

    def post(data: bytes, token: str) -> tuple[int, str]:
        body, kind = _multipart(data)
        code, answer = arena.post("/api/submissions", body, token, kind)
        detail = answer.get("detail", "") if code >= 400 else json.dumps(answer)
        assert "\n" not in detail
        return code, detail

    assert post(good, "ba1.0123456789abcdef." + "A" * 43)[0] == 401
    code, _ = post(good, alice)
    assert code in (200, 201, 202)
    code, detail = post(good, bob)  # alice named it first
    assert code == 403 and "shared" in detail
    link = tarfile.TarInfo("bot.py")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    for bad, words in [
        (_tarball([entrant, _file("../escape.py", b"x")]), ".."),
        (_tarball([entrant, _file("/abs.py", b"x")]), "absolute"),
        (_tarball([entrant, (link, None)]), "link"),
    ]:
        code, detail = post(bad, bob)  # (alice's first waits for its check: quotas.queued)
        assert code == 400 and words in detail, detail
    arena.stop()
    made = {p for p in folder.parent.rglob("*")} - before
    outside = [p for p in made if not p.is_relative_to(folder)]
    assert not outside and not (folder.parent / "escape.py").exists()


def test_sigterm_drains_and_a_restart_goes_on_with_every_recorded_result_unchanged(arena):
    folder = arena.folder
    arena.until(lambda: len(recorded(folder)) >= 6, "six matches")
    code, err = arena.stop(signal.SIGTERM)
    assert code == 0 and "drained" in err, err
    for page in ("/", "/me", "/docs"):  # serve names the site, the corner and the API's docs
        assert f"{arena.url}{page}" in err, err
    first = recorded(folder)
    for number, key, *_, path, _ in first:  # one id: the match's page, its API id and its log file
        assert key == str(number + 1) and Path(path).name == f"ladder-{key}.jsonl"
    # the arena file is a target of standings and report; an arena's report stays light
    standings = arbiter(folder, "standings", str(folder / "arena.yaml"), "--json")
    assert standings.returncode == 0 and {r["name"] for r in json.loads(standings.stdout)} >= {"heuristic@1"}
    report = arbiter(folder, "report", str(folder / "arena.yaml"), "--html", str(folder / "r.html"))
    assert report.returncode == 0 and "no replay pages: --replays writes them" in report.stdout, report.stderr
    assert not (folder / "r_replays").exists() and (folder / "r.html").stat().st_size > 10_000
    assert not list((folder / "matches").glob("*.part"))  # nothing half-written
    hashes = {path: sha for *_, path, sha in first}
    assert all(hashlib.sha256(Path(p).read_bytes()).hexdigest() == sha for p, sha in hashes.items())

    again = Server(folder)
    again.until(lambda: len(recorded(folder)) >= len(first) + 4, "four more matches")
    code, err = again.stop(signal.SIGTERM)
    assert code == 0, err
    after = recorded(folder)
    assert after[: len(first)] == first  # every earlier row as it was
    assert all(hashlib.sha256(Path(p).read_bytes()).hexdigest() == sha for p, sha in hashes.items())
    keys = [key for _, key, *_ in after]
    assert len(keys) == len(set(keys))


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{parent}/task"):
                with contextlib.suppress(OSError):
                    children = [int(c) for c in Path(f"/proc/{parent}/task/{task}/children").read_text().split()]
                    found += children
                    todo += children
    return found


def _signal_every_process(pid: int, signum: int) -> None:
    """What systemd's default KillMode=control-group does: the signal to every process of the
    service at once, whatever its process group or session (the workers', the bots')."""
    for each in [pid, *_descendants(pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(each, signum)


@pytest.mark.parametrize(
    "send", [
        lambda pid: os.killpg(pid, signal.SIGTERM),  # kill -- -PGID, supervisord's stopasgroup
        lambda pid: os.killpg(pid, signal.SIGINT),  # Ctrl-C in a terminal
        lambda pid: _signal_every_process(pid, signal.SIGTERM),  # systemd's default KillMode
    ], ids=["group-term", "group-int", "every-process-term"],
)  # fmt: skip
def test_a_signal_to_the_whole_process_group_drains_as_one_to_the_server(tmp_path, send):
    """A stop signal sent to every process of the group (or of the service) drains exactly as one
    sent to the server: the workers and bots leave it to the server, which drains (exit 0),
    records every match in play and then ends them. Bots carry a tag in their environment, so
    every process the arena started can be found afterwards."""
    from tests.conftest import processes_tagged

    tag = f"group-{time.time_ns()}"
    arena_file = write_arena(tmp_path)
    text = (
        arena_file.read_text()
        .replace("command: env ", "command: ")
        .replace("command: ", f"command: env BARBU_TEST_TAG={tag} ")
    )
    arena_file.write_text(text)
    server = Server(tmp_path, env={**os.environ, "BARBU_TEST_TAG": tag})
    try:
        server.until(lambda: len(recorded(tmp_path)) >= 3, "three matches")
        server.until(lambda: server.get("/api/state")["in_flight"] > 0, "matches in play")
        send(server.proc.pid)
        server.proc.wait(timeout=TIMEOUT)
        server._reader.join(10)
        code, err = server.proc.returncode, server.stderr
    finally:
        if server.proc.poll() is None:
            server.stop(signal.SIGKILL)
    assert code == 0 and "drained" in err and "died" not in err, err
    rows = recorded(tmp_path)
    assert not list((tmp_path / "matches").glob("*.part"))  # nothing half-written
    for *_, log_path, sha in rows:
        assert hashlib.sha256(Path(log_path).read_bytes()).hexdigest() == sha
    logs = {p.name for p in (tmp_path / "matches").glob("*.jsonl*")}
    assert logs == {Path(log_path).name for *_, log_path, _ in rows}  # every match that was played is recorded
    with sqlite3.connect(tmp_path / "arena.db") as c:  # no bot crashed for the signal
        faults = c.execute("select count(*) from faults").fetchone()[0]
    assert faults == 0
    deadline = time.monotonic() + 20
    while processes_tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_tagged(tag) == []  # no worker, checker or bot left


def test_a_second_server_on_the_same_database_refuses_in_one_line(arena):
    arena.until(lambda: len(recorded(arena.folder)) >= 1, "a match")
    second = arbiter(arena.folder, "serve", str(arena.folder / "arena.yaml"))
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert second.returncode != 0 and len(lines) == 1 and lines[0].startswith("error: "), second.stderr
    assert "ladder" in lines[0]
    assert arena.proc.poll() is None  # the first goes on


def test_a_remote_house_entrant_plays_while_its_bridge_is_connected_and_is_never_absent(tmp_path):
    from ..cluster.conftest import free_port

    port = free_port()
    arena_file = write_arena(tmp_path)
    text = arena_file.read_text().replace(
        "rules:", f"  - {{name: far, remote: true}}\nlobby: {{listen: 127.0.0.1:{port}}}\nremote_wait: 60\nrules:"
    )
    arena_file.write_text(text)
    made = arbiter(tmp_path, "key", "new", "far", "--db", str(tmp_path / "arena.db"))
    assert made.returncode == 0, made.stderr
    (tmp_path / "far.key").write_text(made.stdout.splitlines()[-1] + "\n")
    server = Server(tmp_path)
    bridge = None
    bridge_tmp = tmp_path / "bridge-tmp"
    bridge_tmp.mkdir()
    try:
        server.until(lambda: len(recorded(tmp_path)) >= 4, "four matches of the house's local bots")
        assert not any("far@1" in seats for _, _, seats, *_ in recorded(tmp_path))  # not connected: not drawn
        bridge = subprocess.Popen(
            cli_command("connect", "--lobby", f"127.0.0.1:{port}", "--key-file", str(tmp_path / "far.key"),
                        "--plaintext", "--out", str(tmp_path / "far-logs"), "--",
                        sys.executable, str(ROOT / "sample_bots" / "heuristic_bot.py")),
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "TMPDIR": str(bridge_tmp)},
        )  # fmt: skip
        server.until(lambda: leaderboard(server).get("far@1", {}).get("matches", 0) >= 2, "far@1 to play")
        code, err = server.stop()
        assert code == 0, err
        time.sleep(1.0)
        if bridge.poll() is not None:  # a drained arena is not over: its bridge waits for the restart
            pytest.fail(f"the bridge exited {bridge.returncode}: {bridge.communicate(timeout=30)[1]}")
    finally:
        if server.proc.poll() is None:
            server.stop(signal.SIGKILL)
        if bridge is not None:
            bridge.send_signal(signal.SIGTERM)
            bridge.communicate(timeout=30)
    for *_, log_path, _ in recorded(tmp_path):
        assert '"kind":"absent"' not in Path(log_path).read_text()
    assert [p.name for p in bridge_tmp.iterdir()] == []  # each match's bot, ended by itself, left nothing


def _zeros_bot(mib: int) -> bytes:
    """A bot that exits 3 (check-bot rejects it) beside ``mib`` MiB of zeros: the probe's 97 KB
    upload that unpacks to 95 MiB."""
    return _tarball([
        _file("entrant.yaml", b"name: zeros\ncommand: python bot.py\n"),
        _file("bot.py", b"raise SystemExit(3)\n"),
        _file("zeros.bin", bytes(mib << 20)),
    ])  # fmt: skip


def test_a_killed_uploads_leftovers_go_at_the_start_and_a_rejected_bundle_after_keep_seconds(tmp_path):
    """Findings: a kill -9 during an upload left `.upload-*` folders that a restart never removed;
    a rejected upload's 95 MiB stayed in the store for ever."""
    arena_file = write_arena(tmp_path)
    arena_file.write_text(arena_file.read_text() + "quotas: {keep_seconds: 1}\n")
    token = author(tmp_path, "alice").read_text().strip()
    store = tmp_path / "bundles"
    body, kind = _multipart(_zeros_bot(95))
    assert len(body) < 200 << 10
    server = Server(tmp_path)
    try:
        sending = threading.Thread(target=lambda: _quietly(server.post, "/api/submissions", body, token, kind))
        sending.start()

        def unpacking() -> list[str]:
            return [p.name for p in store.iterdir() if p.name.startswith((".upload-", ".unpack-"))]

        server.until(unpacking, "the upload to be unpacked", 60)
        server.proc.kill()  # kill -9 in the middle of it
        server.proc.wait(TIMEOUT)
        sending.join(TIMEOUT)
        assert unpacking()
        server = Server(tmp_path)
        assert unpacking() == [] and not [p for p in store.iterdir() if len(p.name) == 64]  # swept at the start

        code, made = server.post("/api/submissions", body, token, kind)
        assert code == 201, made
        server.until(lambda: server.get(f"/api/submissions/{made['id']}")["status"] == "rejected", "the rejection")
        server.until(lambda: not (store / made["bundle"]).exists(), "the rejected bundle to go", 30)
        held = sum(f.stat().st_size for f in store.rglob("*") if f.is_file() and not f.is_symlink())
        assert held < 1 << 20, held
        own = server.get(f"/api/submissions/{made['id']}", token)
        assert own["status"] == "rejected" and own["report"]  # the record and its report stay
        code, _ = server.stop()
        assert code == 0
    finally:
        if server.proc.poll() is None:
            server.stop(signal.SIGKILL)


def _quietly(call, *args) -> None:
    """``call(*args)``, whose connection the test cuts on purpose."""
    with contextlib.suppress(OSError, json.JSONDecodeError):
        call(*args)
