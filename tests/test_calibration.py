"""The performance model against its calibration set (hardware-facts §B2: MEG-1..10, MOS-1..23).

Each ``tests/calibration/*.yaml`` holds one published run: a complete instance with the hardware
and the layout pinned, and the measured value. Megatron reports TFLOP/s per GPU in its own FLOPs
accounting, converted here to tokens/s per GPU; MosaicML reports tokens/s per GPU directly.
The model must come within 10% on average and 25% at worst, and every run must fit in memory
(they ran, so a model that rejects them is too pessimistic).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from topoopt.models.instance import Instance
from topoopt.perf import estimate, pinned_hardware
from topoopt.perf.constants import CALIBRATED_GPU_PRECISIONS
from topoopt.perf.flops import megatron_flops_per_token
from topoopt.perf.search import gpu_spec

CALIBRATION_DIR = Path(__file__).resolve().parent / "calibration"
MAX_MEAN_APE = 0.10
MAX_WORST_APE = 0.25


@dataclass(frozen=True)
class Run:
    run_id: str
    family: str
    measured_tokens_per_s_per_gpu: float
    instance: Instance


def measured_tokens_per_s_per_gpu(calibration: dict, instance: Instance) -> float:
    """The published throughput as tokens/s per GPU."""
    metric, value = calibration["metric"], float(calibration["value"])
    if metric == "tokens_per_s_per_gpu":
        return value
    if metric == "megatron_tflops_per_gpu":
        model = instance.workload.model
        training = instance.workload.training
        flops = megatron_flops_per_token(model.layers, model.hidden_size, training.sequence_length, model.vocab_size)
        return value * 1e12 / flops
    raise ValueError(f"unknown calibration metric {metric!r}")


def gpu_family(instance: Instance) -> str:
    pins = instance.constraints.pins
    gpu = pins.gpu or {"dgx-a100-80gb": "a100-80gb-sxm"}.get(pins.server, pins.server)
    return f"{gpu} {instance.workload.training.precision}"


def load_runs() -> list[Run]:
    runs = []
    for path in sorted(CALIBRATION_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        instance = Instance.model_validate(data["instance"])
        calibration = data["calibration"]
        runs.append(
            Run(
                run_id=calibration["id"],
                family=gpu_family(instance),
                measured_tokens_per_s_per_gpu=measured_tokens_per_s_per_gpu(calibration, instance),
                instance=instance,
            )
        )
    return sorted(runs, key=lambda run: (run.run_id.split("-")[0], int(run.run_id.split("-")[1])))


def error_table(runs: list[Run]) -> list[tuple[Run, float, float]]:
    """(run, predicted tokens/s per GPU, signed relative error) for every run."""
    rows = []
    for run in runs:
        predicted = estimate(run.instance).tokens_per_s_per_gpu
        rows.append((run, predicted, predicted / run.measured_tokens_per_s_per_gpu - 1.0))
    return rows


def format_table(rows: list[tuple[Run, float, float]]) -> str:
    lines = [f"{'run':<8} {'GPU / precision':<20} {'measured':>10} {'model':>10} {'error':>8}"]
    for run, predicted, error in rows:
        lines.append(
            f"{run.run_id:<8} {run.family:<20} {run.measured_tokens_per_s_per_gpu:>10.0f} {predicted:>10.0f} {error:>+8.1%}"
        )
    families = sorted({run.family for run, _, _ in rows})
    for family in [*families, "all"]:
        errors = [abs(e) for run, _, e in rows if family == "all" or run.family == family]
        lines.append(
            f"{family:<29} n={len(errors):<3} mean |error| {sum(errors) / len(errors):6.1%}   worst {max(errors):6.1%}"
        )
    return "\n".join(lines)


def test_calibration_set_is_complete():
    ids = {run.run_id for run in load_runs()}
    assert ids == {f"MEG-{i}" for i in range(1, 11)} | {f"MOS-{i}" for i in range(1, 24)}


def test_model_matches_the_calibration_runs():
    rows = error_table(load_runs())
    print()
    print(format_table(rows))
    errors = [abs(error) for _, _, error in rows]
    assert sum(errors) / len(errors) <= MAX_MEAN_APE
    assert max(errors) <= MAX_WORST_APE


def test_calibrated_coverage_is_the_calibration_runs():
    """``Performance.calibrated`` flags exactly the (GPU, precision run) pairs some run covers."""
    covered = set()
    for run in load_runs():
        job, hw = pinned_hardware(run.instance)
        spec = gpu_spec(job, hw)
        covered.add((spec.gpu_id, spec.precision))
    assert covered == CALIBRATED_GPU_PRECISIONS


def test_megatron_conversion_matches_the_paper_aggregate():
    """MEG-10: 163 TFLOP/s per GPU on 3,072 GPUs is the paper's 502 PFLOP/s aggregate."""
    run = next(run for run in load_runs() if run.run_id == "MEG-10")
    flops = megatron_flops_per_token(128, 25600, 2048, 51200)
    aggregate_pflops = run.measured_tokens_per_s_per_gpu * flops * 3072 / 1e15
    assert abs(aggregate_pflops - 502.0) / 502.0 < 0.01
