"""A loopback TCP address for a bot whose gRPC stack cannot dial a Unix socket (``transport: tcp``).

Run as ``python -I -S tcp_relay.py UNIX_SOCKET -- BOT ARGV...``: it listens on ``127.0.0.1`` (a
free port), starts the bot with ``BARBU_ARBITER=127.0.0.1:PORT`` and copies every connection's
bytes to and from the arbiter's Unix socket, untouched: the handshake and the token are the
bot's own. It ends as the bot ends (the same exit code, or the same signal).

It runs inside the bot's sandbox and limits, as the bot's parent: in the sandbox's own network
namespace its loopback is the sandbox's alone, so no other process of the machine can reach the
port; unsandboxed, the port is the machine's loopback, and the seat's token is what keeps others
out. Standard library only, and no import of the arbiter: the sandbox shows this one file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading

_CHUNK = 1 << 16


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` until ``source`` ends, then end ``sink``'s writing side."""
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    for end, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
        with contextlib.suppress(OSError):
            end.shutdown(how)


def _serve(listener: socket.socket, target: str) -> None:
    while True:
        client, _ = listener.accept()
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(target)
        except OSError as e:
            print(f"tcp relay: cannot reach the arbiter at {target}: {e}", file=sys.stderr, flush=True)
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: tcp_relay.py UNIX_SOCKET -- BOT ARGV...", file=sys.stderr)
        return 2
    target, bot = argv[0], argv[2:]
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    threading.Thread(target=_serve, args=(listener, target), daemon=True).start()
    env = {**os.environ, "BARBU_ARBITER": f"127.0.0.1:{port}"}
    try:
        child = subprocess.Popen(bot, env=env, pass_fds=())
    except OSError as e:
        print(f"cannot start bot {bot[0]!r}: {e.strerror or e}", file=sys.stderr, flush=True)
        return 127
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: child.send_signal(n))
    code = child.wait()
    sys.stdout.flush()
    if code < 0:  # killed by a signal: end the same way, so the arbiter reads the same cause
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
