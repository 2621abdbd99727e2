"""The entry points the solver, the checker and ``estimate`` call.

Contracts the solver relies on for exactness (tested with hypothesis):

* ``time_to_train_s`` never grows with ``hw.nodes``; if the job fits on n nodes it fits on n + 1;
* a faster link or a lower oversubscription never slows a step; more GPU memory never turns a fit
  into a non-fit;
* ``min_nodes_to_fit`` / ``min_nodes_for_time`` equal the smallest node count for which
  ``fits_in_memory`` / ``time_to_train_s <= max_time_s`` hold;
* ``trains_within(job, hw, t)`` equals ``time_to_train_s(job, hw) <= t`` (False when nothing fits).

Time to train = tokens / (tokens per second) × (1 + save time / checkpoint interval): blocking
checkpoint saves, at the longest save the instance allows, are part of the schedule.

On a converged storage network (``hw.converged_storage_gb_per_step`` > 0) every step also reads
its data over the compute NICs, serially (:func:`topoopt.perf.storage.converged_storage_s`):
step(n) + c/n seconds on n nodes. That is still non-increasing in n, so the contracts above hold.
"""

from __future__ import annotations

from dataclasses import replace

from topoopt.models.performance import Bottleneck, Parallelism, Performance, StepBreakdown
from topoopt.perf.constants import CALIBRATED_GPU_PRECISIONS
from topoopt.perf.flops import hardware_flops_per_token, model_flops_per_token
from topoopt.perf.job import GpuSpec, Hardware, Job, ModelShape
from topoopt.perf.search import (
    best_step,
    gpu_spec,
    min_nodes_for_step,
    search_fits,
    search_min_nodes_to_fit,
    some_step_within,
)
from topoopt.perf.step import Layout, StepTimes
from topoopt.perf.storage import converged_storage_s, storage_needs, tokens_per_step
from topoopt.perf.units import FLOPS_PER_TFLOP, SECONDS_PER_DAY, SECONDS_PER_HOUR


def checkpoint_overhead(job: Job) -> float:
    """Factor on training time for blocking checkpoint saves: 1 + max_save_time / interval."""
    checkpoint = job.checkpoint
    return 1.0 + checkpoint.max_save_time_s / (checkpoint.interval_hours * SECONDS_PER_HOUR)


def train_time_s(job: Job, step_s: float) -> float:
    """Wall-clock time to train ``training.tokens`` at ``step_s`` per step, saves included."""
    return job.training.tokens / tokens_per_step(job) * step_s * checkpoint_overhead(job)


def evaluate(job: Job, hw: Hardware, parallelism: Parallelism | None = None) -> Performance | None:
    """Performance of ``job`` on ``hw``; None when nothing fits in memory.

    ``parallelism`` None means the job's own setting: the layout pinned in the instance, or the
    fastest layout that fits (auto, see :mod:`topoopt.perf.search`). A given layout is evaluated
    as is; it yields None when it needs more GPUs than ``hw`` has or does not fit in memory.
    """
    found = best_step(job, hw, parallelism)
    if found is None:
        return None
    return performance(job, hw, *found)


def fits_in_memory(job: Job, hw: Hardware) -> bool:
    """Whether some layout (or the pinned one) fits in GPU memory on ``hw``; exactly when
    :func:`evaluate` returns a result."""
    return search_fits(job, hw)


def time_to_train_s(job: Job, hw: Hardware) -> float | None:
    """Seconds to train on ``hw`` with the job's layout policy; None when it does not fit."""
    found = best_step(job, hw)
    return None if found is None else train_time_s(job, found[1].step_s + converged_storage_s(hw))


def trains_within(job: Job, hw: Hardware, max_time_s: float) -> bool:
    """``time_to_train_s(job, hw) <= max_time_s`` (False when nothing fits), without finding the
    fastest layout: any layout in time settles it (perf.search ``some_step_within``)."""
    storage_s = converged_storage_s(hw)
    return some_step_within(job, hw, lambda step_s: train_time_s(job, step_s + storage_s) <= max_time_s)


def min_nodes_to_fit(job: Job, hw: Hardware, max_nodes: int) -> int | None:
    """Fewest nodes (≤ ``max_nodes``) on which the job fits; ``hw.nodes`` is ignored."""
    return search_min_nodes_to_fit(job, hw, max_nodes)


def min_nodes_for_time(job: Job, hw: Hardware, max_time_s: float, max_nodes: int) -> int | None:
    """Fewest nodes (≤ ``max_nodes``) that train within ``max_time_s``; ``hw.nodes`` is ignored.

    The answer n satisfies ``time_to_train_s(job, hw at n nodes) <= max_time_s`` and no smaller
    node count does.
    """
    scale = job.training.tokens / tokens_per_step(job) * checkpoint_overhead(job)
    fewest = min_nodes_for_step(job, hw, max_time_s / scale, max_nodes, max_time_s=max_time_s)
    if fewest is None or hw.converged_storage_gb_per_step <= 0:
        return fewest
    # Converged storage adds c/n to the step. Without it no smaller count meets the deadline, and
    # time_to_train_s is non-increasing in n: gallop up from there, then bisect.
    return _first_meeting(job, hw, max_time_s, fewest, max_nodes)


