"""The SDK documents itself: every public module, class, function and method of ``barbu`` has
a docstring, and the doctests in them run (``python -m doctest`` semantics, through pytest).

Generated code (``barbu.v1``) is exempt. A name is public when it does not start with ``_``;
a method is public when its class is.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
from pathlib import Path

import barbu
import pytest
from barbu.build import loaded

SDK = Path(barbu.__file__).resolve().parent
GENERATED = ("barbu.v1",)
COMPILED_LIBRARY = "__mypyc"  # a compiled build's shared library (docs/speed.md): no source of its own


def _modules() -> list[str]:
    found = pkgutil.walk_packages([str(SDK)], prefix="barbu.")
    names = (info.name for info in found if not info.name.startswith(GENERATED))
    return sorted(["barbu", *(name for name in names if not name.endswith(COMPILED_LIBRARY))])


MODULES = _modules()


def _source(module: str) -> Path:
    path = SDK.joinpath(*module.split(".")[1:])
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _undocumented(module: str) -> list[str]:
    tree = ast.parse(_source(module).read_text(encoding="utf-8"))
    missing = [] if ast.get_docstring(tree) else [f"{module} (the module)"]

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name.startswith("_"):
                    continue
                if not ast.get_docstring(node):
                    missing.append(f"{prefix}{node.name}")
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, f"{module}.")
    return missing


@pytest.mark.parametrize("module", MODULES)
def test_public_names_have_docstrings(module):
    assert _undocumented(module) == []


def _doctests(module: str) -> list[doctest.DocTest]:
    """The module's doctests. A compiled module (docs/speed.md) keeps no docstrings the finder can
    see, so its examples are read from its source, and run against the compiled code."""
    mod = importlib.import_module(module)
    if loaded(mod) != "compiled":
        return doctest.DocTestFinder(exclude_empty=True).find(mod, module)
    source = _source(module)
    tree = ast.parse(source.read_text(encoding="utf-8"))
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)))]
    parser = doctest.DocTestParser()
    tests = []
    for node in nodes:
        text = ast.get_docstring(node, clean=False)
        if text and ">>>" in text:
            name = module if node is tree else f"{module}.{node.name}"  # type: ignore[union-attr]
            tests.append(parser.get_doctest(text, dict(vars(mod)), name, str(source), getattr(node, "lineno", 0)))
    return tests


@pytest.mark.parametrize("module", MODULES)
def test_doctests(module):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in _doctests(module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests of {module} failed (output above)"


def test_the_examples_are_many():
    """The doctests above exist (a finder that silently found none would pass)."""
    count = sum(len(t.examples) for m in MODULES for t in _doctests(m))
    assert count >= 40
