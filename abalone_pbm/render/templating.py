"""The Jinja2 templates of the mails (``templates/``), plain text and strict.

Templates are looked up first in ``abalone_pbm/templates`` (where the wheel installs
them) and then in the repository's top-level ``templates/``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

import abalone_pbm

from .text import and_list, hang, plural, tidy, wrap_text


def template_dirs() -> list[Path]:
    """Where templates are looked for: the installed package first, then the checkout."""
    package = Path(abalone_pbm.__file__).resolve().parent
    candidates = [package / "templates", package.parent / "templates"]
    return [path for path in candidates if path.is_dir()]


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The Jinja2 environment of all mail templates (plain text, strict).

    ``trim_blocks`` and ``lstrip_blocks`` are on, so a ``{% ... %}`` tag on a line of its
    own leaves no blank line behind.
    """
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(p) for p in template_dirs()]),
        autoescape=False,
        # Loaded once per process: no look at each file's time for every mail rendered
        # (a template and its includes are several stat calls each time).
        auto_reload=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["wrap"] = wrap_text
    env.filters["hang"] = hang
    env.filters["and_list"] = and_list
    env.filters["plural"] = plural
    return env


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)


def render_body(name: str, **context: Any) -> str:
    return tidy(render_template(name, **context))
