"""Fixtures for the tournament tests: paths, a typer app with the commands, and a throwaway
PostgreSQL server (initdb + pg_ctl in a temporary folder on a free port).

The PostgreSQL binaries are looked for in $BARBU_PG_BIN, /usr/local/bin, /usr/lib/postgresql/*/bin
(highest version first) and on PATH; Debian's ``postgresql`` package installs them. Missing
binaries FAIL the tests that need them (CI must install them), they never skip. As root, the
server runs as the unprivileged ``postgres`` user (initdb refuses root) via ``runuser``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "tournaments" / "smoke.yaml"
LEAGUE = ROOT / "tournaments" / "league.yaml"
PY = sys.executable


def cli_app():
    """The ``arbiter`` command line's typer app."""
    from arbiter.cli import app

    return app


def cli_command(*args: str) -> list[str]:
    """The command line running ``arbiter ARGS`` in a subprocess (without needing cli.py's wiring)."""
    return [PY, "-m", "arbiter", *args]


# ---- PostgreSQL -------------------------------------------------------------------------------
def pg_bindir() -> Path | None:
    candidates = []
    if os.environ.get("BARBU_PG_BIN"):
        candidates.append(os.environ["BARBU_PG_BIN"])
    candidates.append("/usr/local/bin")
    candidates += sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    )
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for c in candidates:
        if (Path(c) / "initdb").is_file() and (Path(c) / "pg_ctl").is_file():
            return Path(c)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="barbu-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
        cmd = list(argv)
        if self.as_root:
            runuser = shutil.which("runuser")
            if runuser is None:
                pytest.fail("running as root, PostgreSQL must run as the 'postgres' user, and 'runuser' is missing")
            cmd = [runuser, "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.root)

    def start(self) -> str:
        if self.as_root:
            import pwd

            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                pytest.fail(
                    "running as root: the 'postgres' user is missing (apt-get install -y postgresql creates it)"
                )
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        os.chmod(self.root, 0o700)
        r = self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
        )
        if r.returncode:
            pytest.fail(f"initdb failed: {r.stderr.strip() or r.stdout.strip()}")
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        r = self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        if r.returncode:
            log = (self.root / "server.log").read_text() if (self.root / "server.log").exists() else ""
            pytest.fail(f"pg_ctl start failed: {r.stderr.strip()} {log[-2000:]}")
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def create_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server():
    bindir = pg_bindir()
    if bindir is None:
        pytest.fail(
            "PostgreSQL server binaries (initdb, pg_ctl) not found in $BARBU_PG_BIN, /usr/local/bin, "
            "/usr/lib/postgresql/*/bin or on PATH: install them with `apt-get install -y postgresql`"
        )
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(postgres_server) -> str:
    """A fresh, empty database on the throwaway server."""
    return postgres_server.create_database()
