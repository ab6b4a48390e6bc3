"""``arbiter report``: the page's numbers against the database, the ratings and the match logs."""

from __future__ import annotations

import json
import re
import textwrap
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote

import pytest
from barbu.matchlog import Visitor, read_log
from barbu.rules import ruleset_from_json
from barbu.rules.scoring import MULTIPLIERS
from sqlmodel import select
from typer.testing import CliRunner

from arbiter.referee.logfile import read_log_lines
from arbiter.storage import Repo, open_database
from arbiter.storage.models import Match
from arbiter.tournament.ratings import mean_with_ci, standings

from ..tournament.conftest import cli_app
from .conftest import embedded_data, invoke, play_league, tables, write_report


def stored(league):
    engine = open_database(league.db, create=False)
    try:
        repo = Repo(engine)
        t = repo.tournament(league.name)
        return repo, t, repo.entrant_names(t.id), repo.matches(t.id), repo.match_rows(t.id)
    finally:
        engine.dispose()


# ---- standings and ratings -------------------------------------------------------------------
@pytest.mark.parametrize("which", ["league", "duplicate_league"])
def test_standings_are_those_of_arbiter_standings(which, request):
    league = request.getfixturevalue(which)
    w = request.getfixturevalue("report" if which == "league" else "dup_report")
    _, t, names, records, _ = stored(league)
    duplicate = t.format == "duplicate"
    expected = standings(names, records, duplicate)
    assert w.data["standings"] == [s.to_json(duplicate) for s in expected]
    # the very JSON `arbiter standings --json` prints
    cli = CliRunner().invoke(cli_app(), ["standings", "--db", league.db, "--tournament", league.name, "--json"])
    assert cli.exit_code == 0 and json.loads(cli.stdout) == w.data["standings"]
    # and the table shows them as `arbiter standings` does
    (table,), _ = tables(w.html, "standings")
    header, *rows = table
    assert header[:7] == ["#", "entrant", "μ", "σ", "margin ±sd", "matches", "score ±95%"]
    assert ("vs field ±95%" in header) == duplicate
    assert len(rows) == len(expected)
    for row, s in zip(rows, expected, strict=True):
        name = s.name + (" provisional" if s.provisional else "")
        margin = f"{s.margin:+.1f}" + ("" if s.margin_sd is None else f" ±{s.margin_sd:.1f}")
        assert row[:6] == [str(s.rank), name, f"{s.mu:.2f}", f"{s.sigma:.2f}", margin, str(s.matches)]
        mean = f"{s.mean_score:+.1f}".replace("-", "−")
        assert row[6] == f"{mean} ±{(s.ci95[1] - s.ci95[0]) / 2:.1f}"
        assert row[-1].startswith(str(s.faults))


def test_rating_history_chart(report, league):
    repo, t, names, _, _ = stored(league)
    engine = open_database(league.db, create=False)
    try:
        repo = Repo(engine)
        history, final = repo.rating_history(t.id), repo.final_ratings(t.id)
    finally:
        engine.dispose()
    series = report.data["history"]["series"]
    assert set(series) == set(names)
    for name in names:
        rows = [r for r in history if r.entrant == name]
        assert series[name][0] == [0, 25.0, round(25 / 3, 4)]
        assert [p[0] for p in series[name][1:]] == [r.match_number + 1 for r in rows]
        assert series[name][-1][1:] == [round(final[name][0], 4), round(final[name][1], 4)]
    # one line per entrant in the inline SVG, each with its points
    svg = re.search(r'<svg id="rating-chart".*?</svg>', report.html, re.DOTALL).group(0)
    lines = re.findall(r'<polyline class="mu" data-entrant="([^"]+)"[^>]*points="([^"]+)"', svg)
    assert sorted(n for n, _ in lines) == sorted(names)
    for name, points in lines:
        assert len(points.split()) == len(series[name])


# ---- per-contract scores and doubling, recomputed from the logs --------------------------------
def contract_means_from_logs(league):
    """Per entrant and contract: the mean over deals of the mean of its seats' deal scores."""
    _, _, _, _, rows = stored(league)
    every: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    declared: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        assert row.status == "complete"
        seats = row.seats
        contract = declarer = None
        for line in Path(row.log_path).read_text(encoding="utf-8").splitlines():
            o = json.loads(line)
            if o["type"] == "deal":
                declarer = o["declarer"]
            elif o["type"] == "declare":
                contract = o["contract"]
            elif o["type"] == "deal_end":
                for name in set(seats):
                    own = [o["scores"][s] for s in range(4) if seats[s] == name]
                    every[name][contract].append(sum(own) / len(own))
                declared[seats[declarer]][contract].append(o["scores"][declarer])
    return every, declared


