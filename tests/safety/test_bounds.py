"""Bounds on every input: each absurd value, endless file, unusable address or path, and
undecodable argument is one ``error:`` line (exit 2) from the real command, at once: never a
traceback, never a hang, never a bot blamed for the arbiter's limits."""

from __future__ import annotations

import json
import os

from .conftest import RANDOM_BOT, arbiter, arbiter_cases, assert_one_error

BOT = f"python {RANDOM_BOT}"
HUGE = "9" * 5000


def tournament(folder, extra: str) -> str:
    path = folder / "b.yaml"
    path.write_text(f"entrants:\n  - {{name: a, command: {BOT}}}\n  - {{name: b, command: {BOT}}}\n{extra}\n")
    return str(path)


FILE_CASES = {
    "seed 2^63": ("seed: 9223372036854775808", "seed: must be at most 9223372036854775807"),
    "seed of 5000 digits": (f"seed: {HUGE}", "seed: must be at most 9223372036854775807, got a number of 5000 digits"),
    "a billion rounds": ("rounds: 1000000000", "make 2000000000 matches; a tournament has at most 100000"),
    "rounds of 5000 digits": (f"rounds: {HUGE}", "rounds: must be at most"),
    "many entrants": (
        "entrants:\n" + "".join(f"  - {{name: e{i}, command: {BOT}}}\n" for i in range(40)),
        "a tournament has at most 100000",
    ),
    "infinite time": ("time_control: {per_decision: .inf}", "time_control.per_decision: must be at most 3600 seconds"),
    "NaN time": ("time_control: {reserve: .nan}", "time_control.reserve: must be a finite number"),
    "1e300 seconds": (
        "time_control: {match_limit: 1.0e+300}",
        "time_control.match_limit: must be at most 604800 seconds",
    ),
    "a year per decision": ("time_control: {per_decision: 31536000}", "must be at most 3600 seconds"),
    "seconds of 5000 digits": (
        f"time_control: {{connect: {HUGE}}}",
        "time_control.connect: expected a number of seconds",
    ),
    "memory of 5000 digits": (f"limits: {{memory: {HUGE}}}", "limits.memory: must be at most"),
    "memory 1e30 TiB": (
        "limits: {memory: 1000000000000000000000000000000TiB}",
        "limits.memory: must be at most 1024 TiB",
    ),
    "open files 2^40": ("limits: {open_files: 1099511627776}", "limits.open_files: must be at most 1048576"),
    "parallelism 10^6": ("parallelism: 1000000", "parallelism: must be at most 1024"),
    "strikes 10^9": ("faults: {max_strikes: 1000000000}", "faults.max_strikes: must be at most 1000"),
    "an empty database": ("database: ''", "database: the database name is empty"),
    "a folder as database": ("database: /tmp", "database /tmp is a folder, not an SQLite database file"),
    "a device as database": ("database: /dev/null", "database /dev/null is a character device"),
    "an empty log folder": ("log_folder: ''", "log_folder: the folder name is empty"),
    "a file as log folder": ("log_folder: b.yaml", "log_folder {t}/b.yaml is a file, not a folder"),
    "a device as log folder": ("log_folder: /dev/null", "log_folder /dev/null is a character device, not a folder"),
    "a deal file that never ends": ("deals: /dev/zero", "/dev/zero is larger than 64 MiB: not a deal file"),
    "a deep deal line": ("deals: deep.jsonl", "deep.jsonl:1: a line nested more than 32 levels deep"),
    "a long deal line": ("deals: long.jsonl", "long.jsonl:1: a line longer than 1 MiB"),
    "a folder as deal file": ("deals: .", "is a folder, not a deal file"),
}


# Whole numbers too long to convert (Python refuses past 4300 digits), wherever they sit.
NESTED_CASES = {
    "double_quota": (f"rules: {{double_quota: {HUGE}}}", "rules.double_quota: must be from"),
    "negative double_quota": (f"rules: {{double_quota: -{HUGE}}}", "rules.double_quota: must be from"),
    "a domino payout": (f"rules: {{domino_payouts: [1, {HUGE}, 3, 4]}}", "rules.domino_payouts: must be from"),
    "a negative domino payout": (f"rules: {{domino_payouts: [-{HUGE}, 1, 3, 4]}}", "rules.domino_payouts: must be"),
    "a score value": (f"rules:\n  score_values: {{barbu: {HUGE}}}", "rules.score_values: must be from"),
    "a negative score value": (f"rules:\n  score_values: {{barbu: -{HUGE}}}", "rules.score_values: must be from"),
    "a nested list": (f"rules: {{contracts: [[{HUGE}]]}}", "rules.contracts: must be from"),
    "a uid": (f"limits: {{user: {HUGE}}}", "limits.user: expected a user name or a numeric user id, got a number"),
    "a uid as text": (f"limits: {{user: '{HUGE}'}}", "limits.user: user id 99999"),
    "a uid range": (f"limits: {{user: 1-{HUGE}}}", "limits.user: user id range '1-9999"),
    "a uid range's start": (f"limits: {{user: {HUGE}-1}}", "limits.user: user id range '9999"),
    "negative seed": (f"seed: -{HUGE}", "seed: must be at least 0, got a number of 5000 digits"),
    "negative cpu": (f"limits: {{cpu: -{HUGE}}}", "limits.cpu: must be at most"),
    "a description": (f"description: {HUGE}", "description: expected text, got a number of 5000 digits"),
    "an entrant name": (f"name: {HUGE}", "name: expected text, got a number of 5000 digits"),
    "a key": (f"? {HUGE}\n: 1", "keys must be names, got a number of 5000 digits"),
    "an unknown section": (f"time_control: {{per_decision: [{HUGE}]}}", "expected a number of seconds, got a list"),
}


