"""Memory per GPU under tensor (TP), pipeline (PP) and data (DP) parallelism with ZeRO 0–3.

The most loaded GPU is modelled: a pipeline stage holds ⌈l/pp⌉ layers plus one V×h embedding
table (the first stage's input embedding or the last stage's LM head), split over TP.

* weights   = P·2 bytes, / dp under ZeRO-3, plus the gathered bf16 weights of
  :data:`ZERO3_GATHERED_LAYERS` layers under ZeRO-3;
* gradients = P·2 bytes, / dp under ZeRO-2 and 3;
* optimizer = P·K bytes (K = 12 for mixed-precision Adam: fp32 master, m, v), / dp under ZeRO ≥ 1
  (Rajbhandari et al. 2020, arXiv:1910.02054 §5, Fig. 1);
* activations (Korthikanti et al. 2022, arXiv:2205.05198, Table 2, with sequence parallelism so
  everything divides by TP): per layer and sequence s·h·(34 + 5·a·s/h)/t bytes without
  recomputation, s·h·34/t with selective recomputation, s·h·2/t with full recomputation (plus one
  layer's activations at the selective rate while it is recomputed). The 5·a·s/h score term
  applies to materialized attention only: a flash kernel never stores the scores, so with it
  "none" keeps what "selective" keeps; materialized attention that recomputes holds one layer's
  scores, 5·a·s²/t bytes per sequence, while it runs. Under 1F1B the first stage holds
  min(pp, m) micro-batches in flight (×(1 + (pp−1)/(pp·v)) when interleaved with v virtual
  stages), so a stage of l/pp layers holds about one whole model's worth. The last stage holds
  fewer micro-batches (:func:`last_stage_in_flight`) but also a micro-batch's bf16 logits,
  s·V·2/t bytes per sequence; the more loaded of the two ends is modelled;
* reserve   = :data:`RESERVE_FIXED_GB` + :data:`RESERVE_FRACTION` × the above.

Memory never grows with dp (shards shrink, fewer micro-batches are in flight), so for a layout
the fitting dp values form an interval [dp_fit, ∞).
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.models.performance import MemoryBreakdown
from topoopt.perf.constants import (
    ACT_ATTENTION_SCORE_BYTES,
    ACT_FULL_RECOMPUTE_BYTES_PER_TOKEN_HIDDEN,
    ACT_LINEAR_BYTES_PER_TOKEN_HIDDEN,
    ACTIVATION_BYTES,
    FP8_SAVED_LINEAR_INPUT_BYTES,
    GRADIENT_BYTES_PER_PARAM,
    LOGIT_BYTES_PER_ELEMENT,
    OPTIMIZER_BYTES_PER_PARAM,
    RESERVE_FIXED_GB,
    RESERVE_FRACTION,
    WEIGHT_BYTES_PER_PARAM,
    ZERO3_GATHERED_LAYERS,
)
from topoopt.perf.flops import Attention, Recompute
from topoopt.perf.job import ModelShape
from topoopt.perf.units import BYTES_PER_GB


def layers_per_stage(layers: int, pp: int) -> int:
    """Layers on the most loaded pipeline stage: ⌈l/pp⌉."""
    return -(-layers // pp)


def params_per_gpu(shape: ModelShape, tp: int, pp: int) -> float:
    """Parameters on the most loaded GPU: (⌈l/pp⌉ · layer params + its V×h tables) / tp.

    One stage holds the embedding and an untied head; pipelined, the first stage holds the
    embedding and the last the head (tied: a copy of the embedding, as Megatron keeps it), so the
    fullest stage holds one V×h table.
    """
    tables = shape.embedding_params + (shape.head_params if pp == 1 else 0.0)
    return (layers_per_stage(shape.layers, pp) * shape.layer_params + tables) / tp


def activation_bytes_per_layer(
    shape: ModelShape,
    sequence_length: int,
    tp: int,
    recompute: Recompute,
    attention: Attention = "flash",
    fp8: bool = False,
) -> float:
    """Activation bytes one layer keeps for backward, per sequence (Korthikanti et al. 2022, Table 2).

    The attention scores (5·a·s/h) are kept only by materialized attention without recomputation;
    a flash kernel never stores them, so with it "none" keeps what "selective" keeps. FP8 training
    keeps the inputs of the four linear layers in FP8 (:data:`FP8_SAVED_LINEAR_INPUT_BYTES`):
    (3·h + f)·(2 − 1) bytes per token fewer, f the MLP inner size.
    """
    s, h = sequence_length, shape.hidden
    if recompute == "full":
        return s * h * ACT_FULL_RECOMPUTE_BYTES_PER_TOKEN_HIDDEN / tp
    per_token_hidden = ACT_LINEAR_BYTES_PER_TOKEN_HIDDEN
    if fp8:
        per_token_hidden -= (3.0 + shape.ffn_hidden / h) * (ACTIVATION_BYTES - FP8_SAVED_LINEAR_INPUT_BYTES)
    if recompute == "none" and attention == "materialized":
        per_token_hidden += ACT_ATTENTION_SCORE_BYTES * shape.heads * s / h
    return s * h * per_token_hidden / tp


def in_flight_microbatches(pp: int, microbatches: int, virtual_stages: int = 1) -> float:
    """Micro-batches whose activations the first stage holds under 1F1B: min(pp, m), interleaving
    adds (pp−1)/(pp·v) (Narayanan et al. 2021, arXiv:2104.04473 §2.2.2)."""
    in_flight = float(min(pp, microbatches))
    if virtual_stages > 1 and pp > 1:
        in_flight *= 1.0 + (pp - 1) / (pp * virtual_stages)
    return in_flight


def last_stage_in_flight(pp: int, microbatches: int, virtual_stages: int = 1) -> float:
    """Stage-equivalents of activations the last stage holds: 1 under 1F1B (it runs each
    micro-batch's backward right after its forward); ((v−1)·pp + 1)/v with v model chunks, whose
    interleaved warm-up runs (v−1)·pp chunk forwards before the first backward (Megatron-LM's
    interleaved schedule: warm-up = (pp − rank − 1)·2 + (v − 1)·pp chunks at rank pp − 1, plus
    the one in flight); never more than the m micro-batches of the step."""
    if pp <= 1 or virtual_stages <= 1:
        return float(min(1, microbatches))
    return min(float(microbatches), ((virtual_stages - 1) * pp + 1) / virtual_stages)


@dataclass(frozen=True)
class MemoryModel:
    """Per-GPU bytes of one layout as ``unsharded + sharded/dp + activations``, the activations of
    the more loaded end of the pipeline: max(first stage's in-flight micro-batches, last stage's
    in-flight micro-batches + its logits) × per-micro-batch bytes, plus ``activations_fixed_bytes``.

    Built once per layout by :func:`memory_model`; :meth:`total_gb` is cheap enough to be called
    inside the parallelism search.
    """

    weights_bytes: float
    weights_sharded: bool
    gathered_bytes: float
    gradients_bytes: float
    gradients_sharded: bool
    optimizer_bytes: float
    optimizer_sharded: bool
    activations_per_in_flight_bytes: float
    activations_fixed_bytes: float
    logits_bytes: float
    pp: int
    virtual_stages: int
    capacity_gb: float
    cp: int = 1

    def parts_bytes(self, dp: int, microbatches: int) -> tuple[float, float, float, float]:
        """(weights, gradients, optimizer, activations) in bytes at data-parallel degree ``dp``;
        ZeRO shards over the cp·dp ranks that reduce the same gradients."""
        shards = dp * self.cp
        weights = (self.weights_bytes / shards if self.weights_sharded else self.weights_bytes) + self.gathered_bytes
        gradients = self.gradients_bytes / shards if self.gradients_sharded else self.gradients_bytes
        optimizer = self.optimizer_bytes / shards if self.optimizer_sharded else self.optimizer_bytes
        per_in_flight, pp, v = self.activations_per_in_flight_bytes, self.pp, self.virtual_stages
        activations = self.activations_fixed_bytes + max(
            per_in_flight * in_flight_microbatches(pp, microbatches, v),
            per_in_flight * last_stage_in_flight(pp, microbatches, v) + self.logits_bytes,
        )
        return weights, gradients, optimizer, activations

    def total_gb(self, dp: int, microbatches: int) -> float:
        """Total per-GPU memory in GB, reserve included."""
        modelled = sum(self.parts_bytes(dp, microbatches)) / BYTES_PER_GB
        return modelled * (1.0 + RESERVE_FRACTION) + RESERVE_FIXED_GB

    def fits(self, dp: int, microbatches: int) -> bool:
        return self.total_gb(dp, microbatches) <= self.capacity_gb

    def breakdown(self, dp: int, microbatches: int) -> MemoryBreakdown:
        weights, gradients, optimizer, activations = (x / BYTES_PER_GB for x in self.parts_bytes(dp, microbatches))
        modelled = weights + gradients + optimizer + activations
        reserve = modelled * RESERVE_FRACTION + RESERVE_FIXED_GB
        return MemoryBreakdown(
            weights_gb=weights,
            gradients_gb=gradients,
            optimizer_gb=optimizer,
            activations_gb=activations,
            reserve_gb=reserve,
            total_gb=modelled + reserve,
            capacity_gb=self.capacity_gb,
        )


def memory_model(
    shape: ModelShape,
    *,
    sequence_length: int,
    optimizer: str,
    recompute: Recompute,
    attention: Attention,
    tp: int,
    pp: int,
    zero_stage: int,
    microbatch: int,
    virtual_stages: int,
    capacity_gb: float,
    fp8: bool = False,
    cp: int = 1,
) -> MemoryModel:
    """The memory model of one layout (see the module docstring for the formulas); context
    parallelism keeps s/cp tokens of every sequence per rank, so it divides every activation."""
    params = params_per_gpu(shape, tp, pp)
    stage_layers = layers_per_stage(shape.layers, pp)
    per_layer = activation_bytes_per_layer(shape, sequence_length, tp, recompute, attention, fp8)
    fixed_act = 0.0
    if recompute == "full":
        # The layer being recomputed holds its activations while its backward runs.
        fixed_act += microbatch * activation_bytes_per_layer(shape, sequence_length, tp, "selective", fp8=fp8)
    if recompute != "none" and attention == "materialized":
        # Materialized scores of the one layer whose attention is being (re)computed.
        fixed_act += microbatch * ACT_ATTENTION_SCORE_BYTES * shape.heads * sequence_length**2 / tp
    gathered = ZERO3_GATHERED_LAYERS * shape.layer_params / tp * WEIGHT_BYTES_PER_PARAM if zero_stage == 3 else 0.0
    return MemoryModel(
        weights_bytes=params * WEIGHT_BYTES_PER_PARAM,
        weights_sharded=zero_stage >= 3,
        gathered_bytes=gathered,
        gradients_bytes=params * GRADIENT_BYTES_PER_PARAM,
        gradients_sharded=zero_stage >= 2,
        optimizer_bytes=params * OPTIMIZER_BYTES_PER_PARAM[optimizer],
        optimizer_sharded=zero_stage >= 1,
        activations_per_in_flight_bytes=microbatch * stage_layers * per_layer / cp,
        activations_fixed_bytes=fixed_act / cp,
        logits_bytes=microbatch * sequence_length * shape.vocab * LOGIT_BYTES_PER_ELEMENT / tp / cp,
        pp=pp,
        virtual_stages=virtual_stages,
        capacity_gb=capacity_gb,
        cp=cp,
    )


def microbatch_count(global_batch: int, dp: int, microbatch: int) -> int:
    """Micro-batches the slowest replica runs per step: ⌈B / (dp·b)⌉."""
    return -(-global_batch // (dp * microbatch))


def min_fitting_dp(mem: MemoryModel, global_batch: int, microbatch: int) -> int | None:
    """Smallest data-parallel degree at which the layout fits, or None when none does.

    dp ranges over 1..⌈B/b⌉ (at least one micro-batch per replica); memory is non-increasing in
    dp, so a binary search is exact.
    """
    hi = -(-global_batch // microbatch)
    if not mem.fits(hi, microbatch_count(global_batch, hi, microbatch)):
        return None
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        if mem.fits(mid, microbatch_count(global_batch, mid, microbatch)):
            hi = mid
        else:
            lo = mid + 1
    return lo


__all__ = [
    "MemoryModel",
    "activation_bytes_per_layer",
    "in_flight_microbatches",
    "last_stage_in_flight",
    "layers_per_stage",
    "memory_model",
    "microbatch_count",
    "min_fitting_dp",
    "params_per_gpu",
]
