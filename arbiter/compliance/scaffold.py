"""``arbiter new-bot``: a ready-to-run bot folder for a new author.

:func:`new_bot` writes ``PARENT/NAME/`` from the templates in ``templates/``
(Jinja2): a bot program that passes ``arbiter check-bot`` as written, a README (run, check,
enter, improve), ``entrant.yaml`` (the bot's entrant name and command, what an arena's
submission reads) and ``tournament.yaml``, a gauntlet entering the bot against the sample bots
(heuristic and random) of the Barbu Arena checkout the arbiter is installed from, named by
absolute path. A Node.js bot also gets ``package.json`` and its own copy of
``proto/barbu/v1/arbiter.proto``, so the folder stands alone (after ``npm install``).

The folder is built beside its target under a temporary name and renamed into place, so an
error leaves nothing behind. It refuses an existing folder that is not empty, a name that is
not a valid entrant name (:data:`arbiter.tournament.config.NAME_RE`) and an unknown language,
with a :class:`~arbiter.errors.ConfigError`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined

from arbiter.errors import ConfigError
from arbiter.text import printable
from arbiter.tournament.config import NAME_RE

__all__ = ["LANGUAGES", "NewBot", "find_checkout", "new_bot"]

LANGUAGES = ("python", "node")
"""The languages ``new-bot`` writes a bot in."""

# Each language's files: (template under templates/, file in the bot's folder).
_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "python": (
        ("python/bot.py.j2", "bot.py"),
        ("python/README.md.j2", "README.md"),
        ("common/tournament.yaml.j2", "tournament.yaml"),
        ("common/entrant.yaml.j2", "entrant.yaml"),
        ("common/gitignore.j2", ".gitignore"),
    ),
    "node": (
        ("node/bot.js.j2", "bot.js"),
        ("node/package.json.j2", "package.json"),
        ("node/README.md.j2", "README.md"),
        ("common/tournament.yaml.j2", "tournament.yaml"),
        ("common/entrant.yaml.j2", "entrant.yaml"),
        ("common/gitignore.j2", ".gitignore"),
    ),
}
_PROGRAM = {"python": ("python", "bot.py"), "node": ("node", "bot.js")}
_PROTO = Path("proto", "barbu", "v1", "arbiter.proto")
_SAMPLES = ("heuristic_bot.py", "random_bot.py")


@dataclass(frozen=True)
class NewBot:
    """What :func:`new_bot` wrote, and what to run next."""

    name: str
    language: str
    folder: Path
    """The bot's folder, as given (relative to the current folder if the parent was)."""
    files: tuple[str, ...]
    """The files written, relative to the folder, in writing order."""
    checkout: Path
    """The Barbu Arena checkout whose sample bots the tournament file names."""

    @property
    def command(self) -> list[str]:
        """The bot's command line, run from the current folder."""
        program, script = _PROGRAM[self.language]
        return [program, str(self.folder / script)]

    @property
    def next_steps(self) -> list[list[str]]:
        """The commands to run next, in order, from the current folder."""
        steps = []
        if self.language == "node":
            steps.append(["npm", "install", "--prefix", str(self.folder)])
        steps.append(["arbiter", "check-bot", "--", *self.command])
        steps.append(["arbiter", "run", str(self.folder / "tournament.yaml")])
        steps.append(["arbiter", "standings", str(self.folder / "tournament.yaml")])
        return steps

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "language": self.language,
            "folder": str(self.folder),
            "files": list(self.files),
            "checkout": str(self.checkout),
            "next": [shlex.join(step) for step in self.next_steps],
        }


