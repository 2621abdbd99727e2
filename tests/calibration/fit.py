"""Refit the free constants of the performance model on the calibration set (hardware-facts §B2).

Run from the repository root: ``python tests/calibration/fit.py``. It grid-searches the fitted
constants of :mod:`topoopt.perf.constants` (UTILISATION, MEMORY_BOUND_BYTES_PER_FLOP,
ZERO3_OVERLAP, ATTENTION_SCORE_TRAFFIC_BYTES, STEP_OVERHEAD_S) for the smallest mean absolute percentage error
of tokens/s per GPU over the runs in this directory, and prints the best values; copy them into
``topoopt/perf/constants.py`` by hand. Nothing outside this directory is fitted.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_calibration import load_runs  # noqa: E402

from topoopt.perf import search, step  # noqa: E402
from topoopt.perf.estimate import pinned_hardware  # noqa: E402
from topoopt.perf.evaluate import tokens_per_step  # noqa: E402

GRID = {
    "UTILISATION": [0.90, 0.925, 0.95, 0.975, 1.00],
    "MEMORY_BOUND_BYTES_PER_FLOP": [0.0015, 0.002, 0.0025, 0.003, 0.0035],
    "ZERO3_OVERLAP": [0.5, 0.75, 0.9, 1.0],
    "ATTENTION_SCORE_TRAFFIC_BYTES": [32.0, 40.0, 48.0, 56.0, 64.0],
    "STEP_OVERHEAD_S": [0.05, 0.1, 0.125, 0.15, 0.175, 0.2],
}
WORST_WEIGHT = 0.25
"""Objective: mean |error| + WORST_WEIGHT × worst |error| (the test bounds both)."""


def errors(cases) -> list[float]:
    search.auto_layouts.cache_clear()
    search.pinned_layout.cache_clear()
    result = []
    for measured, job, hw in cases:
        layout, times = search.best_step(job, hw)
        per_gpu = tokens_per_step(job) / times.step_s / (layout.model_gpus * times.dp)
        result.append(per_gpu / measured - 1.0)
    return result


def main() -> None:
    cases = [(run.measured_tokens_per_s_per_gpu, *pinned_hardware(run.instance)) for run in load_runs()]
    best = None
    for values in itertools.product(*GRID.values()):
        for name, value in zip(GRID, values):
            setattr(step, name, value)
        errs = errors(cases)
        mean = sum(abs(e) for e in errs) / len(errs)
        worst = max(abs(e) for e in errs)
        score = mean + WORST_WEIGHT * worst
        if best is None or score < best[0]:
            best = (score, (mean, worst), dict(zip(GRID, values)), errs)
    _, (mean, worst), params, errs = best
    print(f"mean |error| {mean:.1%}, worst {worst:.1%}")
    for name, value in params.items():
        print(f"{name} = {value}")
    for run, error in zip(load_runs(), errs):
        print(f"  {run.run_id:<8} {run.family:<20} {error:+.1%}")


if __name__ == "__main__":
    main()