@pytest.mark.parametrize("which", ["league", "duplicate_league"])
def test_contract_averages_match_the_logs(which, request):
    league = request.getfixturevalue(which)
    w = request.getfixturevalue("report" if which == "league" else "dup_report")
    every, declared = contract_means_from_logs(league)
    c = w.data["contracts"]
    assert set(c["order"]) == {k for per in every.values() for k in per}
    for view, source in (("all", every), ("declarer", declared)):
        for name, per in c[view].items():
            for contract in c["order"]:
                values = source[name][contract]
                assert per[contract]["n"] == len(values), (view, name, contract)
                assert per[contract]["mean"] == pytest.approx(sum(values) / len(values), abs=1e-3), (
                    view,
                    name,
                    contract,
                )
                lo, hi = mean_with_ci(values)[1]
                assert per[contract]["ci95"] == pytest.approx([lo, hi], abs=1e-3)
            all_values = [v for k in c["order"] for v in source[name][k]]
            assert per["all"]["n"] == len(all_values)
            assert per["all"]["mean"] == pytest.approx(sum(all_values) / len(all_values), abs=1e-3)
    total_deals = sum(len(v) for v in declared.values() for v in v.values())
    assert w.data["analysis"]["deals"] == total_deals and w.data["analysis"]["unsettled"] == 0
    # the heat map shows the same means
    (all_table, _declarer_table), _ = tables(w.html, "contracts")
    for row in all_table[1:]:
        name = row[0]
        for contract, cell in zip([*c["order"], "all"], row[1:], strict=True):  # then the row's total
            assert cell == f"{c['all'][name][contract]['mean']:+.1f}".replace("-", "−")


class _Doubling(Visitor):
    """Each deal's final doubling (pair levels, who doubled whom) and its scores."""

    def __init__(self):
        self.deals: dict[int, dict] = {}

    def visit(self, line, state):
        obj = line.obj
        if obj.get("type") == "double":  # the last one of a deal leaves the final doubling
            self.deals[obj["deal"]] = {"levels": [list(r) for r in state.levels], "doubled": list(state.doubled)}
        elif obj.get("type") == "deal_end":
            self.deals[obj["deal"]].update(raw=obj["raw"], scores=obj["scores"])

    def end(self, verification):
        return verification


def doubling_from_engine(league):
    """Doubles, redoubles and the settlement they brought, from the engine's own doubling state
    (the verifier's pass over each log: pair levels, and who doubled whom first)."""
    _, _, _, _, rows = stored(league)
    out: dict[str, dict] = defaultdict(lambda: {"doubles": 0, "redoubles": 0, "acted": [], "passive": []})
    for row in rows:
        seats = row.seats
        doubling = _Doubling()
        v = read_log(read_log_lines(row.log_path), doubling)
        deals = doubling.deals
        assert v.valid and v.complete
        m = MULTIPLIERS[ruleset_from_json(v.header["rules"]).double_scoring]
        for st in deals.values():
            raw, scores = st["raw"], st["scores"]
            settled = list(raw)
            for i in range(4):
                for j in range(i + 1, 4):
                    level = st["levels"][i][j]
                    if not level:
                        continue
                    settled[i] += m[level] * (raw[i] - raw[j])
                    settled[j] -= m[level] * (raw[i] - raw[j])
                    if seats[i] == seats[j]:
                        continue
                    doubler = i if st["doubled"][i] >> j & 1 else j
                    other = j if doubler == i else i
                    out[seats[doubler]]["doubles"] += 1
                    out[seats[doubler]]["acted"].append(m[level] * (raw[doubler] - raw[other]))
                    if level == 2:
                        out[seats[other]]["redoubles"] += 1
                        out[seats[other]]["acted"].append(m[level] * (raw[other] - raw[doubler]))
                    else:
                        out[seats[other]]["passive"].append(m[level] * (raw[other] - raw[doubler]))
            assert settled == scores
    return out


