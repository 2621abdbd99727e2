"""The parallel-layout search: the fastest layout that fits, and the fewest nodes for a goal.

**The space.** A layout is (tp, pp, micro-batch b, ZeRO stage, v) plus a data-parallel degree dp;
it uses tp·pp·dp GPUs and may leave the rest of the cluster idle. ``auto`` enumerates

* tp ∈ divisors of the scale-up island (8 on an HGX board) that divide the attention heads —
  a TP group must stay on the scale-up link to be worth its per-layer collectives;
* pp ∈ {⌈l/L⌉ : L = 1..l}: for each stage depth L the fewest stages that give it. Any other pp
  has the same most-loaded stage (same compute, same memory per GPU) with a longer bubble, more
  activations in flight and more GPUs, so it is never better;
* b ∈ {1, 2, 4, 8} (b ≤ B); ZeRO ∈ {0, 1, 2, 3} when pp = 1 and {0, 1} when pp > 1 (ZeRO-2/3
  with pipelining is not supported by Megatron-LM or DeepSpeed); v = 1 (no interleaving);
* dp ∈ C = {dp_fit} ∪ {⌈B/(m·b)⌉ > dp_fit : m ≥ 1}: the fewest replicas that give each
  micro-batch count m, plus the fewest replicas that fit in memory. Another dp gives the same
  m (same compute and bubble) with more GPUs; the model's step time then differs only by the
  second-order change of the DP collective with the ring size.

The search is exact over this space: layouts are visited in order of a lower bound (compute +
bubble, no communication) and the visit stops when the bound reaches the best step found.
Because C does not depend on the cluster, a larger cluster offers a superset of choices, so the
best time never grows with the node count and a layout that fits at n nodes fits at n + 1.
Per (job, GPU, GPUs per node) the layouts, their compute times and their smallest fitting dp
are cached; only communication is recomputed per fabric.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache

from topoopt.models.performance import Parallelism
from topoopt.perf.job import Fabric, GpuSpec, Hardware, Job, ModelShape
from topoopt.perf.memory import memory_model, microbatch_count, min_fitting_dp
from topoopt.perf.step import Layout, StepTimes, make_layout, step_lower_bound_s, step_time

MICROBATCH_CHOICES = (1, 2, 4, 8)
ZERO_CHOICES_NO_PP = (0, 1, 2, 3)
ZERO_CHOICES_PP = (0, 1)


def tp_choices(island_gpus: int, heads: int) -> list[int]:
    """Divisors of the island size that divide the number of attention heads."""
    return [d for d in range(1, island_gpus + 1) if island_gpus % d == 0 and heads % d == 0]


def pp_choices(layers: int) -> list[int]:
    """{⌈l/L⌉ : L = 1..l}, ascending: the fewest stages for each stage depth."""
    return sorted({-(-layers // depth) for depth in range(1, layers + 1)})


@lru_cache(maxsize=64)
def _shape(job: Job) -> ModelShape:
    return ModelShape.of(job.model)


def build_layout(job: Job, spec: GpuSpec, tp: int, pp: int, microbatch: int, zero_stage: int, virtual_stages: int) -> Layout:
    """The layout's fabric-independent numbers, including its smallest fitting dp."""
    training = job.training
    shape = _shape(job)
    memory = memory_model(
        shape,
        sequence_length=training.sequence_length,
        optimizer=training.optimizer,
        recompute=training.activation_recompute,
        attention=training.attention,
        tp=tp,
        pp=pp,
        zero_stage=zero_stage,
        microbatch=microbatch,
        virtual_stages=virtual_stages,
        capacity_gb=spec.memory_gb,
    )
    return make_layout(
        shape,
        spec,
        memory,
        min_fitting_dp(memory, training.global_batch_sequences, microbatch),
        sequence_length=training.sequence_length,
        recompute=training.activation_recompute,
        attention=training.attention,
        tp=tp,
        pp=pp,
        microbatch=microbatch,
        zero_stage=zero_stage,
        virtual_stages=virtual_stages,
    )


@lru_cache(maxsize=512)
def auto_layouts(job: Job, spec: GpuSpec) -> tuple[Layout, ...]:
    """Every enumerated layout that fits at some dp (see the module docstring), cached."""
    shape = _shape(job)
    batch = job.training.global_batch_sequences
    layouts = []
    for tp in tp_choices(spec.island_gpus, shape.heads):
        for pp in pp_choices(shape.layers):
            for microbatch in MICROBATCH_CHOICES:
                if microbatch > batch:
                    continue
                for zero in ZERO_CHOICES_NO_PP if pp == 1 else ZERO_CHOICES_PP:
                    layout = build_layout(job, spec, tp, pp, microbatch, zero, 1)
                    if layout.dp_fit is not None:
                        layouts.append(layout)
    return tuple(layouts)


