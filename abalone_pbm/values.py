"""What every layer agrees on about a stored value: the range of an integer column, and
the error that says what was wrong without quoting the value.

Kept apart so that ``db`` (which enforces them on every row) and ``mail.validation``
(which checks a stranger's input before it gets that far) share them without the
database layer importing the mail layer.
"""

from __future__ import annotations

__all__ = ["INTEGER_MIN", "INTEGER_MAX", "ValueFreeError"]

#: The range of PostgreSQL's ``integer`` (the type of every Integer column); SQLite
#: would store more, so the same limit applies to both.
INTEGER_MIN = -(2**31)
INTEGER_MAX = 2**31 - 1


class ValueFreeError(ValueError):
    """An error whose message names what was wrong but never quotes the value.

    The worker records the message of these errors; of any other exception it records
    only the type and where it happened (its message may hold the failing value).
    """