@pytest.mark.parametrize("which", ["league", "duplicate_league"])
def test_doubling_matches_the_engine(which, request):
    league = request.getfixturevalue(which)
    w = request.getfixturevalue("report" if which == "league" else "dup_report")
    want = doubling_from_engine(league)
    assert sum(v["doubles"] for v in want.values()) > 10  # the random players double a lot
    for name, d in w.data["doubling"].items():
        x = want[name]
        assert (d["doubles"], d["redoubles"], d["pairs"]) == (x["doubles"], x["redoubles"], len(x["acted"]))
        assert d["net"] == sum(x["acted"])
        assert d["won"] == sum(1 for g in x["acted"] if g > 0) and d["lost"] == sum(1 for g in x["acted"] if g < 0)
        assert d["mean"] == pytest.approx(sum(x["acted"]) / len(x["acted"]), abs=1e-3)
        assert d["doubled_pairs"] == len(x["passive"])


# ---- faults and the match list -----------------------------------------------------------------
def test_faults_by_kind(report, league):
    engine = open_database(league.db, create=False)
    try:
        repo = Repo(engine)
        t = repo.tournament(league.name)
        faults = repo.faults(t.id)
        ids = {e: i for i, e in enumerate(repo.entrant_names(t.id))}
    finally:
        engine.dispose()
    assert faults and {f.kind for f in faults} == {"crash"}
    by = report.data["faults"]["by_entrant"]
    assert by["dave"] == {"crash": 20 - 4} and all(not by[e] for e in ids if e != "dave")
    assert report.data["faults"]["forfeits"]["dave"] == 16
    (table,), _ = tables(report.html, "faults")
    assert table[0] == ["entrant", "crash", "total", "forfeits"]  # only the kinds that occurred
    assert ["dave", "16", "16", "16"] in table


def test_every_match_is_listed_and_linked(report, league):
    _, _, _, _, rows = stored(league)
    (table,), links = tables(report.html, "matches")
    listed = table[1:]
    assert len(listed) == len(rows) == len(report.data["matches"])
    for row, m, cells, hrefs in zip(rows, report.data["matches"], listed, links[1:], strict=True):
        assert m["key"] == row.key and m["seats"] == row.seats and m["totals"] == row.totals
        assert m["status"] == "complete" and m["log"] == "ok"
        assert cells[1] == row.key
        for s, name in enumerate(row.seats):
            assert cells[2 + s].startswith(name) and f"{row.totals[s]:+d}".replace("-", "−") in cells[2 + s]
        assert len(hrefs) == 1 and not hrefs[0].startswith(("/", "file:", "http"))
        page = report.out.parent / unquote(hrefs[0])
        assert page.is_file() and page.parent.name == "mini_replays"
        assert f"<title>Barbu replay — mini/{row.key}</title>" in page.read_text(encoding="utf-8")
    assert "20 replay pages in mini_replays/" in report.stdout


def test_no_replays(league, report, tmp_path):
    w = write_report(league, tmp_path / "plain.html", "--no-replays")
    assert not (tmp_path / "plain_replays").exists()
    assert "class='replay'" not in w.html and all(m["replay"] is None for m in w.data["matches"])
    assert w.data["contracts"] == report.data["contracts"] and w.data["doubling"] == report.data["doubling"]
    assert "replay page" not in w.stdout


def test_the_page_is_self_contained(report):
    html = report.html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert "Content-Security-Policy" in html and "connect-src 'none'" in html


