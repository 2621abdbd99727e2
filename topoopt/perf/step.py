"""One optimizer step of one parallel layout: compute, pipeline bubble and exposed communication.

A *layout* is (tp, pp, micro-batch b, ZeRO stage, virtual stages v); the data-parallel degree dp
is chosen separately. Everything in :class:`Layout` is independent of the fabric and of dp, so it
is computed once per (job, GPU, GPUs per node); :func:`step_time` adds the fabric-dependent part.

Per micro-batch, on the most loaded pipeline stage (⌈l/pp⌉ layers, plus the LM head):

    t_mb = tokens/tp · [F_lin / R_lin + F_attn / R_attn + k·(F_lin + F_attn) / BW_hbm]

with R = dense peak of the precision × ``gpu.matmul_efficiency`` × :data:`UTILISATION`, F the
hardware FLOPs per token (recomputation included), k = :data:`MEMORY_BOUND_BYTES_PER_FLOP` and
BW_hbm the GPU memory bandwidth. Per step, with m = ⌈B/(dp·b)⌉ micro-batches:

    compute  = m·t_mb + optimizer update (P/dp_shard · bytes / BW_hbm) + fixed step overhead
    t_stage  = t_mb + exposed TP communication of one micro-batch (:func:`tp_exposed_s`)
    bubble   = (pp − 1)/v · t_stage                       (1F1B; :func:`pipeline_bubble_s`)
    PP comm  = 2·v·(m + pp − 1) · p2p(b·s·h·2/tp)         (activations forward, gradients back)
    DP comm  = ZeRO-0: all-reduce(grads); ZeRO-1/2: reduce-scatter(grads) + all-gather(weights);
               ZeRO-3: per micro-batch 2 × all-gather(weights) + reduce-scatter(grads)
    step     = compute + bubble + m·TP exposed + PP exposed + DP exposed

Overlap: a collective of c seconds that may hide behind W seconds of compute with overlap
fraction f exposes c − min(f·c, W) (ZeRO-0/1/2 gradient reduction hides behind the last
micro-batch's backward pass, 2/3 of t_mb; with ``param_gather_overlap`` the ZeRO-1/2 weight
all-gather behind the first forward pass, 1/3 of t_mb; ZeRO-3 traffic behind its own micro-batch).
Every term is non-increasing in every bandwidth and never depends on the number of nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.perf.collectives import all_gather_s, all_reduce_s, group_link, p2p_link, p2p_s, reduce_scatter_s
from topoopt.perf.constants import (
    ACTIVATION_BYTES,
    ATTENTION_SCORE_TRAFFIC_BYTES,
    CP_COMM_OVERLAP,
    CP_RING_PASSES,
    GRAD_REDUCE_OVERLAP,
    GRADIENT_BYTES_PER_PARAM,
    MEMORY_BOUND_BYTES_PER_FLOP,
    OPTIMIZER_STEP_BYTES_PER_PARAM,
    PP_COMM_OVERLAP,
    STEP_OVERHEAD_S,
    TP_ALLREDUCES_FULL_RECOMPUTE,
    TP_ALLREDUCES_PER_LAYER,
    TP_OVERLAP,
    UTILISATION,
    WEIGHT_BYTES_PER_PARAM,
    ZERO3_OVERLAP,
)
from topoopt.perf.flops import (
    Attention,
    Recompute,
    head_flops_per_token,
    layer_attention_flops_per_token,
    layer_linear_flops_per_token,
    recompute_factors,
)
from topoopt.perf.job import Fabric, GpuSpec, ModelShape, scale_up_link
from topoopt.perf.memory import MemoryModel, layers_per_stage, microbatch_count, params_per_gpu
from topoopt.perf.units import BYTES_PER_GB, FLOPS_PER_TFLOP

BACKWARD_SHARE = 2.0 / 3.0
"""The backward pass is 2/3 of a micro-batch's training FLOPs (4 of 6 FLOPs per parameter)."""


