"""Network addresses as people write them: ``HOST:PORT`` (an IPv6 host in brackets), and whether a
host is this machine's loopback. One reading for the tournament file, the lobby and the bridge;
below every layer, like arbiter.errors."""

from __future__ import annotations

import ipaddress
import re

HOST_PORT = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})"  # a name or an address (IPv6 in brackets)
_HOST_PORT_RE = re.compile(rf"^{HOST_PORT}$")


def host_port(address: str) -> tuple[str, int] | None:
    """The host (without brackets) and port of ``HOST:PORT`` (port 0 included), or None."""
    match = _HOST_PORT_RE.match(address.strip())
    if match is None or int(match.group(2)) > 65535:
        return None
    return match.group(1).strip("[]"), int(match.group(2))


def is_loopback(host: str) -> bool:
    """Whether ``host`` only reaches this machine: ``localhost``, 127.0.0.0/8 or ::1."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # any other name may resolve anywhere
