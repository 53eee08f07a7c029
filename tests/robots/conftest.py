"""Fixtures of the robots' tests.

The evaluation reads its weights from module globals (fastest), and some tests and
library calls (``set_weights``, ``tuning.build_problem``, ``set_pressure``,
``endgame.set_endgame``) change them.  Every test here gets the weights it started
with back afterwards, so no test's outcome depends on the tests that ran before it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from abalone_pbm.robots import endgame, features


def _global_weights() -> tuple[dict[str, int], int, int, int, int]:
    return (features.current_weights(), features.PRESSURE, features.PUSHES,
            endgame.CONTACT_PUSHES, endgame.LEAD_CENTRE)


@pytest.fixture(autouse=True)
def weights_restored() -> Iterator[None]:
    """The evaluation's global weights after the test as they were before it."""
    saved = _global_weights()
    yield
    if _global_weights() == saved:
        return
    weights, pressure, pushes, contact_pushes, lead_centre = saved
    features.set_weights(weights)
    features.set_pressure(pressure, pushes)
    endgame.set_endgame(contact_pushes, lead_centre)
    assert _global_weights() == saved
