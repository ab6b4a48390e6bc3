"""Helpers shared by the rules tests: read the vector data files and turn them into real states.

Everything here drives the engine through its public API only (``new_match``, ``deal``,
``apply``, ``legal_actions``). A data file never hands the engine a prepared position: it gives
four hands and the actions that reach the position, and the engine must accept every one of
them, in turn, or the test fails.

Notation in the data files: seats are the letters A B C D of docs/rules.md §12 (seats 0-3); a hand
is a string of card names (``"AS KS 2C"``); an action is a token ``"B:5H"`` (seat B plays the
5♥) or ``"B:-"`` (a Domino pass); a trick is the string of its four tokens in play order.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from barbu.matchlog import MatchLogWriter
from barbu.rules import (
    Contract,
    Declaration,
    MatchState,
    Phase,
    Ruleset,
    apply,
    card_name,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    parse_card,
    parse_hand,
    parse_rank,
    parse_suit,
    shuffle_hands,
)

DATA = Path(__file__).resolve().parents[1] / "data"
VECTORS = DATA / "vectors"
SEATS = "ABCD"


# ---- reading data ----------------------------------------------------------------------
def load(name: str) -> dict[str, Any]:
    """A vector file by its name (``"tv06_trumps_legality"``)."""
    with open(VECTORS / f"{name}.json", encoding="utf-8") as f:
        return json.load(f)


def seat(letter: str) -> int:
    return SEATS.index(letter)


def seats_of(letters: Iterable[str]) -> tuple[int, ...]:
    """A doubling action: target letters -> the engine's ascending seat tuple."""
    return tuple(sorted(seat(x) for x in letters))


def cards(text: str | list[str]) -> list[int]:
    names = text.split() if isinstance(text, str) else text
    return [parse_card(n) for n in names]


def names(card_list: Iterable[int | None]) -> list[str | None]:
    return [None if c is None else card_name(c) for c in card_list]


def rules_of(spec: dict[str, Any] | None, **extra: Any) -> Ruleset:
    """``{"preset": "seed_fi", "domino_ace": "low"}`` plus keyword overrides -> a Ruleset."""
    spec = dict(spec or {})
    spec.update(extra)
    preset = spec.pop("preset", "standard")
    return make_ruleset(preset, spec)


def declaration(spec: dict[str, Any]) -> Declaration:
    """``{"contract": "trumps", "trump": "H"}`` -> the engine's Declaration."""
    contract = Contract(spec["contract"])
    trump = parse_suit(spec["trump"]) if "trump" in spec else None
    start = parse_rank(spec["start_rank"]) if "start_rank" in spec else None
    return Declaration(contract, trump, start)


def tokens(text: str) -> list[tuple[int, int | None]]:
    """``"A:7S B:-"`` -> [(0, 7♠), (1, None)]."""
    out = []
    for token in text.split():
        who, _, what = token.partition(":")
        out.append((seat(who), None if what == "-" else parse_card(what)))
    return out


def hands_of(spec: dict[str, str]) -> list[int]:
    """``{"A": "...", "B": ..., "C": ..., "D": ...}`` -> 4 hand masks."""
    return [parse_hand(spec[letter].split()) for letter in SEATS]


