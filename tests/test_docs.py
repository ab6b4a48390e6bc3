"""The repository explains itself: no document or comment sends a reader outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"\.\./shared|\bRULES\.md\b|\bDESIGN\.md\b|spec/match-log\.md")


def test_no_tracked_text_refers_outside_the_repository():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    offenders = []
    for name in files:
        path = ROOT / name
        if name == "tests/test_docs.py" or not path.is_file() or path.suffix in (".png", ".jsonl"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{name}:{n}" for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert not offenders, offenders


def test_every_relative_link_in_the_docs_resolves():
    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        targets = re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8"))
        broken += [f"{doc.relative_to(ROOT)} -> {t}" for t in targets if not (doc.parent / t).exists()]
    assert not broken, broken
