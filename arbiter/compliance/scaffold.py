"""``arbiter new-bot``: a ready-to-run bot folder for a new author.

:func:`new_bot` writes ``PARENT/NAME/`` from the templates in ``templates/``
(Jinja2): a bot program that passes ``arbiter check-bot`` as written, a README (run, check,
enter, improve), ``entrant.yaml`` (the bot's entrant name and command, what an arena's
submission reads) and ``tournament.yaml``, a gauntlet entering the bot against the sample bots
(heuristic and random) of the Barbu Arena checkout the arbiter is installed from, named by
absolute path. A Node.js bot also gets ``package.json`` and its own copy of
``proto/barbu/v1/arbiter.proto``, so the folder stands alone (after ``npm install``). A Go or
Java bot is the sample bot of its language (``sample_bots/go/``, ``sample_bots/java/``) under
the new name: its sources, its tests and its ``build.sh``, which builds it offline from
Debian's packages, with its own copy of the ``.proto`` too.

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

LANGUAGES = ("python", "node", "go", "java")
"""The languages ``new-bot`` writes a bot in."""

_COMMON = (
    ("common/tournament.yaml.j2", "tournament.yaml"),
    ("common/entrant.yaml.j2", "entrant.yaml"),
    ("common/gitignore.j2", ".gitignore"),
)
# Each language's files: (template under templates/, file in the bot's folder).
_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "python": (("python/bot.py.j2", "bot.py"), ("python/README.md.j2", "README.md"), *_COMMON),
    "node": (
        ("node/bot.js.j2", "bot.js"),
        ("node/package.json.j2", "package.json"),
        ("node/README.md.j2", "README.md"),
        *_COMMON,
    ),
    "go": (("go/README.md.j2", "README.md"), *_COMMON),
    "java": (("java/README.md.j2", "README.md"), *_COMMON),
}
# The command that starts the bot, from its folder: its last word is the bot's file there.
_PROGRAM = {"python": ("python", "bot.py"), "node": ("node", "bot.js"), "go": ("./bot",), "java": ("./bot",)}
_PROTO = Path("proto", "barbu", "v1", "arbiter.proto")
_OWN_PROTO = ("node", "go", "java")
"""The languages whose folder holds its own copy of the ``.proto`` (loaded or compiled there)."""
# A compiled bot's folder starts as the sample bot of its language (files under sample_bots/LANG/,
# copied to the same place), whose build.sh makes ./bot; the line that names it gets the new name
# (the pattern's two groups are what stands before and after the quoted name).
_SAMPLE_FILES = {
    "go": ("build.sh", "main.go", "codec.go", "strategy.go", "strategy_test.go"),
    "java": ("build.sh", "src/bot/Main.java", "src/bot/Strategy.java", "test/bot/StrategyTest.java"),
}
_NAME_LINE = {
    "go": ("main.go", re.compile(r'^(\tbotName += )"[^"]*"()$', re.M)),
    "java": ("src/bot/Main.java", re.compile(r'^(  static final String BOT_NAME = )"[^"]*"(;)$', re.M)),
}
_TCP_ONLY = ("java",)
_BUILT_BY_ARENA = ("java",)
"""The languages whose entrant.yaml says how an arena builds the bot (build.sh works in its sandbox)."""
"""The languages whose bot cannot dial a Unix socket (Debian's grpc-java: docs/protocol.md, Java)."""
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
        *program, script = _PROGRAM[self.language]
        return [*program, str(self.folder / script)]

    @property
    def next_steps(self) -> list[list[str]]:
        """The commands to run next, in order, from the current folder."""
        steps = []
        if self.language == "node":
            steps.append(["npm", "install", "--prefix", str(self.folder)])
        if self.language in _SAMPLE_FILES:
            steps.append(["bash", str(self.folder / "build.sh")])
        transport = ["--transport", "tcp"] if self.language in _TCP_ONLY else []
        steps.append(["arbiter", "check-bot", *transport, "--", *self.command])
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
    if language in _OWN_PROTO and not proto.is_file():
        raise ConfigError(f"cannot find the protocol file {printable(str(proto))} to copy into the bot's folder")
    sample = root / "sample_bots" / language
    missing = [name for name in _SAMPLE_FILES.get(language, ()) if not (sample / name).is_file()]
    if missing:
        raise ConfigError(f"cannot find the {language} sample bot's {', '.join(missing)} in {printable(str(sample))}")
    context = _context(name, language, root)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".new", dir=parent_path))
    written: list[str] = []
    try:
        for template, target in _FILES[language]:
            text = _environment().get_template(template).render(**context)
            (staging / target).write_text(text, encoding="utf-8")
            written.append(target)
        if language in _OWN_PROTO:
            (staging / _PROTO.parent).mkdir(parents=True)
            shutil.copyfile(proto, staging / _PROTO)
            written.append(_PROTO.as_posix())
        if language in _SAMPLE_FILES:
            written.extend(_copy_sample(name, language, sample, staging))
        os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it private; a bot folder is not
        if st is not None:
            folder.rmdir()  # the empty folder it replaces
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return NewBot(name=name, language=language, folder=folder, files=tuple(written), checkout=root)


def _copy_sample(name: str, language: str, sample: Path, staging: Path) -> list[str]:
    """Copy the sample bot's files into ``staging`` with their modes, then name the bot ``name``
    in the file that names it; the files written."""
    for file in _SAMPLE_FILES[language]:
        (staging / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(sample / file, staging / file)
    file, line = _NAME_LINE[language]
    text = (staging / file).read_text(encoding="utf-8")
    named, count = line.subn(lambda m: f"{m.group(1)}{json.dumps(name)}{m.group(2)}", text)
    if count != 1:  # the sample changed: better no folder than a bot under the sample's name
        raise ConfigError(f"cannot find the line that names the bot in the {language} sample bot's {file}")
    (staging / file).write_text(named, encoding="utf-8")
    return list(_SAMPLE_FILES[language])


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _context(name: str, language: str, root: Path) -> dict[str, object]:
    samples = root / "sample_bots"
    entrants = {"heuristic", "random"}
    heuristic, random_ = ("sample-heuristic", "sample-random") if name in entrants else ("heuristic", "random")
    return {
        "name": name,
        "package_name": _package_name(name),
        "language": language,
        "command": " ".join(_PROGRAM[language]),
        "tcp": language in _TCP_ONLY,
        "build": "bash build.sh" if language in _BUILT_BY_ARENA else None,
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
