"""What every command shares: one ``error:`` line and an exit code for a user's mistake."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from barbu.rules import BarbuError

from arbiter.errors import FAILED, INTERRUPTED, USAGE, ArbiterError


def fail(message: str, code: int = USAGE) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def print_json(obj: Any) -> None:
    typer.echo(json.dumps(obj))


def database_error(e: BaseException) -> str | None:
    """One line for a database failure, or None if ``e`` is not one (SQLAlchemy is not imported
    just for this)."""
    exc = sys.modules.get("sqlalchemy.exc")
    if exc is None or not isinstance(e, exc.SQLAlchemyError):
        return None
    from arbiter.tournament.storage.db import first_line

    return f"database error: {first_line(e)}"


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user can act on into one ``error:`` line and the error's exit code;
    anything else is a bug and keeps its traceback."""
    try:
        yield
    except ArbiterError as e:
        if e.exit_code == INTERRUPTED:
            typer.echo(str(e), err=True)
            raise typer.Exit(INTERRUPTED) from None
        fail(str(e), e.exit_code)
    except BarbuError as e:
        fail(str(e))
    except OSError as e:
        fail(f"{e.strerror or e}: {e.filename}" if e.filename else str(e), FAILED)
    except Exception as e:
        message = database_error(e)
        if message is None:
            raise
        fail(message, FAILED)
