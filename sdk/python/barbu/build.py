"""Which build runs: the modules compiled with mypyc, or the pure Python source.

``scripts/build_compiled.py`` compiles the modules named here into C extensions beside their
``.py`` files; Python imports an extension before the source of the same name, so the compiled
build runs wherever it was built. The pure source is imported instead when ``BARBU_PURE=1`` is
in the environment (the switch the tests and benches use to run both side by side), and when a
compiled build is stale (a source edited after it was built: an editable install runs what was
edited) or incomplete. ``import barbu`` and ``import arbiter`` install that choice before any
compiled module can be imported. This module itself is never compiled.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

COMPILED_SDK = (
    "barbu.rules.cards",
    "barbu.rules.tricks",
    "barbu.rules.domino",
    "barbu.rules.doubling",
    "barbu.rules.scoring",
    "barbu.rules.legality",
    "barbu.rules.state",
    "barbu.rules.playout",
    "barbu.rules.view",
    "barbu.sampler",
    "barbu.rollout",
)
"""The SDK's compiled modules: the engine a Monte-Carlo bot runs millions of times, the sampler.
(Not ``barbu.wire``: compiled, a bot's view from a request cost the same; protobuf's field reads
are its time.)"""
COMPILED_ARBITER = ("arbiter.transport.encode",)
"""The arbiter's compiled modules: the referee's per-decision work."""
SHARED_LIBRARIES = ("barbu._compiled__mypyc", "arbiter._compiled__mypyc")
"""One per group: the compiled code itself (each module's extension only loads its part)."""
PURE_ENV = "BARBU_PURE"
"""Set to 1: import the pure Python source even where compiled modules exist."""
REBUILD = "scripts/build_compiled.py"

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOTS = {"barbu": _HERE, "arbiter": os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(_HERE))), "arbiter")}


def pure_requested() -> bool:
    """True when the environment asks for the pure build (``BARBU_PURE`` set, and not ``0``)."""
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def _path(module: str, suffix: str) -> str:
    top, *rest = module.split(".")
    return os.path.join(_ROOTS[top], *rest) + suffix


def _group_files(modules: Sequence[str], shared: str) -> list[tuple[str, str | None]]:
    """(extension, its source) of each module of a group, then (the group's library, None)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return [(_path(m, suffix), _path(m, ".py")) for m in modules] + [(_path(shared, suffix), None)]


_GROUPS = {"barbu": (COMPILED_SDK, SHARED_LIBRARIES[0]), "arbiter": (COMPILED_ARBITER, SHARED_LIBRARIES[1])}


def compiled_files() -> list[str]:
    """Every file a compiled build consists of: each module's extension, each group's library."""
    return [path for modules, shared in _GROUPS.values() for path, _ in _group_files(modules, shared)]


def group_state(group: str) -> str:
    """The state of a package's compiled modules (``barbu`` or ``arbiter``): ``built``, ``none``
    (nothing compiled, or not visible here, as the arbiter's are not in a bot's sandbox),
    ``stale`` (a source newer than its extension) or ``incomplete`` (some files missing)."""
    stamps: list[tuple[float | None, str | None]] = []
    for path, source in _group_files(*_GROUPS[group]):
        try:
            stamps.append((os.stat(path).st_mtime, source))
        except OSError:
            stamps.append((None, source))
    if all(stamp is None for stamp, _ in stamps):
        return "none"
    if any(stamp is None for stamp, _ in stamps):
        return "incomplete"
    library = stamps[-1][0]  # the group's code: a module's own extension is only a shim, kept as is
    for _, source in stamps:
        try:
            if library is not None and source is not None and os.stat(source).st_mtime > library + 1:
                return "stale"
        except OSError:
            pass
    return "built"


def build_state() -> str:
    """The engine's (the SDK's) compiled build: see :func:`group_state`."""
    return group_state("barbu")


def loaded(module: ModuleType) -> str:
    """``compiled`` if this imported module is a C extension, else ``pure``."""
    origin = getattr(module, "__file__", None) or ""
    return "compiled" if origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else "pure"


def describe() -> str:
    """One line: the build this process runs, and why (it imports the engine to find out)."""
    import barbu.rules.state

    if loaded(barbu.rules.state) == "compiled":
        count = len(COMPILED_SDK) + (len(COMPILED_ARBITER) if group_state("arbiter") == "built" else 0)
        return f"compiled (mypyc, {count} modules)"
    if pure_requested():
        return f"pure Python ({PURE_ENV}=1)"
    states = {group_state(group) for group in _GROUPS}
    if "stale" in states:
        why = f"the compiled modules are older than their source: rebuild with {REBUILD}"
    elif "incomplete" in states:
        why = f"the compiled build is incomplete: rebuild with {REBUILD}"
    else:
        why = f"no compiled modules: {REBUILD} builds them"
    return f"pure Python ({why})"


class _SourceFirst(MetaPathFinder):
    """Finds the ``.py`` source of a compiled module, so that its extension is not imported."""

    def __init__(self, modules: frozenset[str]) -> None:
        self.modules = modules

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in self.modules or not path:
            return None
        name = fullname.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, name + ".py")
            if os.path.exists(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def runs_compiled() -> bool:
    """Whether this process may load the compiled build. It is one unit: the arbiter's modules
    call the engine's compiled code directly, built against that very engine, so a stale or
    incomplete part (or none of the engine) means the pure source for all. The arbiter's part
    alone may be absent (a bot's sandbox does not show it; a bot never imports it)."""
    if pure_requested():
        return False
    sdk, arbiter = group_state("barbu"), group_state("arbiter")
    return sdk == "built" and arbiter in ("built", "none")


def install() -> None:
    """Import every compiled module from its source unless :func:`runs_compiled` (idempotent)."""
    if any(isinstance(f, _SourceFirst) for f in sys.meta_path):
        return
    if not runs_compiled():
        sys.meta_path.insert(0, _SourceFirst(frozenset((*COMPILED_SDK, *COMPILED_ARBITER))))
