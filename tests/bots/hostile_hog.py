"""A hostile bot that plays legally, then at its 3rd decision attacks a resource (BARBU_MODE):

- ``memory``: tries to lift its data limit, then allocates 64 MiB blocks forever;
- ``memory_split``: forks 3 children that each allocate a little less than the per-process data
  limit: together they pass the bot's memory limit, which only a cgroup of the bot's own binds;
- ``cpu``: tries to lift its CPU limit, then spins;
- ``disk``: tries to lift its file size limit, then writes one file in $TMPDIR (or
  BARBU_FILL_DIR) forever;
- ``fork``: a fork storm: every process forks, and its children too; the bot dies when fork fails.

Each stops at a kernel limit the arbiter set. So that this test bot can never hurt the machine
running the tests, it first checks that the limit it will run into is really there and binds
it (not root, no capability, a finite limit), and refuses to attack otherwise (exit code 4,
with the reason on stderr): the test then fails instead of the machine.
"""

import os
import random
import resource
import subprocess
import sys
import time

from barbu.bot import Bot
from barbu.runner import run

MODE = os.environ.get("BARBU_MODE", "memory")
LIMITS = {
    "memory": resource.RLIMIT_DATA,
    "memory_split": resource.RLIMIT_DATA,
    "cpu": resource.RLIMIT_CPU,
    "disk": resource.RLIMIT_FSIZE,
    "fork": resource.RLIMIT_NPROC,
}
SAFE_MAX = {"memory": 4 << 30, "memory_split": 2 << 30, "cpu": 120, "disk": 1 << 30, "fork": 512}


def capabilities() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def refuse(reason: str) -> None:
    print(f"hostile_hog: refusing to attack: {reason}", file=sys.stderr, flush=True)
    os._exit(4)


def check_safe() -> int:
    """The soft limit this attack will run into; refuses if it would not hold."""
    res = LIMITS[MODE]
    soft, hard = resource.getrlimit(res)
    if soft == resource.RLIM_INFINITY or soft > SAFE_MAX[MODE]:
        refuse(f"the {MODE} limit is {soft}: not set, or too high to be safe")
    if MODE == "fork" and (os.getuid() == 0 or capabilities()):
        refuse("the process limit does not bind root or a process with capabilities")
    return soft


def try_to_lift() -> None:
    """What a hostile bot does first: raise its own limit. Only a privileged process can."""
    res = LIMITS[MODE]
    try:
        resource.setrlimit(res, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print(f"hostile_hog: lifted the {MODE} limit!", file=sys.stderr, flush=True)
    except (ValueError, OSError) as e:
        print(f"hostile_hog: cannot lift the {MODE} limit: {e}", file=sys.stderr, flush=True)


def memory(limit: int) -> None:
    blocks = []
    while True:
        blocks.append(bytearray(64 << 20))  # touched: real memory, not just address space
        if len(blocks) * (64 << 20) > limit + (512 << 20):
            refuse("allocated past the limit: it does not bind")  # never reached when limits work


HOLD = "import sys, time; block = bytearray(int(sys.argv[1])); time.sleep(60)"  # touched: real memory


def memory_split(limit: int) -> None:
    """Each child (a fresh interpreter: forking the bot would run gRPC's fork handlers) stays
    under the per-process limit; the bot as a whole passes it (a memory cgroup kills one). The
    children end within 60 s whatever happens."""
    children = [subprocess.Popen([sys.executable, "-c", HOLD, str(limit - (128 << 20))]) for _ in range(3)]
    while any(child.poll() is None for child in children):
        for child in children:
            if child.poll() is not None and child.returncode < 0:
                print(f"hostile_hog: a child was killed by signal {-child.returncode}", file=sys.stderr, flush=True)
                os._exit(3)
        time.sleep(0.05)
    refuse("three children held three times the limit: nothing bound the bot as a whole")


def cpu(limit: int) -> None:
    started = time.monotonic()
    x = 0
    while True:
        x += 1
        if x % 1_000_000 == 0 and time.monotonic() - started > 4 * limit + 10:
            refuse("spun far past the CPU limit: it does not bind")


def disk(limit: int) -> None:
    folder = os.environ.get("BARBU_FILL_DIR") or os.environ.get("TMPDIR") or "/tmp"
    block = b"\0" * (1 << 20)
    written = 0
    with open(os.path.join(folder, "hostile-fill.bin"), "wb") as f:
        while True:
            f.write(block)
            f.flush()
            written += len(block)
            if written > limit + (64 << 20):
                refuse("wrote past the file size limit: it does not bind")


STORM_CAP = 64  # processes the storm makes at most, even if the limit did not bind

# The storm runs in a fresh interpreter: forking the bot itself would run gRPC's fork handlers,
# which wedge once no thread can be started (the bot would hang instead of dying).
STORM = r"""
import mmap, os, sys, time
cap, me, made = int(sys.argv[1]), os.getpid(), mmap.mmap(-1, 8)
count = lambda: int.from_bytes(made[:8], "little")
while True:
    if count() >= cap:
        if os.getpid() == me:
            print(f"hostile_hog: refusing to go on: forked {cap} processes: the process limit does not bind", flush=True)
            os._exit(4)
        while True:
            time.sleep(60)
    try:
        pid = os.fork()
    except OSError as e:
        if os.getpid() == me:
            print(f"hostile_hog: fork failed: {e!r}", flush=True)
            os._exit(1)
        time.sleep(0.05)  # a child keeps trying, without burning the CPU
        continue
    if pid:
        made[:8] = (count() + 1).to_bytes(8, "little")
    # a child goes on forking too
"""


def fork(limit: int) -> None:
    """Every process forks, and its children fork, until fork fails; then the bot dies. A count
    shared by the storm's processes (anonymous shared memory) stops it at STORM_CAP processes
    whatever happens."""
    code = subprocess.run([sys.executable, "-c", STORM, str(STORM_CAP)]).returncode
    if code == 4:
        os._exit(4)
    os._exit(1)  # its last output line is the storm's "fork failed"


class HogBot(Bot):
    name = f"hostile-{MODE}"

    def __init__(self):
        self.asked = 0
        self.rng = random.Random(9)

    def decide(self, view):
        self.asked += 1
        if self.asked == 3:
            limit = check_safe()
            try_to_lift()
            print(f"hostile_hog: attacking ({MODE}, limit {limit})", file=sys.stderr, flush=True)
            {"memory": memory, "memory_split": memory_split, "cpu": cpu, "disk": disk, "fork": fork}[MODE](limit)
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(HogBot()))