def test_huge_numbers_nested_anywhere(tmp_path):
    """A 5000-digit number in any place of a tournament file: one error line, no traceback."""
    cases = []
    for i, (extra, _) in enumerate(NESTED_CASES.values()):
        folder = tmp_path / f"case{i}"
        folder.mkdir()
        cases.append((["run", tournament(folder, extra)], folder))
    for (name, (_, words)), (_, folder), r in zip(
        NESTED_CASES.items(), cases, arbiter_cases(cases, timeout=60), strict=False
    ):
        line = assert_one_error(r, 2, words)
        assert len(line) < 400 and "b.yaml:" in line, (name, line)
        assert not (folder / "logs" / "b").exists(), name


def test_tournament_file_values(tmp_path):
    """Each absurd value in a tournament file: `arbiter run` refuses at once, naming line and key."""
    cases = []
    for i, (extra, _) in enumerate(FILE_CASES.values()):
        folder = tmp_path / f"case{i}"
        folder.mkdir()
        if "deep.jsonl" in extra:
            (folder / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
        if "long.jsonl" in extra:
            (folder / "long.jsonl").write_text('{"type": "deal", "x": "' + "x" * (2 << 20) + '"}\n')
        if extra.startswith("entrants:"):
            (folder / "b.yaml").write_text(extra)
            config = str(folder / "b.yaml")
        else:
            config = tournament(folder, extra)
        cases.append((["run", config], folder))
    results = arbiter_cases(cases, timeout=60)
    for (name, (_, words)), (_, folder), r in zip(FILE_CASES.items(), cases, results, strict=True):
        assert_one_error(r, 2, words.format(t=folder))
        assert not (folder / "logs" / "b").exists(), name  # nothing was started (logs/b: its log folder)


def test_endless_and_hostile_inputs(tmp_path):
    os.mkfifo(tmp_path / "pipe")  # a named pipe nobody writes to
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"type":"match","x":' + "[" * 100_000 + "]" * 100_000 + "}\n")
    long = tmp_path / "long.jsonl"
    long.write_text('{"type":"match","x":"' + "y" * (2 << 20) + '"}\n')
    cases = [
        (["run", "/dev/zero"], "/dev/zero is larger than 1 MiB: not a tournament file"),
        (["run", "/dev/urandom"], "/dev/urandom is larger than 1 MiB"),
        (["run", str(tmp_path / "pipe")], "the file is empty"),
        (["run", str(tmp_path)], "is a folder, not a tournament file"),
        (["run", ""], "the tournament file name is empty"),
        (["replay", "/dev/zero"], "/dev/zero is larger than 64 MiB: not a match log"),
        (["replay", "/dev/zero", "--verify"], "/dev/zero is larger than 64 MiB"),
        (["replay", str(deep)], "deep.jsonl:1: a line nested more than 32 levels deep: not a match log"),
        (["replay", str(long), "--json"], "long.jsonl:1: a line longer than 1 MiB: not a match log"),
        (["replay", ""], "the match log's name is empty"),
        (["standings", "--db", ""], "the database name is empty"),
        (["standings", "--db", "/dev/zero"], "is a character device, not an SQLite database file"),
        (["standings", "--db", str(tmp_path)], "is a folder, not an SQLite database file"),
        (["standings", "--db", str(deep)], "cannot read database"),
        (["report", "--html", str(tmp_path / "r.html"), "--db", "/dev/null"], "is a character device"),
    ]
    for (_, words), r in zip(cases, arbiter_cases([(args, tmp_path) for args, _ in cases]), strict=True):
        assert_one_error(r, 2, words)


def test_command_line_values(tmp_path):
    bots = ["--bot", BOT] * 4
    cases = [
        (["selfplay", "--out", "x.jsonl", "--seed", str(2**63)], "Invalid value for '--seed'"),
        (["selfplay", "--out", "x.jsonl", "--seed", HUGE], "Invalid value for '--seed'"),
        (["selfplay", "--out", "x.jsonl", "--seed", "-1"], "Invalid value for '--seed'"),
        (["match", *bots, "--time-per-decision", "inf"], "'per_decision' must be at most 3600 seconds"),
        (["match", *bots, "--reserve", "1e300"], "'reserve' must be at most 86400 seconds"),
        (["match", *bots, "--connect-timeout", "nan"], "'connect' must be a finite number of seconds"),
        (["match", *bots, "--max-strikes", "1000000000"], "Invalid value for '--max-strikes'"),
        (["match", *bots, "--seed", HUGE], "Invalid value for '--seed'"),
        (
            ["match", *bots[:6], "--bot", "python missing_bot.py"],
            "--bot 'python missing_bot.py': no such file: missing_bot.py",
        ),
        (["match", *bots[:6], "--bot", "no-such-program --x"], "program 'no-such-program' is not on PATH"),
        (["match", *bots, "--listen", "127.0.0.1:99999"], "expected HOST:PORT with a port from 0 to 65535"),
        (["match", *bots, "--listen", "no-such-host.invalid:5000"], "cannot resolve host no-such-host.invalid"),
        (["match", *bots, "--listen", "192.0.2.1:5000"], "cannot listen there"),
        (["match", *bots, "--listen", "unix:/no/such/folder/a.sock"], "no such folder /no/such/folder"),
        (["match", *bots, "--listen", f"unix:{tmp_path}/taken"], "exists (a file); give a new path"),
        (["match", *bots, "--listen", "unix:/" + "x" * 200], "a Unix socket path has at most 107 bytes"),
        (["match", *bots, "--listen", ""], "--listen: the address is empty"),
        (
            ["check-bot", "--time-per-decision", "1e300", "--", "python", str(RANDOM_BOT)],
            "must be at most 3600 seconds",
        ),
        (["check-bot", "--connect-timeout", "inf", "--", "python", str(RANDOM_BOT)], "must be at most 3600 seconds"),
        (["check-bot", "--listen", "127.0.0.1:65536", "--", "python", str(RANDOM_BOT)], "a port from 0 to 65535"),
        (["check-bot", "--seed", str(2**63), "--", "python", str(RANDOM_BOT)], "Invalid value for '--seed'"),
        (["run", "b.yaml", "--jobs", "1000000"], "Invalid value for '--jobs'"),
    ]
    (tmp_path / "taken").write_text("a user's file, not a socket")
    tournament(tmp_path, "")
    for (_, words), r in zip(cases, arbiter_cases([(args, tmp_path) for args, _ in cases]), strict=True):
        assert_one_error(r, 2, words)
    assert (tmp_path / "taken").read_text() == "a user's file, not a socket"
    assert not (tmp_path / "logs").exists()  # no match was started by any of them


REQUIRED = {
    "selfplay": "Missing option '--out'",
    "match": "Missing option '--bot'",
    "replay": "Missing argument 'LOG'",
    "report": "Missing option '--html'",
    "run": "Missing argument 'CONFIG'",
    "check-bot": "Missing argument 'CMD'",
}


def test_every_command_without_its_required_option(tmp_path):
    cases = [([command], words) for command, words in REQUIRED.items()]
    cases += [(["selfplay", "--out", "x.jsonl", "--bogus"], "No such option: --bogus")]
    cases += [(["no-such-command"], "No such command")]
    for (_, words), r in zip(cases, arbiter_cases([(args, tmp_path) for args, _ in cases]), strict=True):
        assert_one_error(r, 2, words)


def test_arguments_that_are_not_utf8(tmp_path):
    name = b"caf\xe9.yaml"
    (tmp_path / os.fsdecode(name)).write_text("entrants: []\n")
    cases = [["run", name], ["replay", b"\xff\xfe.jsonl"], ["selfplay", "--out", b"\xff.jsonl"]]
    for r in arbiter_cases([(args, tmp_path) for args in cases]):
        line = assert_one_error(r, 2, "is not valid UTF-8")
        assert "\\x" in line and r.raw_stderr.decode("utf-8")  # shown escaped, as UTF-8
    assert not any(n.endswith(".jsonl") for n in os.listdir(tmp_path))


def test_a_pipe_that_closes_early_is_quiet(tmp_path):
    import subprocess
    import sys

    from .conftest import env_for

    assert arbiter("selfplay", "--out", "m.jsonl", cwd=tmp_path).returncode == 0
    for args in (["replay", "m.jsonl"], ["replay", "m.jsonl", "--json"]):
        p = subprocess.Popen(
            [sys.executable, "-m", "arbiter", *args], cwd=tmp_path, env=env_for(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        p.stdout.read(10)  # `| head -c 10`
        p.stdout.close()
        p.wait(timeout=60)  # (it writes nothing else to stderr: no pipe to fill meanwhile)
        err = p.stderr.read().decode()
        assert err == "" and p.returncode in (0, 1), (p.returncode, err)
    r = arbiter("replay", "m.jsonl", "--json", cwd=tmp_path)
    assert json.loads(r.stdout)["valid"] is True
