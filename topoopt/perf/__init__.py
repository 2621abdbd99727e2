"""The performance model: pure functions, no solver imports.

Memory per GPU (:mod:`.memory`), FLOPs (:mod:`.flops`), collectives (:mod:`.collectives`), the
step time of one layout (:mod:`.step`), the layout search (:mod:`.search`), storage needs
(:mod:`.storage`) and the entry points (:mod:`.evaluate`, :mod:`.estimate`). Every constant lives
in :mod:`.constants` with its source, every unit conversion in :mod:`.units`;
``docs/performance-model.md`` documents the formulas and the calibration error.
"""

from topoopt.perf.estimate import DoesNotFitError, EstimateError, LayoutError, NotPinnedError, estimate, pinned_hardware
from topoopt.perf.evaluate import (
    evaluate,
    fits_in_memory,
    min_nodes_for_time,
    min_nodes_to_fit,
    time_to_train_s,
    trains_within,
)
from topoopt.perf.job import Hardware, Job
from topoopt.perf.storage import converged_storage_gb_per_step, storage_needs

__all__ = [
    "DoesNotFitError",
    "EstimateError",
    "Hardware",
    "Job",
    "LayoutError",
    "NotPinnedError",
    "converged_storage_gb_per_step",
    "estimate",
    "evaluate",
    "fits_in_memory",
    "min_nodes_for_time",
    "min_nodes_to_fit",
    "pinned_hardware",
    "storage_needs",
    "time_to_train_s",
    "trains_within",
]
