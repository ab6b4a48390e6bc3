"""A submission's build step (``build: CMD`` in entrant.yaml; ``arbiter check-bot --build CMD``):
run once per bundle in a writable copy of its files, sandboxed as the bot is, before the check;
its output kept for the author. Real uploads into a real store, real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from arbiter.arena.checking import BUILT, check_submission, playable_folder
from arbiter.process.limits import Limits
from arbiter.process.sandbox import strongest_isolation

from .test_archive import RANDOM_BOT
from .test_checking import upload

# The "build" writes bot.py from the sources (as a compiler would write a program) and says so.
MAKE = b"""import pathlib, sys
print("make: compiling random_bot.py into bot.py")
pathlib.Path("bot.py").write_bytes(pathlib.Path("random_bot.py").read_bytes())
if "--fail" in sys.argv:
    for n in range(300):
        print(f"make: line {n}")
    sys.stdout.flush()
    print("make: error: the cause, at the end", file=sys.stderr)
    sys.exit(4)
"""
ENTRANT = b"name: built\ncommand: python bot.py\nbuild: python make.py\n"


def test_a_bot_sent_as_sources_is_built_then_checked_and_plays_from_its_build(tmp_path):
    bot = upload(tmp_path / "store", ENTRANT, ("make.py", MAKE), ("random_bot.py", RANDOM_BOT))
    assert not (bot.folder / "bot.py").exists()  # the upload is sources: bot.py is the build's
    assert playable_folder(bot.folder) is None  # not built yet: not playable
    isolation = strongest_isolation()
    passed, report = check_submission(bot.folder, bot.command, isolation=isolation, limits=Limits(), time_limit=2)
    data = json.loads(report)
    assert passed, data["text"]
    assert data["build"]["ok"] and "make: compiling" in data["build"]["output"]
    assert data["text"].startswith("build: python make.py: ok, exit code 0 in ")
    built = bot.folder.parent / BUILT
    assert playable_folder(bot.folder) == built and (built / "bot.py").is_file()
    assert not os.access(built, os.W_OK) or os.geteuid() == 0  # sealed (root may write anything)
    assert oct((built / "bot.py").stat().st_mode & 0o777) == "0o444"
    again, report = check_submission(bot.folder, bot.command, isolation=isolation, limits=Limits(), time_limit=2)
    assert again and "built already" in json.loads(report)["text"]


def test_a_failed_build_rejects_the_bot_with_the_end_of_its_output(tmp_path):
    entrant = b"name: built\ncommand: python bot.py\nbuild: python make.py --fail\n"
    bot = upload(tmp_path / "store", entrant, ("make.py", MAKE), ("random_bot.py", RANDOM_BOT))
    passed, report = check_submission(
        bot.folder, bot.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
    )
    data = json.loads(report)
    assert not passed and not data["build"]["ok"] and data["steps"] == []
    output = data["build"]["output"].splitlines()
    assert len(output) == 200 and output[-1] == "make: error: the cause, at the end"
    assert "exited with code 4" in data["build"]["detail"]
    assert "the build's output (its last 200 lines):" in data["text"]
    assert playable_folder(bot.folder) is None and not (bot.folder.parent / BUILT).exists()


def test_check_bot_build_builds_a_copy_of_the_folder_and_checks_it_there(tmp_path):
    (tmp_path / "make.py").write_bytes(MAKE)
    (tmp_path / "random_bot.py").write_bytes(RANDOM_BOT)
    run = subprocess.run(
        [sys.executable, "-m", "arbiter", "check-bot", "--build", "python make.py", "--", "python", "bot.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("build: python make.py: ok, exit code 0 in ") and "ok: all 22 steps" in run.stdout
    assert not (tmp_path / "bot.py").exists()  # the author's folder is left as it was
    failed = subprocess.run(
        [sys.executable, "-m", "arbiter", "check-bot", "--json", "--build", "python make.py --fail", "--", "python",
         "bot.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert failed.returncode == 1
    data = json.loads(failed.stdout)
    assert data["ok"] is False and data["build"]["output"].endswith("make: error: the cause, at the end")
