"""Log records on one line each, whatever they carry.

A traceback in the server's log is many lines that tell an operator little and may
quote what a stranger's mail held; a header value with a line feed could forge a log
line. ``OneLineFormatter`` writes every record as one line: an exception becomes its
type and where it happened (``mail.validation.error_summary``, no values), and line
breaks or control characters in the message are made visible instead of obeyed.
"""

from __future__ import annotations

import logging
from types import TracebackType

from .mail.validation import error_summary
from .redact import mask_log_text

__all__ = ["OneLineFormatter", "install_one_line_logging"]

_ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class OneLineFormatter(logging.Formatter):
    """A Formatter that never writes more than one line per record."""

    def formatException(self, ei: _ExcInfo | tuple[None, None, None]) -> str:  # noqa: N802
        error = ei[1]
        return "" if error is None else "[" + error_summary(error, limit=1000) + "]"

    def formatStack(self, stack_info: str) -> str:  # noqa: N802
        return ""

    def format(self, record: logging.LogRecord) -> str:
        # No reply token or database password in any line (``redact``).
        text = mask_log_text(super().format(record))
        # repr-style escapes keep the line one line and show what was there.
        return "".join(
            char if char.isprintable() or char == " " else (" " if char == "\n" else
                                                              repr(char)[1:-1])
            for char in text
        )


def install_one_line_logging() -> None:
    """Give every handler of the root logger a OneLineFormatter (same format string)."""
    for handler in logging.getLogger().handlers:
        current = handler.formatter
        fmt = current._fmt if current is not None else None  # noqa: SLF001
        handler.setFormatter(OneLineFormatter(fmt))
