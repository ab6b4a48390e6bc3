"""The committed generated protobuf code matches proto/ (scripts/gen_proto.py --check)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gen_proto.py"


def test_generated_code_is_fresh():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, (
        "the generated code in sdk/python/barbu/v1 is stale: run `python scripts/gen_proto.py`\n" + proc.stderr
    )


def test_check_detects_stale_code(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("gen_proto", SCRIPT)
    gen_proto = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_proto)
    out = tmp_path / "barbu" / "v1"
    shutil.copytree(ROOT / "sdk" / "python" / "barbu" / "v1", out)
    monkeypatch.setattr(gen_proto, "OUT_ROOT", tmp_path)
    assert gen_proto.check() == 0
    pyi = out / "arbiter_pb2.pyi"
    pyi.write_text(pyi.read_text() + "# edited by hand\n")
    assert gen_proto.check() == 1
    assert "stale generated code" in capsys.readouterr().err and "arbiter_pb2.pyi" in pyi.name
