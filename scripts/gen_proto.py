#!/usr/bin/env python3
"""Regenerate the Python protobuf/gRPC code from proto/ into sdk/python/barbu/v1/.

    python scripts/gen_proto.py           # regenerate the committed files
    python scripts/gen_proto.py --check   # exit 1 if the committed files are stale

The generated files are committed and never edited by hand. ``--check`` generates into a
temporary directory and compares; tests/test_proto_fresh.py runs it. The generator is
``python -m grpc_tools.protoc`` from grpcio-tools (the ``test`` extra), so the output depends
on its pinned version.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTOS = ("barbu/v1/arbiter.proto", "barbu/v1/lobby.proto")
OUT_ROOT = ROOT / "sdk" / "python"
OUT_PACKAGE = "barbu/v1"
GENERATED = tuple(
    f"{stem}{suffix}" for stem in ("arbiter", "lobby") for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")
)


def generate(out_root: Path) -> None:
    """Run protoc with the proto root as the include path, writing under ``out_root``."""
    (out_root / OUT_PACKAGE).mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *(str(PROTO_ROOT / p) for p in PROTOS),
    ]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"gen_proto: protoc failed (exit {result.returncode}): {' '.join(cmd)}")


def check() -> int:
    """Generate into a temporary directory and diff against the committed files."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh_root = Path(tmp)
        generate(fresh_root)
        stale = []
        for name in GENERATED:
            committed = OUT_ROOT / OUT_PACKAGE / name
            fresh = fresh_root / OUT_PACKAGE / name
            new = fresh.read_text().splitlines(keepends=True)
            old = committed.read_text().splitlines(keepends=True) if committed.exists() else []
            if old != new:
                stale.append(name)
                diff = difflib.unified_diff(old, new, f"committed/{name}", f"fresh/{name}", n=1)
                sys.stderr.writelines(list(diff)[:40])
    if stale:
        print(
            f"gen_proto: stale generated code in sdk/python/{OUT_PACKAGE}: {', '.join(stale)}; "
            "run `python scripts/gen_proto.py` and commit the result",
            file=sys.stderr,
        )
        return 1
    print(f"gen_proto: sdk/python/{OUT_PACKAGE} is up to date")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed generated code is stale")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        for name in GENERATED:
            shutil.copyfile(Path(tmp) / OUT_PACKAGE / name, OUT_ROOT / OUT_PACKAGE / name)
    print(f"gen_proto: wrote {', '.join(GENERATED)} to sdk/python/{OUT_PACKAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
