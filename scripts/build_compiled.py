"""Compile the hot modules with mypyc, in place: a C extension beside each ``.py`` it shadows.

    .venv/bin/python scripts/build_compiled.py           # build (needs a C compiler and Python's headers)
    .venv/bin/python scripts/build_compiled.py --clean   # remove every compiled module: pure Python again

The Python source stays the source of truth: Python imports an extension module before the
``.py`` of the same name, so an editable install runs the compiled build once it exists, and
``BARBU_PURE=1`` (``barbu.build``) makes a process import the ``.py`` files instead. Which build a
process runs: ``arbiter --version``. docs/speed.md says what is compiled and why.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk" / "python"
sys.path[:0] = [str(SDK), str(ROOT)]

from barbu.build import COMPILED_ARBITER, COMPILED_SDK, compiled_files  # noqa: E402


def source_of(module: str) -> Path:
    base = SDK if module.startswith("barbu") else ROOT
    return base.joinpath(*module.split(".")).with_suffix(".py")


def clean() -> int:
    removed = [Path(path) for path in compiled_files() if Path(path).exists()]
    for path in removed:
        path.unlink()
    print(f"build_compiled: removed {len(removed)} compiled modules; the pure Python build runs")
    return 0


def build(opt_level: str) -> int:
    from mypyc.build import mypycify
    from setuptools import setup

    groups = [
        ([str(source_of(m)) for m in COMPILED_SDK], "barbu._compiled"),
        ([str(source_of(m)) for m in COMPILED_ARBITER], "arbiter._compiled"),
    ]
    groups = [(paths, name) for paths, name in groups if paths]
    work = ROOT / "build" / "mypyc"  # the generated C and the objects, kept (git ignores build/): a rebuild reuses them
    os.chdir(ROOT)  # mypyc names modules from the paths, relative to the working folder
    extensions = mypycify(
        [
            f"--config-file={ROOT / 'pyproject.toml'}",
            "--no-warn-unused-configs",
            *(path for paths, _ in groups for path in paths),
        ],
        opt_level=opt_level,
        separate=groups,
        target_dir=str(work / "c"),
    )
    setup(
        name="barbu-arena-compiled",
        ext_modules=extensions,
        package_dir={"barbu": "sdk/python/barbu", "arbiter": "arbiter"},
        script_args=["--quiet", "build_ext", "--inplace", "--build-temp", str(work / "o")],
    )
    # An edit that leaves the generated C as it was (a comment, a docstring) relinks nothing, so
    # the extensions would stay older than their sources and barbu.build would call them stale:
    # they were just built from these sources, and say so.
    for path in compiled_files():
        if Path(path).exists():
            os.utime(path)
    print(f"build_compiled: {len(COMPILED_SDK) + len(COMPILED_ARBITER)} modules compiled with mypyc")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules")
    parser.add_argument("--opt-level", default="3", help="the C compiler's -O level (default 3)")
    args = parser.parse_args()
    return clean() if args.clean else build(args.opt_level)


if __name__ == "__main__":
    raise SystemExit(main())
