"""The checks of single values that the schema's fields share, each raising a :func:`problem`.

A problem is a pydantic error whose message is ours, word for word; its context says which node
of the file it is about (``node``, relative to the value checked), which key the message names
(``where``) and whether the line is the key's (``at_key``). :mod:`.schema` turns it into one
``file:line: key: message`` line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from pydantic_core import PydanticCustomError

from arbiter.addresses import HOST_PORT
from arbiter.text import printable
from arbiter.tournament.config.yamltree import Loc, LongNumber, describe

MAX_INT = 2**63 - 1  # the largest whole number the results database holds (seeds, counts)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB)?\s*$")
CLUSTER_RE = re.compile(rf"^(tcp|tls)://{HOST_PORT}$")
SIZE_UNITS = {
    None: 1,
    "B": 1,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
    "TiB": 1 << 40,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}


def problem(message: str, *, node: Loc = (), where: Loc | None = None, at_key: bool = False) -> PydanticCustomError:
    return PydanticCustomError(
        "config", "{message}", {"message": message, "node": node, "where": where, "at_key": at_key}
    )


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise problem(f"expected text, got {describe(value)}")
    return value


def name(value: Any) -> str:
    if not NAME_RE.match(text(value)):
        raise problem(f"{value!r}: use letters, digits, '_', '-', '.', '+' (at most 64)")
    return str(value)


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise problem(f"expected true or false, got {describe(value)}")
    return value


def whole(minimum: int | None = None, maximum: int = MAX_INT, what: str = "a whole number") -> Callable[[Any], int]:
    """A check of a whole number from ``minimum`` to ``maximum``."""

    def check(value: Any) -> int:
        if isinstance(value, LongNumber):
            if value.negative and minimum is not None:
                raise problem(f"must be at least {minimum}, got {value}")
            raise problem(f"must be at most {maximum}, got {value}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise problem(f"expected {what}, got {describe(value)}")
        if minimum is not None and value < minimum:
            raise problem(f"must be at least {minimum}, got {value}")
        if value > maximum:
            raise problem(f"must be at most {maximum}, got {value}")
        return value

    return check


def number(minimum: float, maximum: float, *, above: bool = False) -> Callable[[Any], float]:
    """A check of a finite number from ``minimum`` (``above``: more than it) to ``maximum``."""

    def check(value: Any) -> float:
        if isinstance(value, LongNumber):
            raise problem(
                f"must be {'at least' if value.negative else 'at most'} "
                f"{minimum if value.negative else maximum:g}, got {value}"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise problem(f"expected a number, got {describe(value)}")
        if not math.isfinite(value):
            raise problem(f"must be a finite number, got {value}")
        if above and not value > minimum:
            raise problem(f"must be more than {minimum:g}, got {value:g}")
        if value < minimum:
            raise problem(f"must be at least {minimum:g}, got {value:g}")
        if value > maximum:
            raise problem(f"must be at most {maximum:g}, got {value:g}")
        return float(value)

    return check


def seconds(value: Any) -> float:
    """A finite number (its bounds per key: :func:`arbiter.referee.timecontrol.seconds_problem`)."""
    if isinstance(value, LongNumber):
        raise problem("expected a number of seconds, got a number far too long")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise problem(f"expected a number of seconds, got {describe(value)}")
    return float(value)


def size(value: Any, unlimited: str = "") -> int:
    """A number of bytes: a whole number, or text with a unit (512MiB, 2GiB, 1.5GB)."""
    if isinstance(value, int) and not isinstance(value, bool) or isinstance(value, LongNumber):
        return whole()(value)
    if isinstance(value, str) and len(value) > 80:
        raise problem("expected a size in bytes, got a value far too long")
    match = SIZE_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise problem(f"expected a size in bytes, e.g. 2GiB, 512MiB or 1048576{unlimited}, got {describe(value)}")
    number = float(match.group(1)) * SIZE_UNITS[match.group(2)]
    return int(number) if math.isfinite(number) else MAX_INT


def cluster_address_problem(address: str) -> str | None:
    """Why ``address`` is not a Dask scheduler address ``tcp://HOST:PORT`` (or ``tls://``), or None."""
    match = CLUSTER_RE.match(address)
    if match is None or not 0 < int(match.group(3)) <= 65535:
        return (
            f"expected a Dask scheduler address such as tcp://10.0.0.5:8786 (or tls://HOST:PORT), "
            f"got {printable(address)!r}"
        )
    return None
