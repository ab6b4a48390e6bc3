"""The results database is input too: rows edited by hand end `arbiter standings` and `arbiter
report` with one error line naming the table, the row and the column, never a traceback; a rerun
that plays nothing keeps the tournament's FINISHED time; an interruption during a run's start-up
says how many matches are recorded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arbiter.errors import TournamentInterrupted
from arbiter.model import ScheduledMatch
from arbiter.tournament.loop import Run, Schedule, run_tournament

from ..tournament import inproc
from .conftest import arbiter, assert_one_error
from .test_log_folder import config, db, run


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """A real SQLite database of a finished tournament (in-process players)."""
    folder = tmp_path_factory.mktemp("rows")
    run(config(folder), db(folder))
    return folder


def edited(played: Path, tmp_path: Path, sql: str) -> Path:
    copy = tmp_path / "edited.db"
    copy.write_bytes((played / "r.db").read_bytes())
    with sqlite3.connect(copy) as c:
        c.execute(sql)
    return copy


@pytest.mark.parametrize(
    "sql, table, column",
    [
        ("update tournaments set created_at = 'last tuesday'", "tournaments", "created_at"),
        (
            "delete from entrants where name = 'b'",
            "",
            "entrant_id",
        ),  # standings or seat_results: whichever is read first
        ("update seat_results set total = 'abc' where id = 3", "seat_results", "total"),
        ("update matches set seats = '{{{{' where number = 1", "matches", "seats"),
        ("update matches set totals = '[1,2]' where number = 0", "matches", "totals"),
        ("update matches set places = 'x' where number = 2", "matches", "places"),
    ],
)
def test_a_row_edited_by_hand_is_one_error_line(played, tmp_path, sql, table, column):
    database = edited(played, tmp_path, sql)
    # standings --rebuild reads every recorded row (plain standings reads the kept table only)
    for args in (
        ["standings", "--rebuild", "--db", str(database)],
        ["report", "--db", str(database), "--html", "r.html"],
    ):
        r = arbiter(*args, cwd=tmp_path)
        line = assert_one_error(r, 2, f"table {table}", "row id", f"column {column}")
        assert "Traceback" not in r.stderr, line
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    "sql, why",
    [
        ("update margin_sums set met = 'x' where id = 1", ""),
        ("update margin_sums set met = '[[999, 0.5]]' where id = 1", "names entrant id 999, no entrant"),
        ("update margin_sums set met = '[[1]]' where id = 1", "is not what margin sums hold"),
    ],
)
def test_hand_edited_margin_sums_are_one_error_line(played, tmp_path, sql, why):
    database = edited(played, tmp_path, sql)
    for args in (["standings", "--db", str(database)], ["report", "--db", str(database), "--html", "r.html"]):
        r = arbiter(*args, cwd=tmp_path)  # both read the kept table
        line = assert_one_error(r, 2, "table margin_sums", "row id 1", "column met", why)
        assert "Traceback" not in r.stderr, line


def test_a_rerun_that_plays_nothing_keeps_the_finished_time(tmp_path):
    cfg, url = config(tmp_path), db(tmp_path)
    run(cfg, url)

    def finished() -> tuple[str, str]:
        with sqlite3.connect(tmp_path / "r.db") as c:
            return c.execute(
                "select t.finished_at, max(m.finished_at) from tournaments t join matches m on m.tournament_id = t.id"
            ).fetchone()

    first = finished()
    assert first[0] == first[1]  # when the last match was recorded
    again = run(cfg, url)
    assert again.played == 0 and again.complete
    assert finished() == first


class StartUpInterrupted(Schedule):
    """Ctrl-C arrives while the run starts (after it read the database, before it plays)."""

    def resume(self, stored_rounds: int | None, stored_format: str | None) -> None:
        raise KeyboardInterrupt

    def grow(self, run: Run) -> list[ScheduledMatch]:
        return []


def test_an_interruption_during_start_up_says_what_is_recorded(tmp_path):
    cfg, url = config(tmp_path), db(tmp_path)
    run(cfg, url)
    total = len(Schedule(cfg).matches)
    with pytest.raises(TournamentInterrupted, match=f"interrupted: {total} of {total} matches are recorded"):
        run_tournament(
            cfg, database=url, executor=inproc.in_process(inproc.play_inprocess), schedule=StartUpInterrupted(cfg)
        )
    fresh = config(tmp_path, name="u")
    with pytest.raises(TournamentInterrupted, match="interrupted: 0 of"):
        run_tournament(
            fresh, database=url, executor=inproc.in_process(inproc.play_inprocess), schedule=StartUpInterrupted(fresh)
        )
