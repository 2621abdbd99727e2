"""Storage rules: read and write bandwidth, capacity, latency class of the hot tier; the cold tier.

The needs come from ``perf.storage_needs`` at the throughput target (tokens / deadline for
``min_cost``, the design's own rate for ``min_time`` and ``min_job_cost``, zero otherwise); the supply is
``units`` × the tier's per-unit figures.
"""

from __future__ import annotations

import math

from topoopt.checking.context import CheckContext
from topoopt.checking.text import close, num
from topoopt.checking.units import BITS_PER_BYTE, GB_PER_TB, HOURS_PER_DAY, SECONDS_PER_HOUR
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
    for name, recorded, supply in (("read_gbps", choice.read_gbps, read_gb_per_s * BITS_PER_BYTE),
                                   ("write_gbps", choice.write_gbps, write_gb_per_s * BITS_PER_BYTE)):
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


COUNT_SLACK = 1e-9
"""A count is the ceiling of the exact quotient: 0.7 days × 24 / 1.4 h is 12 checkpoints, though
binary floating point makes it 12.000000000000002."""


def cold_needs(ctx: CheckContext) -> tuple[float, float, int]:
    """``(capacity TB, write GB/s, archived checkpoints)`` the cold tier must give:
    ``archive_tb + ceil(D · 24 / interval_hours) · checkpoint_gb / 1000`` TB with ``D`` the
    archive's days, or the deadline's when sooner (the run writes no checkpoint after it), and,
    when checkpoints are archived, one written per interval: ``checkpoint_gb / (interval_hours ·
    3600)`` GB/s (raw data alone is archived once, not at a rate)."""
    data, checkpoint = ctx.instance.workload.data, ctx.instance.workload.checkpoint
    checkpoint_gb = ctx.storage_needs.checkpoint_gb
    days = checkpoint.archive_days
    if ctx.instance.goal.deadline_days is not None:
        days = min(days, ctx.instance.goal.deadline_days)
    archived = max(math.ceil(days * HOURS_PER_DAY / checkpoint.interval_hours - COUNT_SLACK), 0)
    capacity_tb = data.archive_tb + archived * checkpoint_gb / GB_PER_TB
    write_gb_per_s = checkpoint_gb / (checkpoint.interval_hours * SECONDS_PER_HOUR) if archived else 0.0
    return capacity_tb, write_gb_per_s, archived


def cold_storage_met(ctx: CheckContext) -> list[Violation]:
    """A cold tier exists exactly when something is archived (cold capacity > 0); it is an object
    store; ``units · capacity_tb ≥ archive_tb + ceil(D · 24 / interval_hours) · checkpoint_gb /
    1000`` (``D``: :func:`cold_needs`) and ``units · write_gb_per_s ≥ checkpoint_gb / (interval_hours · 3600)``;
    the record states ``units ×`` the tier's figures."""
    family = "cold_storage_met"
    out: list[Violation] = []
    capacity_needed_tb, write_needed, archived = cold_needs(ctx)
    choice, tier = ctx.design.cold_storage, ctx.cold_tier
    why = (f"{num(ctx.instance.workload.data.archive_tb)} TB of raw data and {num(archived)} archived checkpoints of "
           f"{num(ctx.storage_needs.checkpoint_gb)} GB")
    if capacity_needed_tb <= 0:
        if choice is not None:
            out.append(Violation(family=family, item=f"cold storage ({choice.units} × {choice.tier})",
                                 detail="nothing is archived (no archive_tb, no archive_days), so there is no cold tier"))
        return out
    if choice is None:
        out.append(Violation(family=family, item="cold storage",
                             detail=f"missing; {num(capacity_needed_tb)} TB to archive ({why})"))
        return out
    if tier is None:
        return out  # allowed_by_lists reports an unknown tier
    item = f"cold storage ({choice.units} × {tier.id})"
    if tier.kind != "object":
        out.append(Violation(family=family, item=item, detail=f"kind {tier.kind}; the cold tier is an object store"))
    capacity_tb = choice.units * tier.capacity_tb
    if _short(capacity_tb, capacity_needed_tb):
        out.append(Violation(family=family, item=item,
                             detail=f"holds {num(capacity_tb)} TB < {num(capacity_needed_tb)} TB for {why}"))
    write_gb_per_s = choice.units * tier.write_gb_per_s
    if _short(write_gb_per_s, write_needed):
        interval = ctx.instance.workload.checkpoint.interval_hours
        out.append(Violation(family=family, item=item,
                             detail=f"writes {num(write_gb_per_s)} GB/s < {num(write_needed)} GB/s needed to archive a "
                                    f"{num(ctx.storage_needs.checkpoint_gb)} GB checkpoint every {num(interval)} h"))
    for name, recorded, supply in (("read_gbps", choice.read_gbps, choice.units * tier.read_gb_per_s * BITS_PER_BYTE),
                                   ("write_gbps", choice.write_gbps, write_gb_per_s * BITS_PER_BYTE),
                                   ("capacity_tb", choice.capacity_tb, capacity_tb)):
        if not close(recorded, supply, rel=1e-4, abs_=1e-2):
            unit = "TB" if name == "capacity_tb" else "Gb/s"
            out.append(Violation(family=family, item=item,
                                 detail=f"{name} {num(recorded)} {unit} recorded; {choice.units} units give {num(supply)} {unit}"))
    return out


RULES = {
    "storage_bandwidth_met": storage_bandwidth_met,
    "storage_capacity_met": storage_capacity_met,
    "storage_latency_ok": storage_latency_ok,
    "cold_storage_met": cold_storage_met,
}
