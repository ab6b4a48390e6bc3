"""Remote seats' speed, side by side in one run: a match of four echo bots played locally, then the
same match with its four seats played from elsewhere, through the lobby over TLS and ``arbiter
connect`` (all on 127.0.0.1, certificates made here, a key from a SQLite key store).

1. **Local**: four echo bots (bench/echo_bot.py) started by the match host, on its Unix socket.
2. **Remote**: the same bots started by one bridge (``arbiter connect --capacity 4``) on each
   invitation, their streams carried by the bridge over TLS to the lobby's address and handed to
   the match host's server. Per asked decision: the referee's loop time / decisions, as
   bench/match.py measures it; a remote seat's time includes the bridge's relay and TLS.
3. **TLS handshake**: a new TLS channel to the lobby until it is ready (TCP, TLS, HTTP/2).

Medians throughout; the figures shift with the machine's load: compare only figures of one run.
Last line: ``remote: R x local per decision (L ms vs M ms), TLS handshake H ms`` (L: remote, M:
local, per decision asked).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from barbu.rules import make_ruleset

from arbiter.lobby.server import Lobby
from arbiter.match.play import BotSpec, MatchHost
from arbiter.referee.loop import MatchSetup
from arbiter.storage import open_database
from arbiter.storage.credentials import EntrantKeys

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

QUICK = ["--matches", "1", "--handshakes", "3"]  # --quick: a run of seconds that tests/test_benches.py makes
from tests.lobby.certs import make_certs  # noqa: E402  (the test suite's CA and server certificate)

PY = sys.executable
ECHO = [PY, str(HERE / "echo_bot.py")]
ARBITER = [PY, "-m", "arbiter"]
ENTRANT = "echo"


async def handshakes(address: str, ca_pem: bytes, runs: int) -> float:
    """Median seconds from a new TLS channel to its being ready."""
    times = []
    for _ in range(runs):
        credentials = grpc.ssl_channel_credentials(root_certificates=ca_pem)
        started = time.perf_counter()
        channel = grpc.aio.secure_channel(address, credentials, options=[("grpc.use_local_subchannel_pool", 1)])
        await asyncio.wait_for(channel.channel_ready(), 10)
        times.append(time.perf_counter() - started)
        await channel.close()
    return statistics.median(times)


async def rounds(args: argparse.Namespace, workdir: Path) -> tuple[list[float], list[float], float]:
    """Local and remote per-decision loop times, one each per round, and the TLS handshake."""
    certs = make_certs(workdir / "certs")
    engine = open_database(f"sqlite:///{workdir}/keys.db")
    key_file = workdir / "echo.key"
    key_file.write_text(EntrantKeys(engine).issue(ENTRANT) + "\n")
    host = MatchHost()
    lobby = Lobby(
        "127.0.0.1:0", credentials=grpc.ssl_server_credentials([(certs.server_key_pem, certs.server_cert_pem)]),
        check_key=EntrantKeys(engine).holder_of, entrants=[ENTRANT], play=lambda: host.server, name="bench",
    )  # fmt: skip
    await lobby.start()
    bridge_errors = (workdir / "bridge.stderr").open("w")
    bridge = subprocess.Popen(
        [*ARBITER, "connect", "--lobby", lobby.address, "--key-file", str(key_file), "--ca", str(certs.ca_cert),
         "--capacity", "4", "--out", str(workdir / "bridge"), "--", *ECHO],
        stdout=subprocess.DEVNULL, stderr=bridge_errors,
    )  # fmt: skip
    local: list[float] = []
    remote: list[float] = []
    try:
        for i in range(args.matches):
            setup = MatchSetup(make_ruleset(), seed=i)
            played = await host.play(
                [BotSpec(f"echo{s}", " ".join(ECHO)) for s in range(4)], setup, workdir / f"l{i}.jsonl"
            )
            assert played.result.status == "complete" and not played.result.faults, played.result.faults
            local.append(played.play_seconds / played.result.decisions)
            reserved = await lobby.reserve([ENTRANT] * 4, timeout=30)
            assert all(r is not None for r in reserved), "the bridge did not connect to the lobby within 30 s"
            try:
                far = await host.play([r for r in reserved if r is not None], setup, workdir / f"r{i}.jsonl")
            finally:
                for r in reserved:
                    if r is not None:
                        r.release()
            assert far.result.status == "complete" and not far.result.faults, far.result.faults
            remote.append(far.play_seconds / far.result.decisions)
            print(
                f"round {i}: {played.result.decisions} decisions asked; local {local[-1] * 1000:.3f} ms/decision, "
                f"remote {remote[-1] * 1000:.3f} ms/decision ({remote[-1] / local[-1]:.2f} x); seats connected in "
                f"{played.connect_seconds * 1000:.0f} ms local, {far.connect_seconds * 1000:.0f} ms remote"
            )
        handshake = await handshakes(lobby.address, certs.ca_pem, args.handshakes)
    finally:
        bridge.terminate()
        try:
            bridge.wait(20)
        except subprocess.TimeoutExpired:
            bridge.kill()
            bridge.wait()
        bridge_errors.close()
        await lobby.stop()
        await host.close()
        engine.dispose()
    if bridge.returncode != 0:
        raise SystemExit(f"error: the bridge ended {bridge.returncode} on its SIGTERM (0 within 20 s expected)")
    return local, remote, handshake


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=3, help="rounds of one local and one remote match (default 3)")
    parser.add_argument("--handshakes", type=int, default=21, help="TLS handshakes timed (default 21)")
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="barbu-bench-") as tmp:
        local, remote, handshake = asyncio.run(rounds(args, Path(tmp)))
    m, r = statistics.median(local), statistics.median(remote)
    print(
        f"remote: {r / m:.2f} x local per decision ({r * 1000:.3f} ms vs {m * 1000:.3f} ms), "
        f"TLS handshake {handshake * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
