"""FLOP counts of a dense decoder-only transformer, per token.

Conventions (PaLM, Chowdhery et al. 2022, arXiv:2204.02311 App. B; the MosaicML MFU definition):
a parameter costs 6 FLOPs per token in training (2 forward, 4 backward), and attention adds
12·l·h·s per token (the QKᵀ and AV matmuls, forward and backward, without the causal-mask
saving). *Model* FLOPs are these; *hardware* FLOPs add what activation recomputation repeats.
"""

from __future__ import annotations

from typing import Literal

from topoopt.perf.job import ModelShape

Recompute = Literal["none", "selective", "full"]
Attention = Literal["flash", "materialized"]


def model_flops_per_token(shape: ModelShape, sequence_length: int) -> float:
    """Model FLOPs per trained token: 6·N + 12·l·h·s."""
    return 6.0 * shape.params + 12.0 * shape.layers * shape.hidden * sequence_length


def layer_linear_flops_per_token(shape: ModelShape) -> float:
    """Matmul FLOPs of one layer's weights per token, training: 6 × layer parameters."""
    return 6.0 * shape.layer_params


def layer_attention_flops_per_token(shape: ModelShape, sequence_length: int) -> float:
    """Attention-score FLOPs of one layer per token, training: 12·h·s."""
    return 12.0 * shape.hidden * sequence_length


def head_flops_per_token(shape: ModelShape) -> float:
    """The embedding/LM-head matmul per token, training: 6 × V·h (on the last pipeline stage)."""
    return 6.0 * shape.embedding_params


def recompute_factors(recompute: Recompute, attention: Attention = "flash") -> tuple[float, float]:
    """(linear, attention) FLOP multipliers of one layer for a recomputation policy and kernel.

    Recomputing a forward pass costs 1/3 of the training FLOPs it repeats.

    * full recomputation redoes the whole forward: linear 4/3; attention 4/3;
    * selective recomputation (Korthikanti et al. 2022 §5) redoes the attention core: 1, 4/3;
    * a flash kernel always recomputes the attention core in its backward pass (Dao et al. 2022,
      arXiv:2205.14135 §3.1), on top of the policy: attention 4/3 without or with selective
      recomputation, 5/3 with full recomputation (MosaicML's "attention multiplier 5 instead of 4").
    """
    linear = 4.0 / 3.0 if recompute == "full" else 1.0
    attention_factor = 1.0 if recompute == "none" else 4.0 / 3.0
    if attention == "flash":
        attention_factor = 5.0 / 3.0 if recompute == "full" else 4.0 / 3.0
    return linear, attention_factor


def hardware_flops_per_token(
    shape: ModelShape, sequence_length: int, recompute: Recompute, attention: Attention = "flash"
) -> float:
    """FLOPs the GPUs execute per token, recomputation included (the LM head is never recomputed)."""
    linear_factor, attention_factor = recompute_factors(recompute, attention)
    per_layer = (
        layer_linear_flops_per_token(shape) * linear_factor
        + layer_attention_flops_per_token(shape, sequence_length) * attention_factor
    )
    return shape.layers * per_layer + head_flops_per_token(shape)


def megatron_flops_per_token(layers: int, hidden: int, sequence_length: int, vocab: int) -> float:
    """FLOPs per token in Megatron-LM's own accounting (Narayanan et al. 2021, arXiv:2104.04473 §5.1).

    F / (B·s) = 96·l·h²·(1 + s/(6h) + V/(16·l·h)); it counts full activation recomputation.
    Used to convert Megatron's reported TFLOP/s per GPU into tokens/s per GPU.
    """
    return 96.0 * layers * hidden**2 * (1.0 + sequence_length / (6.0 * hidden) + vocab / (16.0 * layers * hidden))


__all__ = [
    "Attention",
    "Recompute",
    "hardware_flops_per_token",
    "head_flops_per_token",
    "layer_attention_flops_per_token",
    "layer_linear_flops_per_token",
    "megatron_flops_per_token",
    "model_flops_per_token",
    "recompute_factors",
]
