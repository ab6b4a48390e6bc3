"""Terminals and bots: escape codes from a bot's stderr or a log's entrant names never reach the
terminal; a malformed answer's fault carries the bot's own last error line; a bot gets a grace
after MatchEnd to finish (its last words are kept); results are read from read-only storage."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import textwrap

import pytest

from .conftest import RANDOM_BOT, arbiter, arbiter_cases, sha256

ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31m"  # retitle the terminal, clear it, paint it red

BOTS = {
    # Says goodbye on its stderr a little after MatchEnd (on_match_end work that takes a moment).
    "farewell.py": """
        import random, sys, time
        from barbu.bot import Bot
        from barbu.runner import run

        class Farewell(Bot):
            name = "farewell"
            def decide(self, view):
                return random.choice(view.legal)
            def on_match_end(self, view):
                time.sleep(0.4)
                print("farewell: my last words", file=sys.stderr, flush=True)

        raise SystemExit(run(Farewell()))
    """,
    # Answers something that cannot be sent: the SDK logs why, then sends an empty action.
    "nonsense.py": """
        from barbu.bot import Bot
        from barbu.runner import run

        class Nonsense(Bot):
            name = "nonsense"
            def decide(self, view):
                return "a card of my own"

        raise SystemExit(run(Nonsense()))
    """,
    # Writes escape codes to its stderr, then dies: the fault shows its last output.
    "escapes.py": f"""
        import os, random, sys
        from barbu.bot import Bot
        from barbu.runner import run

        class Escapes(Bot):
            name = "escapes"
            asked = 0
            def decide(self, view):
                self.asked += 1
                if self.asked == 2:
                    sys.stderr.write({ESC!r} + "boom\\n")
                    sys.stderr.flush()
                    os._exit(4)
                return random.choice(view.legal)

        raise SystemExit(run(Escapes()))
    """,
}


def test_bots_last_words_are_kept_and_escaped(tmp_path):
    for name, text in BOTS.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    bots = ["python farewell.py", "python nonsense.py", "python escapes.py", f"python {RANDOM_BOT}"]
    args = ["match", "--log", "m.jsonl", "--time-per-decision", "5", "--seed", "3"]
    for b in bots:
        args += ["--bot", b]
    r = arbiter(*args, "--json", cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x1b" not in r.stderr and "\x07" not in r.stdout
    faults = json.loads(r.stdout)["faults"]
    malformed = [f for f in faults if f["seat"] == 1]
    assert malformed and {f["kind"] for f in malformed} == {"malformed"}
    # the bot's own line: "ERROR barbu.runner: request N: the bot's answer '...' cannot be sent: ..."
    assert any("the bot's last output:" in f["detail"] and "cannot be sent" in f["detail"] for f in malformed), (
        malformed
    )
    crash = [f for f in faults if f["seat"] == 2]
    assert crash and "\x1b" not in crash[0]["detail"]
    if crash[0]["kind"] == "crash":  # "the bot process exited with code 4; last output: <its escapes, spelled out>"
        assert "\\x1b]0;pwned\\x07" in crash[0]["detail"], crash
    assert "\x1b]0;pwned" in (tmp_path / "m.seat2.stderr").read_text()  # its file keeps what it wrote
    assert "farewell: my last words" in (tmp_path / "m.seat0.stderr").read_text()  # the grace after MatchEnd
    # the human-readable form, too
    plain = arbiter(*args[:2], "m2.jsonl", *args[3:], cwd=tmp_path, timeout=180)
    assert plain.returncode == 0 and "\x1b" not in plain.stdout and "\\x1b" in plain.stdout


def test_a_log_s_entrant_names_are_escaped(tmp_path):
    assert arbiter("selfplay", "--out", "m.jsonl", "--set", "contracts=[barbu]", cwd=tmp_path).returncode == 0
    lines = (tmp_path / "m.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["seats"] = [{"seat": s, "entrant": f"evil{s}{ESC}\u202e"} for s in range(4)]
    lines[0] = json.dumps(header)
    (tmp_path / "evil.jsonl").write_text("\n".join(lines) + "\n")
    cases = [
        ["replay", "evil.jsonl"],
        ["replay", "evil.jsonl", "--seat", "1", "--deal", "1"],
        ["replay", "evil.jsonl", "--verify"],
    ]
    results = arbiter_cases([(args, tmp_path) for args in cases])
    for args, r in zip(cases, results, strict=True):
        assert r.returncode == 0, (args, r.stderr)
        assert "\x1b" not in r.stdout + r.stderr and "\x07" not in r.stdout and "\u202e" not in r.stdout, args
    assert "evil0\\x1b]0;pwned" in results[0].stdout  # spelled out (rich itself drops the BEL)


def _small_results(folder, journal: str):
    """A results database of a played (in-process) tournament, in the given journal mode."""
    from arbiter.tournament.config import parse_config
    from arbiter.tournament.loop import run_tournament
    from tests.tournament import inproc

    text = "name: ro\nentrants:\n  - {name: a, command: random}\n  - {name: b, command: first}\nrules: {contracts: [barbu]}\nlog_folder: logs\n"
    cfg = parse_config(text, base_dir=folder, check_commands=False)
    run_tournament(cfg, database=f"sqlite:///{folder}/results.db", executor=inproc.in_process(inproc.play_inprocess))
    with sqlite3.connect(folder / "results.db") as c:
        c.execute("update entrants set name = ? where name = 'a'", (f"a{ESC}",))  # a hostile name, too
        c.commit()
        assert c.execute(f"pragma journal_mode={journal}").fetchone()[0] == journal.lower()


@pytest.mark.parametrize("journal", ["WAL", "DELETE"])
def test_standings_and_report_read_a_database_on_read_only_storage(tmp_path, journal):
    store = tmp_path / "store"
    store.mkdir()
    _small_results(store, journal)
    shutil.rmtree(store / "logs")
    before = sorted(os.listdir(store)), sha256(store / "results.db")
    out = tmp_path / "out"
    out.mkdir()
    if os.geteuid() == 0:  # root ignores permissions: a read-only mount in a mount namespace of its own
        if shutil.which("unshare") is None:
            pytest.fail("unshare (util-linux) is needed to make read-only storage for this test")

        def run(*args):
            import shlex

            from .conftest import PY, env_for

            command = " ".join(shlex.quote(a) for a in [PY, "-m", "arbiter", *args])
            script = f"mount --bind {store} {store} && mount -o remount,bind,ro {store} && exec {command}"
            return subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=tmp_path, env=env_for(),
                                  capture_output=True, text=True, timeout=120)  # fmt: skip
    else:
        os.chmod(store / "results.db", 0o444)
        os.chmod(store, 0o555)

        def run(*args):
            return arbiter(*args, cwd=tmp_path, timeout=120)

    try:
        r = run("standings", "--db", str(store / "results.db"))
        assert r.returncode == 0, r.stderr
        assert "a\\x1b]0;pwned" in r.stdout and "\x1b]0" not in r.stdout
        r = run("report", "--html", str(out / "report.html"), "--db", str(store / "results.db"), "--no-replays")
        assert r.returncode == 0, r.stderr
        assert (out / "report.html").stat().st_size > 0
    finally:
        os.chmod(store, 0o755)
    assert (sorted(os.listdir(store)), sha256(store / "results.db")) == before  # nothing written there
