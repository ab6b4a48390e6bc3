"""Property-based fuzzing of the two readers of untrusted text: the tournament file loader
(random and mutated YAML: only ConfigError or a config, never another exception or a hang) and
the match log verifier (random and mutated lines: always a Verification, never an exception)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from barbu.matchlog import Verification, verify
from barbu.rules import make_ruleset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.errors import ConfigError
from arbiter.match.blocking import run_blocking
from arbiter.referee.loop import MatchSetup, Referee
from arbiter.referee.players import RandomPlayer
from arbiter.tournament.config import LIMIT_KEYS, TOP_KEYS, TournamentConfig, parse_config

ROOT = Path(__file__).resolve().parents[2]
FUZZ = settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)

# ---- the tournament file loader --------------------------------------------------------------
GOOD = """\
name: fuzz
entrants:
  - name: a
    command: python bot.py
  - {name: b, command: "env BARBU_SEED=1 python bot.py"}
rules:
  preset: standard
  contracts: [no_tricks, barbu]
format: duplicate
rounds: 2
seed: 7
time_control: {per_decision: 0.5, reserve: 2, connect: 5, match_limit: 60}
faults: {max_strikes: 2}
limits:
  memory: 1GiB
  cpu: 60
  processes: 64
  open_files: unlimited
  file_size: 8MiB
  output: 65536
