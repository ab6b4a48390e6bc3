"""Run many ``arbiter`` command lines, each in a process of its own, cheaply.

Reads a JSON list of cases on stdin (``{"argv": [...], "cwd": ..., "timeout": ...}``; an argument
given as ``{"b64": ...}`` is raw bytes, e.g. not UTF-8) and prints a JSON list of results
(``code``, ``stdout``, ``stderr`` base64, ``hang``, ``seconds``). The arbiter's modules are
imported once, here; each case is then a fork that runs ``arbiter.cli.main()`` with its own
argv, working folder and file descriptors, exactly as ``python -m arbiter`` would after its
imports. A case that outlives its timeout is killed and reported as a hang. No thread runs
before a fork (nothing imported here starts one), so forking is safe.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
import tempfile
import time


def main() -> None:
    cases = json.load(sys.stdin)
    # What the commands need, imported before any fork (the children share it).
    import barbu.matchlog  # noqa: F401

    results = []
    for case in cases:
        argv = [os.fsdecode(base64.b64decode(a["b64"])) if isinstance(a, dict) else a for a in case["argv"]]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.monotonic()
            pid = os.fork()
            if pid == 0:  # the case
                code = 70
                try:
                    os.chdir(case["cwd"])
                    devnull = os.open(os.devnull, os.O_RDONLY)
                    os.dup2(devnull, 0)
                    os.dup2(out.fileno(), 1)
                    os.dup2(err.fileno(), 2)
                    os.setsid()
                    sys.argv = ["arbiter", *argv]
                    from arbiter.cli import main as arbiter_main

                    arbiter_main()
                    code = 0
                except SystemExit as e:
                    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                except BaseException:  # a traceback: print it, as Python would
                    import traceback

                    traceback.print_exc()
                    code = 1
                finally:
                    try:
                        sys.stdout.flush()
                        sys.stderr.flush()
                    finally:
                        os._exit(code)
            deadline = started + case.get("timeout", 60)
            hang = False
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    hang = True
                    os.killpg(pid, signal.SIGKILL)
                    _, status = os.waitpid(pid, 0)
                    break
                time.sleep(0.005)
            out.seek(0)
            err.seek(0)
            results.append(
                {
                    "code": os.waitstatus_to_exitcode(status),
                    "stdout": base64.b64encode(out.read()).decode(),
                    "stderr": base64.b64encode(err.read()).decode(),
                    "hang": hang,
                    "seconds": round(time.monotonic() - started, 3),
                }
            )
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