@dataclass(frozen=True)
class Layout:
    """The fabric-independent numbers of one (tp, pp, b, ZeRO, v, recomputation) layout.

    ``dp_fit`` is the smallest data-parallel degree that fits; with ``dp_pinned`` it is the one
    pinned degree (None when that does not fit) and no other degree is a candidate.
    """

    tp: int
    pp: int
    microbatch: int
    zero_stage: int
    virtual_stages: int
    recompute: Recompute
    microbatch_compute_s: float
    optimizer_step_s: float
    tp_message_bytes: float
    tp_collectives_per_microbatch: int
    p2p_bytes: float
    weight_bytes: float
    gradient_bytes: float
    memory: MemoryModel
    dp_fit: int | None
    tp_in_island_microbatch_s: float | None = None
    stage_in_island_s: float | None = None
    replica_in_island: bool = False
    dp_pinned: bool = False
    cp: int = 1
    cp_chunk_bytes: float = 0.0
    cp_transfers_per_microbatch: int = 0
    attention_compute_s: float = 0.0
    tp_overlap: bool = False
    param_gather_overlap: bool = False

    def tp_exposed_s(self, raw_s: float, level: str) -> float:
        """TP communication of one micro-batch left on the critical path (:func:`tp_exposed_s`)."""
        return tp_exposed_s(raw_s, self.tp, self.microbatch_compute_s, self.tp_overlap and level == "scale_up")

    @property
    def model_gpus(self) -> int:
        """GPUs of one model replica: tp·cp·pp."""
        return self.tp * self.cp * self.pp

    @property
    def dp_stride(self) -> int:
        """Rank distance between neighbours of the gradient-reduction group: tp (ranks are placed
        TP, CP, DP, PP from the innermost out, and gradients reduce over the cp·dp ranks)."""
        return self.tp

    def gradient_ranks(self, dp: int) -> int:
        """Ranks that reduce (and, under ZeRO, shard) one set of gradients: cp·dp (every CP rank
        computes gradients of the same weights from other tokens)."""
        return self.cp * dp


def microbatch_compute_s(
    shape: ModelShape,
    spec: GpuSpec,
    sequence_length: int,
    recompute: Recompute,
    attention: Attention,
    tp: int,
    pp: int,
    microbatch: int,
    cp: int = 1,
    attention_only: bool = False,
) -> float:
    """Forward + backward (+ recomputation) time of one micro-batch on the most loaded stage, s;
    with ``attention_only`` just its attention-core matmuls. Context parallelism splits the
    micro-batch's tokens over ``cp`` ranks (each token still attends over the whole sequence).

    Materialized attention also moves its a·s scores per token and layer through HBM several
    times (GEMM output, softmax, dropout, and back): :data:`ATTENTION_SCORE_TRAFFIC_BYTES` per
    score element per training pass, scaled like the attention FLOPs by recomputation.
    """
    linear_factor, attention_factor = recompute_factors(recompute, attention)
    stage_layers = layers_per_stage(shape.layers, pp)
    linear_flops = stage_layers * layer_linear_flops_per_token(shape) * linear_factor + head_flops_per_token(shape)
    attention_flops = stage_layers * layer_attention_flops_per_token(shape, sequence_length) * attention_factor
    hbm_bytes = MEMORY_BOUND_BYTES_PER_FLOP * (linear_flops + attention_flops)
    if attention == "materialized":
        hbm_bytes += stage_layers * ATTENTION_SCORE_TRAFFIC_BYTES * shape.heads * sequence_length * attention_factor
    efficiency = spec.matmul_efficiency * UTILISATION
    tokens = microbatch * sequence_length / (tp * cp)
    if attention_only:
        return tokens * attention_flops / (spec.attention_tflops * FLOPS_PER_TFLOP * efficiency)
    per_token_s = (
        linear_flops / (spec.linear_tflops * FLOPS_PER_TFLOP * efficiency * spec.linear_efficiency_ratio)
        + attention_flops / (spec.attention_tflops * FLOPS_PER_TFLOP * efficiency)
        + hbm_bytes / (spec.memory_bandwidth_gb_per_s * BYTES_PER_GB)
    )
    return tokens * per_token_s


