"""Each seat alone, under the defaults of a root arbiter (bubblewrap, no ``limits.user``): a bot
cannot rename, replace or fill the arbiter's socket, nor leave anything another seat can find;
it runs as a uid of its own, never root; and what it sees of its surroundings does not tell an
arena's check from a ladder match."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from arbiter.compliance.checkbot import check_bot
from arbiter.match.blocking import MatchOptions, play_bot_match
from arbiter.match.play import BotSpec
from arbiter.process.limits import Limits
from arbiter.process.sandbox import DEFAULT_UIDS, SANDBOX_SOCKET, SANDBOX_UID, strongest_isolation
from arbiter.referee.loop import MatchSetup

from .conftest import BOTS, PY, RANDOM_BOT, SHORT, assert_clean

ATTACK = f"python {BOTS / 'seat_attack_bot.py'}"


@pytest.fixture
def bot_folder():
    """A folder of the bots' own, readable by anyone (as a user's folders are)."""
    folder = tempfile.mkdtemp(prefix="barbu-seats-")
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _sandboxed(bots: list[BotSpec], log: Path, seed: int):
    """A short match under the defaults: the sandbox, the default limits (no user)."""
    return play_bot_match(
        bots,
        MatchSetup(SHORT, seed=seed, match_id=log.stem),
        log,
        MatchOptions(isolation="bubblewrap", limits=Limits()),
    )


def lines(path: Path, prefix: str) -> list[dict]:
    return [json.loads(x.removeprefix(prefix)) for x in path.read_text().splitlines() if x.startswith(prefix)]


def test_two_attackers_reach_neither_the_socket_nor_each_other_and_the_others_play_on(tmp_path, bot_folder):
    assert os.geteuid() == 0, "this test is about a root arbiter's defaults"
    assert strongest_isolation() == "bubblewrap", "bubblewrap is the default isolation on this machine"
    commands = [f"{PY} {RANDOM_BOT}", ATTACK, ATTACK, f"{PY} {RANDOM_BOT}"]
    bots = [BotSpec(f"bot{s}", c, cwd=bot_folder) for s, c in enumerate(commands)]
    played = _sandboxed(bots, tmp_path / "seats.jsonl", seed=11)
    result = played.result
    assert result.status == "complete" and result.faults == (), [f.detail for f in result.faults]
    first, last = DEFAULT_UIDS
    assert all(first <= uid <= last for uid in played.uids), played.uids  # never root, a uid each
    assert len(set(played.uids)) == 4
    for seat in (1, 2):
        output = played.outputs[seat]
        [seen] = lines(output, "seen: ")
        assert seen["arbiter"] == f"unix:{SANDBOX_SOCKET}" and seen["run"] == ["arbiter.sock"], seen
        assert seen["uid"] == SANDBOX_UID, seen
        [attack] = lines(output, "attack: ")
        for action in ("rename", "listen", "fill"):
            assert attack[action].startswith("refused"), (seat, action, attack)
        assert attack["markers"][os.path.dirname(SANDBOX_SOCKET)].startswith("refused"), attack
        assert attack["others_seen"] == [], attack  # nothing of seat 1 reaches seat 2, or back
    assert_clean(played)


def test_an_arenas_check_and_a_ladder_match_look_the_same_to_the_bot(tmp_path, bot_folder):
    """The check (check-bot with the arena's isolation and limits) and a match show the bot the
    same address, folder, user, environment and file system."""
    report = check_bot(ATTACK, 2.0, cwd=bot_folder, isolation="bubblewrap", limits=Limits(), logs=tmp_path / "check")
    checked = [s for p in sorted((tmp_path / "check").glob("*.stderr")) for s in lines(p, "seen: ")]
    assert checked, f"the check kept no output of the bot: {report.render()}"
    bots = [BotSpec("attack", ATTACK, cwd=bot_folder)] + [BotSpec(f"r{s}", f"{PY} {RANDOM_BOT}") for s in (1, 2, 3)]
    played = _sandboxed(bots, tmp_path / "ladder.jsonl", seed=3)
    [in_match] = lines(played.outputs[0], "seen: ")
    assert all(seen == in_match for seen in checked), (checked, in_match)
