"""Replay a match log: as the table saw it, and as each seat saw it.

Three layers:

* the **replay model** (:func:`load_replay`): the log verified by :func:`barbu.matchlog.verify`,
  then stepped through line by line with the rules engine, so every line becomes an
  :class:`Event` holding the engine state just before and just after it. At every decision the
  full state is there, and :meth:`Event.view` gives any seat's information set
  (:func:`barbu.rules.observe`). A log with a bad line replays up to that line and names it;
  a log cut short replays as far as it goes.
* the **terminal rendering** (:func:`render`): rich text, per deal the hands (or one seat's
  information set), the contract, the doubles, the tricks or the Domino layout, the faults and
  the scores, ending with the verdict on the log.
* the **command** (:func:`replay_command`), registered in ``arbiter/cli.py``; ``--html`` hands
  the model to :mod:`arbiter.web`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Iterable, Optional

import typer
from rich.console import Console, Group
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from barbu.matchlog import Verification, verify
from barbu.rules import (
    Contract,
    Declaration,
    MatchState,
    Phase,
    View,
    cards_of,
    new_match,
    observe,
    parse_card,
    ruleset_from_json,
)
from barbu.rules.cards import RANKS, SUIT_SYMBOLS
from barbu.rules.ruleset import Ruleset

DECISIONS = ("declare", "double", "play")

# ---- the replay model ------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One log line (after the ``match`` line) and the engine state around it.

    ``before`` and ``after`` are the same object for lines that change nothing (``trick``,
    ``deal_end``, ``fault``, ``match_end``): treat them as read-only.
    """

    number: int  # line number in the log, from 1
    kind: str  # the line's "type"
    line: dict[str, Any]
    before: MatchState
    after: MatchState

    @property
    def deal(self) -> int | None:
        d = self.line.get("deal")
        return d if isinstance(d, int) and not isinstance(d, bool) else None

    @property
    def seat(self) -> int | None:
        s = self.line.get("seat")
        return s if s in (0, 1, 2, 3) and not isinstance(s, bool) else None

    @property
    def is_decision(self) -> bool:
        return self.kind in DECISIONS

    @property
    def ms(self) -> float | None:
        ms = self.line.get("ms")
        return float(ms) if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None

    @property
    def auto(self) -> bool:
        return self.line.get("auto") is True

    def view(self, seat: int, *, after: bool = False) -> View:
        """What ``seat`` knew just before this line (or just after, with ``after=True``)."""
        return observe(self.after if after else self.before, seat)


@dataclass
class DealRecord:
    """The events of one deal, in log order (its fault lines included)."""

    index: int
    events: list[Event] = field(default_factory=list)

    @property
    def dealt(self) -> Event | None:
        return next((e for e in self.events if e.kind == "deal"), None)

    @property
    def declarer(self) -> int | None:
        e = self.dealt
        return e.after.declarer if e else None

    @property
    def declaration(self) -> Declaration | None:
        e = next((e for e in self.events if e.kind == "declare"), None)
        return e.after.declaration if e else None

    @property
    def end(self) -> Event | None:
        return next((e for e in self.events if e.kind == "deal_end"), None)


