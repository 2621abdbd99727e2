"""The parallel layouts a job allows: every layout under ``auto``, or what its pins leave open.

A layout is (tp, cp, pp, micro-batch b, ZeRO stage, v, recomputation) plus a data-parallel degree
dp; it uses tp·cp·pp·dp GPUs, ranked TP, CP, DP, PP from the innermost out (Megatron's order). A field pinned in ``workload.training.parallelism`` (or in
``activation_recompute``) takes that one value; a field left out takes every value ``auto``
searches:

* tp ∈ divisors of the scale-up island (8 on an HGX board) that divide the attention heads — a
  TP group must stay on the scale-up link to be worth its per-layer collectives;
* cp = 1, and the powers of two of :data:`CP_CHOICES` that leave every rank at least
  :data:`CP_MIN_TOKENS_PER_RANK` tokens of a sequence (context parallelism is for long sequences);
* pp ∈ {⌈l/L⌉ : L = 1..l}: for each stage depth L the fewest stages that give it. Any other pp
  has the same most-loaded stage with a longer bubble, more activations in flight and more GPUs;
* v = 1, or with pp > 1 any v > 1 with l divisible by pp·v (Megatron's interleaved schedule
  splits every stage into v equal model chunks); a pinned v > 1 leaves pp the values > 1 it
  divides the layers with;
* b ∈ {1, 2, 4, 8} (b ≤ B); ZeRO ∈ {0, 2, 3} when pp = 1 (ZeRO-1 has the same step time as
  ZeRO-2 in this model and needs more memory, so it never wins) and {0, 1} when pp > 1 (ZeRO-2/3
  with pipelining is not supported by Megatron-LM or DeepSpeed; ZeRO-1 is Megatron's distributed
  optimizer);
* recomputation, under ``activation_recompute: auto``: none or full with a flash kernel (which
  stores no attention scores, so selective recomputation keeps and computes exactly what none
  does), none, selective or full with materialized attention. A costlier policy is dropped when a
  cheaper one of the same (tp, pp, v, b, ZeRO) fits at the same smallest dp: it then has the same
  candidate dp and at each of them a step at least as long (more FLOPs, more TP collectives), so
  the fastest layout never needs it;
* dp ∈ C = {dp_fit} ∪ {⌈B/(m·b)⌉ > dp_fit : m ≥ 1} (:mod:`topoopt.perf.search`), or the pinned dp.

The space depends on the job, the GPU and its island, never on the cluster's size or fabric.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from topoopt.models.performance import Parallelism
from topoopt.perf.constants import CP_CHOICES, CP_MIN_TOKENS_PER_RANK
from topoopt.perf.flops import Recompute
from topoopt.perf.job import GpuSpec, Job, ModelShape
from topoopt.perf.memory import MemoryModel, memory_model, microbatch_count, min_fitting_dp
from topoopt.perf.step import Layout, make_layout

MICROBATCH_CHOICES = (1, 2, 4, 8)
ZERO_CHOICES_NO_PP = (0, 2, 3)
ZERO_CHOICES_PP = (0, 1)
RECOMPUTE_BY_COST: tuple[Recompute, ...] = ("none", "selective", "full")
"""Recomputation policies from the cheapest step to the leanest memory."""


def tp_choices(island_gpus: int, heads: int) -> list[int]:
    """Divisors of the island size that divide the number of attention heads."""
    return [d for d in range(1, island_gpus + 1) if island_gpus % d == 0 and heads % d == 0]


def pp_choices(layers: int) -> list[int]:
    """{⌈l/L⌉ : L = 1..l}, ascending: the fewest stages for each stage depth."""
    return sorted({-(-layers // depth) for depth in range(1, layers + 1)})


def cp_choices(sequence_length: int) -> list[int]:
    """1, and every degree of :data:`CP_CHOICES` that splits the sequence into 2·cp equal chunks
    of at least :data:`CP_MIN_TOKENS_PER_RANK` tokens per rank."""
    return [1] + [
        cp for cp in CP_CHOICES if sequence_length % (2 * cp) == 0 and sequence_length // cp >= CP_MIN_TOKENS_PER_RANK
    ]


def virtual_stage_choices(layers: int, pp: int) -> list[int]:
    """1, and with pp > 1 every v > 1 such that pp·v divides the layers (equal model chunks)."""
    if pp <= 1 or layers % pp != 0:
        return [1]
    per_stage = layers // pp
    return [v for v in range(1, per_stage + 1) if per_stage % v == 0]


def recompute_choices(policy: str, attention: str) -> tuple[Recompute, ...]:
    """The policies searched under ``policy`` (module docstring): the policy itself unless 'auto'."""
    if policy != "auto":
        return (policy,)
    return ("none", "full") if attention == "flash" else RECOMPUTE_BY_COST


@dataclass(frozen=True)
class LayoutPins:
    """The fields of a layout that are fixed; None = searched."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    cp: int | None = None
    zero_stage: int | None = None
    microbatch: int | None = None
    virtual_stages: int | None = None
    recompute: Recompute | None = None

    @property
    def complete(self) -> bool:
        """Every field fixed: the space is one layout at one dp."""
        return None not in (self.tp, self.pp, self.dp, self.cp, self.zero_stage, self.microbatch,
                            self.virtual_stages, self.recompute)

    @classmethod
    def of(cls, job: Job, parallelism: Parallelism | None = None) -> LayoutPins:
        """The pins of ``parallelism`` (every field; its recomputation, or else the job's policy), or
        of the job's own setting: ``auto`` pins nothing, a pinned layout what it gives."""
        policy = job.training.activation_recompute
        recompute = None if policy == "auto" else policy
        if parallelism is not None:
            return cls(
                tp=parallelism.tp,
                pp=parallelism.pp,
                dp=parallelism.dp,
                cp=parallelism.cp,
                zero_stage=parallelism.zero_stage,
                microbatch=parallelism.microbatch,
                virtual_stages=parallelism.virtual_stages,
                recompute=parallelism.activation_recompute or recompute,
            )
        pinned = job.training.parallelism
        if pinned == "auto":
            return cls(recompute=recompute)
        return cls(
            tp=pinned.tp,
            pp=pinned.pp,
            dp=pinned.dp,
            cp=pinned.cp,
            zero_stage=pinned.zero_stage,
            microbatch=pinned.microbatch,
            virtual_stages=pinned.virtual_stages,
            recompute=recompute,
        )


