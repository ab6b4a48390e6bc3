"""Every command's ``--help`` (issue 21, item 6): each option says what it is for, a value's
name says what to give (FILE, N, SECONDS), a flag shows no type, and the text fits 80 columns."""

from __future__ import annotations

import re

import typer

from arbiter.cli import app

from .conftest import arbiter, env_for

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
TYPE_NOISE = re.compile(r"<(bool|str|int|float|list|path|int range|float range)[^>]*>")


def test_every_option_and_argument_has_a_description():
    group = typer.main.get_command(app)
    assert {"selfplay", "match", "replay", "check-bot", "new-bot", "report", "run", "standings", "ab"} <= set(COMMANDS)
    for name in COMMANDS:
        for param in group.commands[name].params:  # type: ignore[attr-defined]
            assert (getattr(param, "help", None) or "").strip(), f"arbiter {name}: {param.name} has no description"


def test_help_shows_no_type_noise_and_fits_80_columns(tmp_path):
    for command in ["", *COMMANDS]:
        r = arbiter(*([command] if command else []), "--help", cwd=tmp_path, env=env_for(COLUMNS="80"))
        assert r.returncode == 0 and r.stderr == "", (command, r.stderr)
        options = r.stdout.split("Options:", 1)[1]
        assert not TYPE_NOISE.search(options), f"arbiter {command} --help:\n{options}"
        assert all(len(line) <= 80 for line in r.stdout.splitlines()), r.stdout
    ab = arbiter("ab", "--help", cwd=tmp_path, env=env_for(COLUMNS="80")).stdout
    assert "at least 64" in " ".join(ab.split()) and "x>=1]" not in ab.split("--max-matches", 1)[1].split("--fixed")[0]
