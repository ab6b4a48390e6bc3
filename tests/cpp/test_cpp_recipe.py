"""The C++ recipe of docs/protocol.md, proved: tests/cpp/first_legal.cc, built by tests/cpp/build.sh
from Debian's packages only (libgrpc++-dev, protobuf-compiler-grpc), plays check-bot's matches as a
real process over real gRPC, on a Unix socket and on loopback TCP.

The fixture runs the build under a file lock, so parallel test workers build at most once (a
no-op when the executable is up to date).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from arbiter.compliance.checkbot import check_bot

CPP_DIR = Path(__file__).resolve().parent
CPP_BOT = CPP_DIR / "build" / "first_legal"


@pytest.fixture(scope="session")
def cpp_bot() -> str:
    lock = Path(tempfile.gettempdir()) / "barbu-build-cpp.lock"
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            built = subprocess.run(["bash", str(CPP_DIR / "build.sh")], capture_output=True, text=True, timeout=900)
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    assert built.returncode == 0, built.stderr
    assert os.access(CPP_BOT, os.X_OK)
    return str(CPP_BOT)


@pytest.mark.parametrize("listen", [None, "127.0.0.1:0"], ids=["unix-socket", "tcp"])
def test_a_cpp_bot_from_the_recipe_passes_check_bot(cpp_bot, listen):
    # gRPC C++ dials unix:/path and host:port targets as they are.
    report = check_bot([cpp_bot], seed=3, listen=listen)
    assert report.ok, report.render()
    assert "'cpp-first-legal'" in report.step("hello").detail
