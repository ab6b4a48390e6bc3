"""Match log files: written atomically, read back as lines.

A log is written to ``NAME.part`` and renamed to ``NAME`` when the match ends, so a file with
the final name is always a finished match (complete or aborted); a crash leaves only a
``.part`` file, which still verifies as far as it goes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from arbiter.errors import LogFileError


class AtomicLogFile:
    """A line sink for ``MatchLogWriter`` that becomes visible under its name only on close."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".part")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.partial, "w", encoding="utf-8")
        except OSError as e:
            raise LogFileError(f"cannot write match log {self.partial}: {e.strerror}") from None

    @property
    def closed(self) -> bool:
        return self._file.closed

    def __call__(self, line: str) -> None:
        self._file.write(line + "\n")

    def flush(self) -> None:
        self._file.flush()

    def commit(self) -> Path:
        """Flush to disk and move the file to its final name."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self.partial, self.path)
        return self.path

    def discard(self) -> None:
        self._file.close()
        self.partial.unlink(missing_ok=True)


def read_log_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """The lines of a log file, keeping line ends (the verifier needs them to spot a cut)."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.readlines()
    except FileNotFoundError:
        raise LogFileError(f"no such match log: {path}") from None
    except IsADirectoryError:
        raise LogFileError(f"{path} is a folder, not a match log") from None
    except UnicodeDecodeError:
        raise LogFileError(f"{path} is not a UTF-8 text file, so not a match log") from None
    except OSError as e:
        raise LogFileError(f"cannot read match log {path}: {e.strerror}") from None
    return iter(lines)
