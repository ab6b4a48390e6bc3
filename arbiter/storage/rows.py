"""Rows read from the results database, checked against their tables.

The database is input like any file: a row edited by hand or by another program (a date that is
not one, a number that is text, a list that is not JSON or not four long) is refused here with a
StorageError naming the table, the row and the column, instead of a traceback wherever the value
is used next.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from sqlalchemy import Table, text
from sqlalchemy.types import TypeDecorator, TypeEngine
from sqlmodel import Session, SQLModel
from sqlmodel.sql.expression import SelectOfScalar

from arbiter.errors import StorageError
from arbiter.storage.models import JsonList, Match, table_of
from arbiter.text import printable

Row = TypeVar("Row", bound=SQLModel)

# Match's columns that hold JSON lists, and what each list must be.
_LISTS = {"seats": (str, "4 entrant names"), "totals": (int, "4 whole numbers"), "places": (int, "4 places")}


def bad_row(table: str, row: object, column: str, why: str) -> StorageError:
    row_id = getattr(row, "id", row)
    return StorageError(
        f"the results database's table {table}, row id {row_id}, column {column}: {why}; the row was changed "
        "outside arbiter: restore the database from a copy, or delete the tournament and run it again"
    )


def checked(session: Session, query: SelectOfScalar[Row]) -> list[Row]:
    """The rows of ``query`` (one table model), each checked against its table."""
    try:
        rows = list(session.exec(query))
    except (ValueError, TypeError) as e:  # a value the column's type cannot load (a date that is not one)
        raise _find_unloadable(session, query, e) from None
    for row in rows:
        check_row(row)
    return rows


@cache
def _columns(model: type[SQLModel]) -> tuple[str, tuple[tuple[str, type, bool], ...]]:
    """A table's name and, for each column but the JSON lists, its name, Python type and whether
    it may be empty (worked out once per table: every row read is checked)."""
    table = table_of(model)
    columns = tuple(
        (c.name, _python_type(c.type), bool(c.nullable or c.primary_key))
        for c in table.columns
        if not isinstance(c.type, JsonList)  # checked below, as lists
    )
    return table.name, columns


def check_row(row: SQLModel) -> None:
    name, columns = _columns(type(row))
    for column, want, may_be_empty in columns:
        value = getattr(row, column)
        if value is None:
            if not may_be_empty:
                raise bad_row(name, row, column, "is empty")
            continue
        check_value(name, row, column, value, want)
    if isinstance(row, Match):
        for name, (kind, words) in _LISTS.items():
            _check_list(row, name, kind, words)


def check_value(table: str, row: object, column: str, value: object, want: type) -> None:
    """``value`` of ``row``'s ``column`` is a ``want`` (a whole number where a number is wanted)."""
    kind = type(value)
    if kind is want or (kind is int and want is float):
        return  # the common case, at once
    fits = isinstance(value, want) and not (want is int and isinstance(value, bool))
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        fits = True
    if not fits:
        raise bad_row(table, row, column, f"{printable(repr(value)[:40])} is not a {_WORDS[want]}")


def _check_list(row: Match, name: str, kind: type, words: str) -> None:
    value = getattr(row, name)
    good = isinstance(value, list) and len(value) == 4
    good = good and all(isinstance(v, kind) and not isinstance(v, bool) for v in value)
    if not good:
        raise bad_row("matches", row, name, f"{printable(repr(value)[:40])} is not a JSON list of {words}")


_WORDS = {int: "whole number", float: "number", str: "text", bool: "true/false value", datetime: "date and time"}


def _python_type(column_type: TypeEngine[Any]) -> type:
    if isinstance(column_type, TypeDecorator):  # SQLModel's UTCDateTime: its python_type is object
        column_type = column_type.impl_instance
    try:
        return column_type.python_type
    except NotImplementedError:
        return object


def _find_unloadable(session: Session, query: Any, error: Exception) -> StorageError:
    """The row and column that made loading fail, read as the driver returns them."""
    table: Table | None = None
    for description in query.column_descriptions:
        entity = description.get("entity")
        if isinstance(entity, type) and issubclass(entity, SQLModel):
            table = table_of(entity)
    if table is None:
        return StorageError(f"cannot read the results database: {error}")
    dates = [c.name for c in table.columns if _python_type(c.type) is datetime]
    raw = session.connection().execute(text(f"SELECT id, {', '.join(dates)} FROM {table.name}"))
    for row in raw:
        for name, value in zip(dates, row[1:], strict=True):
            if value is None or isinstance(value, datetime):
                continue
            try:
                datetime.fromisoformat(str(value))
            except ValueError:
                return bad_row(table.name, row[0], name, f"{printable(repr(value)[:40])} is not a date and time")
    return StorageError(f"cannot read table {table.name} of the results database: {error}")
