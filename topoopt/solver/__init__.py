"""The CP-SAT designer: ``solve(instance) -> SolveResult``.

``min_cost`` is one lexicographic solve (cost, then GPUs and power, then catalog order).
``min_time`` first finds, for each (node configuration, fabric class) pair, the largest node count
the rules allow — time to train is non-increasing in the node count, so that pair's best time —
visiting pairs in order of an optimistic bound and stopping when no pair can beat the best; then
it solves ``min_cost`` under the optimal time. ``min_job_cost`` (rent per month × months of
training) is a best-first search over (configuration group, fabric class, node count) candidates
with one ``min_cost`` solve each (objectives/min_job_cost.py). Before any of them, a pre-check proves the
commonest "no" without a model: the deadline needs more nodes than the budget buys at the servers'
prices alone (explain/precheck.py ``deadline_outprices_budget``). Infeasible instances are explained
(``topoopt.solver.explain``).
"""

from __future__ import annotations

import hashlib
import time

from ortools import __version__ as ortools_version
from ortools.sat.python import cp_model

from topoopt import __version__
from topoopt.families import FAMILIES
from topoopt.models.design import SCHEMA_VERSION, ObjectiveValue, Provenance, SolveResult
from topoopt.models.instance import Instance
from topoopt.options.problem import Problem
from topoopt.solver.binding import binding_families
from topoopt.solver.explain import deadline_outprices_budget, explain_infeasible, explain_job_cost
from topoopt.solver.extract import chosen, extract
from topoopt.solver.objectives.min_cost import min_cost
from topoopt.solver.objectives.min_job_cost import min_job_cost
from topoopt.solver.objectives.min_time import fastest_time_s
from topoopt.solver.run import OK, Settings, Stats


class UnsupportedObjective(ValueError):
    """The instance asks for an objective this version cannot optimise."""


def solve(
    instance: Instance,
    *,
    workers: int = 1,
    seed: int = 0,
    time_limit_s: float | None = None,
    explain: bool = True,
    log: bool = False,
) -> SolveResult:
    """Design the cheapest (or fastest) cluster for ``instance``; explain when none exists."""
    started = time.perf_counter()
    settings = Settings(workers=workers, seed=seed, time_limit_s=time_limit_s, log=log)
    stats = Stats()
    problem = Problem(instance)
    objective = instance.goal.objective
    if objective == "min_job_cost" and problem.catalog.basis != "monthly_rent":
        raise UnsupportedObjective(
            f"goal.objective: min_job_cost needs a monthly_rent price book (rent per month × months of "
            f"training); price book {problem.catalog.price_book.id!r} is {problem.catalog.basis}, where a "
            "purchase does not scale with the training time — use min_cost (with a deadline) or min_time"
        )
    if deadline_outprices_budget(problem) is not None:
        status = cp_model.INFEASIBLE  # proven by the pre-check, before any model is built
    elif objective == "min_job_cost":
        found = min_job_cost(problem, settings, stats)
        status = found.status
        dm, solver = (found.best.dm, found.best.solver) if found.best else (None, None)
    else:
        if objective == "min_time":
            best = fastest_time_s(problem, settings, stats)
            if best is not None:
                problem.time_limit_s = best * (1 + 1e-9)
        status, dm, solver, value, bound = min_cost(problem, settings, stats)
    result = dict(schema_version=SCHEMA_VERSION)
    if status in OK:
        design, cost, performance = extract(dm, solver.value)
        proven = stats.proven
        if objective == "min_job_cost":
            proven = found.proven
            gap = 0.0 if proven else abs(found.best.job_cost - found.bound) / max(abs(found.best.job_cost), 1.0)
            obj = ObjectiveValue(kind=objective, value=found.best.job_cost, bound=found.bound, gap=gap)
        elif objective == "min_time":
            obj_value = performance.time_to_train_days if performance else None
            obj = ObjectiveValue(kind=objective, value=obj_value, bound=obj_value if proven else None,
                                 gap=0.0 if proven else None)
        else:
            gap = 0.0 if proven else abs(value - bound) / max(abs(value), 1.0)
            obj = ObjectiveValue(kind=objective, value=value, bound=bound, gap=gap)
        # dm.problem: for min_job_cost the candidate's view, whose storage feeds the design's own rate.
        binding = binding_families(dm.problem, chosen(dm, solver.value), design, cost,
                                   solver.value(dm.v.power_w["total"]))
        result.update(status="optimal" if proven else "feasible", objective=obj, design=design, cost=cost,
                      performance=performance, binding=binding)
    elif status == cp_model.INFEASIBLE:
        explain_with = explain_job_cost if objective == "min_job_cost" else explain_infeasible
        explanation = explain_with(problem, settings, stats) if explain else None
        result.update(status="infeasible", objective=ObjectiveValue(kind=objective, value=None, bound=None, gap=None),
                      explanation=explanation)
    else:
        result.update(status="unknown", objective=ObjectiveValue(kind=objective, value=None, bound=None, gap=None))
    result["provenance"] = Provenance(
        topoopt_version=__version__,
        ortools_version=ortools_version,
        instance_sha256=hashlib.sha256(instance.model_dump_json(by_alias=True).encode()).hexdigest(),
        seed=seed,
        workers=workers,
        solve_time_s=round(time.perf_counter() - started, 4),
        solves=stats.solves,
    )
    return SolveResult(**result)


__all__ = ["FAMILIES", "UnsupportedObjective", "solve"]
