"""Storage rules: read and write bandwidth, capacity, latency class.

The needs come from ``perf.storage_needs`` at the throughput target (tokens / deadline for
``min_cost``, the design's own rate for ``min_time`` and ``min_job_cost``, zero otherwise); the supply is
``units`` × the tier's per-unit figures.
"""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.text import close, num
from topoopt.models.design import Violation

TOLERANCE = 1e-9
"""Relative slack on supply ≥ need, so a need computed through another float path still matches."""


def _short(supply: float, need: float) -> bool:
    return supply < need * (1 - TOLERANCE)


def storage_bandwidth_met(ctx: CheckContext) -> list[Violation]:
    """``units · read_gb_per_s ≥ R · bytes_per_token · read_safety_factor / 1e9`` and
    ``units · write_gb_per_s ≥ checkpoint_gb / max_save_time_s``; the record states ``units ×`` the
    rates in Gb/s."""
    family = "storage_bandwidth_met"
    out: list[Violation] = []
    tier, choice = ctx.storage_tier, ctx.design.storage
    if tier is None:
        return out
    item = f"storage ({choice.units} × {tier.id})"
    need = ctx.storage_needs
    read_gb_per_s = choice.units * tier.read_gb_per_s
    write_gb_per_s = choice.units * tier.write_gb_per_s
    if _short(read_gb_per_s, need.read_gb_per_s):
        rate = ctx.throughput_target or 0.0
        out.append(Violation(family=family, item=item,
                             detail=f"reads {num(read_gb_per_s)} GB/s < {num(need.read_gb_per_s)} GB/s needed "
                                    f"to feed {num(round(rate))} tokens/s"))
    if _short(write_gb_per_s, need.write_gb_per_s):
        limit_s = ctx.instance.workload.checkpoint.max_save_time_s
        out.append(Violation(family=family, item=item,
                             detail=f"writes {num(write_gb_per_s)} GB/s < {num(need.write_gb_per_s)} GB/s needed "
                                    f"to save a {num(need.checkpoint_gb)} GB checkpoint in {num(limit_s)} s"))
    for name, recorded, supply in (("read_gbps", choice.read_gbps, read_gb_per_s * 8),
                                   ("write_gbps", choice.write_gbps, write_gb_per_s * 8)):
        if not close(recorded, supply, rel=1e-4, abs_=1e-2):
            out.append(Violation(family=family, item=item,
                                 detail=f"{name} {num(recorded)} Gb/s recorded; {choice.units} units deliver {num(supply)} Gb/s"))
    return out


def storage_capacity_met(ctx: CheckContext) -> list[Violation]:
    """``units · capacity_tb ≥ dataset_tb + keep · checkpoint_gb / 1000``."""
    family = "storage_capacity_met"
    out: list[Violation] = []
    tier, choice = ctx.storage_tier, ctx.design.storage
    if tier is None:
        return out
    item = f"storage ({choice.units} × {tier.id})"
    need = ctx.storage_needs
    capacity_tb = choice.units * tier.capacity_tb
    if _short(capacity_tb, need.capacity_tb):
        keep = ctx.instance.workload.checkpoint.keep
        out.append(Violation(family=family, item=item,
                             detail=f"holds {num(capacity_tb)} TB < {num(need.capacity_tb)} TB for the "
                                    f"{num(ctx.instance.workload.data.dataset_tb)} TB dataset and {keep} checkpoints"))
    if not close(choice.capacity_tb, capacity_tb, rel=1e-4, abs_=1e-2):
        out.append(Violation(family=family, item=item,
                             detail=f"capacity {num(choice.capacity_tb)} TB recorded; {choice.units} units hold {num(capacity_tb)} TB"))
    return out


def storage_latency_ok(ctx: CheckContext) -> list[Violation]:
    """Many small files (``data.small_files``) rule out tiers whose latency class is ``high``."""
    tier = ctx.storage_tier
    if tier is None or tier.latency_class != "high":
        return []
    if ctx.instance.workload.data.small_files or ctx.storage_needs.needs_low_latency:
        return [Violation(family="storage_latency_ok", item=f"storage ({tier.id})",
                          detail=f"latency class {tier.latency_class} with many small files")]
    return []


RULES = {
    "storage_bandwidth_met": storage_bandwidth_met,
    "storage_capacity_met": storage_capacity_met,
    "storage_latency_ok": storage_latency_ok,
}
