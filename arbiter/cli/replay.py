"""``arbiter replay``: a match log in the terminal (rich text) or as an HTML page.

Per deal the hands (or one seat's information set), the contract, the doubles, the tricks or the
Domino layout, the faults and the scores, ending with the verdict on the log. The model it draws
is :mod:`arbiter.replay.model`; ``--html`` hands it to :mod:`arbiter.web.viewer`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer
from barbu.loglines import DealEnd, Fault, LogLine, Played, TrickDone
from barbu.matchlog import verify
from barbu.rules import Contract, MatchState, Phase, cards_of
from barbu.rules.cards import SUIT_SYMBOLS
from barbu.rules.ruleset import Ruleset
from rich.console import Console, Group
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from arbiter.cli.common import fail, safe_console
from arbiter.replay.model import (
    REASONS,
    DealRecord,
    Event,
    Replay,
    card_label,
    contract_label,
    double_words,
    layout_rows,
    levels_text,
    load_replay,
    rank_label,
    seat_label,
)
from arbiter.text import printable

RED_SUITS = (1, 2)  # diamonds, hearts


SUIT_STYLE = "red"


WIN_STYLE = "bold reverse"


FAULT_STYLE = "bold red"


def card_text(card: int, style: str = "") -> Text:
    t = Text(card_label(card), style=style)
    if card // 13 in RED_SUITS:
        t.stylize(SUIT_STYLE)
    return t


def suit_symbol_text(suit: int) -> Text:
    return Text(SUIT_SYMBOLS[suit], style=SUIT_STYLE if suit in RED_SUITS else "")


def colour_suits(text: str) -> Text:
    """A plain string with ♥♦ coloured."""
    t = Text(text)
    for i, ch in enumerate(text):
        if ch in "♥♦":
            t.stylize(SUIT_STYLE, i, i + 1)
    return t


def hand_text(mask: int, suits: tuple[int, ...] = (3, 2, 0, 1), *, two_lines: bool = False) -> Text:
    """A hand by suit, high cards first: ``♠ A K 7  ♥ Q 3  ♣ —  ♦ J 10`` (with ``two_lines``,
    clubs and diamonds on a second line: how a narrow table keeps every card)."""
    out = Text()
    for i, s in enumerate(suits):
        if i:
            out.append("\n" if two_lines and i == 2 else "  ")
        out.append_text(suit_symbol_text(s))
        ranks = [c % 13 for c in reversed(cards_of(mask)) if c // 13 == s]
        out.append(" " + (" ".join(rank_label(r) for r in ranks) if ranks else "—"))
    return out


def layout_text(mask: int, rules: Ruleset, *, two_lines: bool = False) -> Text:
    """The Domino layout, a run per suit: ``♠8–K ♥9–J ♣· ♦5–A`` (``two_lines`` as in :func:`hand_text`)."""
    out = Text()
    rows = layout_rows(mask, rules)
    for i, s in enumerate((3, 2, 0, 1)):
        row = rows[s]
        if i:
            out.append("\n" if two_lines and i == 2 else " ")
        out.append_text(suit_symbol_text(s))
        if not row:
            out.append("·")
        elif len(row) == 1:
            out.append(rank_label(row[0] % 13))
        else:
            out.append(f"{rank_label(row[0] % 13)}–{rank_label(row[-1] % 13)}")
    return out


def fault_text(fault: LogLine, prefix: str = "") -> Text:
    assert isinstance(fault, Fault)
    t = Text(f"{prefix}fault {seat_label(fault.seat)} {fault.kind}", style=FAULT_STYLE)
    if fault.detail:
        t.append(f": {fault.detail}")
    t.append(f" → {fault.action}")
    return t


def duration_text(ms: float) -> str:
    """A think time with its unit, never three digits after a point (``610.815`` reads as a
    thousands separator): ``1.25 s``, ``610.8 ms``, ``96 µs``."""
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 1:
        return f"{ms:.1f} ms"
    return f"{ms * 1000:.0f} µs"


def _ordinal_place(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


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
    if h is None or replay.rules is None:  # both come from the match line
        return Group(Text("Barbu match log (no readable match line)", style="bold"))
    rules = dict(h.obj.get("rules") or {})
    preset = rules.pop("preset", "standard")
    rules_text = preset + "".join(
        f" {k}={','.join(map(str, v)) if isinstance(v, list) else json.dumps(v) if isinstance(v, dict) else v}"
        for k, v in rules.items()
    )
    title = Text("Barbu match ", style="bold")
    title.append(str(h.obj.get("match_id", "")), style="bold")
    facts = f"rules {rules_text}"
    if "seed" in h.obj:
        facts += f" · seed {h.obj['seed']}"
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


def _hands_table(replay: Replay, dealt: Event, seat: int | None, two_lines: bool) -> Table:
    """The deal's four hands (with ``seat``, only its own)."""
    hands = Table.grid(padding=(0, 2))
    hands.add_column(no_wrap=True)
    hands.add_column(no_wrap=True)
    for s in range(4):
        mark = " (declarer)" if s == dealt.after.declarer else ""
        if seat is None:
            body = hand_text(dealt.after.hands[s], two_lines=two_lines)
        elif s == seat:
            body = hand_text(dealt.view(seat, after=True).hand, two_lines=two_lines)
        else:
            body = Text(f"{dealt.view(seat, after=True).hand_sizes[s]} cards, unseen", style="dim")
        hands.add_row(Text(f"{seat_label(s)} {replay.entrant(s)}{mark}"), body)
    return hands


