"""Performance-model results (shared by `estimate`, the solver's report and the checker)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from topoopt.models.base import NoBoolean, Record

Bottleneck = Literal["compute", "scale_up", "scale_out", "pipeline_bubble", "storage", "memory"]


class Parallelism(Record):
    tp: int = Field(ge=1)
    pp: int = Field(ge=1)
    dp: int = Field(ge=1)
    zero_stage: Annotated[Literal[0, 1, 2, 3], NoBoolean]
    microbatch: int = Field(ge=1)
    virtual_stages: int = Field(1, ge=1, description="Interleaved pipeline chunks per stage; 1 = plain 1F1B.")
    cp: int = Field(1, ge=1, description="Context-parallel degree; tp x cp x pp x dp GPUs are used.")
    activation_recompute: Literal["none", "selective", "full"] | None = Field(
        None, description="Activation recomputation of the layout; None = the job's own policy."
    )


class MemoryBreakdown(Record):
    """Per-GPU memory in GB."""

    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    reserve_gb: float
    total_gb: float
    capacity_gb: float


class StepBreakdown(Record):
    """One optimizer step, seconds."""

    compute_s: float
    bubble_s: float
    tp_comm_s: float
    cp_comm_s: float = Field(0.0, description="Ring-attention sends of context parallelism, before overlap.")
    pp_comm_s: float
    dp_comm_s: float
    exposed_comm_s: float
    storage_s: float = Field(
        0.0, description="Converged storage network: data reads over the compute NICs, serial with the step."
    )
    step_time_s: float


class StorageNeeds(Record):
    read_gb_per_s: float = Field(description="Data-loading read rate with safety factor, GB/s.")
    checkpoint_gb: float = Field(description="One full checkpoint, GB.")
    write_gb_per_s: float = Field(description="Write rate to save a checkpoint in the allowed time, GB/s.")
    capacity_tb: float = Field(description="Dataset plus retained checkpoints, TB.")
    needs_low_latency: bool
    network_gbps: float = Field(
        0.0, description="Storage-network bandwidth the nodes need together: 8 x max(read, write), Gb/s."
    )
    cold_capacity_tb: float = Field(0.0, description="Archived data plus archived checkpoints on the cold tier, TB.")
    cold_write_gb_per_s: float = Field(0.0, description="Write rate to archive one checkpoint per interval, GB/s.")


UNCALIBRATED_NOTE = (
    "uncalibrated: no calibration run covers this GPU at this precision, so the prediction extrapolates "
    "the fitted constants (docs/performance-model.md §9)"
)
"""What the solve summary and ``estimate`` print for a prediction whose ``calibrated`` is False."""


class Performance(Record):
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    step_time_s: float
    tflops_per_gpu: float = Field(description="Model FLOPs (6N + attention) per GPU per second, TFLOP/s.")
    hardware_tflops_per_gpu: float = Field(description="Including recomputation, TFLOP/s.")
    mfu: float
    time_to_train_days: float
    memory_per_gpu_gb: float
    bottleneck: Bottleneck
    parallelism: Parallelism
    gpus_used: int
    memory: MemoryBreakdown
    step: StepBreakdown
    storage: StorageNeeds
    calibrated: bool = Field(
        description="Whether calibration runs cover this GPU at this precision; False = extrapolated, "
        "less certain (docs/performance-model.md §9)."
    )
