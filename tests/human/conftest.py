"""A real `arbiter play` process (its match host, three real bot processes, its web server) for
the table tests, and a small client of the table's JSON API."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARBITER = str(ROOT / ".venv" / "bin" / "arbiter")
ARTIFACTS = ROOT / "test-artifacts" / "table"
RANDOM_BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
HEURISTIC_BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'heuristic_bot.py'}"
SHORT = ["--set", "contracts=barbu"]  # 4 deals, each over once the K♥ is taken


class TableClient:
    """The table's JSON API at ``url`` (its secret path)."""

    def __init__(self, url: str):
        self.url = url
        self.origin = url.split("/", 3)[:3]

    def state(self, after: int = -1, wait: float = 20) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}api/state?after={after}&wait={wait}", timeout=30) as r:
            return json.load(r)

    def choose(self, request: int, key: str, content_type: str = "application/json") -> tuple[int, dict[str, Any]]:
        body = json.dumps({"request": request, "key": key}).encode()
        req = urllib.request.Request(f"{self.url}api/choose", data=body, headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    def next_request(self, after: int = -1) -> dict[str, Any]:
        """The state once a decision is asked of the person (or the match is over)."""
        while True:
            s = self.state(after)
            if s["request"] or s["status"] in ("over", "failed"):
                return s
            after = s["version"]

    def play_out(self) -> dict[str, Any]:
        """Make the last legal choice of every request until the match is over; its last state."""
        s = self.next_request()
        while s["status"] not in ("over", "failed"):
            request = s["request"]
            code, body = self.choose(request["id"], request["choices"][-1]["key"])
            assert code in (200, 409), body  # 409: the request timed out meanwhile
            s = self.next_request(s["version"])
        return s


class Table(TableClient):
    """One `arbiter play` run: its page's address, its JSON API, its end."""

    def __init__(self, folder: Path, *options: str):
        self.log = folder / "played.jsonl"
        command = [ARBITER, "play", "--bot", RANDOM_BOT, "--bot", HEURISTIC_BOT, "--bot", RANDOM_BOT]
        command += [*SHORT, "--log", str(self.log), "--isolation", "none", "--json", *options]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder)
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        assert first, self.process.communicate()[1]
        super().__init__(json.loads(first)["url"])

    def result(self, timeout: float = 120) -> dict[str, Any]:
        """The command's JSON result line, once it has ended."""
        out, err = self.process.communicate(timeout=timeout)
        assert self.process.returncode == 0, err
        return json.loads(out.strip().splitlines()[-1])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()


@pytest.fixture
def start_table(tmp_path) -> Iterator:
    tables: list[Table] = []

    def start(*options: str) -> Table:
        tables.append(Table(tmp_path, *options))
        return tables[-1]

    yield start
    for t in tables:
        t.stop()


def verify(log: Path) -> dict[str, Any]:
    run = subprocess.run([ARBITER, "replay", str(log), "--verify", "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout)
