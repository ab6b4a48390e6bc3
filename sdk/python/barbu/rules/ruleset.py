"""Rulesets as values: a preset name plus switch overrides (docs/rules.md §10-11).

A ``Ruleset`` is frozen and hashable. It is built by :func:`make_ruleset` from a preset and
overrides given either as typed JSON values (the match log's ``rules`` object) or as strings
(the command line's ``--set switch=value``); every bad name or value raises :class:`RulesError`
naming it.

>>> rules = make_ruleset("seed_fi", {"domino_ace": "low"})
>>> rules.trump_void_rule, rules.domino_ace, rules.deals_per_match
('overruff_if_trumped', 'low', 28)
>>> rules.to_json()
{'preset': 'seed_fi', 'domino_ace': 'low'}
>>> ruleset_from_json(rules.to_json()) == rules
True
>>> make_ruleset("standard", parse_switch_assignments(["double_quota=3"])).double_quota
3
>>> make_ruleset("standard", {"domino_ace": "middle"})
Traceback (most recent call last):
  ...
barbu.rules.errors.RulesError: rules switch 'domino_ace': 'middle' is not one of high, low
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

from .cards import RANKS
from .contracts import ALL_CONTRACTS, STANDARD_CONTRACTS, Contract
from .errors import RulesError

SCORE_KEYS = (
    "trick",
    "heart",
    "heart_ace",
    "queen",
    "king_of_hearts",
    "trick_12",
    "trick_13",
    "trump_trick",
)
"""The keys of the ``score_values`` switch, in the order of ``Ruleset.score_values``."""
STANDARD_SCORES = (-2, -2, -6, -6, -20, -10, -20, 5)
"""The standard score values, in ``SCORE_KEYS`` order."""

# Switch name -> allowed string values (first is the default). Non-enumerated switches are
# handled by their own parsers below.
CHOICES: dict[str, tuple[str, ...]] = {
    "declarer_rotation": ("block7", "per_deal"),
    "dealer_seat": ("declarer", "right_of_declarer"),
    "first_lead": ("declarer", "left_of_declarer"),
    "hearts_lead": ("only_if_only_hearts", "after_broken", "any"),
    "barbu_lead": ("only_if_only_hearts", "after_broken", "kh_only_if_last_card", "any"),
    "kh_must_discard": ("never", "when_void", "when_void_or_ace_in_trick"),
    "early_end": ("standard", "none", "extended"),
    "trump_void_rule": ("free", "overruff_if_trumped", "must_ruff", "must_ruff_and_overruff"),
    "domino_first_player": ("declarer", "left_of_declarer"),
    "domino_ace": ("high", "low"),
    "double_scoring": ("pagat", "multiplier"),
    "double_targets": ("standard", "declarer_only", "any"),
    "redouble_window": ("own_turn", "extra_round"),
    "quota_enforcement": ("forced", "none"),
    "undoubled_negative": ("play", "split"),
}
"""The enumerated switches' allowed values, the standard default first."""
BOOLEANS = ("trump_lead_must_head", "domino_must_play", "domino_ace_replay")
"""The switches that take true or false."""


