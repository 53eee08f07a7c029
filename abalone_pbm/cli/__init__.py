"""The ``abalone-pbm`` command line (the console script is :func:`main`).

- ``main``: the parser, built from the modules below, and ``main(argv)``.
- ``rules``: ``moves``, ``perft``.
- ``server``: ``serve``, ``process``, ``work``, ``send``, ``tick``.
- ``db``: ``db upgrade|downgrade|current``.
- ``users``, ``games``, ``mail``: the admin views and actions.
- ``common``: --config, settings, logging, the admin commands' database and tables.

The modules import the server's parts only when a command runs, so the rules tools
start fast.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