# ---- logs that are missing, changed, invalid or unreadable ---------------------------------------
def test_bad_logs_are_shown_never_a_crash(tmp_path):
    entrants = {"a": "random", "b": "first", "c": "random", "d": "random", "e": "first"}
    league = play_league(tmp_path / "bad", entrants, name="bad", contracts="barbu")
    engine = open_database(league.db)  # to change it (create=False opens a database read-only)
    from sqlmodel import Session

    with Session(engine) as s:
        rows = list(s.exec(select(Match).order_by(Match.number)))
        Path(rows[0].log_path).unlink()  # missing
        p = Path(rows[1].log_path)  # changed since it was recorded (still a valid log)
        p.write_text(p.read_text().replace('"version":1,', '"version":1,"note":"edited",', 1))
        p = Path(rows[2].log_path)  # invalid, with its hash updated: an illegal card
        lines = p.read_text().splitlines(keepends=True)
        n = next(i for i, line in enumerate(lines) if '"type":"play"' in line)
        obj = json.loads(lines[n])
        obj["card"] = "XX"
        lines[n] = json.dumps(obj) + "\n"
        p.write_text("".join(lines))
        import hashlib

        rows[2].log_sha256 = hashlib.sha256(p.read_bytes()).hexdigest()
        s.add(rows[2])
        Path(rows[3].log_path).write_bytes(b"\xff\xfe not utf-8")  # unreadable, its hash updated
        rows[3].log_sha256 = hashlib.sha256(b"\xff\xfe not utf-8").hexdigest()
        s.add(rows[3])
        s.commit()
    engine.dispose()
    w = write_report(league, tmp_path / "out" / "bad.html")
    states = [m["log"] for m in w.data["matches"]]
    assert states[:4] == ["missing", "changed", "invalid", "unreadable"] and set(states[4:]) == {"ok"}
    assert w.data["analysis"]["matches"] == len(states) - 4  # only sound logs feed the statistics
    (table,), links = tables(w.html, "matches")
    assert table[1][-1] == "log missing" and links[1] == []
    assert table[4][-1] == "log unreadable" and links[4] == []
    assert table[2][-1] == "log changed" and links[2] == []  # a changed log is never shown
    assert table[3][-1] == "replay ▸ log invalid"
    for hrefs in links[3:4] + links[5:]:
        assert len(hrefs) == 1 and (w.out.parent / unquote(hrefs[0])).is_file()
    assert "1 log changed, 1 log invalid, 1 log missing, 1 log unreadable" in w.stdout


# ---- the database is input: a path it names is read only inside the tournament's log folder -----
SECRET = "root:SECRET-HASH:19000:0:99999:7:::"


@pytest.mark.parametrize("where", ["absolute", "relative", "hash of the file", "link in the folder"])
def test_a_database_cannot_make_the_report_show_other_files(tmp_path, monkeypatch, where):
    """``matches.log_path`` edited to name a file outside the log folder (with or without that
    file's SHA-256, or through a link planted in the folder): no page holds a byte of it."""
    import hashlib

    from sqlmodel import Session

    league = play_league(tmp_path / "lg", {"a": "random", "b": "first", "c": "random", "d": "first"},
                         name="sec", contracts="barbu")  # fmt: skip
    secret = tmp_path / "private" / "shadow"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    monkeypatch.chdir(tmp_path / "lg")
    engine = open_database(league.db)
    with Session(engine) as s:
        row = s.exec(select(Match).order_by(Match.number)).first()
        if where == "absolute":
            row.log_path = str(secret)
        elif where == "relative":
            row.log_path = "../private/shadow"
        elif where == "hash of the file":
            row.log_path, row.log_sha256 = str(secret), hashlib.sha256(secret.read_bytes()).hexdigest()
        else:  # a link with a log's name, in the folder, to the secret
            link = Path(row.log_path).with_name("sec-r9-t009-9.jsonl")
            link.symlink_to(secret)
            row.log_path, row.log_sha256 = str(link), hashlib.sha256(secret.read_bytes()).hexdigest()
        s.add(row)
        s.commit()
    engine.dispose()
    w = write_report(league, tmp_path / "out" / "sec.html")
    first = w.data["matches"][0]
    assert first["log"] == "missing" and first["replay"] is None
    assert "not a log of the tournament's log folder" in first["log_note"]
    written = [w.out, *(w.out.parent / "sec_replays").iterdir()]
    assert len(written) == len(w.data["matches"])  # the report and the other matches' pages
    for page in written:
        assert "SECRET-HASH" not in page.read_text(encoding="utf-8")


def test_a_changed_log_is_named_and_never_shown(tmp_path):
    """A log of the folder whose bytes are not the recorded ones: counted as changed, no page."""
    league = play_league(tmp_path / "lg", {"a": "random", "b": "first", "c": "random", "d": "first"},
                         name="chg", contracts="barbu")  # fmt: skip
    _, _, _, _, rows = stored(league)
    log = Path(rows[0].log_path)
    log.write_text(log.read_text().replace('"entrant":"a"', '"entrant":"SECRET-NAME"'))
    w = write_report(league, tmp_path / "out" / "chg.html")
    assert w.data["matches"][0]["log"] == "changed" and w.data["matches"][0]["replay"] is None
    assert "1 log changed" in w.stdout
    for page in [w.out, *(w.out.parent / "chg_replays").iterdir()]:
        assert "SECRET-NAME" not in page.read_text(encoding="utf-8")


