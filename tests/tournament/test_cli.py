"""``arbiter run`` / ``arbiter standings``: one clear line and a non-zero exit for every mistake."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from arbiter.model import PROVISIONAL_MATCHES
from arbiter.storage import open_database
from arbiter.tournament.loop import run_tournament

from . import inproc
from .conftest import cli_app
from .test_runner import config


def invoke(*args):
    result = CliRunner().invoke(cli_app(), list(args))
    return result.exit_code, result.stdout, result.stderr


def assert_one_line_error(code, out, err, *fragments):
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for f in fragments:
        assert f in lines[0], lines[0]


def test_run_errors(tmp_path):
    assert_one_line_error(*invoke("run", str(tmp_path / "none.yaml")), "no such tournament file")
    (tmp_path / "bad.yaml").write_text("entrants:\n  - name: a\n    command: [x\n")
    assert_one_line_error(*invoke("run", str(tmp_path / "bad.yaml")), "bad.yaml:3: not valid YAML")
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "t.yaml").write_text(
        "entrants:\n  - {name: a, command: python bot.py}\n  - {name: b, command: python gone.py}\n"
    )
    assert_one_line_error(
        *invoke("run", str(tmp_path / "t.yaml")), "t.yaml:3: entrants[1].command: no such file: gone.py"
    )
    (tmp_path / "t.yaml").write_text(
        "entrants:\n  - {name: a, command: python bot.py}\n  - {name: b, command: python bot.py}\n"
    )
    code, out, err = invoke("run", str(tmp_path / "t.yaml"), "--db", "postgresql://arena:pw@127.0.0.1:1/arena")
    assert_one_line_error(code, out, err, "cannot reach database postgresql+psycopg://arena:***@127.0.0.1:1/arena")
    code, out, err = invoke("run", str(tmp_path / "t.yaml"), "--jobs", "0")
    assert code == 2 and "Traceback" not in err


def test_standings(tmp_path):
    db = f"sqlite:///{tmp_path}/r.db"
    assert_one_line_error(*invoke("standings", "--db", str(tmp_path / "none.db")), "no such database")
    run_tournament(
        config(tmp_path, {"a": "random", "b": "first"}, name="one"),
        database=db,
        executor=inproc.in_process(inproc.play_inprocess),
    )
    summary = run_tournament(
        config(tmp_path, {"x": "random", "y": "first"}, extra="format: duplicate\n", name="two"),
        database=db, executor=inproc.in_process(inproc.play_inprocess),
    )  # fmt: skip
    code, out, err = invoke("standings", "--db", db, "--json")  # the latest tournament: two
    assert code == 0, err
    rows = json.loads(out)
    assert [r["name"] for r in rows] == [s.name for s in summary.standings]
    for row in rows:
        assert {"name", "mu", "sigma", "rating", "matches", "mean_score", "ci95", "faults"} <= set(row)
        assert {"margin", "margin_sd", "provisional"} <= set(row) and row["provisional"] is True  # 1 match each
        assert {"duplicate_diff", "duplicate_ci95"} <= set(row)
    code, out, err = invoke("standings", "--db", db, "--tournament", "one", "--json")
    assert code == 0 and {r["name"] for r in json.loads(out)} == {"a", "b"}
    assert "duplicate_diff" not in json.loads(out)[0]
    code, out, err = invoke("standings", "--db", db, "--tournament", "one")
    assert code == 0 and "one" in out and "margin ±sd" in out and "2/2 matches (complete)" in out
    assert "a *" in out and "b *" in out and f"* provisional: fewer than {PROVISIONAL_MATCHES} complete matches" in out
    assert "Ranked by TrueSkill's μ" in out
    code, out, err = invoke("standings", "--db", db)
    assert code == 0 and "vs field" in out
    assert_one_line_error(
        *invoke("standings", "--db", db, "-t", "three"), "no tournament named 'three' (known: one, two)"
    )
    empty = f"sqlite:///{tmp_path}/empty.db"  # tables, no tournament
    open_database(empty).dispose()
    assert_one_line_error(*invoke("standings", "--db", empty), "the database holds no tournament yet")


def test_standings_of_a_tournament_file(tmp_path, monkeypatch):
    """`arbiter standings FILE` finds the database as `arbiter run FILE` does: the file's
    `database`, relative to the file's folder, wherever the command runs."""
    from arbiter.tournament.config import load_config

    folder = tmp_path / "league"
    folder.mkdir()
    path = folder / "t.yaml"
    path.write_text(
        "name: mine\nentrants:\n  - {name: a, command: random}\n  - {name: b, command: first}\n"
        "rules: {preset: standard, contracts: [barbu]}\nseed: 5\nlog_folder: logs\ndatabase: results.db\n"
    )
    run_tournament(load_config(path, check_commands=False), executor=inproc.in_process(inproc.play_inprocess))
    assert (folder / "results.db").is_file()
    for cwd, argument in ((folder, "t.yaml"), (tmp_path, "league/t.yaml")):
        monkeypatch.chdir(cwd)
        code, out, err = invoke("standings", argument, "--json")
        assert code == 0, err
        assert {r["name"] for r in json.loads(out)} == {"a", "b"}
    monkeypatch.chdir(folder)  # without the file: the default database, and a hint at the file
    assert_one_line_error(*invoke("standings"), "no such database", "arbiter standings FILE.yaml")
    assert_one_line_error(*invoke("standings", "t.yaml", "-t", "other"), "no tournament named 'other'")
    for bad, words in (("", "the tournament or arena file name is empty"), ("none.yaml", "no such tournament or arena file"),
                       (".", "the tournament or arena file name is empty"), ("/", "is a folder")):  # fmt: skip
        assert_one_line_error(*invoke("standings", bad), words)


