"""What the storage tier must deliver: read rate, checkpoint size and write rate, capacity.

* read GB/s   = bytes per token × tokens/s × ``data.read_safety_factor`` / 1e9, with bytes per
  token = ``data.bytes_per_token``, or ``data.bytes_per_sample`` / sequence length (one sample is
  one sequence), or :data:`DEFAULT_BYTES_PER_TOKEN` for pre-tokenised text;
* checkpoint  = parameters × (bf16 weights 2 + optimizer state K) bytes: 14 bytes/param for
  mixed-precision Adam (BLOOM-176B: 2.3 TB ≈ 13 bytes/param, hardware-facts §B2.3);
* write GB/s  = checkpoint / ``checkpoint.max_save_time_s`` (a blocking save must finish in time);
* capacity TB = ``data.dataset_tb`` + ``checkpoint.keep`` × checkpoint;
* low latency = ``data.small_files`` (many small files need a low-latency tier).
"""

from __future__ import annotations

from topoopt.models.performance import StorageNeeds
from topoopt.perf.constants import CHECKPOINT_WEIGHT_BYTES_PER_PARAM, DEFAULT_BYTES_PER_TOKEN, OPTIMIZER_BYTES_PER_PARAM
from topoopt.perf.job import Job


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


def storage_needs(job: Job, tokens_per_s: float) -> StorageNeeds:
    """Storage bandwidth, capacity and latency the job needs at ``tokens_per_s``."""
    checkpoint = checkpoint_gb(job)
    return StorageNeeds(
        read_gb_per_s=bytes_per_token(job) * tokens_per_s * job.data.read_safety_factor / 1e9,
        checkpoint_gb=checkpoint,
        write_gb_per_s=checkpoint / job.checkpoint.max_save_time_s,
        capacity_tb=job.data.dataset_tb + job.checkpoint.keep * checkpoint / 1000.0,
        needs_low_latency=job.data.small_files,
    )


__all__ = ["bytes_per_token", "checkpoint_bytes_per_param", "checkpoint_gb", "storage_needs"]
