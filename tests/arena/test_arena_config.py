"""Arena files: checked as tournament files are (one line naming file, line and key), sharing
their keys unchanged, with the arena's own keys, defaults and bounds."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from barbu.rules import make_ruleset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.arena.config import (
    MATCHMAKING,
    QUOTAS,
    UPLOADS,
    ArenaConfig,
    ArenaFile,
    CheckFile,
    Quotas,
    UploadLimits,
    load_arena,
    parse_arena,
)
from arbiter.arena.matchmaking import Matchmaking
from arbiter.errors import ConfigError
from arbiter.tournament.config import LobbySettings, load_config
from arbiter.tournament.formats import build_schedule, format_of, plays_duplicate_sets

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tournaments" / "arena.yaml"
LEAGUE = ROOT / "tournaments" / "league.yaml"
BOT = "random_bot.py"

GOOD = """
name: ladder
entrants:
  - name: a
    command: python random_bot.py
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / BOT).write_text("print('a bot')\n")
    return tmp_path


def write(folder: Path, text: str, name: str = "arena.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def error(folder: Path, text: str) -> str:
    with pytest.raises(ConfigError) as e:
        load_arena(write(folder, text))
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_the_example_arena_loads():
    config = load_arena(EXAMPLE)
    t = config.tournament
    assert config.name == t.name == "arena" and t.format == "arena" and config.path == t.path == EXAMPLE
    assert t.entrant_names == ["heuristic", "random"]
    assert all(e.cwd == str(EXAMPLE.parent.resolve()) for e in t.entrants)
    assert config.web == "127.0.0.1:8080"
    assert config.store == EXAMPLE.parent.resolve().parent / "logs/arena/bundles"  # the path as people read it
    assert config.uploads == UploadLimits(10 << 20, 100 << 20, 2000)
    assert t.isolation is not None  # chosen for this machine
    assert config.source == EXAMPLE.read_text() == t.source


def test_an_empty_file_is_an_arena_of_defaults(folder):
    config = load_arena(write(folder, "# nothing but a comment\n"))
    braces = load_arena(write(folder, "{}\n"))
    assert replace(braces, source=config.source, tournament=replace(braces.tournament, source=config.source)) == config
    t = config.tournament
    assert t.name == "arena" and t.entrants == () and t.format == "arena" and t.rounds == 1
    assert t.rules == make_ruleset("standard") and t.lobby is None and t.database is None
    assert t.log_folder == Path("logs") / "arena"  # relative to the current directory, as a tournament's
    assert config.matchmaking == Matchmaking()
    assert config.web == "127.0.0.1:8080"
    assert config.store == folder.resolve() / "bundles"  # beside the file
    assert config.uploads == UploadLimits() == UploadLimits(archive=10 << 20, unpacked=100 << 20, files=2000)
    assert config.quotas == Quotas() == Quotas(1 << 30, 10 << 30, 10, 1, 3600.0)  # on by default
    assert config.free_space == 1 << 30
    assert config.check_time_limit == 2.0 and config.drain_seconds == 60.0 and config.seed == t.seed == 0


def test_every_arena_key(folder):
    config = load_arena(
        write(
            folder,
            GOOD
            + textwrap.dedent(
                """
            seed: 42
            matchmaking: {provisional: 4, min_share: 0.5, window: 2.5, tail: 0.5}
            web: "[::1]:0"
            store: ../store
            uploads: {archive: 1 MiB, unpacked: 1.5GiB, files: 50}
            check: {time_limit: 0.5}
            drain_seconds: 0
            quotas: {author_store: 200 MiB, store: 2GiB, uploads_per_hour: 4, queued: 2, keep_seconds: 60}
            free_space: 500 MB
            rating: margins
            """
            ),
        )
    )
    assert config.seed == config.tournament.seed == 42
    assert config.matchmaking == Matchmaking(provisional=4, min_share=0.5, window=2.5, tail=0.5)
    assert (config.tournament.rating, config.tournament.provisional) == ("margins", 4)  # the leaderboard's
    assert config.web == "[::1]:0"
    assert config.store == folder.resolve().parent / "store"
    assert config.uploads == UploadLimits(archive=1 << 20, unpacked=3 << 29, files=50)
    assert config.check_time_limit == 0.5 and config.drain_seconds == 0.0
    assert config.quotas == Quotas(author_store=200 << 20, store=2 << 30, uploads_per_hour=4, queued=2, keep_seconds=60)
    assert config.free_space == 500_000_000


def test_a_tournament_files_entrants_and_rules_paste_in_unchanged():
    league = LEAGUE.read_text()
    pasted = league[league.index("entrants:") : league.index("format:")]  # entrants, comments, rules
    arena = parse_arena("name: pasted\n" + pasted, display="pasted.yaml", base_dir=LEAGUE.parent)
    tournament = load_config(LEAGUE)
    assert arena.tournament.entrants == tournament.entrants
    assert arena.tournament.rules == tournament.rules


def test_the_shared_keys_mean_what_they_mean_in_a_tournament(folder):
    shared = """
        time_control: {per_decision: 0.25, reserve: 2, connect: 5, match_limit: 60}
        faults: {max_strikes: 2}
        parallelism: 3
        database: results/x.db
        log_folder: out/logs
        limits: {memory: 512MiB, cpu: 60}
        isolation: none
        lobby: {listen: 127.0.0.1:0}
        remote_wait: 5
        cluster: tcp://10.0.0.5:8786
        """
    tournament_file = GOOD + "  - {name: b, remote: true}\n" + textwrap.dedent(shared)
    arena = load_arena(write(folder, tournament_file)).tournament
    tournament = load_config(write(folder, tournament_file, "t.yaml"))
    for key in ("entrants", "rules", "time_control", "fault_policy", "parallelism", "database", "log_folder",
                "limits", "isolation", "lobby", "remote_wait", "cluster"):  # fmt: skip
        assert getattr(arena, key) == getattr(tournament, key), key
    assert arena.lobby == LobbySettings("127.0.0.1:0")


def test_house_entrants_may_be_none_or_one(folder):
    assert load_arena(write(folder, "entrants: []\n")).tournament.entrants == ()
    assert load_arena(write(folder, GOOD)).tournament.entrant_names == ["a"]


def test_a_database_password_is_kept_out_of_the_source(folder):
    config = load_arena(write(folder, "database: postgresql://arena:s3cret@db.example/arena\n"))
    assert config.tournament.database == "postgresql://arena:s3cret@db.example/arena"  # to connect
    assert "s3cret" not in config.source and "s3cret" not in config.tournament.source


@pytest.mark.parametrize(
    "text, expected",
    [
        # a tournament's keys an arena has not: refused with the reason, at the key
        (GOOD + "rounds: 4\n", "arena.yaml:5: rounds: an arena has no rounds: it plays until stopped"),
        (GOOD + "format: duplicate\n", "arena.yaml:5: format: an arena has no format"),
        (GOOD + "challenger: a\n", "arena.yaml:5: challenger: an arena has no challenger"),
        (GOOD + "deals: deals.jsonl\n", "arena.yaml:5: deals: an arena has no deal file"),
        (GOOD + "copies: false\n", "arena.yaml:5: copies: an arena has no 'copies' key"),
        (GOOD + "standings_every: 4\n", "arena.yaml:5: standings_every: an arena has no 'standings_every' key"),
        # unknown keys, with a suggestion
        (GOOD + "wbe: 127.0.0.1:8080\n", "arena.yaml:5: wbe: unknown key; did you mean 'web'?"),
        (GOOD + "matchmaking: {provisonal: 3}\n", "arena.yaml:5: matchmaking.provisonal: unknown key; did you mean 'provisional'?"),
        (GOOD + "uploads:\n  archive: 1 MiB\n  file: 3\n", "arena.yaml:7: uploads.file: unknown key; did you mean 'files'?"),
        (GOOD + "check: {timelimit: 2}\n", "arena.yaml:5: check.timelimit: unknown key; did you mean 'time_limit'?"),
        (GOOD + "web: 127.0.0.1:1\nweb: 127.0.0.1:2\n", "arena.yaml:6: web: this key is given twice"),
        # the arena's keys: types and bounds
        (GOOD + "seed: -1\n", "arena.yaml:5: seed: must be at least 0, got -1"),
        (GOOD + "matchmaking: {provisional: -1}\n", "arena.yaml:5: matchmaking.provisional: must be at least 0, got -1"),
        (GOOD + "matchmaking: {provisional: 2.5}\n", "arena.yaml:5: matchmaking.provisional: expected a whole number"),
        (GOOD + "matchmaking: {min_share: 1.5}\n", "arena.yaml:5: matchmaking.min_share: must be at most 1, got 1.5"),
        (GOOD + "matchmaking: {min_share: -0.1}\n", "arena.yaml:5: matchmaking.min_share: must be at least 0, got -0.1"),
        (GOOD + "matchmaking: {min_share: half}\n", "arena.yaml:5: matchmaking.min_share: expected a number, got text 'half'"),
        (GOOD + "matchmaking: {window: 0}\n", "arena.yaml:5: matchmaking.window: must be more than 0, got 0"),
        (GOOD + "matchmaking: {window: .inf}\n", "arena.yaml:5: matchmaking.window: must be a finite number, got inf"),
        (GOOD + "matchmaking: {window: 1001}\n", "arena.yaml:5: matchmaking.window: must be at most 1000, got 1001"),
        (GOOD + "matchmaking: {tail: 0}\n", "arena.yaml:5: matchmaking.tail: must be more than 0, got 0"),
        (GOOD + "matchmaking: {tail: 11}\n", "arena.yaml:5: matchmaking.tail: must be at most 10, got 11"),
        (GOOD + "matchmaking: {tail: " + "9" * 50 + "}\n", "arena.yaml:5: matchmaking.tail: must be at most 10, got a number of 50 digits"),
        (GOOD + "matchmaking: fast\n", "arena.yaml:5: matchmaking: expected a mapping of keys (provisional, min_share, window, tail, rematch)"),
        (GOOD + "rating: glicko\n", "arena.yaml:5: rating: 'glicko' is not a rating; use one of trueskill, margins"),
        (GOOD + "web: localhost\n", "arena.yaml:5: web: expected HOST:PORT where the arena's API listens"),
        (GOOD + "web: 127.0.0.1:65536\n", "arena.yaml:5: web: expected HOST:PORT"),
        (GOOD + "web: 8080\n", "arena.yaml:5: web: expected text, got a whole number '8080'"),
        (GOOD + "web: 0.0.0.0:7400\nlobby: {listen: 127.0.0.1:7400}\n",
         "arena.yaml:5: web: the API and the lobby cannot both listen on 0.0.0.0:7400"),
        (GOOD + "store: ''\n", "arena.yaml:5: store: the folder name is empty"),
        (GOOD + "uploads: {archive: 2 GiB}\n", "arena.yaml:5: uploads.archive: must be at most 1 GiB, got 2 GiB"),
        (GOOD + "uploads: {archive: 100}\n", "arena.yaml:5: uploads.archive: must be at least 1 KiB, got 100"),
        (GOOD + "uploads: {unpacked: 65GiB}\n", "arena.yaml:5: uploads.unpacked: must be at most 64 GiB, got 65GiB"),
        (GOOD + "uploads: {unpacked: lots}\n", "arena.yaml:5: uploads.unpacked: expected a size in bytes, e.g. 2GiB"),
        (GOOD + "uploads: {files: 0}\n", "arena.yaml:5: uploads.files: must be at least 1, got 0"),
        (GOOD + "uploads: {files: 1000001}\n", "arena.yaml:5: uploads.files: must be at most 1000000, got 1000001"),
        (GOOD + "check: {time_limit: 0}\n", "arena.yaml:5: check.time_limit: must be more than 0, got 0"),
        (GOOD + "check: {time_limit: 3601}\n", "arena.yaml:5: check.time_limit: must be at most 3600, got 3601"),
        (GOOD + "drain_seconds: -1\n", "arena.yaml:5: drain_seconds: must be at least 0, got -1"),
        (GOOD + "drain_seconds: 86401\n", "arena.yaml:5: drain_seconds: must be at most 86400, got 86401"),
        (GOOD + "drain_seconds: true\n", "arena.yaml:5: drain_seconds: expected a number, got true/false 'true'"),
        (GOOD + "quotas: {author_store: 100}\n", "arena.yaml:5: quotas.author_store: must be at least 1 KiB, got 100"),
        (GOOD + "quotas: {store: 65 TiB}\n", "arena.yaml:5: quotas.store: must be at most 64 TiB, got 65 TiB"),
        (GOOD + "quotas: {store: plenty}\n", "arena.yaml:5: quotas.store: expected a size in bytes, e.g. 2GiB"),
        (GOOD + "quotas: {uploads_per_hour: 0}\n", "arena.yaml:5: quotas.uploads_per_hour: must be at least 1, got 0"),
        (GOOD + "quotas: {queued: 0}\n", "arena.yaml:5: quotas.queued: must be at least 1, got 0"),
        (GOOD + "quotas: {queued: 1.5}\n", "arena.yaml:5: quotas.queued: expected a whole number"),
        (GOOD + "quotas: {keep_seconds: -1}\n", "arena.yaml:5: quotas.keep_seconds: must be at least 0, got -1"),
        (GOOD + "quotas: {keep_seconds: 604801}\n", "arena.yaml:5: quotas.keep_seconds: must be at most 604800, got 604801"),
        (GOOD + "quotas: {queue: 2}\n", "arena.yaml:5: quotas.queue: unknown key; did you mean 'queued'?"),
        (GOOD + "quotas: 5\n", "arena.yaml:5: quotas: expected a mapping of keys (author_store, store, uploads_per_hour"),
        (GOOD + "free_space: -1\n", "arena.yaml:5: free_space: must be at least 0, got -1"),
        (GOOD + "free_space: lots\n", "arena.yaml:5: free_space: expected a size in bytes"),
        # the shared keys: the tournament file's checks
        (GOOD + "  - name: a\n    command: python random_bot.py\n", "arena.yaml:5: entrants[1].name: 'a' is already the name of entrants[0]"),
        (GOOD + "  - {name: 'a@2', command: python random_bot.py}\n", "arena.yaml:5: entrants[1].name: 'a@2': use letters"),
        (GOOD + "  - {name: r, remote: true}\n", "arena.yaml:5: entrants[1].remote: 'r' is a remote entrant"),
        (GOOD + "rules: {preset: nordic}\n", "arena.yaml:5: rules.preset: unknown rules preset 'nordic'"),
        (GOOD + "time_control: {connect: 0}\n", "arena.yaml:5: time_control.connect: must be more than 0 seconds, got 0"),
        (GOOD + "limits: {memory: 1MiB}\n", "arena.yaml:5: limits.memory: must be at least 16 MiB"),
        (GOOD + "lobby: {listen: 0.0.0.0:7400}\n", "arena.yaml:5: lobby.tls: a lobby listening on 0.0.0.0 needs TLS"),
        (GOOD + "entrants: []\n", "arena.yaml:5: entrants: this key is given twice"),
        ("entrants: {a: b}\n", "arena.yaml:1: entrants: expected a list of entrants"),
        ("- a\n", "arena.yaml:1: expected a mapping of keys"),
        # this machine
        (GOOD.replace("random_bot.py", "missing_bot.py"), "arena.yaml:4: entrants[0].command: no such file: missing_bot.py"),
        (GOOD + "store: random_bot.py\n", "arena.yaml:5: store "),
        # YAML itself
        (GOOD + "web: [1\n", "arena.yaml:5: not valid YAML"),
        ("a: &a [*a]\n", "a value that contains itself"),
    ],
)  # fmt: skip
def test_every_mistake_is_one_line_naming_file_line_and_key(folder, text, expected):
    message = error(folder, text)
    assert message.startswith(str(folder / "arena.yaml")), message
    assert expected in message, message


def test_the_store_is_checked_where_it_defaults_too(folder):
    (folder / "bundles").write_text("not a folder\n")
    message = error(folder, GOOD)
    assert message.startswith(str(folder / "arena.yaml")) and "store" in message and "not a folder" in message


def test_the_bounds_themselves_are_allowed(folder):
    config = load_arena(
        write(
            folder,
            """
            matchmaking: {provisional: 0, min_share: 0, window: 1000, tail: 10}
            web: 127.0.0.1:0
            uploads: {archive: 1 KiB, unpacked: 64 GiB, files: 1000000}
            check: {time_limit: 3600}
            drain_seconds: 86400
            quotas: {author_store: 64 TiB, store: 1 KiB, uploads_per_hour: 1000000, queued: 1000, keep_seconds: 0}
            free_space: 0
            """,
        )
    )
    assert config.quotas == Quotas(64 << 40, 1 << 10, 1_000_000, 1000, 0.0) and config.free_space == 0
    assert config.matchmaking == Matchmaking(provisional=0, min_share=0.0, window=1000.0, tail=10.0)
    assert (config.tournament.rating, config.tournament.provisional) == ("trueskill", 0)
    assert config.uploads == UploadLimits(1 << 10, 64 << 30, 1_000_000)
    assert config.check_time_limit == 3600.0 and config.drain_seconds == 86400.0
    assert load_arena(write(folder, "matchmaking: {min_share: 1}\n")).matchmaking.min_share == 1.0


def test_the_web_address_and_the_lobby_may_share_a_port_only_on_different_hosts(folder):
    config = load_arena(write(folder, "web: 127.0.0.1:7400\nlobby: {listen: 127.0.0.2:7400}\n"))
    assert config.web == "127.0.0.1:7400" and config.tournament.lobby == LobbySettings("127.0.0.2:7400")
    assert load_arena(write(folder, "web: 127.0.0.1:0\nlobby: {listen: 127.0.0.1:0}\n")).web == "127.0.0.1:0"


def test_parse_arena_without_the_machine_checks():
    config = parse_arena("entrants: [{name: x, command: python nowhere.py}]\n", display="a.yaml", check_commands=False)
    assert isinstance(config, ArenaConfig) and config.path is None and config.tournament.isolation is None
    with pytest.raises(ConfigError, match=r"^a\.yaml:1: entrants\[0\]\.command: no such file: nowhere\.py"):
        parse_arena("entrants: [{name: x, command: python nowhere.py}]\n", display="a.yaml")


def test_an_arena_has_no_schedule_in_advance_and_is_rated_as_duplicate_sets():
    assert build_schedule("arena", ["a", "b", "c", "d"], 1, 0) == []
    assert format_of("arena").count(4, 1) == 0
    assert plays_duplicate_sets("arena") and plays_duplicate_sets("duplicate")
    assert not plays_duplicate_sets("round_robin") and not plays_duplicate_sets("gauntlet")


def test_a_tournament_file_that_names_arena_as_its_format_is_refused(folder):
    (folder / "t.yaml").write_text(
        "entrants: [{name: a, command: python random_bot.py}, {name: b, command: python random_bot.py}]\nformat: arena\n"
    )
    with pytest.raises(ConfigError, match="t.yaml:2: format: 'arena' is not a format"):
        load_config(folder / "t.yaml")


KEYS = [*ArenaFile.model_fields, *ArenaFile.refused, *MATCHMAKING.model_fields, *UPLOADS.model_fields,
        *QUOTAS.model_fields, *CheckFile.model_fields, "listen", "command"]  # fmt: skip
VALUES = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=20),
        st.sampled_from(["127.0.0.1:0", "[::1]:8080", "10 MiB", "1.5GiB", "python random_bot.py", "none", "auto"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(doc=st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8))
def test_random_documents_with_the_arena_keys_are_a_config_error_or_a_config(tmp_path_factory, doc):
    try:
        config = parse_arena(
            yaml.safe_dump(doc, allow_unicode=True), display="fuzz.yaml", base_dir=tmp_path_factory.getbasetemp(),
            check_commands=False,
        )  # fmt: skip
    except ConfigError as e:
        assert str(e).startswith("fuzz.yaml") and "\n" not in str(e).strip()
        return
    assert isinstance(config, ArenaConfig)