# ---- playing a scripted deal -------------------------------------------------------------
def play_scenario(rules: Ruleset, scenario: dict[str, Any], state: MatchState | None = None) -> MatchState:
    """Deal ``scenario["hands"]``, declare, double and play the scripted actions.

    ``doubling`` is a list of ``[seat, [targets]]`` in doubling order (omitted: everyone who
    may pass passes); ``plays`` a list of trick strings or single tokens. Every action is
    checked to be made by the seat whose turn it is, and the engine checks its legality.
    Pass ``state`` to continue a match (the scenario is then its next deal).
    """
    if state is None:
        state = new_match(rules, first_declarer=scenario.get("first_declarer", 0))
    deal(state, hands_of(scenario["hands"]))
    expected_declarer = scenario.get("declarer")
    if expected_declarer is not None:
        assert state.declarer == seat(expected_declarer)
    apply(state, declaration(scenario["declare"]))
    for who, targets in scenario.get("doubling", []):
        assert state.phase is Phase.DOUBLE, f"doubling is over before {who}'s action {targets}"
        assert state.turn == seat(who), f"it is seat {SEATS[state.turn]}'s turn to double, not {who}'s"
        apply(state, seats_of(targets))
    while state.phase is Phase.DOUBLE:  # the rest pass (the declarer's forced pass included)
        apply(state, ())
    for item in scenario.get("plays", []):
        for who, card in tokens(item):
            assert state.turn == who, (
                f"it is seat {SEATS[state.turn]}'s turn, not {SEATS[who]}'s (about to play {item!r})"
            )
            apply(state, card)
    return state


