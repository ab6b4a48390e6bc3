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
)
"""The SDK's compiled modules: the engine a Monte-Carlo bot runs millions of times, the sampler."""
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
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def _path(module: str, suffix: str) -> str:
    top, *rest = module.split(".")
    return os.path.join(_ROOTS[top], *rest) + suffix


def compiled_files() -> list[str]:
    """Every file a compiled build consists of: each module's extension, each group's library."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return [_path(m, suffix) for m in (*COMPILED_SDK, *COMPILED_ARBITER, *SHARED_LIBRARIES)]


def build_state() -> str:
    """``built``, ``none`` (nothing compiled), ``stale`` (a source newer than its extension) or
    ``incomplete`` (some files of the build missing)."""
    stamps: list[float | None] = []
    for path in compiled_files():
        try:
            stamps.append(os.stat(path).st_mtime)
        except OSError:
            stamps.append(None)
    if all(s is None for s in stamps):
        return "none"
    if any(s is None for s in stamps):
        return "incomplete"
    for module, stamp in zip((*COMPILED_SDK, *COMPILED_ARBITER), stamps, strict=False):
        try:
            if stamp is not None and os.stat(_path(module, ".py")).st_mtime > stamp + 1:
                return "stale"
        except OSError:
            pass
    return "built"


def loaded(module: ModuleType) -> str:
    """``compiled`` if this imported module is a C extension, else ``pure``."""
    origin = getattr(module, "__file__", None) or ""
    return "compiled" if origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else "pure"


def describe() -> str:
    """One line: the build this process runs, and why (it imports the engine to find out)."""
    import barbu.rules.state

    if loaded(barbu.rules.state) == "compiled":
        return f"compiled (mypyc, {len(COMPILED_SDK) + len(COMPILED_ARBITER)} modules)"
    state = build_state()
    why = {
        "none": f"no compiled modules: {REBUILD} builds them",
        "stale": f"the compiled modules are older than their source: rebuild with {REBUILD}",
        "incomplete": f"the compiled build is incomplete: rebuild with {REBUILD}",
    }.get(state, f"{PURE_ENV}=1")
    return f"pure Python ({why})"


class _SourceFirst(MetaPathFinder):
    """Finds the ``.py`` source of a compiled module, so that its extension is not imported."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in _COMPILED or not path:
            return None
        name = fullname.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, name + ".py")
            if os.path.exists(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


_COMPILED = frozenset((*COMPILED_SDK, *COMPILED_ARBITER))


def install() -> None:
    """Import compiled modules from their source under ``BARBU_PURE=1`` or when the compiled build
    is stale or incomplete (idempotent)."""
    if any(isinstance(f, _SourceFirst) for f in sys.meta_path):
        return
    if pure_requested() or build_state() in ("stale", "incomplete"):
        sys.meta_path.insert(0, _SourceFirst())