def make_layout(
    shape: ModelShape,
    spec: GpuSpec,
    memory: MemoryModel,
    dp_fit: int | None,
    *,
    sequence_length: int,
    recompute: Recompute,
    attention: Attention,
    tp: int,
    pp: int,
    microbatch: int,
    zero_stage: int,
    virtual_stages: int,
    dp_pinned: bool = False,
    cp: int = 1,
    tp_overlap: bool = False,
    param_gather_overlap: bool = False,
) -> Layout:
    """Collect the per-layout constants (see the module docstring)."""
    params = params_per_gpu(shape, tp, pp)
    stage_layers = layers_per_stage(shape.layers, pp)
    collectives = TP_ALLREDUCES_PER_LAYER + (TP_ALLREDUCES_FULL_RECOMPUTE if recompute == "full" else 0)
    activation_bytes = microbatch * sequence_length * shape.hidden * ACTIVATION_BYTES / cp
    compute_s = microbatch_compute_s(shape, spec, sequence_length, recompute, attention, tp, pp, microbatch, cp)
    tp_in_island = _tp_in_island_s(spec, tp, activation_bytes, stage_layers * collectives)
    island = spec.island_gpus
    # Ring attention: every layer passes the K,V chunks of s/cp tokens round the CP ring, cp − 1
    # steps forward, twice that backward (K,V and their gradients), once more when recomputed.
    passes = CP_RING_PASSES + (1 if recompute == "full" else 0)
    kv_hidden = shape.hidden * shape.kv_heads / shape.heads
    cp_chunk_bytes = microbatch * sequence_length / cp * 2 * kv_hidden * ACTIVATION_BYTES if cp > 1 else 0.0
    return Layout(
        tp=tp,
        pp=pp,
        microbatch=microbatch,
        zero_stage=zero_stage,
        virtual_stages=virtual_stages,
        recompute=recompute,
        microbatch_compute_s=compute_s,
        optimizer_step_s=params * OPTIMIZER_STEP_BYTES_PER_PARAM / (spec.memory_bandwidth_gb_per_s * BYTES_PER_GB),
        tp_message_bytes=activation_bytes if tp > 1 else 0.0,
        tp_collectives_per_microbatch=stage_layers * collectives if tp > 1 else 0,
        p2p_bytes=activation_bytes / tp if pp > 1 else 0.0,
        weight_bytes=params * WEIGHT_BYTES_PER_PARAM,
        gradient_bytes=params * GRADIENT_BYTES_PER_PARAM,
        memory=memory,
        dp_fit=dp_fit,
        tp_in_island_microbatch_s=tp_in_island,
        stage_in_island_s=(
            None if tp_in_island is None or cp > 1 else compute_s + tp_exposed_s(tp_in_island, tp, compute_s, tp_overlap)
        ),
        replica_in_island=tp * cp * pp <= island and island % (tp * cp * pp) == 0,
        dp_pinned=dp_pinned,
        cp=cp,
        cp_chunk_bytes=cp_chunk_bytes,
        cp_transfers_per_microbatch=stage_layers * passes * (cp - 1),
        attention_compute_s=(
            microbatch_compute_s(shape, spec, sequence_length, recompute, attention, tp, pp, microbatch, cp, True)
            if cp > 1 else 0.0
        ),
        tp_overlap=tp_overlap,
        param_gather_overlap=param_gather_overlap,
    )


