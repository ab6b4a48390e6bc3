"""Bots that attack the protocol and the other seats: oversized and unsolicited messages,
silence, reconnection, impostors and token thieves. Each is named, charged to the attacker
only (or to no one, when the attacker cannot be told apart), and disturbs no other seat."""

from __future__ import annotations

import json
import resource

import pytest

from arbiter.referee.timecontrol import TimeControl

from .conftest import BOTS, check, play

RAW = "env BARBU_MODE={mode} {{py}} {bots}/hostile_raw.py"


def raw(mode: str) -> str:
    return RAW.format(mode=mode, bots=BOTS)


def test_a_100_mb_message_is_refused_unread_and_named(tmp_path):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Time enough to build and send 100 MB on a busy machine: the fault must be the message, not a timeout.
    control = TimeControl(per_decision=5.0, reserve=5.0, connect=10.0, match_limit=60.0)
    played = play(tmp_path, "bigmsg", raw("bigmsg"), mode="user", control=control)
    check(played, kind="protocol", words=("sent a message larger than 1 MiB",))
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB
    assert grown < 50 * 1024, f"the arbiter's peak memory grew by {grown} KiB: the message was buffered"


def test_thousands_of_unsolicited_messages_a_second_are_cut_off(tmp_path):
    played = play(tmp_path, "trickle", raw("trickle"), mode="user")
    check(played, kind="protocol", words=("messages nobody asked for", "at most 16 a match"))


def test_a_bot_that_holds_its_stream_and_says_nothing_times_out(tmp_path):
    # Short enough for a quick test, long enough that the healthy seats never time out on a loaded machine.
    control = TimeControl(per_decision=0.5, reserve=0.5, connect=10.0, match_limit=60.0)
    played = play(tmp_path, "silent", raw("silent"), mode="user", control=control)
    check(played, kind="timeout", words=("no answer within",))
    assert [f.kind for f in played.result.faults] == ["timeout"] * 3  # strikes, then the fallback plays


def test_a_stream_without_a_hello_is_cut_and_the_seat_never_connects(tmp_path):
    # A stream must bring its hello within min(5 s, connect / 2): here 2 s, well before the
    # match starts without the seat (at 4 s).
    control = TimeControl(per_decision=0.5, reserve=1.0, connect=4.0, match_limit=60.0)
    played = play(tmp_path, "nohello", raw("nohello"), mode="user", control=control)
    check(played, kind="disconnect", words=("never connected",))
    assert any("sent no hello within 2s" in r for r in played.refused), played.refused
    assert b"the arbiter ended the stream: CANCELLED" in played.outputs[2].read_bytes()


def test_a_bot_that_disconnects_cannot_come_back(tmp_path):
    played = play(tmp_path, "reconnect", raw("reconnect"), mode="user")
    # The bot half-closes its stream and cancels it at once: when the half-close reaches the
    # arbiter first, grpc.aio shows exactly what it shows for a message refused over the size
    # limit (an EOF, then the call cancelled), so the fault is `protocol` and its detail says
    # both; when the cancel comes first it is a plain `disconnect`. Either way the seat is lost.
    kind = played.result.faults[0].kind.value if played.result.faults else None
    assert kind in ("disconnect", "protocol"), played.result.faults
    check(played, kind=kind, words=("closed its stream",))
    assert b"reconnect: refused" in played.outputs[2].read_bytes()
    assert b"accepted again" not in played.outputs[2].read_bytes()


def test_a_bot_that_connects_for_another_seat_is_refused_and_charged(tmp_path):
    played = play(tmp_path, "impostor", raw("impostor"), mode="user")
    check(played, kind="protocol", words=("seat 2's secret with the seat number '3'", "only connect for its own seat"))
    assert b"connecting as seat 3: PERMISSION_DENIED" in played.outputs[2].read_bytes()


@pytest.mark.parametrize("mode", ["none", "bubblewrap"])
def test_a_token_thief_gets_no_seat_and_disturbs_no_one(tmp_path, mode):
    """Its own token again, other seats' tokens (read from /proc where it can), guessed ones,
    its secret under other seats' numbers: every extra connection is refused, the connected
    sessions go on undisturbed, and nobody is charged (the thief cannot be told from its
    victim). In a sandbox it cannot even see the other bots' tokens."""
    played = play(tmp_path, "thief", raw("thief"), mode={"none": "root", "bubblewrap": "bubblewrap"}[mode], bad_seat=1)
    check(played, bad_seat=1, kind=None)
    lines = [x for x in played.outputs[1].read_text().splitlines() if x.startswith("thief: ")]
    report = json.loads(lines[0].removeprefix("thief: "))
    statuses = [(a["what"], a["status"]) for a in report["attempts"]]
    assert len(statuses) >= 9
    # Every seat is taken by then, so each is refused before its hello is even read
    # (tests/hostile/test_auth.py covers the refusals of a hello while seats are free).
    assert all(s == "RESOURCE_EXHAUSTED" for _, s in statuses), statuses
    if mode == "none":
        assert report["stolen"] >= 3  # bots of one user, unsandboxed, read each other's tokens (and other matches')
    else:
        assert report["stolen"] == 0  # its own PID namespace: no other bot to read
    assert len(played.refused) == len(statuses)
