"""The failure limiter with a fake clock: the window slides, addresses are apart, memory is bounded."""

from __future__ import annotations

import pytest

from arbiter.lobby.ratelimit import FailureLimiter, address_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_address_waits_after_max_failures_in_the_window_and_others_do_not():
    clock = Clock()
    limiter = FailureLimiter(max_failures=3, window=60.0, clock=clock)
    assert limiter.blocked("10.0.0.1") is None
    for _ in range(2):
        limiter.failed("10.0.0.1")
        clock.now += 1
    assert limiter.blocked("10.0.0.1") is None  # 2 of 3
    limiter.failed("10.0.0.1")  # at 1002: the third within 60 s of the first (1000)
    assert limiter.blocked("10.0.0.1") == pytest.approx(58.0)
    assert limiter.blocked("10.0.0.2") is None
    clock.now = 1059.5
    assert limiter.blocked("10.0.0.1") == pytest.approx(0.5)
    clock.now = 1060.0  # the first failure left the window: 2 remain
    assert limiter.blocked("10.0.0.1") is None
    limiter.failed("10.0.0.1")  # 1001, 1002, 1060: three within 60 s again, until 1061
    assert limiter.blocked("10.0.0.1") == pytest.approx(1.0)


def test_failures_spread_wider_than_the_window_never_block():
    clock = Clock()
    limiter = FailureLimiter(max_failures=3, window=10.0, clock=clock)
    for _ in range(50):
        limiter.failed("a")
        assert limiter.blocked("a") is None
        clock.now += 5.0  # at most 2 in any 10 s


def test_an_address_quiet_for_a_window_is_forgotten():
    clock = Clock()
    limiter = FailureLimiter(max_failures=2, window=10.0, clock=clock)
    limiter.failed("a")
    limiter.failed("a")
    assert limiter.blocked("a") == pytest.approx(10.0)
    clock.now += 10.0
    assert limiter.blocked("a") is None and len(limiter) == 0


def test_memory_is_bounded_the_address_that_failed_longest_ago_goes_first():
    clock = Clock()
    limiter = FailureLimiter(max_failures=2, window=60.0, clock=clock, max_addresses=100)
    limiter.failed("first")
    limiter.failed("first")
    limiter.failed("kept")
    for i in range(98):
        limiter.failed(f"10.1.{i // 256}.{i % 256}")
    limiter.failed("kept")  # failed again: now the most recent
    assert len(limiter) == 100 and limiter.blocked("first") is not None
    for i in range(1000):  # a flood of addresses
        limiter.failed(f"10.2.{i // 256}.{i % 256}")
        if i < 50:
            limiter.failed("kept")
    assert len(limiter) == 100
    assert limiter.blocked("first") is None  # forgotten
    assert limiter.blocked("10.2.3.231") is None  # remembered, one failure: not blocked
    limiter.failed("10.2.3.231")
    assert limiter.blocked("10.2.3.231") is not None


def test_a_limiter_that_could_never_block_is_refused():
    for bad in ({"max_failures": 0}, {"window": 0.0}, {"max_addresses": 0}):
        with pytest.raises(ValueError):
            FailureLimiter(**bad)


@pytest.mark.parametrize(
    ("peer", "address"),
    [
        ("ipv4:127.0.0.1:53412", "127.0.0.1"),
        ("ipv4:127.0.0.1:53413", "127.0.0.1"),  # another connection, the same address
        ("ipv6:[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"),
        ("ipv6:[2001:db8:1:2:ffff::9]:80", "2001:db8:1:2::/64"),  # the same site
        ("ipv6:[::ffff:192.0.2.7]:9000", "192.0.2.7"),
        ("ipv6:[fe80::1%eth0]:5", "fe80::/64"),
        ("unix:/run/arena.sock", "unix:/run/arena.sock"),
    ],
)
def test_an_address_is_a_host_without_its_port(peer, address):
    assert address_of(peer) == address