def tp_exposed_s(raw_s: float, tp: int, compute_s: float, overlap: bool) -> float:
    """TP communication of one micro-batch (``raw_s``) left on the critical path.

    Without overlap, all of it: Megatron's TP collectives sit between the GEMMs that produce and
    consume them. With it (``training.tp_comm_overlap``, and only inside the scale-up domain: the
    overlapping kernels — Transformer Engine's userbuffers, PyTorch's AsyncTP on symmetric memory —
    write to the peers' memory directly), each collective is split into ``tp`` chunks pipelined
    with the GEMM it feeds (Wang et al., "Overlap Communication with Dependent Computation via
    Decomposition in Large Deep Learning Models", ASPLOS 2023), so at most every chunk but one
    hides; the fitted :data:`TP_OVERLAP` says how much of that the stacks reach, and it hides behind
    at most the micro-batch's compute ``compute_s``:
    ``raw − min(raw · min(TP_OVERLAP, (tp − 1)/tp), compute_s)``. Non-decreasing in ``raw_s``, so
    a faster link is never slower.
    """
    if not overlap or tp <= 1:
        return raw_s
    return raw_s - min(raw_s * min(TP_OVERLAP, (tp - 1) / tp), compute_s)


def _tp_in_island_s(spec: GpuSpec, tp: int, message_bytes: float, collectives: int) -> float | None:
    """TP time of one micro-batch when the TP group sits on the scale-up link, else None.

    Computed once per layout: the scale-up link depends on the GPU alone (:func:`scale_up_link`).
    """
    if tp <= 1:
        return 0.0
    island = spec.island_gpus
    if tp > island or island % tp != 0:
        return None
    gb_per_s, alpha_s = scale_up_link(spec.scale_up_gb_per_s)
    return collectives * all_reduce_s(message_bytes, tp, gb_per_s, alpha_s)


@dataclass(frozen=True)
class StepTimes:
    """One step of one layout at one dp on one fabric, seconds (raw and exposed communication)."""

    dp: int
    microbatches: int
    compute_s: float
    bubble_s: float
    tp_comm_s: float
    cp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    exposed_scale_up_s: float
    exposed_scale_out_s: float
    step_s: float

    @property
    def exposed_comm_s(self) -> float:
        return self.exposed_scale_up_s + self.exposed_scale_out_s


def pipeline_bubble_s(pp: int, virtual_stages: int, stage_s: float) -> float:
    """Idle time of the 1F1B pipeline per step: ``(pp − 1) / v · t_stage`` (Narayanan et al. 2021,
    arXiv:2104.04473 §2.2: the fill and drain of ``pp − 1`` stage times, divided by the ``v``
    virtual stages of the interleaved schedule). 0 without pipeline parallelism.

    The step time and its lower bound (:meth:`BoundBuilder.terms`) both take it from here: the
    bound's bubble is the very float the step adds, so rounding cannot lift the bound above it.
    """
    return (pp - 1) / virtual_stages * stage_s


def _exposed(comm_s: float, overlap: float, window_s: float) -> float:
    """Part of ``comm_s`` not hidden: at most ``overlap`` of it hides, and only behind ``window_s``."""
    return comm_s - min(overlap * comm_s, window_s)


def tp_microbatch_s(layout: Layout, fabric: Fabric) -> tuple[float, str]:
    """TP communication of one micro-batch (raw, before overlap) and the level it runs on."""
    if layout.tp_in_island_microbatch_s is not None:
        return layout.tp_in_island_microbatch_s, "scale_up"
    link = group_link(fabric, layout.tp, 1)
    per_collective = all_reduce_s(layout.tp_message_bytes, layout.tp, link.gb_per_s, link.alpha_s)
    return layout.tp_collectives_per_microbatch * per_collective, link.level


def cp_microbatch_s(layout: Layout, fabric: Fabric) -> tuple[float, float, str]:
    """(raw, exposed) ring-attention traffic of one micro-batch and the level it runs on.

    The CP group is ``cp`` ranks spaced tp apart; each ring step is a send of one K,V chunk
    (:func:`p2p_s` on the group's link), hidden behind the attention compute of the same
    micro-batch at most (:data:`CP_COMM_OVERLAP`).
    """
    if layout.cp <= 1:
        return 0.0, 0.0, "scale_up"
    link = group_link(fabric, layout.cp, layout.tp)
    raw = layout.cp_transfers_per_microbatch * p2p_s(layout.cp_chunk_bytes, link.gb_per_s, link.alpha_s)
    return raw, _exposed(raw, CP_COMM_OVERLAP, layout.attention_compute_s), link.level


