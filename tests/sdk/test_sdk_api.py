"""The SDK's typed surface and its import cost: the Action type, the lazily built card
tables, what ``import barbu.runner`` pulls in before a bot's hello, and no import cycles."""

from __future__ import annotations

import random
import subprocess
import sys
import types
import typing

import grimp
import pytest
from barbu.rules import (
    PRESETS,
    Action,
    Contract,
    Declaration,
    IllegalActionError,
    Phase,
    apply,
    cards,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    shuffle_hands,
    tricks,
)  # fmt: skip
from barbu.rules import state as state_module


def test_action_is_the_union_of_the_action_values():
    assert typing.get_args(Action) == (Declaration, tuple[int, ...], int, types.NoneType)


def _is_action(value: object) -> bool:
    if isinstance(value, Declaration):
        return True
    if isinstance(value, tuple):
        return all(type(s) is int and 0 <= s < 4 for s in value)
    return value is None or type(value) is int


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_legal_action_is_an_action(preset):
    rng = random.Random(preset)
    state = new_match(make_ruleset(preset, {"domino_must_play": False}))
    seen: set[type] = set()
    while state.phase is not Phase.OVER:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            continue
        actions = legal_actions(state)
        assert actions and all(_is_action(a) for a in actions)
        seen.update(type(a) for a in actions)
        apply(state, rng.choice(actions))
    assert seen == {Declaration, tuple, int, type(None)}


@pytest.mark.parametrize(
    "decl, message",
    [
        (Declaration(Contract.TRUMPS, trump=7), "bad trump suit 7"),
        (Declaration(Contract.DOMINO, start_rank=13), "bad domino start rank 13"),
        (Declaration(Contract.DOMINO, start_rank=-1), "bad domino start rank -1"),
    ],
)
def test_an_out_of_range_declaration_is_an_illegal_action(decl, message):
    state = new_match(make_ruleset("standard"))
    deal(state, shuffle_hands(random.Random(1)))
    with pytest.raises(IllegalActionError, match=message):
        apply(state, decl)
    assert state.phase is Phase.DECLARE


def test_trick_lives_in_tricks_and_is_still_importable_from_state():
    assert state_module.Trick is tricks.Trick


# ---- the card tables ------------------------------------------------------------------------
def test_card_tables_match_the_bits_of_every_pattern():
    built = cards._build_tables()
    assert cards._TABLES is built and cards._T0 is built[0] and cards._T3 is built[3]
    for suit in range(4):
        table = built[suit]
        assert len(table) == 1 << 13
        for pattern in range(1 << 13):
            assert table[pattern] == tuple(13 * suit + r for r in range(13) if pattern >> r & 1)


def test_cards_of_lists_any_mask():
    rng = random.Random(5)
    for _ in range(2000):
        mask = rng.getrandbits(52)
        assert cards.cards_of(mask) == tuple(c for c in range(52) if mask >> c & 1)


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_card_tables_are_built_on_first_use_not_at_import():
    out = _run(
        "from barbu.rules import cards\n"
        "print(type(cards._T0).__name__, type(cards._TABLES).__name__)\n"
        "print(cards.cards_of(1 | 1 << 51))\n"
        "print(type(cards._T0).__name__, type(cards._TABLES).__name__, len(cards._TABLES))\n"
    )
    assert out.split("\n")[:3] == ["_LazyTable _LazyTables", "(0, 51)", "tuple tuple 4"]


def test_stale_references_to_the_stand_ins_still_work():
    out = _run(
        "from barbu.rules import cards\n"
        "t0, tables = cards._T0, cards._TABLES\n"
        "print(t0[5], len(t0), tables[1][1], len(tables))\n"
    )
    assert out.strip() == "(0, 2) 8192 (13,) 4"


def test_the_runner_imports_only_what_a_bot_needs_before_its_hello():
    """Past grpc and the generated protocol code, ``import barbu.runner`` loads the SDK and a
    few small standard modules: no json, no random, and no card tables built."""
    out = _run(
        "import sys\n"
        "import grpc, barbu.v1.arbiter_pb2_grpc\n"
        "before = set(sys.modules)\n"
        "import barbu.runner\n"
        "from barbu.rules import cards\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
        "print(type(cards._T0).__name__)\n"
    )
    added, table = out.split("\n")[:2]
    assert table == "_LazyTable"
    extra = {m for m in added.split() if not m.startswith("barbu.")}
    assert extra <= {"queue", "_queue", "dataclasses", "gc"}, extra


def test_no_import_cycle_in_the_sdk():
    graph = grimp.build_graph("barbu")
    modules = sorted(m for m in graph.modules if m != "barbu" and not m.startswith("barbu.v1"))
    cycles = [
        (a, b)
        for i, a in enumerate(modules)
        for b in modules[i + 1 :]
        if graph.chain_exists(importer=a, imported=b) and graph.chain_exists(importer=b, imported=a)
    ]
    assert cycles == []