@lru_cache(maxsize=64)
def _shape(job: Job) -> ModelShape:
    return ModelShape.of(job.model)


def _given(pinned: int | None, choices) -> list[int]:
    return [pinned] if pinned is not None else list(choices)


def layout_choices(job: Job, spec: GpuSpec, pins: LayoutPins) -> Iterator[tuple[int, int, int, int, int, int]]:
    """(tp, cp, pp, v, b, ZeRO) of every layout of the space, recomputation aside (module docstring)."""
    shape = _shape(job)
    layers = shape.layers
    batch = job.training.global_batch_sequences
    pps = _given(pins.pp, pp_choices(layers))
    if pins.pp is None and pins.virtual_stages is not None and pins.virtual_stages > 1:
        pps = [pp for pp in pps if pp > 1 and layers % (pp * pins.virtual_stages) == 0]
    microbatches = _given(pins.microbatch, (b for b in MICROBATCH_CHOICES if b <= batch))
    cps = _given(pins.cp, cp_choices(job.training.sequence_length))
    for tp in _given(pins.tp, tp_choices(spec.island_gpus, shape.heads)):
        for cp in cps:
            for pp in pps:
                if pp > layers:
                    continue
                for v in _given(pins.virtual_stages, virtual_stage_choices(layers, pp)):
                    for b in microbatches:
                        for zero in _given(pins.zero_stage, ZERO_CHOICES_NO_PP if pp == 1 else ZERO_CHOICES_PP):
                            yield tp, cp, pp, v, b, zero


