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
    t_stage  = t_mb + exposed TP communication of one micro-batch
    bubble   = (pp − 1)/v · t_stage                       (1F1B; Narayanan et al. 2021 §2.2)
    PP comm  = 2·v·(m + pp − 1) · p2p(b·s·h·2/tp)         (activations forward, gradients back)
    DP comm  = ZeRO-0: all-reduce(grads); ZeRO-1/2: reduce-scatter(grads) + all-gather(weights);
               ZeRO-3: per micro-batch 2 × all-gather(weights) + reduce-scatter(grads)
    step     = compute + bubble + m·TP exposed + PP exposed + DP exposed

Overlap: a collective of c seconds that may hide behind W seconds of compute with overlap
fraction f exposes c − min(f·c, W) (ZeRO-0/1/2 gradient reduction hides behind the last
micro-batch's backward pass, 2/3 of t_mb; ZeRO-3 traffic behind its own micro-batch).
Every term is non-increasing in every bandwidth and never depends on the number of nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.perf.collectives import all_gather_s, all_reduce_s, group_link, p2p_link, p2p_s, reduce_scatter_s
from topoopt.perf.constants import (
    ACTIVATION_BYTES,
    ATTENTION_SCORE_TRAFFIC_BYTES,
    GRAD_REDUCE_OVERLAP,
    GRADIENT_BYTES_PER_PARAM,
    MEMORY_BOUND_BYTES_PER_FLOP,
    OPTIMIZER_STEP_BYTES_PER_PARAM,
    PP_COMM_OVERLAP,
    STEP_OVERHEAD_S,
    TP_ALLREDUCES_FULL_RECOMPUTE,
    TP_ALLREDUCES_PER_LAYER,
    TP_COMM_OVERLAP,
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
from topoopt.perf.job import Fabric, GpuSpec, ModelShape
from topoopt.perf.memory import MemoryModel, layers_per_stage, microbatch_count, params_per_gpu

BACKWARD_SHARE = 2.0 / 3.0
"""The backward pass is 2/3 of a micro-batch's training FLOPs (4 of 6 FLOPs per parameter)."""


@dataclass(frozen=True)
class Layout:
    """The fabric-independent numbers of one (tp, pp, b, ZeRO, v) layout."""

    tp: int
    pp: int
    microbatch: int
    zero_stage: int
    virtual_stages: int
    microbatch_compute_s: float
    optimizer_step_s: float
    tp_message_bytes: float
    tp_collectives_per_microbatch: int
    p2p_bytes: float
    weight_bytes: float
    gradient_bytes: float
    memory: MemoryModel
    dp_fit: int | None

    @property
    def model_gpus(self) -> int:
        """GPUs of one model replica: tp·pp."""
        return self.tp * self.pp


def microbatch_compute_s(
    shape: ModelShape,
    spec: GpuSpec,
    sequence_length: int,
    recompute: Recompute,
    attention: Attention,
    tp: int,
    pp: int,
    microbatch: int,
) -> float:
    """Forward + backward (+ recomputation) time of one micro-batch on the most loaded stage, s.

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
    per_token_s = (
        linear_flops / (spec.linear_tflops * 1e12 * efficiency * spec.linear_efficiency_ratio)
        + attention_flops / (spec.attention_tflops * 1e12 * efficiency)
        + hbm_bytes / (spec.memory_bandwidth_gb_per_s * 1e9)
    )
    return microbatch * sequence_length / tp * per_token_s


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
) -> Layout:
    """Collect the per-layout constants (see the module docstring)."""
    params = params_per_gpu(shape, tp, pp)
    stage_layers = layers_per_stage(shape.layers, pp)
    collectives = TP_ALLREDUCES_PER_LAYER + (TP_ALLREDUCES_FULL_RECOMPUTE if recompute == "full" else 0)
    activation_bytes = microbatch * sequence_length * shape.hidden * ACTIVATION_BYTES
    return Layout(
        tp=tp,
        pp=pp,
        microbatch=microbatch,
        zero_stage=zero_stage,
        virtual_stages=virtual_stages,
        microbatch_compute_s=microbatch_compute_s(
            shape, spec, sequence_length, recompute, attention, tp, pp, microbatch
        ),
        optimizer_step_s=params * OPTIMIZER_STEP_BYTES_PER_PARAM / (spec.memory_bandwidth_gb_per_s * 1e9),
        tp_message_bytes=activation_bytes if tp > 1 else 0.0,
        tp_collectives_per_microbatch=stage_layers * collectives if tp > 1 else 0,
        p2p_bytes=activation_bytes / tp if pp > 1 else 0.0,
        weight_bytes=params * WEIGHT_BYTES_PER_PARAM,
        gradient_bytes=params * GRADIENT_BYTES_PER_PARAM,
        memory=memory,
        dp_fit=dp_fit,
    )


@dataclass(frozen=True)
class StepTimes:
    """One step of one layout at one dp on one fabric, seconds (raw and exposed communication)."""

    dp: int
    microbatches: int
    compute_s: float
    bubble_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    exposed_scale_up_s: float
    exposed_scale_out_s: float
    step_s: float

    @property
    def exposed_comm_s(self) -> float:
        return self.exposed_scale_up_s + self.exposed_scale_out_s


def _exposed(comm_s: float, overlap: float, window_s: float) -> float:
    """Part of ``comm_s`` not hidden: at most ``overlap`` of it hides, and only behind ``window_s``."""
    return comm_s - min(overlap * comm_s, window_s)


def step_time(layout: Layout, dp: int, global_batch: int, fabric: Fabric) -> StepTimes:
    """Time of one optimizer step of ``layout`` at data-parallel degree ``dp`` (module docstring)."""
    m = microbatch_count(global_batch, dp, layout.microbatch)
    t_mb = layout.microbatch_compute_s
    exposed = {"scale_up": 0.0, "scale_out": 0.0}

    tp_mb = 0.0
    if layout.tp > 1:
        link = group_link(fabric, layout.tp, 1)
        tp_mb = layout.tp_collectives_per_microbatch * all_reduce_s(
            layout.tp_message_bytes, layout.tp, link.gb_per_s, link.alpha_s
        )
        exposed[link.level] += m * tp_mb * (1.0 - TP_COMM_OVERLAP)
    t_stage = t_mb + tp_mb * (1.0 - TP_COMM_OVERLAP)

    v = layout.virtual_stages
    bubble = (layout.pp - 1) / v * t_stage
    pp_comm = 0.0
    if layout.pp > 1:
        link = p2p_link(fabric, layout.tp * dp * layout.pp)
        pp_comm = 2 * v * (m + layout.pp - 1) * p2p_s(layout.p2p_bytes, link.gb_per_s, link.alpha_s)
        exposed[link.level] += pp_comm * (1.0 - PP_COMM_OVERLAP)

    dp_comm = 0.0
    optimizer_s = layout.optimizer_step_s / (dp if layout.zero_stage >= 1 else 1)
    if dp > 1:
        link = group_link(fabric, dp, layout.tp)
        bw, alpha = link.gb_per_s, link.alpha_s
        if layout.zero_stage == 3:
            per_mb = 2 * all_gather_s(layout.weight_bytes, dp, bw, alpha) + reduce_scatter_s(
                layout.gradient_bytes, dp, bw, alpha
            )
            dp_comm = m * per_mb
            exposed[link.level] += m * _exposed(per_mb, ZERO3_OVERLAP, t_mb)
        else:
            window = BACKWARD_SHARE * t_mb
            if layout.zero_stage == 0:
                reduce = all_reduce_s(layout.gradient_bytes, dp, bw, alpha)
                gather = 0.0
            else:
                reduce = reduce_scatter_s(layout.gradient_bytes, dp, bw, alpha)
                gather = all_gather_s(layout.weight_bytes, dp, bw, alpha)
            dp_comm = reduce + gather
            exposed[link.level] += _exposed(reduce, GRAD_REDUCE_OVERLAP, window) + gather

    compute = m * t_mb + optimizer_s + STEP_OVERHEAD_S
    step = compute + bubble + exposed["scale_up"] + exposed["scale_out"]
    return StepTimes(
        dp=dp,
        microbatches=m,
        compute_s=compute,
        bubble_s=bubble,
        tp_comm_s=m * tp_mb,
        pp_comm_s=pp_comm,
        dp_comm_s=dp_comm,
        exposed_scale_up_s=exposed["scale_up"],
        exposed_scale_out_s=exposed["scale_out"],
        step_s=step,
    )


def step_lower_bound_s(layout: Layout, microbatches: int) -> float:
    """A lower bound of :func:`step_time` for any dp giving ``microbatches``: compute + bubble
    without communication. Non-decreasing in the micro-batch count."""
    return (microbatches + (layout.pp - 1) / layout.virtual_stages) * layout.microbatch_compute_s


__all__ = ["Layout", "StepTimes", "make_layout", "microbatch_compute_s", "step_lower_bound_s", "step_time"]