def find_checkout() -> Path:
    """The Barbu Arena checkout the arbiter runs from (it is installed in editable mode), which
    holds ``sample_bots/``; a ConfigError when the sample bots are not there."""
    root = Path(__file__).resolve().parents[2]  # arbiter/compliance/scaffold.py -> the checkout
    samples = root / "sample_bots"
    missing = [name for name in _SAMPLES if not (samples / name).is_file()]
    if missing:
        raise ConfigError(
            f"cannot find the sample bots ({', '.join(missing)}) in {printable(str(samples))}: "
            "new-bot needs the arbiter installed from a Barbu Arena checkout (pip install -e .)"
        )
    return root


def new_bot(name: str, language: str = "python", parent: str | os.PathLike[str] = ".") -> NewBot:
    """Write the bot folder ``parent/name`` (see the module doc) and say what was written."""
    if not NAME_RE.match(name):
        raise ConfigError(
            f"bad bot name {printable(repr(name))}: use 1 to 64 letters, digits and _ . + -, "
            "starting with a letter or a digit (the rule for entrant names)"
        )
    if language not in LANGUAGES:
        raise ConfigError(f"unknown language {printable(repr(language))}: choose one of {', '.join(LANGUAGES)}")
    parent_path = Path(os.fspath(parent))
    folder = parent_path / name
    shown = printable(str(folder))
    if not parent_path.is_dir():
        raise ConfigError(f"--dir {printable(str(parent_path))}: no such folder")
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"{shown} exists and is not a folder: choose another name")
        if any(folder.iterdir()):
            raise ConfigError(f"{shown} exists and is not empty: choose another name, or remove it first")
    root = find_checkout()
    proto = root / _PROTO
    if language == "node" and not proto.is_file():
        raise ConfigError(f"cannot find the protocol file {printable(str(proto))} to copy into the bot's folder")
    context = _context(name, language, root)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".new", dir=parent_path))
    written: list[str] = []
    try:
        for template, target in _FILES[language]:
            text = _environment().get_template(template).render(**context)
            (staging / target).write_text(text, encoding="utf-8")
            written.append(target)
        if language == "node":
            (staging / _PROTO.parent).mkdir(parents=True)
            shutil.copyfile(proto, staging / _PROTO)
            written.append(_PROTO.as_posix())
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it private; a bot folder is not
        if st is not None:
            folder.rmdir()  # the empty folder it replaces
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return NewBot(name=name, language=language, folder=folder, files=tuple(written), checkout=root)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _context(name: str, language: str, root: Path) -> dict[str, object]:
    samples = root / "sample_bots"
    program, script = _PROGRAM[language]
    entrants = {"heuristic", "random"}
    heuristic, random_ = ("sample-heuristic", "sample-random") if name in entrants else ("heuristic", "random")
    return {
        "name": name,
        "package_name": _package_name(name),
        "language": language,
        "command": f"{program} {script}",
        "checkout": str(root),
        "heuristic_name": heuristic,
        "heuristic_command": shlex.join(["python", str(samples / "heuristic_bot.py")]),
        "random_name": random_,
        "random_command": shlex.join(["env", "BARBU_SEED=1", "python", str(samples / "random_bot.py")]),
        "protocol_doc": str(root / "docs" / "protocol.md"),
        "guide": str(root / "docs" / "writing-bots.md"),
    }


def _package_name(name: str) -> str:
    """An npm package name for the bot: lower case, URL-safe."""
    return re.sub(r"[^a-z0-9._-]", "-", name.lower())


_PLAIN_YAML = re.compile(r"^[A-Za-z0-9_/][A-Za-z0-9_./+=@ -]*$")


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar: as it is when that reads back the same, else double-quoted
    (a JSON string is a valid YAML double-quoted scalar)."""
    if _PLAIN_YAML.match(text) and not text.endswith(" ") and " #" not in text:
        return text
    return json.dumps(text, ensure_ascii=False)


@cache
def _environment() -> Environment:
    """The templates are program text, not HTML: no escaping; an undefined name is an error."""
    env = Environment(
        loader=PackageLoader("arbiter.compliance", "templates"),
        autoescape=False,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["yaml"] = yaml_scalar
    env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False)
    return env
