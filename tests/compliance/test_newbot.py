"""`arbiter new-bot`: the folder it writes is ready to run, as written.

A Python bot passes `arbiter check-bot` (the real command, a real bot process) and plays a
short league from its own tournament file; a Node.js bot, given the sample bot's installed
modules (no network), passes check-bot too; a Go and a Java bot build with their own build.sh
(offline, Debian's packages), pass their tests and check-bot (the Java one on loopback TCP: its
entrant.yaml and tournament file say `transport: tcp`).
Refusals are one `error:` line and exit code 2, and leave nothing behind.
"""

from __future__ import annotations

import doctest
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arbiter.arena.archive import entrant_file
from arbiter.cli import app as arbiter_app
from arbiter.compliance import scaffold
from arbiter.compliance.checkbot import check_bot
from arbiter.errors import ConfigError
from arbiter.tournament.config import load_config

from ..go.test_go_bot import build as build_go
from ..java.test_java_bot import build as build_java
from ..node.test_node_bot import node  # noqa: F401  (the fixture: scripts/setup_node.sh, once)

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def arbiter(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The real command line, as an author runs it."""
    return subprocess.run([PY, "-m", "arbiter", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def quick_league(path: Path) -> None:
    """The generated tournament file with 12-deal matches (tournaments/smoke.yaml's contracts)."""
    text = path.read_text(encoding="utf-8")
    short = "  contracts: [no_tricks, no_hearts, barbu]"
    assert "  # contracts: [no_tricks, no_hearts, barbu]" in text
    text = text.replace("  # contracts: [no_tricks, no_hearts, barbu]", short)
    path.write_text(text.replace("parallelism: auto", "parallelism: 2"), encoding="utf-8")


@pytest.mark.slow
def test_a_python_bot_passes_check_bot_and_plays_a_league(tmp_path):
    made = arbiter("new-bot", "mybot", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "arbiter check-bot -- python mybot/bot.py" in made.stdout
    assert "arbiter run mybot/tournament.yaml" in made.stdout
    folder = tmp_path / "mybot"
    assert sorted(p.name for p in folder.iterdir()) == [
        ".gitignore", "README.md", "bot.py", "entrant.yaml", "tournament.yaml"
    ]  # fmt: skip
    assert list(tmp_path.iterdir()) == [folder]  # no staging folder left

    checked = arbiter("check-bot", "--json", "--", "python", "mybot/bot.py", cwd=tmp_path)
    report = json.loads(checked.stdout)
    assert checked.returncode == 0 and report["ok"], checked.stdout + checked.stderr
    multi = next(step for step in report["steps"] if step["name"] == "multi-match")
    assert multi["detail"].startswith("declared: played"), multi  # bot.py says multi_match = True

    config = load_config(folder / "tournament.yaml")
    assert config.format == "gauntlet" and config.challenger == "mybot"
    assert config.entrant_names == ["mybot", "heuristic", "random"]
    for entrant in config.entrants[1:]:  # the sample bots, by absolute path
        assert str(ROOT / "sample_bots") in (entrant.command or "")

    quick_league(folder / "tournament.yaml")
    ran = arbiter("run", "--json", "mybot/tournament.yaml", cwd=tmp_path, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    result = json.loads(ran.stdout)
    assert result["complete"] and result["played"] == 8 and result["aborted"] == 0, result
    mine = next(row for row in result["standings"] if row["name"] == "mybot")
    assert mine["matches"] == 8 and mine["faults"] == 0 and mine["forfeits"] == 0, mine
    assert (folder / "logs" / "arbiter.db").is_file()  # results stay in the bot's folder
    assert len(list((folder / "logs" / "league").glob("*.jsonl"))) == 8


def test_the_python_bot_type_checks_strictly(tmp_path):
    scaffold.new_bot("typed", "python", tmp_path)
    proc = subprocess.run(
        [
            PY, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
            "--cache-dir", str(ROOT / ".mypy_cache" / "newbot"), "--strict", str(tmp_path / "typed" / "bot.py"),
        ],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_node_bot_passes_check_bot(tmp_path, node):  # noqa: F811
    made = scaffold.new_bot("node-bot", "node", tmp_path)
    folder = tmp_path / "node-bot"
    assert made.folder == folder and made.language == "node"
    assert sorted(made.files) == sorted(
        [
            "bot.js",
            "package.json",
            "README.md",
            "tournament.yaml",
            "entrant.yaml",
            ".gitignore",
            "proto/barbu/v1/arbiter.proto",
        ]
    )
    # Its own copy of the protocol: the folder stands alone.
    proto = ROOT / "proto" / "barbu" / "v1" / "arbiter.proto"
    assert (folder / "proto" / "barbu" / "v1" / "arbiter.proto").read_bytes() == proto.read_bytes()
    package = json.loads((folder / "package.json").read_text())
    assert package["name"] == "node-bot" and set(package["dependencies"]) == {"@grpc/grpc-js", "@grpc/proto-loader"}
    assert made.next_steps[0] == ["npm", "install", "--prefix", str(folder)]
    config = load_config(folder / "tournament.yaml")
    assert config.entrant("node-bot").command == "node bot.js"

    # `npm install` without the network: the sample Node bot's modules (same dependencies).
    shutil.copytree(ROOT / "sample_bots" / "node" / "node_modules", folder / "node_modules", symlinks=True)
    report = check_bot([node, str(folder / "bot.js")], seed=2)
    assert report.ok, report.render()
    assert "'node-bot'" in report.step("hello").detail


@pytest.mark.parametrize(
    ("language", "build", "transport", "sources"),
    [
        ("go", build_go, None, ["main.go", "codec.go", "strategy.go", "strategy_test.go"]),
        (
            "java",
            build_java,
            "tcp",
            ["src/bot/Main.java", "src/bot/Strategy.java", "test/bot/StrategyTest.java"],
        ),
    ],
)
def test_a_compiled_bot_builds_offline_passes_its_tests_and_check_bot(tmp_path, language, build, transport, sources):
    """The sample bot of the language under the new name, with its own build.sh and .proto: the
    folder builds where it is written, and the bot says hello under its new name."""
    made = scaffold.new_bot("my-bot", language, tmp_path)
    folder = tmp_path / "my-bot"
    assert sorted(made.files) == sorted(
        [
            "README.md",
            "tournament.yaml",
            "entrant.yaml",
            ".gitignore",
            "proto/barbu/v1/arbiter.proto",
            "build.sh",
            *sources,
        ]
    )
    proto = ROOT / "proto" / "barbu" / "v1" / "arbiter.proto"
    assert (folder / "proto" / "barbu" / "v1" / "arbiter.proto").read_bytes() == proto.read_bytes()
    sample = ROOT / "sample_bots" / language
    assert (folder / "build.sh").read_bytes() == (sample / "build.sh").read_bytes()
    assert os.access(folder / "build.sh", os.X_OK)
    check = ["arbiter", "check-bot", *(["--transport", transport] if transport else []), "--", str(folder / "bot")]
    assert made.next_steps[:2] == [["bash", str(folder / "build.sh")], check]
    assert "/bot\n/build/\n" in (folder / ".gitignore").read_text()

    built = build("--test", folder=folder)  # build, then the strategy's tests
    assert built.returncode == 0, built.stdout + built.stderr
    assert os.access(folder / "bot", os.X_OK)
    report = check_bot([str(folder / "bot")], seed=2, transport=transport or "unix")
    assert report.ok, report.render()
    assert "'my-bot'" in report.step("hello").detail
    config = load_config(folder / "tournament.yaml")  # ./bot exists now
    assert config.entrant("my-bot").command == "./bot"
    assert config.entrant("my-bot").transport == (transport or "unix")
    assert entrant_file(folder).transport == (transport or "unix")  # what an arena reads of the folder
    assert entrant_file(folder).build == ("bash build.sh" if language == "java" else None)
    assert "bash build.sh" in (folder / "README.md").read_text()


def test_a_compiled_bot_is_not_written_from_a_sample_that_no_longer_names_itself(tmp_path, monkeypatch):
    monkeypatch.setitem(scaffold._NAME_LINE, "go", ("main.go", re.compile("^no such line$", re.M)))
    with pytest.raises(ConfigError, match="cannot find the line that names the bot in the go sample bot's main.go"):
        scaffold.new_bot("x", "go", tmp_path)
    assert list(tmp_path.iterdir()) == []


def _refused(args: list[str], cwd: Path) -> str:
    """Run the command in ``cwd``; it must exit 2 with exactly one ``error:`` line."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(arbiter_app, args)
    finally:
        os.chdir(old)
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


def test_an_existing_folder_that_is_not_empty_is_refused(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "bot.py").write_text("mine\n")
    line = _refused(["new-bot", "taken"], tmp_path)
    assert "exists and is not empty" in line
    assert (tmp_path / "taken" / "bot.py").read_text() == "mine\n"  # untouched
    (tmp_path / "file").write_text("")
    assert "not a folder" in _refused(["new-bot", "file"], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "taken"]  # nothing left behind


def test_an_empty_folder_is_filled(tmp_path):
    (tmp_path / "empty").mkdir()
    made = scaffold.new_bot("empty", "python", tmp_path)
    assert (made.folder / "bot.py").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]


@pytest.mark.parametrize("name", ["", "-x", ".hidden", "a/b", "..", "a b", "x" * 65, "caf\u00e9", "a\x1bb"])
def test_a_bad_name_is_refused(tmp_path, name):
    line = _refused(["new-bot", "--", name], tmp_path)
    assert "bad bot name" in line and "\x1b" not in line
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_language_or_folder_is_refused(tmp_path):
    assert "unknown language 'rust': choose one of python, node, go, java" in _refused(
        ["new-bot", "x", "--lang", "rust"], tmp_path
    )
    assert "no such folder" in _refused(["new-bot", "x", "--dir", "nowhere"], tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_json_output_and_a_parent_folder(tmp_path):
    result = CliRunner().invoke(arbiter_app, ["new-bot", "b1", "--dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["folder"] == str(tmp_path / "b1") and out["language"] == "python"
    assert out["next"][0] == f"arbiter check-bot -- python {tmp_path / 'b1' / 'bot.py'}"


def test_a_bot_named_like_a_sample_bot_gets_distinct_entrants(tmp_path):
    scaffold.new_bot("heuristic", "python", tmp_path)
    config = load_config(tmp_path / "heuristic" / "tournament.yaml")
    assert config.entrant_names == ["heuristic", "sample-heuristic", "sample-random"]


def test_without_the_sample_bots_it_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(scaffold, "_SAMPLES", ("heuristic_bot.py", "missing_bot.py"))
    with pytest.raises(ConfigError, match=r"cannot find the sample bots \(missing_bot.py\)"):
        scaffold.new_bot("x", "python", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_paths_with_spaces_are_quoted_in_the_tournament_file():
    """The sample bots' absolute paths go through shell quoting and YAML quoting."""
    import shlex

    import yaml

    context = scaffold._context("x", "python", Path("/odd place/it's"))
    text = scaffold._environment().get_template("common/tournament.yaml.j2").render(**context)
    entrants = yaml.safe_load(text)["entrants"]
    assert shlex.split(entrants[1]["command"]) == ["python", "/odd place/it's/sample_bots/heuristic_bot.py"]
    assert shlex.split(entrants[2]["command"])[-1] == "/odd place/it's/sample_bots/random_bot.py"


def test_the_guide_s_examples_run():
    """docs/writing-bots.md's interactive examples give what the page shows."""
    result = doctest.testfile(str(ROOT / "docs" / "writing-bots.md"), module_relative=False, verbose=False)
    assert result.attempted > 10 and result.failed == 0, result


@pytest.mark.parametrize("language", ["python", "node"])
def test_the_folder_names_its_entrant_and_its_readme_says_what_check_bot_prints(tmp_path, language):
    """entrant.yaml holds the entrant as the tournament file enters it (an arena's submission reads
    it); the README quotes check-bot's words (PASS) and shows the standings from the file."""
    import yaml

    made = scaffold.new_bot("me", language, tmp_path)
    entrant = yaml.safe_load((made.folder / "entrant.yaml").read_text(encoding="utf-8"))
    config = load_config(made.folder / "tournament.yaml")
    assert entrant == {"name": "me", "command": config.entrant("me").command}
    readme = (made.folder / "README.md").read_text(encoding="utf-8")
    assert "`entrant.yaml`" in readme and "PASS" in readme and "say `ok`" not in readme and "say ok" not in readme
    assert "arbiter standings tournament.yaml" in readme
    assert made.next_steps[-1] == ["arbiter", "standings", str(made.folder / "tournament.yaml")]
    if language == "python":
        assert "    multi_match = True" in (made.folder / "bot.py").read_text(encoding="utf-8")