@lru_cache(maxsize=4096)
def pinned_layout(job: Job, spec: GpuSpec, tp: int, pp: int, microbatch: int, zero_stage: int, virtual_stages: int) -> Layout:
    return build_layout(job, spec, tp, pp, microbatch, zero_stage, virtual_stages)


def _efficient_dp(batch: int, microbatches: int, microbatch: int) -> int:
    """The fewest replicas that give ``microbatches`` micro-batches: ⌈B/(m·b)⌉."""
    return -(-batch // (microbatches * microbatch))


def dp_candidates_descending(layout: Layout, batch: int, dp_max: int) -> Iterator[int]:
    """Members of C (module docstring) that are ≤ ``dp_max``, largest first."""
    dp_fit = layout.dp_fit
    if dp_fit is None or dp_max < dp_fit:
        return
    b = layout.microbatch
    m = microbatch_count(batch, dp_max, b)
    previous = None
    while True:
        dp = _efficient_dp(batch, m, b)
        if dp <= dp_fit:
            yield dp_fit
            return
        if dp != previous:
            yield dp
            previous = dp
        m += 1


def dp_candidates_ascending(layout: Layout, batch: int) -> Iterator[int]:
    """Members of C, smallest first (dp_fit, then the efficient counts above it)."""
    dp_fit = layout.dp_fit
    if dp_fit is None:
        return
    yield dp_fit
    b = layout.microbatch
    m = microbatch_count(batch, dp_fit, b)
    previous = dp_fit
    while m > 1:
        m -= 1
        dp = _efficient_dp(batch, m, b)
        if dp > previous:
            yield dp
            previous = dp


def gpu_spec(job: Job, hw: Hardware) -> GpuSpec:
    return GpuSpec.of(hw.gpu, hw.gpus_per_node, job.training.precision)


def _pinned(job: Job, parallelism: Parallelism | None) -> Parallelism | None:
    """The layout to evaluate: the argument, else the job's pinned one, else None (auto)."""
    if parallelism is not None:
        return parallelism
    pinned = job.training.parallelism
    if pinned == "auto":
        return None
    return pinned  # a PinnedParallelism: same fields, dp may be None


def _layout_of(job: Job, spec: GpuSpec, p) -> Layout:
    return pinned_layout(job, spec, p.tp, p.pp, p.microbatch, p.zero_stage, getattr(p, "virtual_stages", 1))


def best_step(job: Job, hw: Hardware, parallelism: Parallelism | None = None) -> tuple[Layout, StepTimes] | None:
    """The fastest (layout, step) that fits on ``hw``, or None when nothing fits.

    With a layout pinned (argument or the job's own), only that layout is evaluated; a pinned
    dp of None means the best dp of C up to all remaining GPUs.
    """
    spec = gpu_spec(job, hw)
    fabric = Fabric.of(hw, spec.island_gpus)
    batch = job.training.global_batch_sequences
    gpus = hw.gpus
    pinned = _pinned(job, parallelism)
    if pinned is not None:
        if pinned.pp > job.model.layers:
            return None
        layout = _layout_of(job, spec, pinned)
        if pinned.dp is not None:
            dp = pinned.dp
            if layout.model_gpus * dp > gpus or not layout.memory.fits(dp, microbatch_count(batch, dp, layout.microbatch)):
                return None
            return layout, step_time(layout, dp, batch, fabric)
        layouts: tuple[Layout, ...] = (layout,)
    else:
        layouts = auto_layouts(job, spec)
    return _search(layouts, batch, gpus, fabric)


def _search(layouts: tuple[Layout, ...], batch: int, gpus: int, fabric: Fabric) -> tuple[Layout, StepTimes] | None:
    """Branch and bound over layouts and dp (module docstring)."""
    bounds = []
    for index, layout in enumerate(layouts):
        model_gpus = layout.model_gpus
        if model_gpus > gpus:
            continue
        dp_max = gpus // model_gpus
        if dp_max < layout.dp_fit:
            continue
        m_min = microbatch_count(batch, dp_max, layout.microbatch)
        bounds.append((step_lower_bound_s(layout, m_min), index, dp_max))
    bounds.sort()
    best: tuple[Layout, StepTimes] | None = None
    best_s = float("inf")
    for bound, index, dp_max in bounds:
        if bound >= best_s:
            break
        layout = layouts[index]
        for dp in dp_candidates_descending(layout, batch, dp_max):
            if step_lower_bound_s(layout, microbatch_count(batch, dp, layout.microbatch)) >= best_s:
                break
            times = step_time(layout, dp, batch, fabric)
            if times.step_s < best_s:
                best, best_s = (layout, times), times.step_s
    return best


def search_min_nodes_to_fit(job: Job, hw: Hardware, max_nodes: int) -> int | None:
    """Fewest nodes (≤ ``max_nodes``) on which the job fits in memory; ``hw.nodes`` is ignored."""
    spec = gpu_spec(job, hw)
    batch = job.training.global_batch_sequences
    pinned = _pinned(job, None)
    if pinned is not None:
        if pinned.pp > job.model.layers:
            return None
        layout = _layout_of(job, spec, pinned)
        if pinned.dp is not None:
            if not layout.memory.fits(pinned.dp, microbatch_count(batch, pinned.dp, layout.microbatch)):
                return None
            gpus = layout.model_gpus * pinned.dp
        elif layout.dp_fit is None:
            return None
        else:
            gpus = layout.model_gpus * layout.dp_fit
        nodes = -(-gpus // hw.gpus_per_node)
        return nodes if nodes <= max_nodes else None
    best = None
    for layout in auto_layouts(job, spec):
        nodes = -(-(layout.model_gpus * layout.dp_fit) // hw.gpus_per_node)
        if best is None or nodes < best:
            best = nodes
    return best if best is not None and best <= max_nodes else None


def min_nodes_for_step(
    job: Job,
    hw: Hardware,
    max_step_s: float,
    max_nodes: int,
    accept: Callable[[float], bool] | None = None,
) -> int | None:
    """Fewest nodes (≤ ``max_nodes``) whose best step takes at most ``max_step_s``.

    ``accept(step_s)`` is the exact test of a step time (default ``step_s <= max_step_s``);
    ``max_step_s`` then only bounds the search. Exact over the space: for each layout the members
    of C are tried from the fewest GPUs up, starting where compute + bubble alone reach the bound,
    and layouts whose fewest possible nodes cannot beat the best found are skipped.
    """
    if accept is None:
        def accept(step_s: float) -> bool:
            return step_s <= max_step_s
    spec = gpu_spec(job, hw)
    fabric = Fabric.of(hw, spec.island_gpus)
    batch = job.training.global_batch_sequences
    gpn = hw.gpus_per_node
    max_gpus = max_nodes * gpn
    pinned = _pinned(job, None)
    if pinned is not None:
        if pinned.pp > job.model.layers:
            return None
        layout = _layout_of(job, spec, pinned)
        if pinned.dp is not None:
            found = best_step(job, _with_nodes(hw, max_nodes))
            if found is None or not accept(found[1].step_s):
                return None
            return -(-(layout.model_gpus * pinned.dp) // gpn)
        layouts: tuple[Layout, ...] = (layout,)
    else:
        layouts = auto_layouts(job, spec)

    starts = []
    for index, layout in enumerate(layouts):
        t_mb = layout.microbatch_compute_s
        # Largest micro-batch count whose compute + bubble alone stays within the budget.
        # (+1 absorbs floating-point rounding; step_time is the real test.)
        m_cap = int(max_step_s / t_mb - (layout.pp - 1) / layout.virtual_stages) + 1 if t_mb > 0 else batch
        if m_cap < 1:
            continue
        dp_first = max(layout.dp_fit, _efficient_dp(batch, m_cap, layout.microbatch))
        gpus_first = layout.model_gpus * dp_first
        if gpus_first > max_gpus:
            continue
        starts.append((-(-gpus_first // gpn), index, dp_first))
    starts.sort()
    best_nodes: int | None = None
    for nodes_lb, index, dp_first in starts:
        if best_nodes is not None and nodes_lb >= best_nodes:
            break
        layout = layouts[index]
        for dp in dp_candidates_ascending(layout, batch):
            if dp < dp_first:
                continue
            gpus = layout.model_gpus * dp
            nodes = -(-gpus // gpn)
            if gpus > max_gpus or (best_nodes is not None and nodes >= best_nodes):
                break
            if accept(step_time(layout, dp, batch, fabric).step_s):
                best_nodes = nodes
                break
    return best_nodes


def _with_nodes(hw: Hardware, nodes: int) -> Hardware:
    return Hardware(
        gpu=hw.gpu,
        gpus_per_node=hw.gpus_per_node,
        nodes=nodes,
        nics_per_node=hw.nics_per_node,
        link_gbps=hw.link_gbps,
        interconnect=hw.interconnect,
        tiers=hw.tiers,
        oversubscription=hw.oversubscription,
    )


__all__ = [
    "auto_layouts",
    "best_step",
    "dp_candidates_ascending",
    "dp_candidates_descending",
    "min_nodes_for_step",
    "search_min_nodes_to_fit",
    "pp_choices",
    "tp_choices",
]
