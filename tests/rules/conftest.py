"""Make the shared helpers of the rules tests (``rules_helpers``) importable.

pytest's default import mode already puts this directory on ``sys.path``; doing it
here too keeps the helpers importable under ``--import-mode=importlib``.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
