"""A valid tournament file checked against this machine, after parsing: do its programs and
scripts exist, its user, its log folder, its lobby's certificate and key (readable PEM files);
can its sandbox be built; and, when the file chose no isolation, the strongest this machine
supports (:func:`resolve_environment`)."""

from __future__ import annotations

import logging
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

from arbiter.errors import ConfigError
from arbiter.files import output_folder, read_text
from arbiter.process.command import BotCommand
from arbiter.process.sandbox import Isolation, strongest_isolation
from arbiter.process.users import resolve_user
from arbiter.text import printable
from arbiter.tournament.config.model import TournamentConfig

log = logging.getLogger(__name__)

MAX_PEM_BYTES = 1 << 20  # a certificate chain or a key file
PEM_BLOCKS = {
    "certificate": re.compile(r"-----BEGIN CERTIFICATE-----"),
    "private key": re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
}


def resolve_environment(config: TournamentConfig) -> TournamentConfig:
    """``config`` once this machine can play it (a ConfigError naming the file's line otherwise),
    with the isolation chosen when the file chose none."""
    where = config.where

    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(f"{where.get(key, printable(str(config.path or '')))}: {key}: {message}")

    for i, entrant in enumerate(config.entrants):
        if entrant.launch is not None:
            key = f"entrants[{i}].command"
            try:
                check_launch(entrant.launch, Path(entrant.cwd))
            except ValueError as e:
                raise fail(key, str(e)) from None
    if config.lobby is not None and config.lobby.cert is not None and config.lobby.key is not None:
        for key, path, what in (
            ("lobby.tls.cert", config.lobby.cert, "certificate"),
            ("lobby.tls.key", config.lobby.key, "private key"),
        ):
            if why := pem_problem(path, what):
                raise fail(key, why)
    try:
        output_folder(config.log_folder, "log_folder")  # a folder or a new path
    except ConfigError as e:
        raise ConfigError(f"{where['log_folder']}: {e}" if "log_folder" in where else str(e)) from None
    try:
        user = resolve_user(config.limits.user)
    except ConfigError as e:
        raise fail("limits.user", str(e)) from None
    if user.is_other and os.geteuid() != 0:
        raise fail("limits.user", f"running bots as user {user.name} needs the arbiter to run as root")
    if config.isolation == Isolation.BUBBLEWRAP:
        from arbiter.process.sandbox import bubblewrap_problem

        if problem := bubblewrap_problem(user):
            raise fail(
                "isolation",
                f"bubblewrap cannot run here ({problem}); bots would not be isolated: install the 'bubblewrap' "
                "package and allow user namespaces, or remove this key",
            )
        return config
    if config.isolation is None:
        return replace(config, isolation=strongest_isolation(user))
    return config


def check_launch(launch: str, base: Path) -> None:
    """A ValueError unless the program of ``launch`` and the script it names exist here."""
    command = BotCommand.parse(launch)
    program = command.program
    if "/" in program:
        target = _path(program, base)
        if not target.is_file():
            raise ValueError(f"no such file: {program} (looked for {target})")
        if not os.access(target, os.X_OK):
            raise ValueError(f"{program} is not executable (chmod +x it, or run it with its interpreter)")
    elif shutil.which(program) is None:
        raise ValueError(f"program {program!r} is not on PATH")
    for script in command.scripts:
        target = _path(script, base)
        if not target.is_file():
            raise ValueError(f"no such file: {script} (looked for {target})")


def pem_problem(path: Path, what: str) -> str | None:
    """Why the file at ``path`` cannot be the lobby's TLS ``what`` ("certificate" or "private
    key"): missing, unreadable, not PEM, or holding no block of that kind; or None."""
    try:
        text = read_text(path, MAX_PEM_BYTES, f"{what} file")
    except ConfigError as e:
        return str(e)
    shown = printable(str(path))
    if "-----BEGIN " not in text:
        return f"{shown} is not a PEM file (no -----BEGIN line): give the {what} in PEM form"
    block = PEM_BLOCKS[what].search(text)
    if block is None:
        return f"{shown} holds no {what} (no -----BEGIN {what.upper()}----- block); are cert and key swapped?"
    if "ENCRYPTED" in block.group(0):
        return f"{shown} is an encrypted private key: the lobby needs it without a passphrase"
    return None


def launch_command(command: str) -> str:
    """The command line to start for ``command`` (a valid one): a bare ``python`` is the arbiter's own."""
    return BotCommand.parse(command).launch


def bot_command(command: str, base_dir: Path | None = None, where: str = "--bot") -> str:
    """The command line to launch for a bot given on the command line (a bare ``python`` made the
    arbiter's own), once its program and script are found, as a tournament file's commands are;
    a ConfigError naming ``where`` otherwise."""
    try:
        launch = launch_command(command)
        check_launch(launch, (base_dir or Path.cwd()).resolve())
    except ValueError as e:
        raise ConfigError(f"{where} {command!r}: {e}") from None
    return launch


def _path(text: str, base: Path) -> Path:
    path = Path(os.path.expanduser(text))
    return path if path.is_absolute() else base / path