def _memory_and_fit(
    job: Job, shape: ModelShape, spec: GpuSpec, tp: int, pp: int, microbatch: int, zero_stage: int,
    virtual_stages: int, recompute: Recompute, dp: int | None, cp: int,
) -> tuple[MemoryModel, int | None]:
    """The layout's memory model and its smallest fitting dp (with ``dp`` given: that degree, or
    None when it does not fit)."""
    training = job.training
    memory = memory_model(
        shape,
        sequence_length=training.sequence_length,
        optimizer=training.optimizer,
        recompute=recompute,
        attention=training.attention,
        tp=tp,
        pp=pp,
        zero_stage=zero_stage,
        microbatch=microbatch,
        virtual_stages=virtual_stages,
        capacity_gb=spec.memory_gb,
        fp8=spec.precision == "fp8",
        cp=cp,
    )
    batch = training.global_batch_sequences
    if dp is None:
        return memory, min_fitting_dp(memory, batch, microbatch)
    return memory, dp if memory.fits(dp, microbatch_count(batch, dp, microbatch)) else None


def _layout(job: Job, shape: ModelShape, spec: GpuSpec, memory: MemoryModel, dp_fit: int | None, tp: int, pp: int,
            microbatch: int, zero_stage: int, virtual_stages: int, recompute: Recompute, dp_pinned: bool,
            cp: int) -> Layout:
    training = job.training
    return make_layout(
        shape,
        spec,
        memory,
        dp_fit,
        sequence_length=training.sequence_length,
        recompute=recompute,
        attention=training.attention,
        tp=tp,
        pp=pp,
        microbatch=microbatch,
        zero_stage=zero_stage,
        virtual_stages=virtual_stages,
        dp_pinned=dp_pinned,
        cp=cp,
        tp_overlap=training.tp_comm_overlap,
        param_gather_overlap=training.param_gather_overlap,
    )


def build_layout(
    job: Job,
    spec: GpuSpec,
    tp: int,
    pp: int,
    microbatch: int,
    zero_stage: int,
    virtual_stages: int,
    recompute: Recompute,
    dp: int | None = None,
    cp: int = 1,
) -> Layout:
    """The layout's fabric-independent numbers with its smallest fitting dp, or with ``dp`` given
    that degree alone (``dp_fit`` None when it does not fit)."""
    shape = _shape(job)
    memory, dp_fit = _memory_and_fit(job, shape, spec, tp, pp, microbatch, zero_stage, virtual_stages, recompute, dp, cp)
    return _layout(job, shape, spec, memory, dp_fit, tp, pp, microbatch, zero_stage, virtual_stages, recompute,
                   dp is not None, cp)


@lru_cache(maxsize=4096)
def layout_space(job: Job, spec: GpuSpec, pins: LayoutPins) -> tuple[Layout, ...]:
    """Every layout of the space that fits at some candidate dp, cached (module docstring)."""
    policies = (pins.recompute,) if pins.recompute is not None else recompute_choices("auto", job.training.attention)
    shape = _shape(job)
    layouts = []
    for tp, cp, pp, v, b, zero in layout_choices(job, spec, pins):
        fitted: set[int] = set()
        for recompute in policies:
            memory, dp_fit = _memory_and_fit(job, shape, spec, tp, pp, b, zero, v, recompute, pins.dp, cp)
            if dp_fit is None or dp_fit in fitted:
                continue  # does not fit, or a cheaper policy fits at the same dp (dominated)
            fitted.add(dp_fit)
            layouts.append(_layout(job, shape, spec, memory, dp_fit, tp, pp, b, zero, v, recompute, pins.dp is not None, cp))
    return tuple(layouts)


def job_layouts(job: Job, spec: GpuSpec) -> tuple[Layout, ...]:
    """The layouts of the job's own setting (pinned fields, ``activation_recompute``) on ``spec``."""
    return layout_space(job, spec, LayoutPins.of(job))


__all__ = [
    "MICROBATCH_CHOICES",
    "LayoutPins",
    "build_layout",
    "cp_choices",
    "job_layouts",
    "layout_choices",
    "layout_space",
    "pp_choices",
    "recompute_choices",
    "tp_choices",
    "virtual_stage_choices",
]
