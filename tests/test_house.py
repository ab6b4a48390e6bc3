"""The house rules that keep the code base easy to live in, checked on every run.

No module of ``arbiter`` or the SDK over 600 lines, no function over 80 (as ``ruff format``
writes them: a ``# fmt: skip`` may keep only a data table on its own layout, ten at most), and no
import cycle between modules (an import inside a function counts, and so does one made only for the type checker:
both are dependencies of the design). Each check has a probe showing it can fail.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"arbiter": ROOT / "arbiter", "barbu": ROOT / "sdk" / "python" / "barbu"}
GENERATED = ROOT / "sdk" / "python" / "barbu" / "v1"  # protoc's output (scripts/gen_proto.py)
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_FORMAT_SKIPS = 10
# A data table is a module-level constant: its closing bracket stands alone at the start of a line.
DATA_TABLE_END = re.compile(r"^[\]}]  # fmt: skip$")


def _sources() -> list[Path]:
    return sorted(p for folder in PACKAGES.values() for p in folder.rglob("*.py") if GENERATED not in p.parents)


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``file:line name (N lines)`` for every function or method longer than ``limit`` lines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - first + 1
            if lines > limit:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def import_cycles(*packages: str) -> list[list[str]]:
    """The strongly connected groups of more than one module in the packages' import graph."""
    graph = grimp.build_graph(*packages)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (the graph is deep)
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in edges:
                    continue
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return groups


def test_no_module_is_over_600_lines():
    long = [
        f"{p.relative_to(ROOT)} ({n} lines)"
        for p in _sources()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, "split these modules along their concepts:\n" + "\n".join(long)


def test_no_function_is_over_80_lines():
    long = [f for p in _sources() for f in long_functions(p)]
    assert not long, "split these functions:\n" + "\n".join(long)


def format_skips(path: Path) -> tuple[int, list[str]]:
    """How many ``# fmt: skip`` markers the file holds, and those not closing a data table."""
    marked = [(n, line) for n, line in enumerate(path.read_text().splitlines(), 1) if "# fmt: skip" in line]
    return len(marked), [f"{path.relative_to(ROOT)}:{n}" for n, line in marked if not DATA_TABLE_END.match(line)]


def test_formatting_is_skipped_only_on_a_few_data_tables():
    counts = [format_skips(p) for p in _sources()]
    stray = [where for _, places in counts for where in places]
    assert not stray, "let ruff format these (a skip is for a data table only):\n" + "\n".join(stray)
    assert sum(n for n, _ in counts) <= MAX_FORMAT_SKIPS


def test_no_import_cycle():
    cycles = import_cycles(*PACKAGES)
    assert not cycles, "modules that import each other, directly or through others:\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_checks_can_fail(tmp_path, monkeypatch):
    """Probes: a long function is found, and a two-module cycle is found."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    probe = ROOT / "arbiter" / "_house_probe_tmp.py"
    long_file = tmp_path / "long.py"
    long_file.write_text(f"def f():\n{body}\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert long_functions(long_file) == ["long.py:1 f (81 lines)"]
    package = tmp_path / "cyclic"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from cyclic import b\n")
    (package / "b.py").write_text("from cyclic import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("cyclic") == [["cyclic.a", "cyclic.b"]]
    skips = tmp_path / "skips.py"
    skips.write_text("TABLE = {\n    1: 2,\n}  # fmt: skip\nf(1,  2)  # fmt: skip\n")
    assert format_skips(skips) == (2, ["skips.py:4"])
    assert not probe.exists()