def _first_meeting(job: Job, hw: Hardware, max_time_s: float, low: int, max_nodes: int) -> int | None:
    """Smallest n in [low, max_nodes] with time_to_train_s(n) <= max_time_s, by galloping and
    bisection over the monotone predicate; None when even ``max_nodes`` misses."""

    def meets(nodes: int) -> bool:
        return trains_within(job, replace(hw, nodes=nodes), max_time_s)

    if meets(low):
        return low
    failing, step = low, 1
    while True:
        candidate = min(max_nodes, failing + step)
        if meets(candidate):
            passing = candidate
            break
        if candidate == max_nodes:
            return None
        failing, step = candidate, step * 2
    while passing - failing > 1:
        middle = (failing + passing) // 2
        if meets(middle):
            passing = middle
        else:
            failing = middle
    return passing


def bottleneck(times: StepTimes, storage_s: float = 0.0) -> Bottleneck:
    """The largest part of the step: compute, pipeline bubble, exposed scale-up/scale-out traffic,
    or converged storage reads."""
    parts: list[tuple[float, Bottleneck]] = [
        (times.compute_s, "compute"),
        (times.bubble_s, "pipeline_bubble"),
        (times.exposed_scale_up_s, "scale_up"),
        (times.exposed_scale_out_s, "scale_out"),
        (storage_s, "storage"),
    ]
    return max(parts, key=lambda part: part[0])[1]


def performance(job: Job, hw: Hardware, layout: Layout, times: StepTimes) -> Performance:
    """Assemble the result record for one evaluated (layout, dp); converged storage reads are
    added to its step."""
    training = job.training
    shape = ModelShape.of(job.model)
    spec = gpu_spec(job, hw)
    gpus_used = layout.model_gpus * times.dp
    storage_s = converged_storage_s(hw)
    step_s = times.step_s + storage_s
    tokens_per_s = tokens_per_step(job) / step_s
    per_gpu = tokens_per_s / gpus_used
    model_tflops = model_flops_per_token(shape, training.sequence_length) * per_gpu / FLOPS_PER_TFLOP
    hardware_tflops = (
        hardware_flops_per_token(shape, training.sequence_length, layout.recompute, training.attention)
        * per_gpu
        / FLOPS_PER_TFLOP
    )
    memory = layout.memory.breakdown(times.dp, times.microbatches)
    return Performance(
        tokens_per_s=tokens_per_s,
        tokens_per_s_per_gpu=per_gpu,
        step_time_s=step_s,
        tflops_per_gpu=model_tflops,
        hardware_tflops_per_gpu=hardware_tflops,
        mfu=model_tflops / spec.linear_tflops,
        time_to_train_days=train_time_s(job, step_s) / SECONDS_PER_DAY,
        memory_per_gpu_gb=memory.total_gb,
        bottleneck=bottleneck(times, storage_s),
        parallelism=Parallelism(
            tp=layout.tp,
            pp=layout.pp,
            dp=times.dp,
            zero_stage=layout.zero_stage,
            microbatch=layout.microbatch,
            virtual_stages=layout.virtual_stages,
            cp=layout.cp,
            activation_recompute=layout.recompute,
        ),
        gpus_used=gpus_used,
        memory=memory,
        step=StepBreakdown(
            compute_s=times.compute_s,
            bubble_s=times.bubble_s,
            tp_comm_s=times.tp_comm_s,
            cp_comm_s=times.cp_comm_s,
            pp_comm_s=times.pp_comm_s,
            dp_comm_s=times.dp_comm_s,
            exposed_comm_s=times.exposed_comm_s,
            storage_s=storage_s,
            step_time_s=step_s,
        ),
        storage=storage_needs(job, tokens_per_s),
        calibrated=is_calibrated(spec),
    )


def is_calibrated(spec: GpuSpec) -> bool:
    """Whether calibration runs cover the GPU at the precision its linear layers run in
    (:data:`CALIBRATED_GPU_PRECISIONS`)."""
    return (spec.gpu_id, spec.precision) in CALIBRATED_GPU_PRECISIONS


__all__ = [
    "bottleneck",
    "checkpoint_overhead",
    "evaluate",
    "fits_in_memory",
    "is_calibrated",
    "min_nodes_for_time",
    "min_nodes_to_fit",
    "performance",
    "time_to_train_s",
    "tokens_per_step",
    "train_time_s",
]
