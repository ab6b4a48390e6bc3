"""Fixtures for the report tests: small leagues played in process into SQLite files, the
report written from them, and helpers to read the page back (its embedded data, its tables).
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arbiter.cli import app
from arbiter.tournament.config import parse_config
from arbiter.tournament.loop import run_tournament

from ..tournament import inproc

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def league_config(folder: Path, entrants: dict[str, str], *, name: str, contracts: str, extra: str = ""):
    lines = "\n".join(f"  - {{name: {n}, command: {c}}}" for n, c in entrants.items())
    text = textwrap.dedent(
        f"""
        name: {name}
        entrants:
        {{entrants}}
        rules: {{preset: standard, contracts: [{contracts}]}}
        seed: 11
        log_folder: logs
        """
    ).replace("{entrants}", lines)
    return parse_config(text + extra, display=f"{name}.yaml", base_dir=folder, check_commands=False)


@dataclass
class League:
    folder: Path
    db: str  # sqlite URL
    name: str
    summary: object  # arbiter.tournament.RunSummary


def play_league(folder: Path, entrants: dict[str, str], *, name: str, contracts: str, extra: str = "") -> League:
    folder.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{folder / 'results.db'}"
    cfg = league_config(folder, entrants, name=name, contracts=contracts, extra=extra)
    summary = run_tournament(cfg, database=db, executor=inproc.in_process(inproc.play_inprocess))
    assert summary.complete
    return League(folder, db, name, summary)


@pytest.fixture(scope="session")
def league(tmp_path_factory) -> League:
    """Round robin of 5 entrants (20 matches of 16 deals): random and first-legal players, and
    one that crashes at its first decision in every match (faults, forfeits)."""
    entrants = {"alice": "random", "bob": "first", "carol": "random", "dave": "forfeit", "eve": "random"}
    return play_league(
        tmp_path_factory.mktemp("league"), entrants, name="mini", contracts="no_tricks, barbu, trumps, domino"
    )


@pytest.fixture(scope="session")
def duplicate_league(tmp_path_factory) -> League:
    """Duplicate with 3 entrants: copies fill the tables (an entrant holds two seats)."""
    entrants = {"x": "random", "y": "first", "z": "random"}
    return play_league(
        tmp_path_factory.mktemp("dup"),
        entrants,
        name="dup",
        contracts="no_hearts, no_queens",
        extra="format: duplicate\n",
    )


@dataclass
class Written:
    league: League
    out: Path
    html: str
    data: dict
    stdout: str


def write_report(league: League, out: Path, *extra: str) -> Written:
    code, stdout, stderr = invoke("report", "--db", league.db, "--html", str(out), *extra)
    assert code == 0, stderr
    html = out.read_text(encoding="utf-8")
    return Written(league, out, html, embedded_data(html), stdout)


@pytest.fixture(scope="session")
def report(league, tmp_path_factory) -> Written:
    return write_report(league, tmp_path_factory.mktemp("report") / "mini.html")


@pytest.fixture(scope="session")
def dup_report(duplicate_league, tmp_path_factory) -> Written:
    return write_report(duplicate_league, tmp_path_factory.mktemp("report") / "dup.html")


def embedded_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.DOTALL)
    assert m, "the page embeds its data"
    return json.loads(m.group(1))


class _Tables(HTMLParser):
    """Rows of text of every <table> inside the element with the given id; links by row."""

    def __init__(self, panel: str):
        super().__init__()
        self.panel, self.depth, self.inside = panel, 0, False
        self.tables: list[list[list[str]]] = []
        self.links: list[list[str]] = []
        self.row: list[str] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if not self.inside and a.get("id") == self.panel:
            self.inside, self.depth = True, 0
        if not self.inside:
            return
        if tag in ("div", "section", "table"):
            self.depth += 1
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.row = []
            self.links.append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "a" and self.row is not None:
            self.links[-1].append(a.get("href", ""))

    def handle_endtag(self, tag):
        if not self.inside:
            return
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.tables[-1].append(self.row)
            self.row = None
        if tag in ("div", "section", "table"):
            self.depth -= 1
            if self.depth == 0:
                self.inside = False

    def handle_data(self, data):
        if self.inside and self.cell is not None:
            self.cell.append(data)


def tables(html: str, panel: str) -> tuple[list[list[list[str]]], list[list[str]]]:
    """The text rows of each table in the panel, and the hrefs of each row (all tables)."""
    p = _Tables(panel)
    p.feed(html)
    return p.tables, p.links
