"""Unit conversions on the checker's side: the checker's rules, the fabric builder and the CLI's
reports take each factor from here. The performance model keeps its own (:mod:`topoopt.perf.units`)
and so does the solver: the checker recomputes every rule independently.

>>> 30.0 * W_PER_KW, 400 / BITS_PER_BYTE, 2 * SECONDS_PER_DAY
(30000.0, 50.0, 172800.0)
"""

from __future__ import annotations

W_PER_KW = 1000
"""Rack classes and the site cap are rated in kW, devices draw W: ``W = kW × 1000``."""

BITS_PER_BYTE = 8
"""Links run in Gb/s, storage tiers deliver GB/s: ``Gb/s = 8 × GB/s``."""

GB_PER_TB = 1000
"""Storage is sized in decimal units, as vendors quote it: ``TB = GB / 1000``."""

HOURS_PER_DAY = 24
"""Archive retention is in days, checkpoint intervals in hours."""

SECONDS_PER_HOUR = 3600
"""Checkpoint intervals are in hours, write rates per second."""

SECONDS_PER_DAY = float(HOURS_PER_DAY * SECONDS_PER_HOUR)
"""Deadlines are in days, times to train in seconds: 86,400 s a day."""
