"""Integer units of the model: limits and supplies rounded down, needs rounded up, in thousandths.

CP-SAT takes integers only; kW become W, W become mW, GB/s become MB/s and TB become GB. The 1e-6
keeps decimal inputs exact: 64.448 kW is 64447.99999999999 W in binary.
"""

from __future__ import annotations

import math


def thousandths(value: float) -> int:
    """A limit or a per-unit supply in integer thousandths, rounded down.

    >>> thousandths(64.448)
    64448
    """
    return math.floor(value * 1000 + 1e-6)


def thousandths_up(value: float) -> int:
    """A need in integer thousandths, rounded up (0.3 GB/s is 300 MB/s, not 301).

    >>> thousandths_up(0.3), thousandths_up(0.3001)
    (300, 301)
    """
    return math.ceil(value * 1000 - 1e-6)


def ceil_div(numerator: int, denominator: int) -> int:
    """``ceil(numerator / denominator)`` in exact integers (no float rounding at large counts).

    >>> ceil_div(129, 64), ceil_div(128, 64)
    (3, 2)
    """
    return -(-numerator // denominator)