def dp_comm_s(layout: Layout, dp: int, microbatches: int, gb_per_s: float, alpha_s: float) -> tuple[float, float]:
    """(raw, exposed) DP communication of one step at ``dp`` replicas on one link.

    ZeRO-0 all-reduces the gradients; ZeRO-1/2 reduce-scatter them and all-gather the updated
    weights, exposed unless the stack overlaps that all-gather (``param_gather_overlap``): then as
    much of it as the bucketed reduction hides (GRAD_REDUCE_OVERLAP) hides behind the next step's
    first forward pass, the one that needs the weights (1 − BACKWARD_SHARE of t_mb, whatever the
    number of micro-batches, so the branch and bound's floor at one micro-batch stays a floor);
    ZeRO-3 all-gathers the weights twice and reduce-scatters the gradients in every micro-batch.
    """
    t_mb = layout.microbatch_compute_s
    if layout.zero_stage == 3:
        per_mb = 2 * all_gather_s(layout.weight_bytes, dp, gb_per_s, alpha_s) + reduce_scatter_s(
            layout.gradient_bytes, dp, gb_per_s, alpha_s
        )
        return microbatches * per_mb, microbatches * _exposed(per_mb, ZERO3_OVERLAP, t_mb)
    window = BACKWARD_SHARE * t_mb
    if layout.zero_stage == 0:
        reduce = all_reduce_s(layout.gradient_bytes, dp, gb_per_s, alpha_s)
        gather = 0.0
    else:
        reduce = reduce_scatter_s(layout.gradient_bytes, dp, gb_per_s, alpha_s)
        gather = all_gather_s(layout.weight_bytes, dp, gb_per_s, alpha_s)
    gather_exposed = (_exposed(gather, GRAD_REDUCE_OVERLAP, (1.0 - BACKWARD_SHARE) * t_mb)
                      if layout.param_gather_overlap else gather)
    return reduce + gather, _exposed(reduce, GRAD_REDUCE_OVERLAP, window) + gather_exposed


def step_time(layout: Layout, dp: int, global_batch: int, fabric: Fabric) -> StepTimes:
    """Time of one optimizer step of ``layout`` at data-parallel degree ``dp`` (module docstring)."""
    m = microbatch_count(global_batch, dp, layout.microbatch)
    t_mb = layout.microbatch_compute_s
    exposed = {"scale_up": 0.0, "scale_out": 0.0}

    tp_mb, tp_level = tp_microbatch_s(layout, fabric)
    tp_exposed = layout.tp_exposed_s(tp_mb, tp_level)
    exposed[tp_level] += m * tp_exposed
    cp_raw, cp_exposed, cp_level = cp_microbatch_s(layout, fabric)
    exposed[cp_level] += m * cp_exposed
    t_stage = t_mb + tp_exposed + cp_exposed

    v = layout.virtual_stages
    bubble = pipeline_bubble_s(layout.pp, v, t_stage)
    pp_comm = 0.0
    if layout.pp > 1:
        link = p2p_link(fabric, layout.model_gpus * dp)
        pp_comm = 2 * v * (m + layout.pp - 1) * p2p_s(layout.p2p_bytes, link.gb_per_s, link.alpha_s)
        exposed[link.level] += pp_comm * (1.0 - PP_COMM_OVERLAP)

    dp_comm = 0.0
    ranks = layout.gradient_ranks(dp)
    optimizer_s = layout.optimizer_step_s / (ranks if layout.zero_stage >= 1 else 1)
    if ranks > 1:
        link = group_link(fabric, ranks, layout.dp_stride)
        dp_comm, dp_exposed = dp_comm_s(layout, ranks, m, link.gb_per_s, link.alpha_s)
        exposed[link.level] += dp_exposed

    compute = m * t_mb + optimizer_s + STEP_OVERHEAD_S
    step = compute + bubble + exposed["scale_up"] + exposed["scale_out"]
    return StepTimes(
        dp=dp,
        microbatches=m,
        compute_s=compute,
        bubble_s=bubble,
        tp_comm_s=m * tp_mb,
        cp_comm_s=m * cp_raw,
        pp_comm_s=pp_comm,
        dp_comm_s=dp_comm,
        exposed_scale_up_s=exposed["scale_up"],
        exposed_scale_out_s=exposed["scale_out"],
        step_s=step,
    )