def _render_deal(replay: Replay, record: DealRecord, console: Console, seat: int | None) -> None:
    console.print(Rule(colour_suits(_deal_title(replay, record)), align="left", style="bold"))
    dealt = record.dealt
    if dealt is not None:
        _print_fitting(console, lambda two_lines: (_hands_table(replay, dealt, seat, two_lines), []))
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
        table = _domino_table if decl is not None and decl.contract is Contract.DOMINO else _tricks_table
        _print_fitting(console, lambda two_lines: table(replay, record, play_events, seat, two_lines))
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
    who = seat_label(e.actor)
    t = Text("  ")
    if e.kind == "declare":
        t.append(f"{who} declares ", style="bold")
        t.append_text(colour_suits(contract_label(e.after.declaration)))
    else:
        forced = " (auto)" if e.auto else ""
        t.append(f"{who} {double_words(e)}{forced}")
    return t


def _play_title(table: str, record: DealRecord) -> Text:
    """The title of a deal's table of plays: its contract and declarer (a played deal has one)."""
    declarer = record.declarer
    assert declarer is not None
    return colour_suits(f"{table} — {contract_label(record.declaration)}, declarer {seat_label(declarer)}")


def _last_columns(table: Table, events: list[Event], seat: int | None) -> bool:
    """The columns every deal table ends with: what the followed seat held, then the fault marks
    (only when the deal has faults). Returns whether it has."""
    if seat is not None:
        table.add_column(f"{seat_label(seat)} held", no_wrap=True)
    has_faults = any(e.kind == "fault" for e in events)
    if has_faults:
        table.add_column("!", style=FAULT_STYLE, no_wrap=True)
    return has_faults


def _print_fitting(console: Console, build: Callable[[bool], tuple[Table, list[Text]]]) -> None:
    """A deal's table and its notes; where the console is too narrow for the table, the held hands
    go in two lines (a terminal of 80 columns, or a pipe), so that no card is cut off."""
    table, notes = build(False)
    if console.measure(table, options=console.options.update_width(1 << 16)).maximum > console.width:
        table, notes = build(True)
    for column in table.columns:  # narrower still: a value folds onto the next line, never cut to "…"
        column.overflow = "fold"
    console.print(table)
    for n in notes:
        console.print(n)


