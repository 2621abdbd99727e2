"""Workload rules through ``topoopt.perf``: memory fit, time to train, the parallel layout."""

from __future__ import annotations

from topoopt import perf
from topoopt.checking.context import CheckContext
from topoopt.checking.text import close, num
from topoopt.checking.units import SECONDS_PER_DAY
from topoopt.models.design import Violation
from topoopt.models.performance import Parallelism


def _layout(p: Parallelism) -> str:
    context = f" CP{p.cp}" if p.cp > 1 else ""
    interleave = f" VP{p.virtual_stages}" if p.virtual_stages > 1 else ""
    recompute = f", {p.activation_recompute} recomputation" if p.activation_recompute else ""
    return f"TP{p.tp}{context} PP{p.pp}{interleave} DP{p.dp} ZeRO-{p.zero_stage} micro-batch {p.microbatch}{recompute}"


def memory_fits(ctx: CheckContext) -> list[Violation]:
    """The model fits in GPU memory on the design's GPUs under some layout (``perf.fits_in_memory``),
    and under the recorded one; the record's GPU is the server's and ``gpus = nodes · gpus_per_node``."""
    family = "memory_fits"
    out: list[Violation] = []
    d, server = ctx.design, ctx.server
    if server is None:
        return out
    if d.gpu != server.gpu:
        out.append(Violation(family=family, item="design", detail=f"gpu {d.gpu} recorded; {server.id} carries {server.gpu}"))
    if d.gpus != d.nodes * server.gpus_per_node:
        out.append(Violation(family=family, item="design",
                             detail=f"{num(d.gpus)} GPUs recorded; {num(d.nodes)} nodes × {server.gpus_per_node} = "
                                    f"{num(d.nodes * server.gpus_per_node)}"))
    hw = ctx.hardware
    if hw is None:
        return out
    gpus = d.nodes * server.gpus_per_node
    where = f"{num(gpus)} × {server.gpu} ({num(hw.gpu.memory_gb)} GB)"
    if not perf.fits_in_memory(ctx.job, hw):
        out.append(Violation(family=family, item="workload", detail=f"does not fit in {where} under any layout"))
        return out
    p = d.parallelism
    if p.tp * p.cp * p.pp * p.dp > gpus:
        out.append(Violation(family=family, item="parallelism",
                             detail=f"{_layout(p)} needs {num(p.tp * p.cp * p.pp * p.dp)} GPUs > {num(gpus)}"))
    elif perf.evaluate(ctx.job, hw, parallelism=p) is None:
        out.append(Violation(family=family, item="parallelism", detail=f"{_layout(p)} does not fit in {where}"))
    return out


def deadline_met(ctx: CheckContext) -> list[Violation]:
    """``time_to_train_s ≤ deadline_days · 86400`` when a deadline is given; the recorded layout is
    perf's fastest; a reported performance equals the recomputed one."""
    family = "deadline_met"
    out: list[Violation] = []
    hw = ctx.hardware
    if hw is None:
        return out
    seconds = perf.time_to_train_s(ctx.job, hw)
    deadline_days = ctx.instance.goal.deadline_days
    if deadline_days is not None:
        if seconds is None:
            out.append(Violation(family=family, item="time to train", detail="no layout runs on this hardware"))
        elif seconds > deadline_days * SECONDS_PER_DAY * (1 + 1e-9):
            out.append(Violation(family=family, item="time to train",
                                 detail=f"{num(round(seconds / SECONDS_PER_DAY, 3))} days > deadline {num(deadline_days)} days "
                                        f"on {num(ctx.nodes)} × {ctx.design.server}"))
    best = ctx.evaluation
    if best is not None and ctx.design.parallelism != best.parallelism:
        out.append(Violation(family=family, item="parallelism",
                             detail=f"{_layout(ctx.design.parallelism)} recorded; perf's fastest layout is {_layout(best.parallelism)}"))
    reported = ctx.performance
    if reported is not None and best is not None:
        for name, mine in (("time_to_train_days", best.time_to_train_days), ("tokens_per_s", best.tokens_per_s)):
            theirs = getattr(reported, name)
            if not close(theirs, mine, rel=1e-6):
                out.append(Violation(family=family, item="reported performance",
                                     detail=f"{name} {num(theirs)} reported, {num(mine)} recomputed"))
    return out


RULES = {
    "memory_fits": memory_fits,
    "deadline_met": deadline_met,
}