class StepBound:
    """Lower bounds of :func:`step_time` for one layout on one fabric.

    ``at(m)`` holds for every dp giving m micro-batches:

        (m + (pp−1)/v)·t_stage + 2v·(m + pp − 1)·p2p_min + fixed overhead

    with t_stage the micro-batch time including its exposed TP communication (independent of dp)
    and p2p_min the point-to-point time on the fastest link the pipeline can use (the scale-up
    link only if a replica can fit in an island); it is increasing in m. ``for_dp(m, dp)`` adds
    the exact DP communication of that dp on the fastest link its group can use (the scale-up
    link while the group fits in an island, else the best crossing bandwidth); ``cross_floor(m)``
    is that term at two ranks, below every crossing dp (ring and tree times grow with the ranks).
    (A plain slotted class: thousands are built per search.)
    """

    __slots__ = (
        "layout",
        "per_microbatch_s",
        "constant_s",
        "in_island_gb_per_s",
        "in_island_alpha_s",
        "cross_gb_per_s",
        "cross_alpha_s",
        "island_gpus",
        "cross_floor_s",
        "cross_floor_per_microbatch",
    )

    def __init__(self, layout, per_microbatch_s, constant_s, in_island_link, cross_link, island_gpus):
        self.layout = layout
        self.per_microbatch_s = per_microbatch_s
        self.constant_s = constant_s
        self.in_island_gb_per_s, self.in_island_alpha_s = in_island_link
        self.cross_gb_per_s, self.cross_alpha_s = cross_link
        self.island_gpus = island_gpus
        self.cross_floor_per_microbatch = layout.zero_stage == 3
        self.cross_floor_s = None  # computed on first use: most bounds never need it

    def at(self, microbatches: int) -> float:
        return microbatches * self.per_microbatch_s + self.constant_s

    def in_island(self, dp: int) -> bool:
        layout = self.layout
        span = layout.gradient_ranks(dp) * layout.dp_stride
        return span <= self.island_gpus and self.island_gpus % span == 0

    def dp_floor(self, dp: int, microbatches: int) -> float:
        ranks = self.layout.gradient_ranks(dp)
        if ranks <= 1:
            return 0.0
        if self.in_island(dp):
            return dp_comm_s(self.layout, ranks, microbatches, self.in_island_gb_per_s, self.in_island_alpha_s)[1]
        return dp_comm_s(self.layout, ranks, microbatches, self.cross_gb_per_s, self.cross_alpha_s)[1]

    def cross_floor(self, microbatches: int) -> float:
        floor = self.cross_floor_s
        if floor is None:
            # Linear in m for ZeRO-3 (per micro-batch), constant otherwise.
            floor = self.cross_floor_s = dp_comm_s(self.layout, 2, 1, self.cross_gb_per_s, self.cross_alpha_s)[1]
        return floor * microbatches if self.cross_floor_per_microbatch else floor

    def for_dp(self, microbatches: int, dp: int) -> float:
        return self.at(microbatches) + self.dp_floor(dp, microbatches)

    def max_microbatches(self, budget_s: float) -> int:
        """Largest m with ``at(m)`` within ``budget_s`` (+1 against rounding; may be < 1)."""
        return int((budget_s - self.constant_s) / self.per_microbatch_s) + 1