# ---- a tournament with no match yet, several tournaments, errors -----------------------------------
def test_a_tournament_without_matches(tmp_path):
    from arbiter.tournament.formats import build_schedule

    from .conftest import league_config

    cfg = league_config(
        tmp_path, {"a": "random", "b": "first", "c": "random", "d": "first"}, name="fresh", contracts="barbu"
    )
    engine = open_database(f"sqlite:///{tmp_path / 'r.db'}")
    Repo(engine).start(cfg, build_schedule(cfg.format, cfg.entrant_names, cfg.rounds, cfg.seed))
    engine.dispose()
    code, _, err = invoke("report", "--db", str(tmp_path / "r.db"), "--html", str(tmp_path / "f.html"))
    assert code == 0, err
    html = (tmp_path / "f.html").read_text()
    data = embedded_data(html)
    assert data["tournament"]["recorded"] == 0 and data["matches"] == []
    assert "No match recorded yet." in html and "No rated game yet." in html
    assert len(re.findall(r'<polyline class="mu"', html)) == 4


def test_the_tournament_option_and_the_latest(tmp_path):
    # both leagues in one database: --tournament picks one, without it the latest
    db = f"sqlite:///{tmp_path / 'two.db'}"
    for folder, entrants, name, contracts, extra in (
        ("one", {"p": "random", "q": "first"}, "one", "barbu", ""),
        ("two", {"r": "random", "s": "first"}, "two", "barbu", "format: duplicate\n"),
    ):
        from arbiter.tournament.loop import run_tournament

        from ..tournament import inproc
        from .conftest import league_config

        cfg = league_config(tmp_path / folder, entrants, name=name, contracts=contracts, extra=extra)
        run_tournament(cfg, database=db, executor=inproc.in_process(inproc.play_inprocess))
    code, out, err = invoke("report", "--db", db, "--html", str(tmp_path / "latest.html"), "--no-replays")
    assert code == 0, err
    assert embedded_data((tmp_path / "latest.html").read_text())["tournament"]["name"] == "two"
    code, out, err = invoke("report", "--db", db, "-t", "one", "--html", str(tmp_path / "one.html"))
    assert code == 0, err
    data = embedded_data((tmp_path / "one.html").read_text())
    assert data["tournament"]["name"] == "one" and set(data["entrants"]) == {"p", "q"}
    code, out, err = invoke("report", "--db", db, "-t", "three", "--html", str(tmp_path / "x.html"))
    assert_one_line_error(code, out, err, "no tournament named 'three' (known: one, two)")


def assert_one_line_error(code, out, err, *fragments):
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for f in fragments:
        assert f in lines[0], lines[0]


def test_errors(tmp_path, league, monkeypatch):
    out = str(tmp_path / "r.html")
    assert_one_line_error(*invoke("report", "--db", str(tmp_path / "none.db"), "--html", out), "no such database")
    (tmp_path / "empty.db").write_bytes(b"")  # an empty file: no tables
    assert_one_line_error(
        *invoke("report", "--db", str(tmp_path / "empty.db"), "--html", out), "holds no tournament results"
    )
    open_database(f"sqlite:///{tmp_path / 'tables.db'}").dispose()  # tables, no tournament
    assert_one_line_error(
        *invoke("report", "--db", str(tmp_path / "tables.db"), "--html", out), "holds no tournament yet"
    )
    (tmp_path / "text.db").write_text(textwrap.dedent("not a database\n" * 100))
    assert_one_line_error(*invoke("report", "--db", str(tmp_path / "text.db"), "--html", out), "file is not a database")
    assert_one_line_error(*invoke("report", "--db", "mysql://x@y/z", "--html", out), "unsupported database")
    # the default database: $BARBU_DB, else logs/arbiter.db in the current folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BARBU_DB", raising=False)
    assert_one_line_error(*invoke("report", "--html", out), f"no such database: {tmp_path / 'logs' / 'arbiter.db'}")
    monkeypatch.setenv("BARBU_DB", league.db)
    code, stdout, err = invoke("report", "--html", out, "--no-replays")
    assert code == 0 and stdout.startswith(f"wrote {out} (mini, 20 matches")
    # the page cannot be written
    (tmp_path / "folder.html").mkdir()
    assert_one_line_error(*invoke("report", "--html", str(tmp_path / "folder.html")), "is a folder")
    (tmp_path / "file").write_text("")
    assert_one_line_error(*invoke("report", "--html", str(tmp_path / "file" / "r.html")), "file is not a folder")
    code, stdout, err = invoke("report", "--db", league.db)
    assert code == 2 and "--html" in err  # required