# ---- building a trick-play position -----------------------------------------------------------
def trick_winner(plays: list[tuple[int, int]], trump: int | None) -> int:
    """Winner of a complete trick given as (seat, card) in play order (docs/rules.md P3)."""
    led = plays[0][1] // 13
    trumps = [(c, s) for s, c in plays if trump is not None and c // 13 == trump]
    pool = trumps or [(c, s) for s, c in plays if c // 13 == led]
    return max(pool)[1]


def build_position(rules: Ruleset, spec: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Turn a position description into a full scripted deal that reaches it.

    ``spec`` gives the declaration, every seat's remaining hand at the position
    (``position.hands``), the trick so far (``position.trick``, tokens) or the seat to lead
    (``position.leader``), and optionally explicit earlier tricks (``history``). The other
    earlier tricks are *fillers*: four cards of one suit, so every card in them follows suit
    and is legal under every switch. Plain fillers are won by the position's leader (he gets
    the top card). In Trumps the trump fillers come first and go up in play order (each card
    beats the trick, so the head rule holds); in No Hearts / Barbu / Salad heart fillers come
    last and are led by the position's leader, who must then hold only hearts.

    Returns the scenario (for :func:`play_scenario`) and the seat to act at the position.
    """
    decl = declaration(spec["declare"])
    trump = decl.trump
    position = spec["position"]
    pos_hands = {seat(k): cards(v) for k, v in position["hands"].items()}
    trick = tokens(position.get("trick", ""))
    leader = trick[0][0] if trick else seat(position["leader"])
    to_act = (leader + len(trick)) % 4
    history = [tokens(t) for t in spec.get("history", [])]

    used: list[int] = [c for h in pos_hands.values() for c in h] + [c for _, c in trick]
    used += [c for t in history for _, c in t]
    assert len(used) == len(set(used)), "a card appears twice in the position description"
    rest = sorted(set(range(52)) - set(used))

    declarer = spec.get("declarer", "A")
    first = (seat(declarer) + (rules.first_lead == "left_of_declarer")) % 4
    lead = trick_winner(history[-1], trump) if history else first

    by_suit: dict[int, list[int]] = {s: [c for c in rest if c // 13 == s] for s in range(4)}
    for s, group in by_suit.items():
        assert len(group) % 4 == 0, f"{len(group)} filler cards in suit {'CDHS'[s]}: not a multiple of 4"
    hearts_last = decl.contract in (Contract.NO_HEARTS, Contract.BARBU, Contract.SALAD)

    fillers: list[list[tuple[int, int]]] = []
    if trump is not None:  # ascending trump tricks, each won by the last to play
        group = by_suit.pop(trump)
        for i in range(0, len(group), 4):
            fillers.append([((lead + k) % 4, c) for k, c in enumerate(group[i : i + 4])])
            lead = (lead + 3) % 4
    late = by_suit.pop(2) if hearts_last else []
    for s in sorted(by_suit):
        group = by_suit[s]
        for i in range(0, len(group), 4):
            top, *others = sorted(group[i : i + 4], reverse=True)
            fillers.append(_won_by(leader, lead, top, others))
            lead = leader
    if late:
        assert lead == leader, "heart fillers need the position's leader on lead"
        assert all(c // 13 == 2 for c in pos_hands[leader]), "heart fillers need a leader holding only hearts"
        late.sort(reverse=True)
        for i in range(0, len(late), 4):
            top, *others = late[i : i + 4]
            fillers.append(_won_by(leader, leader, top, others))
    assert lead == leader, f"the fillers end with seat {SEATS[lead]} on lead, not {SEATS[leader]}"

    all_tricks = history + fillers
    initial: dict[int, list[int]] = {s: list(pos_hands.get(s, [])) for s in range(4)}
    for s, c in trick:
        initial[s].append(c)
    for t in all_tricks:
        for s, c in t:
            initial[s].append(c)
    for s in range(4):
        assert len(initial[s]) == 13, f"seat {SEATS[s]} would be dealt {len(initial[s])} cards"
    scenario = {
        "declarer": declarer,
        "hands": {SEATS[s]: " ".join(names(initial[s])) for s in range(4)},
        "declare": spec["declare"],
        "plays": [_text(t) for t in all_tricks] + ([_text(trick)] if trick else []),
    }
    return scenario, to_act


def _won_by(winner: int, lead: int, top: int, others: list[int]) -> list[tuple[int, int]]:
    """A same-suit trick led by ``lead`` in which ``winner`` holds the top card."""
    owner = {winner: top}
    free = iter(others)
    for k in range(4):
        s = (lead + k) % 4
        if s != winner:
            owner[s] = next(free)
    return [((lead + k) % 4, owner[(lead + k) % 4]) for k in range(4)]


def _text(t: list[tuple[int, int | None]]) -> str:
    return " ".join(f"{SEATS[s]}:{'-' if c is None else card_name(c)}" for s, c in t)


def reach_position(rules: Ruleset, spec: dict[str, Any]) -> MatchState:
    """Build and play the position; check that the engine is exactly where the spec says."""
    scenario, to_act = build_position(rules, spec)
    state = play_scenario(rules, scenario)
    position = spec["position"]
    assert state.phase is Phase.PLAY, f"the deal ended early ({state.results[-1].reason})"
    assert state.turn == to_act
    trick = tokens(position.get("trick", ""))
    assert state.trick == [c for _, c in trick]
    for letter, hand in position["hands"].items():
        assert state.hands[seat(letter)] == parse_hand(hand.split()), f"seat {letter}'s hand differs"
    return state


def legal_names(state: MatchState) -> list[str | None]:
    return names(legal_actions(state))


# ---- random matches with a log ----------------------------------------------------------------
def switch_table() -> dict[str, Any]:
    """docs/rules.md §10 as data: every switch with its values, and the presets."""
    with open(DATA / "switches.json", encoding="utf-8") as f:
        return json.load(f)


def play_random_match(rules: Ruleset, seed: int, first_declarer: int = 0):
    """A whole match of uniformly random legal play, logged with MatchLogWriter.

    Returns ``(state, lines, forced)``: the final state, the log lines (without line ends)
    and the 1-based numbers of the ``double`` lines whose seat was forced by the quota.
    """
    rng = random.Random(seed)
    lines: list[str] = []
    state = new_match(rules, first_declarer)
    writer = MatchLogWriter(
        lines.append, rules=rules, first_declarer=first_declarer, match_id=f"test-{seed}", seed=seed,
        seats=[{"seat": s, "entrant": f"random-{s}"} for s in range(4)],
    )  # fmt: skip
    forced: list[int] = []
    while not state.is_over:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            writer.dealt(state)
            continue
        if state.phase is Phase.DOUBLE and state.double_targets()[1]:
            forced.append(len(lines) + 1)
        who = state.turn
        action = rng.choice(legal_actions(state))
        apply(state, action)
        writer.acted(state, who, action)
    return state, lines, forced
