"""One rule for what a column accepts, the same on SQLite and PostgreSQL.

PostgreSQL refuses a string longer than its ``VARCHAR(n)``, a NUL character in text, and
an integer outside 32 bits; SQLite stores all three. Code tested on SQLite alone would
then crash on PostgreSQL with the first long Message-ID. ``install`` makes every ORM
insert and update check each value against its column first and refuse it with a
``ColumnValueError`` that names the table and column (never the value) on both
databases. The callers validate their input before (mail.validation); this check is
the backstop that keeps the two databases from behaving differently.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Integer, String, Table, event
from sqlalchemy.orm import Mapper

from ..values import INTEGER_MAX, INTEGER_MIN, ValueFreeError

__all__ = ["ColumnValueError", "column_value_problem", "check_row", "check_values", "install"]


class ColumnValueError(ValueFreeError):
    """A value that does not fit its column (the message names the column only)."""


def column_value_problem(column_type: Any, value: Any) -> str | None:
    """Why ``value`` cannot be stored in a column of ``column_type``, or None."""
    if value is None:
        return None
    if isinstance(column_type, String) and isinstance(value, str):
        length = column_type.length
        if length is not None and len(value) > length:
            return f"longer than {length} characters"
        if "\x00" in value:
            return "contains a NUL character"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "is not valid Unicode"
    elif isinstance(column_type, Integer) and isinstance(value, int) and not isinstance(
        value, bool
    ):
        if not INTEGER_MIN <= value <= INTEGER_MAX:
            return "outside the range of an integer column"
    return None


def check_row(mapper: Mapper[Any], target: Any) -> None:
    """Raise ColumnValueError when a value of ``target`` does not fit its column."""
    state = target.__dict__
    for attribute in mapper.column_attrs:
        if attribute.key not in state:
            continue
        value = state[attribute.key]
        for column in attribute.columns:
            problem = column_value_problem(column.type, value)
            if problem is not None:
                table = cast(Table, column.table)
                raise ColumnValueError(f"{table.name}.{column.name}: value {problem}")


def check_values(table: Any, values: dict[str, Any]) -> None:
    """``check_row`` for a Core INSERT or UPDATE: ``values`` by column name of ``table``."""
    for name, value in values.items():
        column = table.c[name]
        problem = column_value_problem(column.type, value)
        if problem is not None:
            raise ColumnValueError(f"{table.name}.{column.name}: value {problem}")


def _before_write(mapper: Mapper[Any], connection: Any, target: Any) -> None:
    check_row(mapper, target)


def install(base: type) -> None:
    """Check the rows of every model derived from ``base`` before insert and update."""
    event.listen(base, "before_insert", _before_write, propagate=True)
    event.listen(base, "before_update", _before_write, propagate=True)
