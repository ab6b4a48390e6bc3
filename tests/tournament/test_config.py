"""Tournament files: every class of mistake is one clear message naming file, line and key."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from barbu.rules import make_ruleset

from arbiter.errors import ConfigError
from arbiter.tournament.config import LobbySettings, load_config, parse_config
from tests.lobby.certs import make_certs

from .conftest import LEAGUE, PY, ROOT, SMOKE

BOT = "random_bot.py"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / BOT).write_text("print('a bot')\n")
    return tmp_path


def write(folder: Path, text: str, name: str = "league.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


GOOD = """
name: t
entrants:
  - name: a
    command: python random_bot.py
  - name: b
    command: python random_bot.py
"""


def error(folder: Path, text: str) -> str:
    with pytest.raises(ConfigError) as e:
        load_config(write(folder, text))
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_the_shipped_tournament_files_load():
    for path in (SMOKE, LEAGUE):
        config = load_config(path)
        assert len(config.entrants) >= 2
        for e in config.entrants:
            assert e.cwd == str(path.parent.resolve())


def test_a_good_file_and_its_defaults(folder):
    config = load_config(write(folder, GOOD))
    assert config.name == "t" and config.format == "round_robin" and config.rounds == 1 and config.seed == 0
    assert config.copies is True and config.parallelism is None and config.database is None
    assert config.rules == make_ruleset("standard")
    assert config.log_folder == Path("logs") / "t"  # relative to the current directory
    a = config.entrant("a")
    assert a.command == "python random_bot.py"
    assert a.launch.split()[0] == PY  # `python` is the arbiter's own interpreter
    assert a.cwd == str(folder.resolve())


def test_every_key(folder):
    (folder / "deals.jsonl").write_text(
        "\n".join(line for line in (ROOT / "tests" / "tournament" / "deals.jsonl").read_text().splitlines())
    )
    config = load_config(
        write(
            folder,
            """
            name: full
            description: everything
            entrants:
              - {name: a, command: python random_bot.py}
              - {name: b, command: "env BARBU_SEED=3 python random_bot.py"}
              - {name: c, command: python random_bot.py}
            rules:
              preset: seed_fi
              domino_ace: low
              contracts: [no_tricks, barbu]
            format: gauntlet
            challenger: b
            copies: true
            rounds: 3
            seed: 99
            deals: deals.jsonl
            time_control: {per_decision: 0.25, reserve: 2, connect: 5, match_limit: 60}
            faults: {max_strikes: 2}
            parallelism: 3
            database: results/x.db
            log_folder: out/logs
            standings_every: 4
            """,
        )
    )
    assert config.format == "gauntlet" and config.challenger == "b" and config.rounds == 3 and config.seed == 99
    assert config.rules == make_ruleset("seed_fi", {"domino_ace": "low", "contracts": ["no_tricks", "barbu"]})
    assert config.time_control.per_decision == 0.25 and config.time_control.match_limit == 60
    assert config.fault_policy.max_strikes == 2 and config.parallelism == 3 and config.standings_every == 4
    assert config.database == str(folder.resolve() / "results" / "x.db")
    assert config.log_folder == folder.resolve() / "out" / "logs"
    assert config.deals and len(config.deals) >= 8
    assert config.entrant("b").launch.startswith("env BARBU_SEED=3 " + PY)


@pytest.mark.parametrize(
    "text, expected",
    [
        # unknown keys, with a suggestion
        (GOOD + "round: 2\n", "league.yaml:7: round: unknown key; did you mean 'rounds'?"),
        (GOOD.replace("    command: python random_bot.py\n  - name: b", "    comand: x\n  - name: b"),
         "league.yaml:4: entrants[0].comand: unknown key; did you mean 'command'?"),
        (GOOD + "time_control: {per_decison: 1}\n", "league.yaml:7: time_control.per_decison: unknown key"),
        (GOOD + "rules: {preset: standard, domino_aces: low}\n", "league.yaml:7: rules.domino_aces: unknown key"),
        (GOOD + "rounds: 1\nrounds: 2\n", "league.yaml:8: rounds: this key is given twice"),
        # wrong types
        (GOOD + "rounds: two\n", "league.yaml:7: rounds: expected a whole number, got text 'two'"),
        (GOOD + "rounds: 0\n", "league.yaml:7: rounds: must be at least 1, got 0"),
        (GOOD + "seed: 1.5\n", "league.yaml:7: seed: expected a whole number"),
        (GOOD + "copies: maybe\n", "league.yaml:7: copies: expected true or false"),
        (GOOD + "time_control: {per_decision: fast}\n", "league.yaml:7: time_control.per_decision: expected a number"),
        (GOOD + "time_control: {reserve: -1}\n", "league.yaml:7: time_control.reserve: must be 0 seconds or more, got -1"),
        (GOOD + "time_control: {connect: 0}\n", "league.yaml:7: time_control.connect: must be more than 0 seconds, got 0"),
        (GOOD + "faults: {max_strikes: 0}\n", "league.yaml:7: faults.max_strikes: must be at least 1"),
        (GOOD + "parallelism: many\n", "league.yaml:7: parallelism: expected a whole number"),
        (GOOD + "entrants: {a: b}\n", "entrants: this key is given twice"),
        ("name: t\nentrants: a b c\n", "league.yaml:2: entrants: expected a list of entrants"),
        ("- a\n- b\n", "league.yaml:1: expected a mapping of keys"),
        (GOOD.replace("name: b", "name: 7"), "league.yaml:5: entrants[1].name: expected text, got a whole number '7'"),
        (GOOD.replace("name: b", "name: a"), "league.yaml:5: entrants[1].name: 'a' is already the name of entrants[0]"),
        (GOOD.replace("name: b", "name: 'b c'"), "league.yaml:5: entrants[1].name: 'b c': use letters"),
        # rules
        (GOOD + "rules: {preset: nordic}\n", "league.yaml:7: rules.preset: unknown rules preset 'nordic'"),
        (GOOD + "rules: {domino_ace: sideways}\n", "league.yaml:7: rules.domino_ace: rules switch 'domino_ace': 'sideways'"),
        (GOOD + "rules:\n  domino_payouts: [1, 2, 3, 4]\n", "league.yaml:8: rules.domino_payouts: rules switch 'domino_payouts'"),
        # formats and entrant counts
        (GOOD + "format: swiss\n", "league.yaml:7: format: 'swiss' is not a format"),
        (GOOD + "copies: false\n", "league.yaml:2: entrants: the round_robin format needs at least 4 entrants when 'copies' is false"),
        (GOOD + "format: duplicate\ncopies: false\n", "league.yaml:2: entrants: the duplicate format needs at least 4 entrants"),
        (GOOD + "format: gauntlet\n", "league.yaml:7: challenger: the gauntlet format needs a 'challenger'"),
        (GOOD + "format: gauntlet\nchallenger: zed\n", "league.yaml:8: challenger: 'zed' is not an entrant"),
        (GOOD + "format: gauntlet\nchallenger: a\ncopies: false\n", "league.yaml:2: entrants: a gauntlet needs the challenger and at least 3 others"),
        (GOOD + "challenger: a\n", "league.yaml:7: challenger: only the gauntlet format has a challenger"),
        ("name: t\nentrants:\n  - {name: a, command: python random_bot.py}\n", "league.yaml:2: entrants: a tournament needs at least 2 entrants, got 1"),
        ("name: t\n", "league.yaml:1: the key 'entrants' is missing"),
        ("", "league.yaml:1: the file is empty"),
        # bots
        (GOOD.replace("python random_bot.py\n  - name: b", "python missing_bot.py\n  - name: b"),
         "league.yaml:4: entrants[0].command: no such file: missing_bot.py"),
        (GOOD.replace("command: python random_bot.py\n  - name: b", "command: ./bots/run.sh\n  - name: b"),
         "league.yaml:4: entrants[0].command: no such file: ./bots/run.sh"),
        (GOOD.replace("command: python random_bot.py\n  - name: b", "command: nosuchprogram --fast\n  - name: b"),
         "league.yaml:4: entrants[0].command: program 'nosuchprogram' is not on PATH"),
        (GOOD.replace("command: python random_bot.py\n  - name: b", "command: 'python \"unterminated'\n  - name: b"),
         "league.yaml:4: entrants[0].command: cannot split"),
        (GOOD.replace("    command: python random_bot.py\n  - name: b", "  - name: b"), "league.yaml:3: entrants[0]: the key 'command' is missing"),
        (GOOD.replace("command: python random_bot.py\n  - name: b", "command: python random_bot.py\n    remote: true\n  - name: b"),
         "league.yaml:4: entrants[0].command: a remote entrant has no command"),
        # files
        (GOOD + "deals: nowhere.jsonl\n", "league.yaml:7: deals: no such deal file"),
        # YAML itself
        (GOOD + "rounds: [1\n", "league.yaml:7: not valid YAML"),
        (GOOD + "  bad indent: 1\n", "league.yaml:7: not valid YAML"),
    ],
)  # fmt: skip
def test_mistakes(folder, text, expected):
    message = error(folder, text)
    assert message.startswith(str(folder / "league.yaml")), message
    assert expected in message, message


REMOTE = GOOD.replace("  - name: b\n    command: python random_bot.py\n", "  - name: b\n    remote: true\n")
TLS = "lobby:\n  listen: 0.0.0.0:7400\n  tls: {cert: tls/server.pem, key: tls/server.key}\n"


def test_a_lobby_remote_entrants_and_remote_wait(folder):
    make_certs(folder / "tls")
    config = load_config(write(folder, REMOTE + TLS + "remote_wait: 2.5\n"))
    tls = folder.resolve() / "tls"
    assert config.lobby == LobbySettings("0.0.0.0:7400", tls / "server.pem", tls / "server.key")
    assert config.remote_wait == 2.5
    b = config.entrant("b")
    assert b.remote and b.command is None and b.launch is None
    plain = load_config(write(folder, GOOD))
    assert plain.lobby is None and plain.remote_wait == 60.0
    assert plain.fingerprint() == load_config(write(folder, GOOD + TLS + "remote_wait: 5\n")).fingerprint()
    for listen in ("127.0.0.1:0", "127.8.9.1:7400", "'[::1]:0'", "localhost:7400", "LocalHost:1"):
        lobby = load_config(write(folder, REMOTE + f"lobby: {{listen: {listen}}}\n")).lobby
        assert lobby == LobbySettings(listen.strip("'")), listen  # plaintext: loopback only


@pytest.mark.parametrize(
    "text, expected",
    [
        (REMOTE, "league.yaml:6: entrants[1].remote: 'b' is a remote entrant: it connects through the lobby, so add "
                 "a top-level lobby: {listen: HOST:PORT, tls: {cert: FILE, key: FILE}}"),
        (REMOTE + "lobby: {listen: 0.0.0.0:7400}\n",
         "league.yaml:7: lobby.tls: a lobby listening on 0.0.0.0 needs TLS: add tls: {cert: FILE, key: FILE} (only a "
         "loopback address, 127.0.0.1, ::1 or localhost, may go without)"),
        (REMOTE + "lobby:\n  listen: arena.example.org:7400\n  tls: null\n",
         "league.yaml:8: lobby.tls: a lobby listening on arena.example.org needs TLS"),
        (REMOTE + "lobby: {listen: '[::]:7400'}\n", "league.yaml:7: lobby.tls: a lobby listening on :: needs TLS"),
        (REMOTE + "lobby: {}\n", "league.yaml:7: lobby: the key 'listen' is missing: where the lobby listens"),
        (REMOTE + "lobby: 127.0.0.1:7400\n", "league.yaml:7: lobby: expected a mapping of keys (listen, tls)"),
        (REMOTE + "lobby: {listen: 7400}\n", "league.yaml:7: lobby.listen: expected text, got a whole number"),
        (REMOTE + "lobby: {listen: arena}\n", "league.yaml:7: lobby.listen: expected HOST:PORT where the lobby listens"),
        (REMOTE + "lobby: {listen: 'h:65536'}\n", "league.yaml:7: lobby.listen: expected HOST:PORT"),
        (REMOTE + "lobby: {listen: 127.0.0.1:0, tsl: {}}\n", "league.yaml:7: lobby.tsl: unknown key; did you mean 'tls'?"),
        (REMOTE + "lobby:\n  listen: 127.0.0.1:0\n  tls: {cert: a.pem}\n",
         "league.yaml:9: lobby.tls: the key 'key' is missing: the certificate's private key"),
        (REMOTE + "lobby:\n  listen: 127.0.0.1:0\n  tls: {cert: '', key: k.pem}\n",
         "league.yaml:9: lobby.tls.cert: the file name is empty"),
        (GOOD + "remote_wait: 0\n", "league.yaml:7: remote_wait: must be more than 0 seconds, got 0"),
        (GOOD + "remote_wait: -5\n", "league.yaml:7: remote_wait: must be more than 0 seconds, got -5"),
        (GOOD + "remote_wait: 3601\n", "league.yaml:7: remote_wait: must be at most 3600 seconds (an hour), got 3601"),
        (GOOD + "remote_wait: .inf\n", "league.yaml:7: remote_wait: must be at most 3600 seconds (an hour), got inf"),
        (GOOD + "remote_wait: soon\n", "league.yaml:7: remote_wait: expected a number of seconds, got text 'soon'"),
        (GOOD + "remote_wiat: 5\n", "league.yaml:7: remote_wiat: unknown key; did you mean 'remote_wait'?"),
    ],
)  # fmt: skip
def test_lobby_mistakes(folder, text, expected):
    message = error(folder, text)
    assert message.startswith(str(folder / "league.yaml")), message
    assert expected in message, message


def test_lobby_tls_file_mistakes(folder):
    certs = make_certs(folder / "tls")
    assert load_config(write(folder, REMOTE + TLS)).lobby.cert == certs.server_cert.resolve()
    (folder / "tls" / "plain.txt").write_text("just text\n")
    (folder / "tls" / "sealed.key").write_text(
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"
    )
    tls = folder.resolve() / "tls"
    for cert, key, expected in [
        ("tls/nope.pem", "tls/server.key", f"league.yaml:10: lobby.tls.cert: no such certificate file: {tls}/nope.pem"),
        ("tls/server.pem", "tls/nope.key", f"league.yaml:11: lobby.tls.key: no such private key file: {tls}/nope.key"),
        ("tls", "tls/server.key", f"league.yaml:10: lobby.tls.cert: {tls} is a folder, not a certificate file"),
        ("tls/plain.txt", "tls/server.key", f"lobby.tls.cert: {tls}/plain.txt is not a PEM file (no -----BEGIN line)"),
        ("tls/server.key", "tls/server.pem",
         f"lobby.tls.cert: {tls}/server.key holds no certificate (no -----BEGIN CERTIFICATE----- block); are cert "
         "and key swapped?"),
        ("tls/server.pem", "tls/ca.pem", f"lobby.tls.key: {tls}/ca.pem holds no private key"),
        ("tls/server.pem", "tls/sealed.key",
         f"lobby.tls.key: {tls}/sealed.key is an encrypted private key: the lobby needs it without a passphrase"),
    ]:  # fmt: skip
        message = error(folder, REMOTE + f"lobby:\n  listen: 0.0.0.0:7400\n  tls:\n    cert: {cert}\n    key: {key}\n")
        assert message.startswith(str(folder / "league.yaml")) and expected in message, message


def test_bad_deal_files(folder):
    base = GOOD + "rules: {contracts: [barbu]}\ndeals: d.jsonl\n"  # 4 deals a match
    (folder / "d.jsonl").write_text('{"type":"deal","deal":0,"declarer":0,"hands":[["AS"]]}\n')
    assert "league.yaml:8: deals: d.jsonl:1: 'hands' must be a list of 4 lists of cards" in error(folder, base)
    (folder / "d.jsonl").write_text("not json\n")
    assert "deals: d.jsonl:1: not a JSON line" in error(folder, base)
    good = (ROOT / "tests" / "tournament" / "deals.jsonl").read_text().splitlines()
    (folder / "d.jsonl").write_text("\n".join(good[:3]) + "\n")
    assert "deals: d.jsonl holds 3 deal lines; a match under these rules needs 4" in error(folder, base)
    (folder / "d.jsonl").write_text("\n".join(good[:4]) + "\n")
    assert len(load_config(write(folder, base)).deals) == 4


def test_a_match_log_is_a_deal_file(folder, tmp_path):
    from typer.testing import CliRunner

    from arbiter.cli import app

    log = tmp_path / "m.jsonl"
    assert CliRunner().invoke(app, ["selfplay", "--out", str(log), "--seed", "3"]).exit_code == 0
    config = load_config(write(folder, GOOD + f"deals: {log}\n"))
    first = json.loads(log.read_text().splitlines()[1])
    assert first["type"] == "deal" and len(config.deals) == 28


def test_missing_unreadable_and_folder(tmp_path):
    with pytest.raises(ConfigError, match="no such tournament file: .*nope.yaml"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(tmp_path)
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not a UTF-8 text file"):
        load_config(tmp_path / "bin.yaml")


def test_relative_paths_resolve_against_the_file_folder(folder, tmp_path, monkeypatch):
    sub = folder / "sub"
    sub.mkdir()
    (sub / "bot.py").write_text("")
    path = write(sub, GOOD.replace("random_bot.py", "bot.py") + "database: r.db\nlog_folder: logs\n")
    monkeypatch.chdir(tmp_path)
    config = load_config(Path(os.path.relpath(path, tmp_path)))
    assert config.database == str(sub.resolve() / "r.db")
    assert config.log_folder == sub.resolve() / "logs"
    assert config.entrant("a").cwd == str(sub.resolve())
    assert load_config(
        write(sub, GOOD.replace("random_bot.py", "bot.py") + "database: sqlite:///x/r.db\n")
    ).database == ("sqlite:///" + str(sub.resolve() / "x" / "r.db"))
    pg = "postgresql+psycopg://u:p@db.example/arena"
    assert load_config(write(sub, GOOD.replace("random_bot.py", "bot.py") + f"database: {pg}\n")).database == pg


def test_fingerprint_ignores_how_not_what(folder):
    a = load_config(write(folder, GOOD + "parallelism: 1\n"))
    b = load_config(write(folder, GOOD + "parallelism: 2\nrounds: 5\ndatabase: other.db\n"))
    c = load_config(write(folder, GOOD + "seed: 4\n"))
    d = load_config(write(folder, GOOD + "time_control: {per_decision: 2}\n"))
    assert a.fingerprint() == b.fingerprint()
    assert len({a.fingerprint(), c.fingerprint(), d.fingerprint()}) == 3


def test_limits_and_isolation(folder):
    from arbiter.process.limits import Limits

    config = load_config(write(folder, GOOD))
    assert config.limits == Limits() and config.isolation == "bubblewrap"  # the safe defaults (bwrap works here)
    assert parse_config(GOOD, base_dir=folder, check_commands=False).isolation is None  # not chosen yet
    config = load_config(
        write(
            folder,
            GOOD
            + """
            limits:
              memory: 512MiB
              cpu: 600
              processes: 64
              open_files: unlimited
              file_size: 1.5GB
              output: 65536
              user: nobody
            isolation: none
            """.replace("\n            ", "\n"),
        )
    )
    assert config.limits == Limits(
        memory=512 << 20, cpu=600, processes=64, open_files=None, file_size=1_500_000_000, output=65536, user="nobody"
    )
    assert (
        load_config(write(folder, GOOD + "limits: {user: 2100000000-2100009999}\n")).limits.user
        == "2100000000-2100009999"
    )
    assert load_config(write(folder, GOOD + "limits: {user: 65534}\n")).limits.user == "65534"


def test_limits_reach_every_match(folder):
    from arbiter.tournament.formats import build_schedule
    from arbiter.tournament.tasks import make_task

    config = load_config(write(folder, GOOD + "limits: {memory: 1GiB, user: nobody}\nisolation: none\n"))
    m = build_schedule(config.format, config.entrant_names, 1, 0, None)[0]
    task = make_task(config, m, folder)
    assert task.limits == config.limits and task.limits.memory == 1 << 30 and task.isolation == "none"


@pytest.mark.parametrize(
    "text, expected",
    [
        (GOOD + "limits: {memry: 1GiB}\n", "league.yaml:7: limits.memry: unknown key; did you mean 'memory'?"),
        (GOOD + "limits: 3\n", "league.yaml:7: limits: expected a mapping of keys (memory, cpu,"),
        (GOOD + "limits: {memory: lots}\n", "league.yaml:7: limits.memory: expected a size in bytes, e.g. 2GiB, 512MiB or 1048576 or 'unlimited', got text 'lots'"),
        (GOOD + "limits: {memory: 2048}\n", "league.yaml:7: limits.memory: must be at least 16 MiB, got 2048; sizes are in bytes unless a unit is given"),
        (GOOD + "limits: {memory: 2 GB per bot}\n", "league.yaml:7: limits.memory: expected a size in bytes"),
        (GOOD + "limits: {file_size: 10}\n", "league.yaml:7: limits.file_size: must be at least 1 KiB, got 10"),
        (GOOD + "limits: {cpu: 1.5}\n", "league.yaml:7: limits.cpu: expected a whole number of CPU seconds or 'unlimited', got a number '1.5'"),
        (GOOD + "limits: {cpu: 0}\n", "league.yaml:7: limits.cpu: must be at least 1, got 0"),
        (GOOD + "limits: {processes: 2}\n", "league.yaml:7: limits.processes: must be at least 4, got 2"),
        (GOOD + "limits: {open_files: many}\n", "league.yaml:7: limits.open_files: expected a whole number or 'unlimited'"),
        (GOOD + "limits: {output: unlimited}\n", "league.yaml:7: limits.output: expected a size in bytes, e.g. 2GiB, 512MiB or 1048576, got text 'unlimited'"),
        (GOOD + "limits: {user: nosuchuser}\n", "league.yaml:7: limits.user: no such user: 'nosuchuser'"),
        (GOOD + "limits: {user: [a, b]}\n", "league.yaml:7: limits.user: expected a user name or a numeric user id, got a list"),
        (GOOD + "limits: {user: 900-100}\n", "league.yaml:7: limits.user: user id range '900-100': give FIRST-LAST"),
        (GOOD + "limits: {user: 0-100}\n", "league.yaml:7: limits.user: user id range '0-100': give FIRST-LAST"),
        (GOOD + "limits:\n  memory: 1GiB\n  memory: 2GiB\n", "league.yaml:9: limits.memory: this key is given twice"),
        (GOOD + "isolation: docker\n", "league.yaml:7: isolation: 'docker' is not an isolation; use one of none, bubblewrap"),
        (GOOD + "isolation: [bubblewrap]\n", "league.yaml:7: isolation: expected text, got a list"),
    ],
)  # fmt: skip
def test_limit_mistakes(folder, text, expected):
    message = error(folder, text)
    assert message.startswith(str(folder / "league.yaml")), message
    assert expected in message, message


def test_the_rating_that_orders_the_standings(folder):
    assert load_config(write(folder, GOOD)).rating == "trueskill"  # the default
    assert load_config(write(folder, GOOD + "rating: margins\n")).rating == "margins"
    assert (
        load_config(write(folder, GOOD)).fingerprint()
        == load_config(write(folder, GOOD + "rating: margins\n")).fingerprint()
    )
    message = error(folder, GOOD + "rating: elo\n")
    assert (
        "league.yaml:7: rating: 'elo' is not a rating; use one of trueskill, margins (trueskill: TrueSkill's μ"
        in message
    )
    assert "league.yaml:7: rating: expected text, got a list" in error(folder, GOOD + "rating: [margins]\n")
    assert "did you mean 'rating'?" in error(folder, GOOD + "ratings: margins\n")


def test_a_uid_range_that_holds_a_real_user_is_refused(folder):
    message = error(folder, GOOD + "limits: {user: 65000-65534}\n")  # nobody is 65534 on Debian
    assert "league.yaml:7: limits.user: user id range '65000-65534' includes the user nobody (uid 65534)" in message


def test_isolation_that_cannot_run_here_is_refused_on_load(folder, monkeypatch):
    import arbiter.process.sandbox as sandbox

    monkeypatch.setattr(sandbox, "bwrap_program", lambda: None)
    monkeypatch.setattr(sandbox, "_bwrap_checks", {})
    message = error(folder, GOOD + "isolation: bubblewrap\n")
    assert "league.yaml:7: isolation: bubblewrap cannot run here (bwrap cannot build a sandbox as user" in message
    assert "the bwrap program is not installed" in message and "bots would not be isolated" in message
    assert load_config(write(folder, GOOD + "isolation: bubblewrap\n"), check_commands=False).isolation == "bubblewrap"


def test_without_bubblewrap_the_default_is_none_said_in_one_line(folder, monkeypatch, caplog):
    import logging

    import arbiter.process.sandbox as sandbox

    monkeypatch.setattr(sandbox, "bwrap_program", lambda: None)
    monkeypatch.setattr(sandbox, "_bwrap_checks", {})
    monkeypatch.setattr(sandbox, "_warned_weaker", False)
    with caplog.at_level(logging.WARNING, logger="arbiter.process.sandbox"):
        assert load_config(write(folder, GOOD)).isolation == "none"
        assert load_config(write(folder, GOOD)).isolation == "none"
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "\n" not in warnings[0], warnings
    assert "bots run without isolation (isolation: none)" in warnings[0]
    assert "the bwrap program is not installed" in warnings[0] and "install bubblewrap" in warnings[0]
    assert caplog.records[0].levelname == "WARNING"


def test_the_file_chooses_no_isolation_explicitly(folder):
    assert load_config(write(folder, GOOD + "isolation: none\n")).isolation == "none"
    assert load_config(write(folder, GOOD + "isolation: bubblewrap\n")).isolation == "bubblewrap"


def test_a_path_up_from_the_files_folder_is_written_without_its_detour(tmp_path):
    """``log_folder: ../logs`` in tournaments/x.yaml is ``logs``, not ``tournaments/../logs``;
    through a symbolic link, where the two differ, it keeps the detour."""
    from arbiter.tournament.config import file_path

    (tmp_path / "tournaments").mkdir()
    assert file_path("../logs/x.db", tmp_path / "tournaments") == tmp_path / "logs" / "x.db"
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere" / "deep")
    assert file_path("../logs", tmp_path / "link") == tmp_path / "link" / ".." / "logs"
