"""``arbiter connect`` as its user runs it: a real process, against the test lobby of
test_bridge.py (a test double until the real lobby's end-to-end tests); one line for each
mistake, a clean stop on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

import pytest

from arbiter.process.procfs import processes_with_token

from .test_bridge import KEY, RAW_BOT, TestLobby, until


def connect(*args: str) -> list[str]:
    return [sys.executable, "-m", "arbiter", "connect", *args]


@pytest.mark.parametrize(
    ("args", "key", "expected"),
    [
        (["--lobby", "10.1.2.3:4000", "--plaintext"], KEY, "error: --plaintext: 10.1.2.3 is not a loopback address"),
        (["--lobby", "127.0.0.1:4000"], "  \n", "is empty: put the key `arbiter key new` printed in it"),
        (["--lobby", "127.0.0.1"], KEY, "error: --lobby 127.0.0.1: expected HOST:PORT"),
        (["--lobby", "127.0.0.1:4000", "--ca", "key.txt"], KEY, "holds no PEM certificate"),
    ],
    ids=["plaintext elsewhere", "empty key file", "no port", "not a CA"],  # the key is random: not an id
)
def test_a_mistake_is_one_line_that_never_shows_the_key(tmp_path, args, key, expected):
    (tmp_path / "key.txt").write_text(key)
    run = subprocess.run(
        connect(*args, "--key-file", "key.txt", "--", *RAW_BOT),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and expected in run.stderr, run.stderr
    assert KEY not in run.stderr


def test_a_wrong_ca_stops_the_command_with_one_line_naming_the_file(certs, tmp_path):
    (tmp_path / "key.txt").write_text(KEY + "\n")

    async def scenario():
        lobby = await TestLobby(certs).start()
        try:
            args = ["--lobby", lobby.address, "--key-file", "key.txt", "--ca", str(certs.other_ca_cert), "--", *RAW_BOT]
            proc = await asyncio.create_subprocess_exec(
                *connect(*args), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode, err.decode()
        finally:
            await lobby.stop()

    code, err = asyncio.run(scenario())
    assert code == 1
    assert err == f"error: the lobby's certificate is not signed by the CA in {certs.other_ca_cert}\n"


def test_sigterm_kills_the_running_bots_and_exits_0(certs, tmp_path):
    (tmp_path / "key.txt").write_text(KEY)

    async def scenario():
        lobby = await TestLobby(certs, hold=True).start()
        try:
            args = ["--lobby", lobby.address, "--key-file", "key.txt", "--ca", str(certs.ca_cert), "--name", "alice"]
            proc = await asyncio.create_subprocess_exec(
                *connect(*args, "--", *RAW_BOT), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            first = await asyncio.wait_for(proc.stderr.readline(), 60)
            token = lobby.invite("held", seat=3)
            await until(lambda: processes_with_token(token), what="the bot's process")
            await until(lambda: token not in lobby.issued, what="the bot's hello at the table")
            proc.send_signal(signal.SIGTERM)
            out, err = await asyncio.wait_for(proc.communicate(), 30)
            return proc.returncode, first.decode() + err.decode(), processes_with_token(token)
        finally:
            await lobby.stop()

    code, err, left = asyncio.run(scenario())
    assert code == 0, err
    assert err.startswith("info: connected to test (127.0.0.1:") and "as alice (capacity 1)" in err
    assert "match held seat 3: invited; starting the bot" in err
    assert err.endswith("stopped: disconnected from 127.0.0.1:" + err.rsplit(":", 1)[1])
    assert "Traceback" not in err
    assert left == []
    assert (tmp_path / "connect-logs" / "held.seat3.stderr").is_file()