def test_standings_ordered_by_the_files_rating_and_rebuilt_alike(tmp_path, monkeypatch):
    """`rating: margins` orders `arbiter standings FILE` by the margin rating (TrueSkill's μ
    beside it); without the file, the file the run was made with (kept in the database) still
    does, and so does the report; `--rebuild` gives the kept margins back."""
    from arbiter.tournament.config import load_config

    path = tmp_path / "t.yaml"
    path.write_text(
        "name: m\nentrants:\n  - {name: a, command: random}\n  - {name: b, command: first}\n"
        "  - {name: c, command: random}\n  - {name: d, command: first}\n  - {name: e, command: random}\n"
        "format: duplicate\nrules: {preset: standard, contracts: [barbu]}\nseed: 5\nlog_folder: logs\n"
        "database: results.db\nrating: margins\n"
    )
    run_tournament(load_config(path, check_commands=False), executor=inproc.in_process(inproc.play_inprocess))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("standings", "t.yaml", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["name"] for r in rows] == [r["name"] for r in sorted(rows, key=lambda r: (-r["margin"], -r["mu"]))]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4, 5] and all(r["margin_sd"] > 0 for r in rows)
    assert abs(sum(r["margin"] for r in rows)) < 0.01  # against the field's average
    by_mu = [r["name"] for r in sorted(rows, key=lambda r: (-r["mu"], -r["margin"]))]
    assert by_mu != [r["name"] for r in rows]  # on these seeds the two orders differ
    stored = json.loads(invoke("standings", "--db", "results.db", "--json")[1])
    assert [r["name"] for r in stored] == [r["name"] for r in rows]
    code, out, err = invoke("report", "--db", "results.db", "--html", "report.html")
    assert code == 0, err
    page = (tmp_path / "report.html").read_text()
    assert "Ranked by the margin rating" in page
    ranked = [page.index(f'<tr data-entrant="{r["name"]}"') for r in rows]
    assert ranked == sorted(ranked), "the report's standings in the margin rating's order"
    code, out, err = invoke("standings", "t.yaml")
    assert code == 0 and "Ranked by the margin rating" in out, out
    code, out, err = invoke("standings", "t.yaml", "--rebuild", "--json")
    assert code == 0, err
    assert [(r["name"], r["margin"], r["margin_sd"]) for r in json.loads(out)] == [
        (r["name"], r["margin"], r["margin_sd"]) for r in rows
    ]


def test_standings_fit_80_columns_and_keep_every_value(tmp_path, monkeypatch):
    """A narrow terminal or a pipe (80 columns) wraps the duplicate table's cells; no value, no
    header is cut short (issue 21: `faul…`, `-607.6 ±132…`)."""
    db = f"sqlite:///{tmp_path}/r.db"
    run_tournament(
        config(tmp_path, {"heuristic-player": "first", "random-player": "random"}, extra="format: duplicate\nrounds: 3\n"),
        database=db, executor=inproc.in_process(inproc.play_inprocess),
    )  # fmt: skip
    code, out, err = invoke("standings", "--db", db, "--json")
    rows = json.loads(out)
    for columns in ("80", None):  # None: a pipe, which rich takes as 80 columns
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        code, out, err = invoke("standings", "--db", db)
        assert code == 0, err
        lines = out.splitlines()
        assert max(len(line) for line in lines) <= 80 and "…" not in out, out
        words = out.split()
        for header in ("faults", "matches", "vs", "field", "score", "±95%", "margin", "±sd"):
            assert header in words, (header, out)
        for row in rows:
            low, high = row["ci95"]
            diff_low, diff_high = row["duplicate_ci95"]
            assert row["name"] in words and f"{row['mean_score']:+.1f}" in words, out
            assert f"±{(high - low) / 2:.1f}" in words and f"{row['duplicate_diff']:+.1f}" in words, out
            assert f"±{(diff_high - diff_low) / 2:.1f}" in words, out
            assert f"{row['margin']:+.1f}" in words and f"±{row['margin_sd']:.1f}" in words, out


def test_the_bots_cpu_of_a_run_is_per_local_seat_once_a_seat_is_remote_and_unknown_when_every_seat_is():
    from arbiter.cli.tournament import _bots_cpu
    from arbiter.tournament.loop import RunSummary

    def summary(local: int, remote: int) -> RunSummary:
        return RunSummary("t", "round_robin", "sqlite://", 2, 0, 2, 0, True, [], 1.0, arbiter_cpu=0.4, bots_cpu=1.2,
                          local_seats=local, remote_seats=remote)  # fmt: skip

    assert _bots_cpu(summary(8, 0)) == ", bots 0.60s CPU"  # per match, as ever
    assert (
        _bots_cpu(summary(6, 2))
        == "; bots 0.20s CPU per local seat, unknown for the 2 remote seats (their own machines')"
    )
    assert _bots_cpu(summary(0, 8)) == "; bots' CPU unknown (every seat remote: spent on their own machines)"