@dataclass
class Replay:
    """A log stepped through with the engine, up to its end or its first bad line."""

    header: dict[str, Any] | None
    rules: Ruleset | None
    events: list[Event]
    verification: Verification
    last_line: int  # the last line replayed (0 when none)
    cut: bool = False  # the last line was cut off mid-write (a crash): ignored, log incomplete
    lines: list[str] = field(default_factory=list, repr=False)  # the log's text, line by line

    @property
    def bad_text(self) -> str | None:
        """The offending line's text (shortened), if the log is invalid and has that line."""
        n = self.bad_line
        if n is None or not 1 <= n <= len(self.lines):
            return None
        text = self.lines[n - 1].rstrip("\r\n")
        return text if len(text) <= 160 else text[:157] + "..."

    @property
    def valid(self) -> bool:
        return self.verification.valid

    @property
    def bad_line(self) -> int | None:
        return None if self.valid else self.verification.line

    @property
    def error(self) -> str | None:
        return self.verification.error

    @property
    def first_declarer(self) -> int:
        return self.header["first_declarer"] if self.header else 0

    @property
    def match_end(self) -> Event | None:
        return next((e for e in reversed(self.events) if e.kind == "match_end"), None)

    def entrant(self, seat: int) -> str:
        try:
            return str(self.header["seats"][seat]["entrant"])
        except (TypeError, KeyError, IndexError):
            return f"seat {seat}"

    def deals(self) -> list[DealRecord]:
        """The deals the log reaches, each with its events (fault lines go to their deal)."""
        records: dict[int, DealRecord] = {}
        for e in self.events:
            d = e.deal
            if d is None:
                continue
            records.setdefault(d, DealRecord(d)).events.append(e)
        return [records[d] for d in sorted(records)]

    def decisions(self) -> list[Event]:
        return [e for e in self.events if e.is_decision]

    def verdict(self) -> str:
        """One line: valid/complete, or where the log is bad."""
        v = self.verification
        if not v.valid:
            return f"invalid: line {v.line}: {v.error}"
        if v.complete:
            state = "complete"
        elif v.status == "aborted":
            reason = self.match_end.line.get("reason") if self.match_end else None
            state = "aborted" + (f" ({reason})" if reason else "")
        else:
            state = f"incomplete (cut short after line {self.last_line})"
        return f"valid: {state}, {v.deals} deals, totals {v.totals}, places {v.places}"


def load_replay(lines: Iterable[str]) -> Replay:
    """Verify the log and keep the state after every line it accepts, up to its end or its
    first bad line. The verifier is the judge (:func:`barbu.matchlog.verify`): its single
    pass builds the states, so the rules are not restated here."""
    lines = list(lines)
    header: dict[str, Any] | None = None
    events: list[Event] = []
    last = 0

    def keep(number: int, obj: dict[str, Any], state: MatchState) -> None:
        nonlocal header, last
        last = number
        if header is None:
            header = obj
            return
        kind = obj.get("type")
        before = events[-1].after if events else _initial(header)
        after = state.clone() if kind in DECISIONS or kind == "deal" else before
        events.append(Event(number, kind, obj, before, after))

    verification = verify(lines, on_line=keep)
    cut = verification.valid and last < len(lines)  # a cut last line was left unread
    rules = ruleset_from_json(header["rules"]) if header is not None else None
    return Replay(header, rules, events, verification, last, cut, lines)


def _initial(header: dict[str, Any]) -> MatchState:
    return new_match(ruleset_from_json(header["rules"]), header["first_declarer"])


def load_replay_file(path: str | Path) -> Replay:
    """:func:`load_replay` of a log file; raises LogFileError if it cannot be read."""
    from .log import read_log_lines

    return load_replay(read_log_lines(path))


# ---- names and notation ----------------------------------------------------------------
CONTRACT_NAMES = {
    Contract.NO_TRICKS: "No Tricks",
    Contract.NO_HEARTS: "No Hearts",
    Contract.NO_QUEENS: "No Queens",
    Contract.BARBU: "Barbu",
    Contract.NO_LAST_TWO: "No Last Two",
    Contract.TRUMPS: "Trumps",
    Contract.DOMINO: "Domino",
    Contract.SALAD: "Salad",
}
REASONS = {
    "all_tricks": "all 13 tricks played",
    "all_queens": "all four queens taken",
    "king_taken": "the K♥ taken",
    "all_hearts": "all hearts taken",
    "domino_done": "three players out",
    "split": "undoubled: split, not played",
}
RED_SUITS = (1, 2)  # diamonds, hearts
SUIT_STYLE = "red"
WIN_STYLE = "bold reverse"
FAULT_STYLE = "bold red"


def rank_label(rank: int) -> str:
    return "10" if RANKS[rank] == "T" else RANKS[rank]