@dataclass(frozen=True)
class Ruleset:
    """Every switch of docs/rules.md §10; the defaults are the ``standard`` preset.

    Build one with :func:`make_ruleset` (which checks every value), not by hand. A bot reads
    the match's rules as ``view.rules``; the switches that change what is legal are
    ``hearts_lead``, ``barbu_lead``, ``kh_must_discard``, ``trump_lead_must_head``,
    ``trump_void_rule``, the ``domino_*`` ones and the doubling ones.
    """

    declarer_rotation: str = "block7"
    """Blocks of one declarer (``block7``) or a new declarer every deal (``per_deal``); M2."""
    dealer_seat: str = "declarer"
    """Who is called the dealer: a label only (M4)."""
    first_lead: str = "declarer"
    """Who leads to the first trick (P1)."""
    hearts_lead: str = "only_if_only_hearts"
    """When a heart may be led in No Hearts and the salad (P4)."""
    barbu_lead: str = "only_if_only_hearts"
    """When a heart (or the K♥) may be led in Barbu (P4)."""
    kh_must_discard: str = "never"
    """Barbu: when the K♥ holder must play it."""
    early_end: str = "standard"
    """Which contracts end before the 13th trick once their penalty cards are all taken."""
    trump_lead_must_head: bool = True
    """Trumps: on a trump lead, a higher trump is due when held (P5a)."""
    trump_void_rule: str = "free"
    """Trumps: what a player void in a plain led suit must play (P5b)."""
    domino_start: str = "declarer_choice"
    """``declarer_choice``, ``fixed_rank:R`` or ``seven_of_diamonds`` (F3)."""
    domino_first_player: str = "declarer"
    """Who moves first in the Domino."""
    domino_ace: str = "high"
    """Whether the ace sits above the king or below the 2 in the Domino rows (F2)."""
    domino_payouts: tuple[int, int, int, int] = (45, 20, 5, -5)
    """Domino payouts by finishing place (F6); they add up to 65."""
    domino_must_play: bool = True
    """Domino: a seat holding a playable card must play (F4)."""
    domino_ace_replay: bool = False
    """Domino: playing an ace earns an extra turn."""
    double_scoring: str = "pagat"
    """Settlement multipliers: ``pagat`` x1/x2, ``multiplier`` x2/x4 (S2)."""
    double_targets: str = "standard"
    """Who may be doubled (X3)."""
    redouble_window: str = "own_turn"
    """``extra_round`` adds a round for redoubles only (X8)."""
    double_quota: int = 2
    """The quota of doubles per declarer each non-declarer owes (X7); 0 turns it off."""
    quota_enforcement: str = "forced"
    """``forced``: a seat that would miss the quota must double the declarer."""
    undoubled_negative: str = "play"
    """``split``: an undoubled negative deal is not played, its total is shared out (S4)."""
    score_values: tuple[int, ...] = STANDARD_SCORES
    """Raw score values, in ``SCORE_KEYS`` order."""
    contracts: tuple[Contract, ...] = STANDARD_CONTRACTS
    """The contracts of the match, in canonical order: 4 x len deals."""
    preset: str = field(default="standard", compare=False)
    """Not a switch: the name the ruleset was built from, kept for logs and display."""

    # ---- derived facts -------------------------------------------------------------
    @property
    def deals_per_match(self) -> int:
        """4 x the number of contracts: 28 with the standard menu."""
        return 4 * len(self.contracts)

    @property
    def zero_sum(self) -> bool:
        """True when a declarer's block adds up to 0 (only the standard menu and scores)."""
        return self.contracts == STANDARD_CONTRACTS and self.score_values == STANDARD_SCORES

    def score(self, key: str) -> int:
        """One score value by its ``SCORE_KEYS`` name: ``rules.score("queen") == -6``."""
        return self.score_values[SCORE_KEYS.index(key)]

    def fixed_domino_rank(self) -> int | None:
        """The start rank the rules impose, or None when the declarer chooses."""
        if self.domino_start == "seven_of_diamonds":
            return RANKS.index("7")
        if self.domino_start.startswith("fixed_rank:"):
            return RANKS.index(self.domino_start.split(":", 1)[1])
        return None

    def contract_total(self, contract: Contract) -> int:
        """The sum of the four raw scores of a played deal of ``contract`` (e.g. -26 for No Tricks)."""
        return self._contract_totals[contract]

    @cached_property
    def _contract_totals(self) -> dict[Contract, int]:
        """Every contract's total, worked out once per ruleset: bots' evaluations ask for them in
        their inner loops."""
        s = dict(zip(SCORE_KEYS, self.score_values, strict=True))
        totals = {
            Contract.NO_TRICKS: 13 * s["trick"],
            Contract.NO_HEARTS: 12 * s["heart"] + s["heart_ace"],
            Contract.NO_QUEENS: 4 * s["queen"],
            Contract.BARBU: s["king_of_hearts"],
            Contract.NO_LAST_TWO: s["trick_12"] + s["trick_13"],
            Contract.TRUMPS: 13 * s["trump_trick"],
            Contract.DOMINO: sum(self.domino_payouts),
        }
        totals[Contract.SALAD] = sum(totals[c] for c in STANDARD_CONTRACTS[:5])
        return totals

    def declarer_of(self, first_declarer: int, deal: int) -> int:
        """M2: blocks of one declarer each, or a new declarer every deal."""
        if self.declarer_rotation == "per_deal":
            return (first_declarer + deal) % 4
        return (first_declarer + deal // len(self.contracts)) % 4

    def overrides(self) -> dict[str, Any]:
        """The switches that differ from the preset, as typed JSON values."""
        base = PRESETS[self.preset]
        return {
            f.name: _to_json(f.name, getattr(self, f.name))
            for f in fields(self)
            if f.name != "preset" and getattr(self, f.name) != getattr(base, f.name)
        }

    def to_json(self) -> dict[str, Any]:
        """The match log's ``rules`` object: the preset plus what differs from it."""
        return {"preset": self.preset, **self.overrides()}


SWITCHES = tuple(f.name for f in fields(Ruleset) if f.name != "preset")
"""Every switch name, in ``Ruleset`` field order."""

PRESETS: dict[str, Ruleset] = {
    "standard": Ruleset(),
    "seed_fi": Ruleset(
        preset="seed_fi",
        trump_lead_must_head=False,
        trump_void_rule="overruff_if_trumped",
        domino_payouts=(40, 20, 5, 0),
    ),
    "seed_pl": Ruleset(
        preset="seed_pl",
        dealer_seat="right_of_declarer",
        trump_void_rule="must_ruff",
        trump_lead_must_head=False,
    ),
    "seed_de_fr": Ruleset(
        preset="seed_de_fr",
        first_lead="left_of_declarer",
        hearts_lead="after_broken",
        barbu_lead="after_broken",
        domino_start="seven_of_diamonds",
        double_scoring="multiplier",
        double_targets="any",
    ),
}
"""The four presets by name (docs/rules.md §11)."""


def make_ruleset(preset: str = "standard", overrides: Mapping[str, Any] | None = None) -> Ruleset:
    """Build a ruleset from a preset and typed overrides (JSON values)."""
    if preset not in PRESETS:
        raise RulesError(f"unknown rules preset {preset!r}; known presets: {', '.join(PRESETS)}")
    changes = {name: _parse_typed(name, value) for name, value in (overrides or {}).items()}
    return replace(PRESETS[preset], **changes)


def ruleset_from_json(rules: Mapping[str, Any]) -> Ruleset:
    """The match log's ``rules`` object -> a Ruleset (a missing preset means standard)."""
    if not isinstance(rules, Mapping):
        raise RulesError(f"'rules' must be an object, got {type(rules).__name__}")
    rest = dict(rules)
    preset = rest.pop("preset", "standard")
    if not isinstance(preset, str):
        raise RulesError(f"'preset' must be a string, got {preset!r}")
    return make_ruleset(preset, rest)


def parse_switch_assignments(assignments: list[str]) -> dict[str, Any]:
    """``["domino_ace=low", "double_quota=3"]`` -> typed overrides (command-line form)."""
    out: dict[str, Any] = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise RulesError(f"bad rules setting {item!r}: expected switch=value")
        out[name] = _from_text(name, text.strip())
    return out


# ---- parsing ---------------------------------------------------------------------------
def _check_name(name: str) -> None:
    if name not in SWITCHES:
        raise RulesError(f"unknown rules switch {name!r}; known switches: {', '.join(SWITCHES)}")


def _parse_typed(name: str, value: Any) -> Any:
    _check_name(name)
    where = f"rules switch {name!r}"
    if name in CHOICES:
        if value not in CHOICES[name]:
            raise RulesError(f"{where}: {value!r} is not one of {', '.join(CHOICES[name])}")
        return value
    if name in BOOLEANS:
        if not isinstance(value, bool):
            raise RulesError(f"{where}: expected true or false, got {value!r}")
        return value
    if name == "domino_start":
        return _parse_domino_start(value)
    if name == "double_quota":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RulesError(f"{where}: expected an integer >= 0, got {value!r}")
        return value
    if name == "domino_payouts":
        if (
            not isinstance(value, (list, tuple))
            or len(value) != 4
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            raise RulesError(f"{where}: expected a list of 4 integers, got {value!r}")
        if sum(value) != 65:
            raise RulesError(f"{where}: the 4 payouts must add up to 65, {list(value)} adds up to {sum(value)}")
        return tuple(value)
    if name == "score_values":
        return _parse_score_values(value)
    if name == "contracts":
        return _parse_contracts(value)
    raise AssertionError(name)  # every switch is handled above


def _parse_domino_start(value: Any) -> str:
    if isinstance(value, str) and value in ("declarer_choice", "seven_of_diamonds"):
        return value
    if isinstance(value, str) and value.startswith("fixed_rank:"):
        rank = value.split(":", 1)[1].strip().upper()
        rank = "T" if rank == "10" else rank
        if len(rank) == 1 and rank in RANKS:
            return "fixed_rank:" + rank
    raise RulesError(
        f"rules switch 'domino_start': {value!r} is not one of declarer_choice, "
        "fixed_rank:R (R one of 2-9 T J Q K A), seven_of_diamonds"
    )


def _parse_score_values(value: Any) -> tuple[int, ...]:
    if not isinstance(value, Mapping):
        raise RulesError(f"rules switch 'score_values': expected an object, got {value!r}")
    scores = dict(zip(SCORE_KEYS, STANDARD_SCORES, strict=True))
    for key, v in value.items():
        if key not in scores:
            raise RulesError(f"rules switch 'score_values': unknown key {key!r}; known keys: {', '.join(SCORE_KEYS)}")
        if not isinstance(v, int) or isinstance(v, bool):
            raise RulesError(f"rules switch 'score_values': {key!r} must be an integer, got {v!r}")
        scores[key] = v
    return tuple(scores[k] for k in SCORE_KEYS)


def _parse_contracts(value: Any) -> tuple[Contract, ...]:
    names = [c.value for c in ALL_CONTRACTS]
    if not isinstance(value, (list, tuple)) or not value:
        raise RulesError(f"rules switch 'contracts': expected a non-empty list of contract names, got {value!r}")
    chosen = []
    for v in value:
        if v not in names:
            raise RulesError(f"rules switch 'contracts': unknown contract {v!r}; known: {', '.join(names)}")
        if Contract(v) in chosen:
            raise RulesError(f"rules switch 'contracts': {v!r} is listed twice")
        chosen.append(Contract(v))
    # Canonical order, so that equal menus make equal rulesets.
    return tuple(c for c in ALL_CONTRACTS if c in chosen)


def _from_text(name: str, text: str) -> Any:
    """Command-line text -> the typed value ``_parse_typed`` expects."""
    _check_name(name)
    if name in BOOLEANS:
        lowered = text.lower()
        if lowered in ("true", "yes", "1", "on"):
            return True
        if lowered in ("false", "no", "0", "off"):
            return False
        raise RulesError(f"rules switch {name!r}: expected true or false, got {text!r}")
    if name == "double_quota":
        try:
            return int(text)
        except ValueError:
            raise RulesError(f"rules switch 'double_quota': expected an integer, got {text!r}") from None
    if name in ("domino_payouts", "contracts"):
        items = [t.strip() for t in text.strip("[]").split(",") if t.strip()]
        if name == "contracts":
            return items
        try:
            return [int(t) for t in items]
        except ValueError:
            raise RulesError(
                f"rules switch 'domino_payouts': expected 4 integers like 40,20,5,0, got {text!r}"
            ) from None
    if name == "score_values":
        pairs = {}
        for item in text.split(","):
            key, sep, v = item.partition(":")
            try:
                pairs[key.strip()] = int(v)
            except ValueError:
                raise RulesError(
                    f"rules switch 'score_values': expected key:value pairs like queen:-8,trick:-1, got {text!r}"
                ) from None
        return pairs
    return text


def _to_json(name: str, value: Any) -> Any:
    if name == "score_values":
        return dict(zip(SCORE_KEYS, value, strict=True))
    if name in ("domino_payouts", "contracts"):
        return [str(v) for v in value] if name == "contracts" else list(value)
    return value
