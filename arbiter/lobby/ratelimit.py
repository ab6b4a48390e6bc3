"""Failed key attempts, counted per address: an address that failed too often in a while waits.

A guessed key costs its guesser a refusal and, after ``max_failures`` in ``window`` seconds, a
wait; everyone else's attempts go on. Memory is bounded: each address keeps its last
``max_failures`` times, and past ``max_addresses`` the address that failed longest ago is
forgotten. An address is a host, never a host and port (a client picks a new port for every
connection): :func:`address_of` makes one from gRPC's peer text. A key may also say more than
an address: the arena counts author tokens per address and author (arbiter.arena.tokens).
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

IPV6_PREFIX = 64  # one IPv6 site holds a whole /64: counted as one address


class FailureLimiter:
    """Sliding-window count of failures per address; thread-safe (the server's threads share it)."""

    def __init__(
        self,
        max_failures: int = 10,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_addresses: int = 10_000,
    ):
        if max_failures < 1 or window <= 0 or max_addresses < 1:
            raise ValueError("max_failures and max_addresses must be at least 1, window above 0")
        self.max_failures = max_failures
        self.window = window
        self.max_addresses = max_addresses
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()  # least recently failed first
        self._lock = threading.Lock()

    def blocked(self, address: str) -> float | None:
        """Seconds until ``address`` may try again, or None if it may now."""
        with self._lock:
            times = self._failures.get(address)
            if times is None:
                return None
            now = self._clock()
            if now - times[-1] >= self.window:  # nothing left in the window
                del self._failures[address]
                return None
            if len(times) < self.max_failures:
                return None
            wait = times[0] + self.window - now
            return wait if wait > 0 else None

    def failed(self, address: str) -> None:
        """Count one failed attempt from ``address``."""
        with self._lock:
            times = self._failures.get(address)
            if times is None:
                times = self._failures[address] = deque(maxlen=self.max_failures)
            else:
                self._failures.move_to_end(address)
            times.append(self._clock())
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)

    def __len__(self) -> int:
        """How many addresses are remembered."""
        return len(self._failures)


def address_of(peer: str) -> str:
    """The address a gRPC peer text (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``, ``unix:PATH``)
    counts under: its host without the port; an IPv6 host's /64 network."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    if kind == "ipv6":
        host = rest[1:].partition("]")[0] if rest.startswith("[") else rest
        try:
            address = ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            return host
        if address.ipv4_mapped is not None:  # ::ffff:1.2.3.4 is an IPv4 client
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{address}/{IPV6_PREFIX}", strict=False))
    return peer  # a Unix socket, or a form gRPC may add later: the whole text
