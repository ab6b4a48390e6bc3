"""Every process one bot starts, however it leaves its process group, killed at the end of its match.

The strongest way this machine allows: the bot's own cgroup (arbiter.process.cgroup), entered
before the bot's program starts and killed as a whole; else, for a bot with a uid of its own,
every process of that uid; else every process whose environment holds the seat's token (a
process that both left the group and cleared its environment escapes only this last way).
"""

from __future__ import annotations

import os

from arbiter.process.cgroup import BotCgroup
from arbiter.process.procfs import processes_of_uid, processes_with_token, sweep


class ProcessTree:
    """How one bot's processes are found, bounded and killed: :meth:`wrap` its command line
    before it starts, :meth:`kill` at the end of its match, :meth:`close` once it is reaped.
    ``memory`` and ``processes`` are set on its cgroup (all its processes together) where this
    machine has the controllers: ``cgroup.memory`` / ``cgroup.processes`` say which were."""

    def __init__(
        self,
        token: str,
        uid: int | None = None,
        *,
        own_cgroup: bool = True,
        memory: int | None = None,
        processes: int | None = None,
    ):
        self.token = token
        self.uid = uid  # a uid of the bot's own (a uid range), or None
        self.cgroup = BotCgroup(memory=memory, processes=processes) if own_cgroup else None

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the bot's cgroups (unchanged without any)."""
        return argv if self.cgroup is None else self.cgroup.wrap(argv)

    def kill(self) -> None:
        """SIGKILL every process of the bot, until none is left."""
        in_cgroup = self.cgroup is not None and bool(self.cgroup.paths)
        if self.cgroup is not None and in_cgroup:
            sweep(self.cgroup.members, rounds=100, kill=self.cgroup.kill)
        if self.uid is not None:
            # The uid is this bot's alone: whatever still runs under it is the bot's, even a
            # process that left the group and cleared its environment.
            sweep(self._uid_members, rounds=100)
        if not in_cgroup and self.uid is None:
            sweep(self._token_holders, rounds=50)

    @property
    def bounds_processes(self) -> bool:
        """Whether the bot's cgroup bounds its number of processes."""
        return self.cgroup is not None and self.cgroup.processes is not None

    def out_of_memory(self) -> bool:
        return self.cgroup is not None and self.cgroup.out_of_memory()

    def close(self) -> None:
        """Remove the bot's cgroups (once its processes are gone)."""
        if self.cgroup is not None:
            self.cgroup.close()

    def _uid_members(self) -> list[int]:
        return [] if self.uid is None else processes_of_uid(self.uid)

    def _token_holders(self) -> list[int]:
        return [p for p in processes_with_token(self.token) if p != os.getpid()] if self.token else []
