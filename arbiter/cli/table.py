"""``arbiter play``: take a seat yourself, in the browser, against three local bots."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arbiter.cli.common import IsolationOption, chosen_isolation, fail, print_json, user_errors
from arbiter.cli.play import (
    FORCE_HELP,
    MAX_SEED,
    check_new_files,
    rules_of,
    short_name,
)
from arbiter.text import printable

if TYPE_CHECKING:
    from barbu.rules import Ruleset

    from arbiter.human.table import TableSpec


def play_command(
    bots: Annotated[
        list[str],
        typer.Option("--bot", metavar="CMD", help="A bot command, 3 times: your opponents, in seat order after you."),
    ],
    seed: Annotated[int, typer.Option(metavar="N", min=0, max=MAX_SEED, help="Seed for the deals.")] = 0,
    rules: Annotated[str, typer.Option("--rules", metavar="PRESET", help="Rules preset.")] = "standard",
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set", metavar="SWITCH=VALUE", help="Override a rules switch: --set contracts=barbu (repeatable)."
        ),
    ] = None,
    seat: Annotated[int, typer.Option(metavar="SEAT", min=0, max=3, help="Your seat (seat 0 declares first).")] = 0,
    name: Annotated[str, typer.Option("--name", metavar="NAME", help="Your name in the match log.")] = "human",
    listen: Annotated[
        str, typer.Option(metavar="HOST:PORT", help="Where the table page is served (port 0: any free one).")
    ] = "127.0.0.1:0",
    time_per_decision: Annotated[
        float, typer.Option("--time-per-decision", metavar="SECONDS", help="Your free time per decision.")
    ] = 60.0,
    reserve: Annotated[
        float, typer.Option("--reserve", metavar="SECONDS", help="Your reserve for the whole match.")
    ] = 600.0,
    max_strikes: Annotated[
        int, typer.Option("--max-strikes", metavar="N", min=1, max=1000, help="Timeouts before a seat forfeits.")
    ] = 3,
    abandon: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            min=0,
            help="With no page open that long while a decision waits (a closed tab), your seat forfeits; 0: never.",
        ),
    ] = 90.0,
    linger: Annotated[
        float,
        typer.Option(metavar="SECONDS", min=0, help="How long the page stays served after the match, for its replay."),
    ] = 600.0,
    log_file: Annotated[
        str | None,
        typer.Option("--log", metavar="FILE", help="Match log path (default: logs/play-SEED-TIME.jsonl)."),
    ] = None,
    isolation: IsolationOption = None,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the address, then the result, as JSON lines.")] = False,
) -> None:
    """Play a match yourself in the browser against three bot processes: the table page is
    served on this machine (its address is printed), the match is refereed and logged as any."""
    from arbiter.human.table import HUMAN_TIME
    from arbiter.referee.timecontrol import TimeControl

    if len(bots) != 3:
        fail(f"you play against exactly 3 --bot options, got {len(bots)}")
    try:
        control = TimeControl(per_decision=time_per_decision, reserve=reserve, match_limit=HUMAN_TIME.match_limit)
    except ValueError as e:
        fail(str(e))
    spec = _table_spec(bots, seat, rules_of(rules, settings), seed, log_file, force)
    spec = replace(spec, person=name, time_control=control, max_strikes=max_strikes)
    spec = replace(spec, abandon=abandon or None, isolation=chosen_isolation(isolation))
    _serve_table(spec, listen, linger, as_json)


def _table_spec(bots: list[str], seat: int, rules: Ruleset, seed: int, log_file: str | None, force: bool) -> TableSpec:
    """The match of ``arbiter play`` (who sits where, its rules and log), its files checked."""
    from arbiter.files import output_path
    from arbiter.human.table import TableSpec
    from arbiter.match.play import BotSpec
    from arbiter.referee.loop import MatchSetup
    from arbiter.tournament.config import bot_command

    for cmd in bots:
        bot_command(cmd)
    default_log = Path("logs") / f"play-{seed}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    log_path = output_path(log_file if log_file is not None else default_log, "--log")
    stem = log_path.name.removesuffix(".jsonl")
    outputs = [log_path.with_name(f"{stem}.seat{s}.stderr") for s in range(4)]
    check_new_files("--log", log_path, [log_path, *outputs], force)
    opponents = [BotSpec(name=f"{short_name(cmd)}-s{(seat + 1 + i) % 4}", command=cmd) for i, cmd in enumerate(bots)]
    return TableSpec(
        bots=(opponents[0], opponents[1], opponents[2]),
        setup=MatchSetup(rules, seed=seed, match_id=stem),
        log_path=log_path,
        seat=seat,
        replace=force,
    )


def _serve_table(spec: TableSpec, listen: str, linger: float, as_json: bool) -> None:
    """Serve the table page, play the match, print how it ended, keep the page for ``linger``."""
    from arbiter.arena.webserver import WebServer
    from arbiter.human.app import new_key, table_app
    from arbiter.human.table import HumanTable

    table = HumanTable(spec)
    key = new_key()
    with user_errors():
        web = WebServer(table_app(table, key), listen)
    web.start()
    url = f"http://{web.address}/{key}/"
    if as_json:
        print_json({"url": url})
    else:
        typer.echo(f"your table: {url}  (open it in a browser; Ctrl-C stops)")
    try:
        table.start()
        with user_errors():
            played = table.wait()
        r = played.result
        if as_json:
            print_json(
                {
                    "status": r.status,
                    "totals": r.totals,
                    "places": r.places,
                    "forfeits": r.forfeits,
                    "log": str(played.log_path),
                }
            )
        else:
            typer.echo(f"{r.status}: {r.deals} deals; totals {r.totals}, places {r.places}")
            typer.echo(f"log: {printable(played.log_path)}")
            if linger:
                typer.echo(f"the page stays open {linger:g} s for its summary and replay (Ctrl-C stops)")
        deadline = time.monotonic() + linger
        while time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        table.close()
        web.stop()
