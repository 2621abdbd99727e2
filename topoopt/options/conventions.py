"""Conventions every option table follows (the checker keeps its own copy, checking/).

>>> whole_units(1234.5), whole_units(None)
(1234, None)
>>> switch_protocol("roce"), switch_protocol("ib")
('ethernet', 'ib')
"""

from __future__ import annotations


def whole_units(price: float | None) -> int | None:
    """Prices enter the model (and every cost report) rounded to whole currency units, as Python's
    ``round`` does (half to even); None: unpriced."""
    return None if price is None else int(round(price))


def switch_protocol(interconnect_protocol: str) -> str:
    """The switch protocol an interconnect needs: ``ib`` → InfiniBand, ``roce`` and ``tcp`` →
    Ethernet."""
    return "ib" if interconnect_protocol == "ib" else "ethernet"
