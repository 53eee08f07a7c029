"""Rendering one board for several recipients: what does not depend on the recipient
(the diagram, the picture, the tables, an example move) is computed once.

Inside ``with same_board():`` the caller promises that the views and boards it renders
do not change; ``shared(key, compute)`` then keeps each value for the block, by a key
that names the objects it was computed from (their ``id``: they stay alive, and
unchanged, for the block).  Outside such a block every call computes afresh, so no
value can outlive the objects it was computed from.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["same_board", "shared"]

T = TypeVar("T")

_values: ContextVar[dict[Hashable, Any] | None] = ContextVar("render_shared", default=None)


@contextmanager
def same_board() -> Iterator[None]:
    """A block in which the boards and views rendered do not change."""
    token = _values.set({})
    try:
        yield
    finally:
        _values.reset(token)


def shared(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, once per ``key`` inside a ``same_board`` block."""
    values = _values.get()
    if values is None:
        return compute()
    try:
        value: T = values[key]
    except KeyError:
        value = values[key] = compute()
    return value
