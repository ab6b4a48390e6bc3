"""Checking an uploaded bot before it joins the ladder: check-bot's sessions
(:mod:`arbiter.compliance.checkbot`), played with the bot kept from the machine as the arena's
matches keep it (its isolation, bubblewrap where the host has it, and its limits)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from arbiter.arena.archive import entrant_file
from arbiter.compliance.build import BuildResult, build_copy, remove_built
from arbiter.compliance.checkbot import check_bot, check_bot_line
from arbiter.errors import SubmissionRefused
from arbiter.process.limits import Limits


def check_submission(
    folder: Path, command: str, *, isolation: str, limits: Limits, time_limit: float, connect: float = 10.0
) -> tuple[bool, str]:
    """Whether the bot in ``folder``, started there with ``command`` (its entrant.yaml's), passes
    every step of check-bot with ``time_limit`` seconds per decision; and the report as JSON text
    for its author: ``{"ok", "steps": [{"name", "ok", "detail"}], "text"}``, ``text`` being the
    report as ``arbiter check-bot`` prints it. Paths into the store are shown relative to the
    bot's folder: the author sees its files, not where the arena keeps them. ``connect`` is the
    arena's ``time_control.connect``; ``reproduce`` the ``arbiter check-bot`` line that runs the
    same check in the bot's folder (a rejection's text ends with it)."""
    entrant = entrant_file(folder)
    transport = entrant.transport
    built = None
    if entrant.build is not None:
        built = built_folder(folder, entrant.build, isolation=isolation, limits=limits)
        if not built.ok:
            text = without_store(built.render(), folder)
            return False, json.dumps({"ok": False, "steps": [], "build": built.to_json(), "text": text})
        folder = folder.parent / BUILT
    report = check_bot(
        command,
        time_limit,
        connect_timeout=connect,
        cwd=str(folder),
        isolation=isolation,
        limits=limits,
        transport=transport,
    )
    for step in report.steps:  # the bot's output names its files: by their place in its folder only
        step.detail = without_store(step.detail, folder)
    report.output = without_store(report.output, folder)
    line = check_bot_line(
        command,
        time_limit=time_limit,
        connect_timeout=connect,
        isolation=isolation,
        limits=limits,
        transport=transport,
    )
    text = report.render()
    if not report.ok:
        text += f"\nthe same check, in your bot's folder:\n  {line}"
    if built is not None:
        text = f"{built.render()}\n{text}"
    build = {} if built is None else {"build": built.to_json()}
    return report.ok, json.dumps({**report.to_json(), **build, "reproduce": line, "text": text})


BUILT = "built"  # beside a bundle's files: the copy its build step made, where it is checked and plays


def playable_folder(files: Path) -> Path | None:
    """Where a stored bot runs: its built copy if its entrant.yaml has a build step (None while
    it has none), else its files as sent."""
    try:
        build = entrant_file(files).build
    except SubmissionRefused:
        return None
    if build is None:
        return files
    built = files.parent / BUILT
    return built if built.is_dir() else None


def built_folder(files: Path, command: str, *, isolation: str, limits: Limits) -> BuildResult:
    """The bundle's ``files`` built with ``command`` into ``BUILT`` beside them, once per bundle
    (a bundle sent again is built already): the copy is built under another name, then renamed."""
    built = files.parent / BUILT
    if built.is_dir():
        return BuildResult(command, True, "built already (the same files were sent before)", 0.0, "")
    work = files.parent / f".{BUILT}-{os.getpid()}"
    if work.exists():
        remove_built(work)
    result = build_copy(files, work, command, isolation=isolation, limits=limits)
    if result.ok:
        os.rename(work, built)
    else:
        remove_built(work)
    return result


def without_store(text: str, folder: Path) -> str:
    """``text`` with the bot's ``folder`` (``STORE/<digest>/files``) as ``.``, its files by their
    place in it, and the store itself as ``<store>``: an author never sees where the arena keeps bots."""
    store = folder.parent.parent
    for path, shown in ((folder, "."), (store, "<store>")):
        for name in dict.fromkeys((str(path), os.path.realpath(path))):
            text = text.replace(f"{name}/", "" if shown == "." else f"{shown}/").replace(name, shown)
    return text
