"""``arbiter run`` / ``arbiter standings``: one clear line and a non-zero exit for every mistake."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from arbiter.tournament.loop import run_tournament
from arbiter.tournament.storage import open_database

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
        play=inproc.play_inprocess,
        in_process=True,
    )
    summary = run_tournament(
        config(tmp_path, {"x": "random", "y": "first"}, extra="format: duplicate\n", name="two"),
        database=db, play=inproc.play_inprocess, in_process=True,
    )  # fmt: skip
    code, out, err = invoke("standings", "--db", db, "--json")  # the latest tournament: two
    assert code == 0, err
    rows = json.loads(out)
    assert [r["name"] for r in rows] == [s.name for s in summary.standings]
    for row in rows:
        assert {"name", "mu", "sigma", "rating", "matches", "mean_score", "ci95", "faults"} <= set(row)
        assert {"duplicate_diff", "duplicate_ci95"} <= set(row)
    code, out, err = invoke("standings", "--db", db, "--tournament", "one", "--json")
    assert code == 0 and {r["name"] for r in json.loads(out)} == {"a", "b"}
    assert "duplicate_diff" not in json.loads(out)[0]
    code, out, err = invoke("standings", "--db", db, "--tournament", "one")
    assert code == 0 and "one" in out and "μ−3σ" in out and "2/2 matches (complete)" in out
    code, out, err = invoke("standings", "--db", db)
    assert code == 0 and "vs field" in out
    assert_one_line_error(
        *invoke("standings", "--db", db, "-t", "three"), "no tournament named 'three' (known: one, two)"
    )
    empty = f"sqlite:///{tmp_path}/empty.db"  # tables, no tournament
    open_database(empty).dispose()
    assert_one_line_error(*invoke("standings", "--db", empty), "the database holds no tournament yet")