isolation: none
"""
BASES = [GOOD, (ROOT / "tournaments" / "smoke.yaml").read_text(), (ROOT / "tournaments" / "league.yaml").read_text()]
# Pieces that make YAML (and our keys) interesting when spliced in anywhere.
PIECES = [
    ":", "-", " ", "\n", "\t", "[", "]", "{", "}", ",", "&a", "*a", "!!python/object", "!!binary", "'", '"', "#",
    "|", ">", "---", "...", "%YAML 1.1", "~", "null", "true", "1e309", "-1", "0x10", "2GiB", "unlimited",
    "bubblewrap", "\\u0000", "\x00", "\ufeff", "é", "<<: *a", "? ", "!!set", "&b [*b]", *TOP_KEYS, *LIMIT_KEYS,
]  # fmt: skip


def load(text: str, tmp_path: Path) -> None:
    try:
        config = parse_config(text, display="fuzz.yaml", base_dir=tmp_path, check_commands=False)
    except ConfigError as e:
        assert str(e).startswith("fuzz.yaml") and "\n" not in str(e).strip()
        return
    assert isinstance(config, TournamentConfig)


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(BASES))
    for _ in range(draw(st.integers(1, 6))):
        what = draw(st.sampled_from(["insert", "delete", "replace", "dup_line", "swap_lines", "cut"]))
        i = draw(st.integers(0, len(text)))
        if what == "insert":
            text = text[:i] + draw(st.one_of(st.sampled_from(PIECES), st.text(max_size=8))) + text[i:]
        elif what == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 20)) :]
        elif what == "replace":
            text = text[:i] + draw(st.sampled_from(PIECES)) + text[i + draw(st.integers(1, 10)) :]
        elif what == "cut":
            text = text[:i]
        else:
            lines = text.splitlines(keepends=True)
            if len(lines) > 1:
                a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                if what == "dup_line":
                    lines.insert(b, lines[a])
                else:
                    lines[a], lines[b] = lines[b], lines[a]
                text = "".join(lines)
    return text


YAML_VALUES = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=20),
        st.sampled_from(["python bot.py", "2GiB", "unlimited", "nobody", "bubblewrap", "standard", "barbu", "auto"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from([*TOP_KEYS, *LIMIT_KEYS, "name", "command", "preset"]), inner, max_size=4)),
    max_leaves=20,
)  # fmt: skip


@FUZZ
@given(text=st.text(max_size=300))
def test_random_text_is_a_config_error_or_a_config(tmp_path_factory, text):
    load(text, tmp_path_factory.getbasetemp())


@FUZZ
@given(text=mutated())
def test_mutated_tournament_files_are_a_config_error_or_a_config(tmp_path_factory, text):
    load(text, tmp_path_factory.getbasetemp())


@FUZZ
@given(doc=st.dictionaries(st.sampled_from(TOP_KEYS), YAML_VALUES, max_size=8))
def test_random_documents_with_our_keys_are_a_config_error_or_a_config(tmp_path_factory, doc):
    load(yaml.safe_dump(doc, allow_unicode=True), tmp_path_factory.getbasetemp())


def _laughs(levels: int, value_of: str) -> str:
    def build(i: int) -> str:
        if i == 0:
            return "&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"
        return f"&a{i} [{build(i - 1)}, " + ", ".join([f"*a{i - 1}"] * 8) + "]"

    return GOOD.replace("  contracts: [no_tricks, barbu]\n", f"  {value_of}: {build(levels)}\n")


@pytest.mark.parametrize(
    "text, expected",
    [
        (_laughs(9, "contracts"), "fuzz.yaml:8: this value expands to more than 100000 values (YAML aliases)"),
        (_laughs(9, "domino_ace"), "fuzz.yaml:8: this value expands to more than 100000 values (YAML aliases)"),
        (GOOD.replace("[no_tricks, barbu]", "&c [*c]"), "fuzz.yaml:8: a value that contains itself (a recursive YAML alias)"),
        (GOOD.replace("rules:\n", "rules: &r\n").replace("  preset: standard\n", "  preset: standard\n  contracts2: *r\n"),
         "fuzz.yaml:6: a value that contains itself"),
        (GOOD.replace("[no_tricks, barbu]", "[" * 1500 + "]" * 1500), "fuzz.yaml: nested too deeply"),
        (GOOD.replace("[no_tricks, barbu]", "[" * 70 + "]" * 70), "fuzz.yaml:8: nested more than 64 levels deep"),
        (GOOD.replace("name: fuzz", "name: " + "x" * 1_000_000), "fuzz.yaml:1: name: 'xxxx"),
    ],
)  # fmt: skip
def test_hostile_yaml_is_refused_quickly(tmp_path, text, expected):
    """A "billion laughs" alias bomb, a value containing itself, absurd nesting, a huge name."""
    import time

    started = time.process_time()  # this process's CPU: what a blow-up costs, whatever the load
    with pytest.raises(ConfigError) as e:
        parse_config(text, display="fuzz.yaml", base_dir=tmp_path, check_commands=False)
    assert time.process_time() - started < 5  # quick: no hang, no blow-up
    assert expected in str(e.value), str(e.value)[:300]
    if "YAML aliases" in expected:
        assert len(str(e.value)) < 2000  # the expanded value is never spelled out


# ---- the match log verifier ----------------------------------------------------------------
def _log_lines() -> list[str]:
    lines: list[str] = []
    setup = MatchSetup(make_ruleset("standard", {"contracts": ["barbu", "domino"]}), seed=3, match_id="fuzz")
    players = [RandomPlayer(seed=f"fuzz/{s}", name=f"r{s}") for s in range(4)]
    run_blocking(Referee(setup, players, lines.append, log_times=False).play())
    return [line + "\n" for line in lines]


LOG = _log_lines()
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), st.floats(allow_nan=False), st.text(max_size=6),
              st.sampled_from(["AS", "QH", "KH", "barbu", "domino", "no_tricks", "trumps", "pass", "play", "deal"])),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10,
)  # fmt: skip


def check_verifies(lines: list[str]) -> None:
    report = verify(iter(lines))
    assert isinstance(report, Verification)


def test_the_unmutated_log_verifies():
    report = verify(iter(LOG))
    assert report.valid and report.complete


@FUZZ
@given(lines=st.lists(st.text(max_size=80).map(lambda t: t + "\n"), max_size=20))
def test_random_lines_give_a_verification(lines):
    check_verifies(lines)


@FUZZ
@given(data=st.data())
def test_mutated_logs_give_a_verification(data):
    lines = list(LOG)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        what = data.draw(st.sampled_from(["set_key", "drop_key", "drop_line", "dup_line", "swap", "truncate", "bytes"]))
        if what in ("set_key", "drop_key"):
            try:
                obj = json.loads(lines[i])
            except ValueError:
                continue  # an earlier mutation broke this line already
            if not isinstance(obj, dict):
                continue
            key = data.draw(st.sampled_from(sorted(obj) + ["type", "deal", "seat", "card", "extra"]))
            if what == "set_key":
                obj[key] = data.draw(JSON_VALUES)
            else:
                obj.pop(key, None)
            lines[i] = json.dumps(obj) + "\n"
        elif what == "drop_line":
            del lines[i]
        elif what == "dup_line":
            lines.insert(data.draw(st.integers(0, len(lines))), lines[i])
        elif what == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif what == "truncate":
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
        else:
            raw = bytearray(lines[i].encode())
            k = data.draw(st.integers(0, len(raw)))
            raw[k:k] = data.draw(st.binary(min_size=1, max_size=4))
            lines[i] = raw.decode("utf-8", "replace")
        if not lines:
            break
    check_verifies(lines)


def test_lines_from_a_random_walk_over_many_seeds_give_a_verification():
    """Many cheap mutations, seeded: a wider net than the shrinking examples above."""
    rng = random.Random(1)
    for _ in range(400):
        lines = list(LOG)
        i = rng.randrange(len(lines))
        obj = json.loads(lines[i])
        key = rng.choice(sorted(obj))
        obj[key] = rng.choice([None, -1, 10**30, "", "XX", [], {}, [None], 1.5, True, "AS", [[], []], {"a": 1}])
        lines[i] = json.dumps(obj) + "\n"
        check_verifies(lines)
