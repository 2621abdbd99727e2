"""Unit conversions of the performance model, one home each. Decimal prefixes throughout, as
NVIDIA, nccl-tests and storage vendors quote them (a GB is 1e9 bytes, not 2**30). The checker's
side keeps its own (:mod:`topoopt.checking.units`).

>>> 400 / BITS_PER_BYTE, 2 * SECONDS_PER_DAY, 0.5 * SECONDS_PER_US
(50.0, 172800.0, 5e-07)
"""

from __future__ import annotations

BITS_PER_BYTE = 8.0
"""Links run in Gb/s, the model moves GB/s: ``GB/s = Gb/s / 8``."""

BYTES_PER_GB = 1e9
"""Bandwidths are in GB/s, message and memory sizes in bytes: ``bytes/s = GB/s × 1e9``."""

FLOPS_PER_TFLOP = 1e12
"""GPU peaks are in TFLOP/s, work in FLOPs: ``FLOP/s = TFLOP/s × 1e12``."""

GB_PER_TB = 1000.0
"""Checkpoints are in GB, storage capacity in TB: ``TB = GB / 1000``."""

HOURS_PER_DAY = 24.0
"""Archive retention is in days, checkpoint intervals in hours."""

SECONDS_PER_HOUR = 3600.0
"""Checkpoint intervals are in hours, times in seconds."""

SECONDS_PER_DAY = HOURS_PER_DAY * SECONDS_PER_HOUR
"""Times to train are reported in days: 86,400 s a day."""

SECONDS_PER_US = 1e-6
"""Interconnect latencies are in µs, α terms in seconds: ``s = µs × 1e-6``."""
