"""Text from outside (a bot's output, a match log, a file name) made safe to show on a terminal.

A bot's stderr or an entrant name in a hand-made log may hold escape sequences that recolour,
retitle or scramble a terminal, and a non-UTF-8 file name holds bytes no terminal encoding takes.
:func:`printable` spells every such character out (``\\x1b``, ``\\u202e``), so what is shown is
one line of plain, visible characters; everything else is left as it is.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the surrogates of undecodable bytes (os.fsdecode's surrogateescape),
# and the invisible format characters that reorder or hide text (bidi overrides, zero widths).
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)


def _spell(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte carried by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, newlines: bool = False) -> str:
    """``text`` with every control or invisible character spelled out; with ``newlines``, line
    breaks are kept (for multi-line output), else they are spelled out too (one line)."""
    s = str(text)
    if newlines:
        return "\n".join(_UNSAFE.sub(_spell, part) for part in s.split("\n"))
    return _UNSAFE.sub(_spell, s)
