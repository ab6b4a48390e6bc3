"""check-bot checks a bot as an arena does (issue 31 item 2): its isolation, limits and connect
time are options (``--isolation``, ``--limit KEY=VALUE``/``--memory``, ``--connect``), read as a
tournament file's are; the real command line in a subprocess, a real bot process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
RANDOM_BOT = str(ROOT / "sample_bots" / "random_bot.py")


def check_bot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arbiter", "check-bot", *args], capture_output=True, text=True, timeout=300)


def test_a_limit_is_read_as_a_tournament_file_s_and_reaches_the_bot():
    starved = check_bot("--isolation", "none", "--memory", "16MiB", "--", "python", RANDOM_BOT)
    assert starved.returncode == 1 and "FAIL  hello" in starved.stdout, starved.stdout
    wrong = check_bot("--limit", "memory=1", "--", "python", RANDOM_BOT)
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == (
        "error: --limit memory=1: must be at least 16 MiB, got 1; sizes are in bytes unless a unit is given, e.g. 2GiB"
    )
    unknown = check_bot("--limit", "ram=2GiB", "--", "python", RANDOM_BOT)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: --limit ram=2GiB: unknown key")


def test_listen_is_for_an_unsandboxed_bot_only():
    both = check_bot("--listen", "127.0.0.1:0", "--isolation", "bubblewrap", "--", "python", RANDOM_BOT)
    assert both.returncode == 2
    assert both.stderr.strip() == (
        "error: --listen serves the arbiter on TCP, which a sandboxed bot cannot reach: use --transport tcp instead"
    )
    bad = check_bot("--isolation", "docker", "--", "python", RANDOM_BOT)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --isolation docker: choose one of none, bubblewrap"


def test_a_failing_bot_s_report_ends_with_the_last_200_lines_it_printed(tmp_path):
    """A Java stack trace's cause is neither its first nor its last line: the report keeps the
    end of what the bot printed (200 lines), in the text and in the JSON."""
    bot = tmp_path / "noisy.py"
    bot.write_text(
        "import sys\nfor n in range(300):\n    print(f'trace line {n}', file=sys.stderr)\n"
        "print('Caused by: the real cause', file=sys.stderr)\nfor n in range(3):\n    print(f'\\tat frame {n}', file=sys.stderr)\nsys.exit(1)\n"
    )
    run = check_bot("--isolation", "none", "--json", "--", "python", str(bot))
    assert run.returncode == 1
    import json

    output = json.loads(run.stdout)["output"].splitlines()
    assert "Caused by: the real cause" in output and output[-1] == "\tat frame 2"
    assert len(output) == 200
    text = check_bot("--isolation", "none", "--", "python", str(bot)).stdout
    assert "the bot's output (its last 200 lines):\n" in text and "Caused by: the real cause" in text
