"""``selfplay --out`` and ``match --log`` never replace what a tournament recorded (issue 20, item 5):
a tournament's log folder (it holds its database's marker) refuses them, even with ``--force``;
elsewhere an existing file is replaced only with ``--force``."""

from __future__ import annotations

import pytest

from .conftest import (
    PY,
    RANDOM_BOT,
    arbiter,
    arbiter_cases,
    assert_one_error,
    assert_recorded_logs_intact,
    sha256,
    tournament_file,
)

BOT = f"{PY} {RANDOM_BOT}"


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    """A real league run: its database and its log folder."""
    folder = tmp_path_factory.mktemp("league")
    config = tournament_file(folder)
    done = arbiter("run", str(config), "--json", cwd=folder, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    logs = sorted((folder / "logs").glob("t-*.jsonl"))
    assert len(logs) == 2, logs
    return folder, logs


def match_args(log: str, *extra: str) -> list[str]:
    return ["match", *(a for _ in range(4) for a in ("--bot", BOT)), "--log", log, *extra]


def test_a_recorded_log_is_never_replaced(league):
    folder, logs = league
    before = {log: sha256(log) for log in logs}
    first, second = (str(log.relative_to(folder)) for log in logs)
    cases = [
        ["selfplay", "--out", first],
        ["selfplay", "--out", first, "--force"],
        ["selfplay", "--out", "logs/new-name.jsonl"],  # the folder is the database's, not only its logs
        ["selfplay", "--out", str(folder / "logs" / ".." / "logs" / logs[0].name), "--force"],
        match_args(second),
        match_args(second, "--force"),
        match_args("logs/another.jsonl"),
    ]
    for r in arbiter_cases([(argv, folder) for argv in cases]):
        assert_one_error(r, 2, "is the log folder of tournament 't'", "results.db")
    assert {log: sha256(log) for log in logs} == before
    assert not (folder / "logs" / "new-name.jsonl").exists()
    assert not list((folder / "logs").glob("another*"))
    assert assert_recorded_logs_intact(folder / "results.db") == 2


def test_an_existing_file_is_replaced_only_with_force(tmp_path):
    log = tmp_path / "m.jsonl"
    log.write_text("mine\n")
    refused = arbiter("selfplay", "--out", str(log), cwd=tmp_path)
    assert_one_error(refused, 2, "exists", "--force")
    assert log.read_text() == "mine\n"
    stderr = tmp_path / "b.seat2.stderr"  # a seat's output of an earlier match is a file too
    stderr.write_text("earlier\n")
    refused = arbiter(*match_args(str(tmp_path / "b.jsonl")), cwd=tmp_path)
    assert_one_error(refused, 2, "b.seat2.stderr", "exists")
    assert stderr.read_text() == "earlier\n"
    assert not (tmp_path / "b.jsonl").exists()

    forced = arbiter("selfplay", "--out", str(log), "--seed", "4", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert log.read_text().startswith('{"type":"match"')