def _tricks_table(
    replay: Replay, record: DealRecord, events: list[Event], seat: int | None, two_lines: bool
) -> tuple[Table, list[Text]]:
    """One row per trick: cards under their seats, the winner's card highlighted ``[A♠]``."""
    title = _play_title("Tricks", record)
    table = Table(title=title, title_justify="left", box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("lead")
    for s in range(4):
        table.add_column(seat_label(s), justify="center", min_width=5)
    table.add_column("won by", no_wrap=True)
    has_faults = _last_columns(table, events, seat)
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
        elif isinstance(e.line, Played) and e.line.card is not None:
            if not row:
                leader = e.actor
            row[e.actor] = e.line.card
            if seat is not None and e.actor == seat:
                held = hand_text(e.view(seat).hand, two_lines=two_lines)
        elif isinstance(e.line, TrickDone):
            flush(e.line.winner)
            row, row_notes, held, leader = {}, [], None, None
            index += 1
    if row or row_notes:
        flush(None)
    return table, notes


def _domino_table(
    replay: Replay, record: DealRecord, events: list[Event], seat: int | None, two_lines: bool
) -> tuple[Table, list[Text]]:
    """Turns in rounds (a new row when a seat's cell is taken), the layout after each row."""
    rules = replay.rules
    assert rules is not None  # a deal's lines follow the match line
    title = _play_title("Domino", record)
    table = Table(title=title, title_justify="left", box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    for s in range(4):
        table.add_column(seat_label(s), justify="center", min_width=5, no_wrap=True)
    table.add_column("layout after", no_wrap=True)
    has_faults = _last_columns(table, events, seat)
    notes: list[Text] = []
    cells: dict[int, Text] = {}
    row_notes: list[str] = []
    held: Text | None = None
    last_state: MatchState | None = None
    rows = 0

    def flush() -> None:
        nonlocal rows
        assert last_state is not None  # a row holds a play
        rows += 1
        extra = [held or Text("")] if seat is not None else []
        notes_cell = [" ".join(row_notes)] if has_faults else []
        table.add_row(
            str(rows),
            *[cells.get(s, Text("")) for s in range(4)],
            layout_text(last_state.layout, rules, two_lines=two_lines),
            *extra,
            *notes_cell,
        )

    for e in events:
        if e.kind == "fault":
            notes.append(fault_text(e.line, f"  ⚠{len(notes) + 1} row {rows + 1}: "))
            row_notes.append(f"⚠{len(notes)}")
            continue
        if not isinstance(e.line, Played):
            continue
        if e.actor in cells:
            flush()
            cells, row_notes, held = {}, [], None
        if e.line.card is None:
            cell = Text("pass", style="dim")
        else:
            cell = card_text(e.line.card)
            out = e.after.finished
            if e.actor in out:
                cell.append(f" {_ordinal_place(out.index(e.actor) + 1)}", style="bold")
        cells[e.actor] = cell
        if seat is not None and e.actor == seat:
            held = hand_text(e.view(seat).hand, two_lines=two_lines)
        last_state = e.after
    if cells:
        flush()
    return table, notes


def _render_deal_end(replay: Replay, record: DealRecord, end: Event, console: Console) -> None:
    line = end.line
    assert isinstance(line, DealEnd)
    state = end.after
    result = state.results[-1] if state.results else None
    reason = line.reason  # the verifier checked the line against the engine's result
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
    table.add_row("raw", *[f"{v:+d}" for v in line.raw])
    table.add_row("settled", *[f"{v:+d}" for v in line.scores])
    table.add_row(Text("total", style="bold"), *[Text(f"{v:+d}", style="bold") for v in line.totals])
    console.print(table)


def _render_match_end(replay: Replay, console: Console) -> None:
    e = replay.match_end
    if e is None:
        return
    console.print()
    reason = f" ({e.reason})" if e.reason else ""
    console.print(Rule(f"Match {e.status}{reason}", align="left", style="bold"))
    table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    table.add_column("seat")
    table.add_column("entrant")
    table.add_column("total", justify="right")
    table.add_column("place", justify="right")
    for s in range(4):
        places = e.places or ("?",) * 4
        table.add_row(seat_label(s), replay.entrant(s), f"{e.totals[s]:+d}", str(places[s]))
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
    for name in ("decisions", "auto", "think total", "think max", "faults"):
        table.add_column(name, justify="right")
    for s, (n, auto, total, most, faults) in enumerate(stats):
        table.add_row(
            seat_label(s),
            str(n),
            str(auto),
            duration_text(total) if any_ms else "—",
            duration_text(most) if any_ms else "—",
            Text(str(faults), style=FAULT_STYLE if faults else ""),
        )
    console.print(table)


def _seat(replay: Replay, name: str) -> int:
    """``--seat``: a seat number, or the entrant that holds one seat of the log: its name as the
    log writes it (``lowbot@2`` in an arena's), or a bare name (``lowbot``) when one version holds it."""
    if name.strip() in ("0", "1", "2", "3"):
        return int(name)
    entrants = [replay.entrant(s) if replay.header is not None else "" for s in range(4)]
    seats = [s for s in range(4) if entrants[s] == name]
    if not seats and "@" not in name:
        seats = [s for s in range(4) if entrants[s].rpartition("@")[0] == name]
        versions = sorted({entrants[s] for s in seats})
        if len(versions) > 1:
            fail(f"--seat {name}: {', '.join(versions)} all play here; give one, e.g. --seat {versions[0]}")
    if len(seats) == 1:
        return seats[0]
    shown = ", ".join(f"{s} {entrants[s]}" for s in range(4)) if replay.header else "none: no match line"
    if seats:
        fail(f"--seat {name}: that entrant holds seats {', '.join(map(str, seats))}; give one seat number")
    fail(f"--seat {name}: no seat 0-3 and no entrant of this log has that name (seats: {shown})")


def replay_command(
    log_file: Annotated[str, typer.Argument(metavar="LOG", help="A match log (JSON Lines).")],
    verify_only: Annotated[bool, typer.Option("--verify", help="Only verify the log move by move and report.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verification as one JSON object.")] = False,
    deal: Annotated[
        int | None, typer.Option("--deal", metavar="N", min=0, help="Show only deal N (0-based, as in the log).")
    ] = None,
    seat_name: Annotated[
        str | None,
        typer.Option(
            "--seat",
            metavar="SEAT",
            help="Show only what one seat knew (its own hand and public plays): a seat number 0-3 or an entrant's name (NAME@VERSION, or NAME alone when one version plays).",
        ),
    ] = None,
    html: Annotated[
        str | None,
        typer.Option("--html", metavar="OUT.html", help="Write a self-contained HTML viewer of the match."),
    ] = None,
) -> None:
    """Replay a match log in the terminal (or as an HTML page), verifying it as it goes.

    Exit code 0: the log is valid; 1: invalid (shown up to the bad line); 2: it cannot be read.

    --verify and --json only verify and report.
    """
    from arbiter.errors import ConfigError, LogFileError
    from arbiter.files import output_path
    from arbiter.referee.logfile import read_log_lines

    try:
        out = output_path(html, "--html") if html is not None else None  # before reading anything
        if not log_file.strip():
            raise LogFileError("the match log's name is empty")
        lines = list(read_log_lines(log_file))
    except (LogFileError, ConfigError) as e:
        fail(str(e))
    if verify_only or as_json:
        report = verify(lines)
        if as_json:
            typer.echo(json.dumps(report.to_json()))
        elif report.valid:
            state = "complete" if report.complete else (report.status or "incomplete (cut short)")
            typer.echo(f"valid: {state}, {report.deals} deals, totals {report.totals}, places {report.places}")
        else:
            typer.echo(f"invalid: line {report.line}: {printable(report.error)}")
        if not report.valid:
            raise typer.Exit(1)
        return
    replay = load_replay(lines)
    seat = None if seat_name is None else _seat(replay, seat_name)
    deals = [r.index for r in replay.deals()]
    if deal is not None and deal not in deals:
        have = f"deals {deals[0]}–{deals[-1]}" if deals else "no deals"
        fail(f"no deal {deal} in this log ({have})")
    if out is not None:  # --html
        from arbiter.web import write_html

        try:
            steps = write_html(replay, out, deal=deal, seat=seat)
        except OSError as e:
            fail(f"cannot write {html}: {e.strerror}")
        typer.echo(f"wrote {printable(html)}: {len(deals)} deals, {steps} steps; {printable(replay.verdict())}")
    else:
        render(replay, safe_console(highlight=False), deal=deal, seat=seat)
    if not replay.valid:
        raise typer.Exit(1)
