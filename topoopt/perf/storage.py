"""What the storage tiers and the storage network must deliver.

Hot tier (the working set):

* read GB/s   = bytes per token × tokens/s × ``data.read_safety_factor`` / 1e9, with bytes per
  token = ``data.bytes_per_token``, or ``data.bytes_per_sample`` / sequence length (one sample is
  one sequence), or :data:`DEFAULT_BYTES_PER_TOKEN` for pre-tokenised text;
* checkpoint  = parameters × (bf16 weights 2 + optimizer state K) bytes: 14 bytes/param for
  mixed-precision Adam (BLOOM-176B: 2.3 TB ≈ 13 bytes/param, hardware-facts §B2.3);
* write GB/s  = checkpoint / ``checkpoint.max_save_time_s`` (a blocking save must finish in time);
* capacity TB = ``data.dataset_tb`` + ``checkpoint.keep`` × checkpoint;
* low latency = ``data.small_files`` (many small files need a low-latency tier).

Storage network: the nodes together need ``network_gbps`` = 8 × max(read, write) Gb/s: reads run
continuously, and a checkpoint save blocks training, so reads and writes do not overlap.

Cold tier (archive, optional):

* capacity TB = ``data.archive_tb`` + ⌈``D`` × 24 / ``interval_hours``⌉ × checkpoint / 1000 (one
  checkpoint archived per interval, each kept ``archive_days``), with ``D`` = ``archive_days``, or
  ``goal.deadline_days`` when sooner: a run that ends by its deadline writes no more;
* write GB/s  = checkpoint / (``interval_hours`` × 3600) when checkpoints are archived
  (``archive_days`` > 0), else 0: one checkpoint copied out per interval.

Converged storage network: the step also reads, over the compute NICs,
:func:`converged_storage_gb_per_step` GB in :func:`converged_storage_s` seconds.
"""

from __future__ import annotations

import math

from topoopt.models.performance import StorageNeeds
from topoopt.perf.constants import (
    CHECKPOINT_WEIGHT_BYTES_PER_PARAM,
    CONVERGED_STORAGE_OVERLAP,
    DEFAULT_BYTES_PER_TOKEN,
    OPTIMIZER_BYTES_PER_PARAM,
)
from topoopt.perf.job import Hardware, Job
from topoopt.perf.units import BITS_PER_BYTE, BYTES_PER_GB, GB_PER_TB, HOURS_PER_DAY, SECONDS_PER_HOUR

ROUNDING_SLACK = 1e-9
"""Tolerance before rounding a count up, so that 0.7 × 24 / 1.4 (= 12.000000000000002 in floating
point) archives 12 checkpoints, not 13."""


def bytes_per_token(job: Job) -> float:
    """Bytes read from storage per training token."""
    data = job.data
    if data.bytes_per_token is not None:
        return data.bytes_per_token
    if data.bytes_per_sample is not None:
        return data.bytes_per_sample / job.training.sequence_length
    return DEFAULT_BYTES_PER_TOKEN


def checkpoint_bytes_per_param(optimizer: str) -> float:
    """Bytes one parameter takes in a full checkpoint: bf16 weights + optimizer state."""
    return CHECKPOINT_WEIGHT_BYTES_PER_PARAM + OPTIMIZER_BYTES_PER_PARAM[optimizer]


def checkpoint_gb(job: Job) -> float:
    """Size of one full checkpoint in GB."""
    return job.model.params_b * checkpoint_bytes_per_param(job.training.optimizer)


def archived_checkpoints(job: Job) -> int:
    """Checkpoints on the cold tier at once: ⌈D × 24 / interval_hours⌉ with D the archive's days,
    or the deadline's when sooner (the run writes none after it); 0 when none are archived."""
    checkpoint = job.checkpoint
    days = checkpoint.archive_days
    if job.deadline_days is not None:
        days = min(days, job.deadline_days)
    count = days * HOURS_PER_DAY / checkpoint.interval_hours
    return max(0, math.ceil(count - ROUNDING_SLACK))


def cold_capacity_tb(job: Job) -> float:
    """Cold-tier capacity: archived raw data plus archived checkpoints, TB. 0 means no cold tier."""
    return job.data.archive_tb + archived_checkpoints(job) * checkpoint_gb(job) / GB_PER_TB


def cold_write_gb_per_s(job: Job) -> float:
    """Cold-tier write rate: one checkpoint archived per checkpoint interval, GB/s (0 when
    checkpoints are not archived)."""
    if job.checkpoint.archive_days <= 0:
        return 0.0
    return checkpoint_gb(job) / (job.checkpoint.interval_hours * SECONDS_PER_HOUR)


def tokens_per_step(job: Job) -> float:
    """Training tokens in one optimizer step: global batch × sequence length."""
    return float(job.training.global_batch_sequences * job.training.sequence_length)


def converged_storage_gb_per_step(job: Job) -> float:
    """GB the nodes together read from storage per optimizer step: tokens per step × bytes per
    token (the mean rate: no read safety factor, which sizes the storage tier, not the step)."""
    return tokens_per_step(job) * bytes_per_token(job) / BYTES_PER_GB


def converged_storage_s(hw: Hardware) -> float:
    """Seconds a step spends reading storage over the compute NICs on a converged storage
    network: ``converged_storage_gb_per_step`` / nodes / (NICs per node × link Gb/s / 8), the
    unhidden part (:data:`CONVERGED_STORAGE_OVERLAP`) added serially to the step (an estimate).
    Each node reads its share at its NICs' line rate. 0 with a dedicated storage network."""
    gb = hw.converged_storage_gb_per_step
    if gb <= 0:
        return 0.0
    node_gb_per_s = hw.nics_per_node * hw.link_gbps / BITS_PER_BYTE
    if node_gb_per_s <= 0:
        raise ValueError("a converged storage network needs compute NICs (nics_per_node x link_gbps > 0)")
    return (1.0 - CONVERGED_STORAGE_OVERLAP) * gb / hw.nodes / node_gb_per_s


def storage_needs(job: Job, tokens_per_s: float) -> StorageNeeds:
    """Storage bandwidth, capacity and latency the job needs at ``tokens_per_s``."""
    checkpoint = checkpoint_gb(job)
    read = bytes_per_token(job) * tokens_per_s * job.data.read_safety_factor / BYTES_PER_GB
    write = checkpoint / job.checkpoint.max_save_time_s
    return StorageNeeds(
        read_gb_per_s=read,
        checkpoint_gb=checkpoint,
        write_gb_per_s=write,
        capacity_tb=job.data.dataset_tb + job.checkpoint.keep * checkpoint / GB_PER_TB,
        needs_low_latency=job.data.small_files,
        network_gbps=BITS_PER_BYTE * max(read, write),
        cold_capacity_tb=cold_capacity_tb(job),
        cold_write_gb_per_s=cold_write_gb_per_s(job),
    )


__all__ = [
    "archived_checkpoints",
    "bytes_per_token",
    "checkpoint_bytes_per_param",
    "checkpoint_gb",
    "cold_capacity_tb",
    "cold_write_gb_per_s",
    "converged_storage_gb_per_step",
    "converged_storage_s",
    "storage_needs",
    "tokens_per_step",
]