class BoundBuilder:
    """Builds :class:`StepBound` objects on one fabric, sharing the per-fabric arithmetic.

    ``terms(layout)`` gives just the (per-micro-batch, constant) coefficients of ``at(m)``, which
    is all a search needs to order layouts; the full bound is built only for layouts it visits.
    """

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.island = fabric.island_gpus
        self.up_gb, self.up_alpha = fabric.scale_up_gb_per_s, fabric.scale_up_alpha_s
        self.out_gb, self.out_alpha = fabric.scale_out_gb_per_s, fabric.scale_out_alpha_s
        self.up_bytes_per_s, self.out_bytes_per_s = self.up_gb * BYTES_PER_GB, self.out_gb * BYTES_PER_GB
        self.in_island_link = (self.up_gb if self.up_gb > 0 else self.out_gb, self.up_alpha)
        self._cross_links: dict[int, tuple[float, float]] = {}
        self._tp_times: dict[tuple[int, int, float], tuple[float, str]] = {}

    def terms(self, layout: Layout) -> tuple[float, float]:
        """(per-micro-batch, constant) seconds of ``StepBound.at``."""
        t_stage = layout.stage_in_island_s
        if t_stage is None:
            key = (layout.tp, layout.tp_collectives_per_microbatch, layout.tp_message_bytes)
            tp = self._tp_times.get(key)
            if tp is None:
                tp = self._tp_times[key] = tp_microbatch_s(layout, self.fabric)
            t_stage = layout.microbatch_compute_s + layout.tp_exposed_s(*tp) + cp_microbatch_s(layout, self.fabric)[1]
        pp = layout.pp
        if pp == 1:
            return t_stage, STEP_OVERHEAD_S
        v = layout.virtual_stages
        size = layout.p2p_bytes
        p2p_min = self.out_alpha + size / self.out_bytes_per_s
        if layout.replica_in_island and self.up_gb > 0:
            p2p_min = min(p2p_min, self.up_alpha + size / self.up_bytes_per_s)
        p2p_min *= 1.0 - PP_COMM_OVERLAP
        return (
            t_stage + 2 * v * p2p_min,
            pipeline_bubble_s(pp, v, t_stage) + 2 * v * (pp - 1) * p2p_min + STEP_OVERHEAD_S,
        )

    def bound(self, layout: Layout, terms: tuple[float, float] | None = None) -> StepBound:
        per_microbatch_s, constant_s = terms or self.terms(layout)
        tp = layout.tp
        cross = self._cross_links.get(tp)
        if cross is None:
            island, up_gb, out_gb = self.island, self.up_gb, self.out_gb
            members = island // tp if island % tp == 0 else 1
            cross_gb = max(out_gb, min(up_gb, members * out_gb)) if members > 1 else out_gb
            cross = self._cross_links[tp] = (cross_gb, self.out_alpha)
        return StepBound(layout, per_microbatch_s, constant_s, self.in_island_link, cross, self.island)


def step_bounds(layouts: tuple[Layout, ...], fabric: Fabric) -> tuple[StepBound, ...]:
    """The :class:`StepBound` of every layout on ``fabric``."""
    builder = BoundBuilder(fabric)
    return tuple(builder.bound(layout) for layout in layouts)


def step_bound(layout: Layout, fabric: Fabric) -> StepBound:
    """The :class:`StepBound` of one layout on ``fabric``."""
    return step_bounds((layout,), fabric)[0]


__all__ = [
    "BoundBuilder",
    "Layout",
    "StepBound",
    "StepTimes",
    "cp_microbatch_s",
    "dp_comm_s",
    "make_layout",
    "microbatch_compute_s",
    "pipeline_bubble_s",
    "step_bound",
    "step_bounds",
    "step_time",
    "tp_microbatch_s",
]