def card_label(card: int) -> str:
    """``QS`` -> ``Q♠``; the ten is written 10."""
    return rank_label(card % 13) + SUIT_SYMBOLS[card // 13]


def card_text(card: int, style: str = "") -> Text:
    t = Text(card_label(card), style=style)
    if card // 13 in RED_SUITS:
        t.stylize(SUIT_STYLE)
    return t


def suit_symbol_text(suit: int) -> Text:
    return Text(SUIT_SYMBOLS[suit], style=SUIT_STYLE if suit in RED_SUITS else "")


def contract_label(decl: Declaration | None) -> str:
    if decl is None:
        return "not declared yet"
    name = CONTRACT_NAMES.get(decl.contract, decl.contract.value)
    if decl.trump is not None:
        return f"{name} {SUIT_SYMBOLS[decl.trump]}"
    if decl.start_rank is not None:
        return f"{name} from {rank_label(decl.start_rank)}"
    return name


def seat_label(seat: int) -> str:
    return f"S{seat}"


def colour_suits(text: str) -> Text:
    """A plain string with ♥♦ coloured."""
    t = Text(text)
    for i, ch in enumerate(text):
        if ch in "♥♦":
            t.stylize(SUIT_STYLE, i, i + 1)
    return t


def hand_text(mask: int, suits: tuple[int, ...] = (3, 2, 0, 1)) -> Text:
    """A hand by suit, high cards first: ``♠ A K 7  ♥ Q 3  ♣ —  ♦ J 10``."""
    out = Text()
    for i, s in enumerate(suits):
        if i:
            out.append("  ")
        out.append_text(suit_symbol_text(s))
        ranks = [c % 13 for c in reversed(cards_of(mask)) if c // 13 == s]
        out.append(" " + (" ".join(rank_label(r) for r in ranks) if ranks else "—"))
    return out


def double_words(event: Event) -> str:
    """``doubles S0, redoubles S2`` / ``passes``, from the state before the line."""
    seat, targets = event.seat, event.line.get("targets") or []
    if not targets:
        return "passes"
    doubled = event.before.doubled
    redo = [t for t in targets if doubled[t] >> seat & 1]
    new = [t for t in targets if t not in redo]
    parts = []
    if new:
        parts.append("doubles " + ", ".join(seat_label(t) for t in new))
    if redo:
        parts.append("redoubles " + ", ".join(seat_label(t) for t in redo))
    return ", ".join(parts)


def pair_levels(state: MatchState) -> list[tuple[int, int, int]]:
    return [(a, b, state.levels[a][b]) for a in range(4) for b in range(a + 1, 4) if state.levels[a][b]]


def levels_text(state: MatchState) -> str:
    pairs = pair_levels(state)
    if not pairs:
        return "no doubles"
    parts = []
    for level, word in ((1, "doubled"), (2, "redoubled")):
        names = [f"{seat_label(a)}–{seat_label(b)}" for a, b, lv in pairs if lv == level]
        if names:
            parts.append(f"{word} {', '.join(names)}")
    return "; ".join(parts)


def layout_rows(mask: int, rules: Ruleset) -> list[list[int]]:
    """The Domino layout: per suit (C D H S), its cards low to high on the row's scale."""
    from barbu.rules.domino import ordinal

    ace = rules.domino_ace
    return [sorted((c for c in cards_of(mask) if c // 13 == s), key=lambda c: ordinal(c % 13, ace)) for s in range(4)]


def layout_text(mask: int, rules: Ruleset) -> Text:
    out = Text()
    rows = layout_rows(mask, rules)
    for i, s in enumerate((3, 2, 0, 1)):
        row = rows[s]
        if i:
            out.append(" ")
        out.append_text(suit_symbol_text(s))
        if not row:
            out.append("·")
        elif len(row) == 1:
            out.append(rank_label(row[0] % 13))
        else:
            out.append(f"{rank_label(row[0] % 13)}–{rank_label(row[-1] % 13)}")
    return out


def fault_text(fault: dict[str, Any], prefix: str = "") -> Text:
    seat = fault.get("seat")
    who = seat_label(seat) if isinstance(seat, int) else seat
    t = Text(f"{prefix}fault {who} {fault.get('kind')}", style=FAULT_STYLE)
    if fault.get("detail"):
        t.append(f": {fault.get('detail')}")
    t.append(f" → {fault.get('action')}")
    return t


def _ordinal_place(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


# ---- terminal rendering ----------------------------------------------------------------


def render(replay: Replay, console: Console, *, deal: int | None = None, seat: int | None = None) -> None:
    """Print the match (or one deal) to ``console``; with ``seat``, only what it knew."""
    console.print(_header(replay, seat))
    records = replay.deals()
    shown = [r for r in records if deal is None or r.index == deal]
    for record in shown:
        console.print()
        _render_deal(replay, record, console, seat)
    # lines outside any deal (faults without a deal are impossible; match_end is global)
    if deal is None:
        _render_match_end(replay, console)
        _render_think_times(replay, console)
    console.print()
    if replay.valid:
        console.print(Text("✓ " + replay.verdict(), style="bold green"))
    else:
        console.print(Text(f"✗ {replay.verdict()}", style=FAULT_STYLE))
        if replay.bad_text is not None:
            console.print(Text(f"  line {replay.bad_line}: ", style="bold") + Text(replay.bad_text))
        done = f"replayed lines 1–{replay.last_line}" if replay.last_line else "nothing replayed"
        console.print(f"  ({done}; line {replay.bad_line} and after not shown)")


def _header(replay: Replay, seat: int | None) -> Group:
    h = replay.header
    if h is None:
        return Group(Text("Barbu match log (no readable match line)", style="bold"))
    rules = dict(h.get("rules") or {})
    preset = rules.pop("preset", "standard")
    rules_text = preset + "".join(
        f" {k}={','.join(map(str, v)) if isinstance(v, list) else json.dumps(v) if isinstance(v, dict) else v}"
        for k, v in rules.items()
    )
    title = Text("Barbu match ", style="bold")
    title.append(str(h.get("match_id", "")), style="bold")
    facts = f"rules {rules_text}"
    if "seed" in h:
        facts += f" · seed {h['seed']}"
    facts += f" · first declarer {seat_label(replay.first_declarer)} · {replay.rules.deals_per_match} deals"
    seats = Text("seats: ") + Text("  ".join(f"{seat_label(s)} {replay.entrant(s)}" for s in range(4)))
    parts: list[Any] = [title, Text(facts), seats]
    if seat is not None:
        who = f"{seat_label(seat)} ({replay.entrant(seat)})"
        parts.append(Text(f"as seen by {who}: own hand and public plays only", style="bold"))
    return Group(*parts)


def _deal_title(replay: Replay, record: DealRecord) -> str:
    declarer = record.declarer
    who = f"{seat_label(declarer)} {replay.entrant(declarer)}" if declarer is not None else "?"
    return f"Deal {record.index} · declarer {who} · {contract_label(record.declaration)}"


def _render_deal(replay: Replay, record: DealRecord, console: Console, seat: int | None) -> None:
    console.print(Rule(colour_suits(_deal_title(replay, record)), align="left", style="bold"))
    dealt = record.dealt
    if dealt is not None:
        hands = Table.grid(padding=(0, 2))
        hands.add_column(no_wrap=True)
        hands.add_column(no_wrap=True)
        for s in range(4):
            mark = " (declarer)" if s == dealt.after.declarer else ""
            if seat is None:
                body = hand_text(dealt.after.hands[s])
            elif s == seat:
                body = hand_text(dealt.view(seat, after=True).hand)
            else:
                body = Text(f"{dealt.view(seat, after=True).hand_sizes[s]} cards, unseen", style="dim")
            hands.add_row(Text(f"{seat_label(s)} {replay.entrant(s)}{mark}"), body)
        console.print(hands)
    pending_faults: list[Event] = []
    play_events: list[Event] = []
    for e in record.events:
        if e.kind == "fault":
            pending_faults.append(e)
            continue
        if e.kind in ("declare", "double"):
            for f in pending_faults:
                console.print(fault_text(f.line, "  ⚠ "))
            pending_faults = []
            console.print(_bid_line(replay, e))
            if e.kind == "double" and e.after.phase is not Phase.DOUBLE:
                console.print(Text.assemble(("  levels: ", "bold"), levels_text(e.after)))
        elif e.kind in ("play", "trick"):
            play_events.extend(pending_faults)
            pending_faults = []
            play_events.append(e)
    if play_events:
        decl = record.declaration
        if decl is not None and decl.contract is Contract.DOMINO:
            _render_domino(replay, record, play_events, console, seat)
        else:
            _render_tricks(replay, record, play_events, console, seat)
    for f in pending_faults:
        console.print(fault_text(f.line, "  ⚠ "))
    end = record.end
    if end is not None:
        _render_deal_end(replay, record, end, console)
    elif record.events:
        if replay.valid:
            console.print(Text("  (the log stops inside this deal)", style="dim"))
        else:
            where = f"line {replay.bad_line}: {replay.error}"
            console.print(Text(f"  ✗ the log goes wrong here: {where}", style=FAULT_STYLE))


def _bid_line(replay: Replay, e: Event) -> Text:
    who = seat_label(e.seat)
    t = Text("  ")
    if e.kind == "declare":
        t.append(f"{who} declares ", style="bold")
        t.append_text(colour_suits(contract_label(e.after.declaration)))
    else:
        forced = " (auto)" if e.auto else ""
        t.append(f"{who} {double_words(e)}{forced}")
    return t


def _render_tricks(replay: Replay, record: DealRecord, events: list[Event], console: Console, seat: int | None) -> None:
    """One row per trick: cards under their seats, the winner's card highlighted ``[A♠]``."""
    title = colour_suits(f"Tricks — {contract_label(record.declaration)}, declarer {seat_label(record.declarer)}")
    table = Table(title=title, title_justify="left", box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("lead")
    for s in range(4):
        table.add_column(seat_label(s), justify="center", min_width=5)
    table.add_column("won by")
    if seat is not None:
        table.add_column(f"{seat_label(seat)} held", no_wrap=True)
    has_faults = any(e.kind == "fault" for e in events)
    if has_faults:
        table.add_column("!", style=FAULT_STYLE, no_wrap=True)
    notes: list[Text] = []
    row: dict[int, int] = {}
    row_notes: list[str] = []
    held: Text | None = None
    leader = None
    index = 0

    def flush(winner: int | None) -> None:
        cells = []
        for s in range(4):
            if s in row:
                style = WIN_STYLE if s == winner else ""
                c = card_text(row[s], style)
                cells.append(Text("[") + c + Text("]") if s == winner else c)
            else:
                cells.append(Text("…" if winner is None else ""))
        extra = [held or Text("")] if seat is not None else []
        won = Text(seat_label(winner), style="bold") if winner is not None else Text("(unfinished)", style="dim")
        notes_cell = [" ".join(row_notes)] if has_faults else []
        lead = seat_label(leader) if leader is not None else ""
        table.add_row(str(index + 1), lead, *cells, won, *extra, *notes_cell)

    for e in events:
        if e.kind == "fault":
            notes.append(fault_text(e.line, f"  ⚠{len(notes) + 1} trick {index + 1}: "))
            row_notes.append(f"⚠{len(notes)}")
        elif e.kind == "play":
            if not row:
                leader = e.seat
            card = parse_card(e.line["card"])
            row[e.seat] = card
            if seat is not None and e.seat == seat:
                held = hand_text(e.view(seat).hand)
        elif e.kind == "trick":
            flush(e.line["winner"])
            row, row_notes, held, leader = {}, [], None, None
            index += 1
    if row or row_notes:
        flush(None)
    console.print(table)
    for n in notes:
        console.print(n)


def _render_domino(replay: Replay, record: DealRecord, events: list[Event], console: Console, seat: int | None) -> None:
    """Turns in rounds (a new row when a seat's cell is taken), the layout after each row."""
    rules = replay.rules
    title = colour_suits(f"Domino — {contract_label(record.declaration)}, declarer {seat_label(record.declarer)}")
    table = Table(title=title, title_justify="left", box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    for s in range(4):
        table.add_column(seat_label(s), justify="center", min_width=5, no_wrap=True)
    table.add_column("layout after", no_wrap=True)
    if seat is not None:
        table.add_column(f"{seat_label(seat)} held", no_wrap=True)
    has_faults = any(e.kind == "fault" for e in events)
    if has_faults:
        table.add_column("!", style=FAULT_STYLE, no_wrap=True)
    notes: list[Text] = []
    cells: dict[int, Text] = {}
    row_notes: list[str] = []
    held: Text | None = None
    last_state: MatchState | None = None
    rows = 0

    def flush() -> None:
        nonlocal rows
        rows += 1
        extra = [held or Text("")] if seat is not None else []
        notes_cell = [" ".join(row_notes)] if has_faults else []
        table.add_row(
            str(rows),
            *[cells.get(s, Text("")) for s in range(4)],
            layout_text(last_state.layout, rules),
            *extra,
            *notes_cell,
        )

    for e in events:
        if e.kind == "fault":
            notes.append(fault_text(e.line, f"  ⚠{len(notes) + 1} row {rows + 1}: "))
            row_notes.append(f"⚠{len(notes)}")
            continue
        if e.kind != "play":
            continue
        if e.seat in cells:
            flush()
            cells, row_notes, held = {}, [], None
        card = e.line.get("card")
        if card is None:
            cell = Text("pass", style="dim")
        else:
            cell = card_text(parse_card(card))
            out = e.after.finished
            if e.seat in out:
                cell.append(f" {_ordinal_place(out.index(e.seat) + 1)}", style="bold")
        cells[e.seat] = cell
        if seat is not None and e.seat == seat:
            held = hand_text(e.view(seat).hand)
        last_state = e.after
    if cells:
        flush()
    console.print(table)
    for n in notes:
        console.print(n)


def _render_deal_end(replay: Replay, record: DealRecord, end: Event, console: Console) -> None:
    line = end.line
    state = end.after
    result = state.results[-1] if state.results else None
    reason = line.get("reason")
    decl = record.declaration
    trick_count = len(end.before.tricks) if result is not None else 0
    why = REASONS.get(reason, reason)
    if reason in ("all_queens", "king_taken", "all_hearts"):
        why += f" after trick {trick_count}"
    console.print(Text(f"Deal {record.index} ends: {why}", style="bold"))
    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("")
    for s in range(4):
        table.add_column(seat_label(s), justify="right", min_width=5)
    before_end = next((e for e in reversed(record.events) if e.kind == "play"), None)
    if decl is not None and decl.contract is Contract.DOMINO and before_end is not None:
        order = before_end.after.finished
        table.add_row("place", *[_ordinal_place(order.index(s) + 1) if s in order else "" for s in range(4)])
    elif before_end is not None:
        table.add_row("tricks", *[str(n) for n in before_end.after.tricks_won])
    table.add_row("raw", *[f"{v:+d}" for v in line["raw"]])
    table.add_row("settled", *[f"{v:+d}" for v in line["scores"]])
    table.add_row(Text("total", style="bold"), *[Text(f"{v:+d}", style="bold") for v in line["totals"]])
    console.print(table)


def _render_match_end(replay: Replay, console: Console) -> None:
    e = replay.match_end
    if e is None:
        return
    console.print()
    status = e.line.get("status")
    reason = f" ({e.line['reason']})" if e.line.get("reason") else ""
    console.print(Rule(f"Match {status}{reason}", align="left", style="bold"))
    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("seat")
    table.add_column("entrant")
    table.add_column("total", justify="right")
    table.add_column("place", justify="right")
    for s in range(4):
        places = e.line.get("places", ["?"] * 4)
        table.add_row(seat_label(s), replay.entrant(s), f"{e.line['totals'][s]:+d}", str(places[s]))
    console.print(table)


def _render_think_times(replay: Replay, console: Console) -> None:
    stats = [[0, 0, 0.0, 0.0, 0] for _ in range(4)]  # decisions, auto, total ms, max ms, faults
    any_ms = False
    for e in replay.events:
        s = e.seat
        if s is None:
            continue
        if e.kind == "fault":
            stats[s][4] += 1
        elif e.is_decision:
            st = stats[s]
            st[0] += 1
            st[1] += e.auto
            if e.ms is not None:
                any_ms = True
                st[2] += e.ms
                st[3] = max(st[3], e.ms)
    if not any(st[0] for st in stats):
        return
    console.print()
    table = Table(title="Decisions and think times", title_justify="left", box=None, padding=(0, 1))
    table.show_edge = table.pad_edge = False
    table.add_column("seat")
    for name in ("decisions", "auto", "total ms", "max ms", "faults"):
        table.add_column(name, justify="right")
    for s, (n, auto, total, most, faults) in enumerate(stats):
        table.add_row(
            seat_label(s), str(n), str(auto), f"{total:.3f}" if any_ms else "—", f"{most:.3f}" if any_ms else "—",
            Text(str(faults), style=FAULT_STYLE if faults else ""),
        )  # fmt: skip
    console.print(table)


# ---- the command -----------------------------------------------------------------------


def replay_command(
    log_file: Annotated[Path, typer.Argument(metavar="LOG", help="A match log (JSON Lines).")],
    verify_only: Annotated[bool, typer.Option("--verify", help="Only verify the log move by move and report.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verification as one JSON object.")] = False,
    deal: Annotated[
        Optional[int], typer.Option("--deal", min=0, help="Show only deal N (0-based, as in the log).")
    ] = None,
    seat: Annotated[
        Optional[int],
        typer.Option("--seat", min=0, max=3, help="Show only what seat S knew: its own hand and public plays."),
    ] = None,
    html: Annotated[
        Optional[Path],
        typer.Option("--html", metavar="OUT.html", help="Write a self-contained HTML viewer of the match."),
    ] = None,
) -> None:
    """Replay a match log in the terminal (or as an HTML page), verifying it as it goes.

    Exit 0 if the log is valid, 1 if it is invalid (shown up to the bad line), 2 if it cannot be
    read. --verify / --json only verify and report.
    """
    from .errors import LogFileError
    from .log import read_log_lines

    try:
        lines = list(read_log_lines(log_file))
    except LogFileError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2)
    if verify_only or as_json:
        report = verify(lines)
        if as_json:
            typer.echo(json.dumps(report.to_json()))
        elif report.valid:
            state = "complete" if report.complete else (report.status or "incomplete (cut short)")
            typer.echo(f"valid: {state}, {report.deals} deals, totals {report.totals}, places {report.places}")
        else:
            typer.echo(f"invalid: line {report.line}: {report.error}")
        if not report.valid:
            raise typer.Exit(1)
        return
    replay = load_replay(lines)
    deals = [r.index for r in replay.deals()]
    if deal is not None and deal not in deals:
        have = f"deals {deals[0]}–{deals[-1]}" if deals else "no deals"
        typer.echo(f"error: no deal {deal} in this log ({have})", err=True)
        raise typer.Exit(2)
    if html is not None:
        from .web import write_html

        try:
            steps = write_html(replay, html, deal=deal, seat=seat)
        except OSError as e:
            typer.echo(f"error: cannot write {html}: {e.strerror}", err=True)
            raise typer.Exit(2)
        typer.echo(f"wrote {html}: {len(deals)} deals, {steps} steps; {replay.verdict()}")
    else:
        render(replay, Console(highlight=False), deal=deal, seat=seat)
    if not replay.valid:
        raise typer.Exit(1)
