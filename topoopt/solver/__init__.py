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
from collections.abc import Callable
from dataclasses import dataclass

from ortools import __version__ as ortools_version
from ortools.sat.python import cp_model

from topoopt import __version__
from topoopt.families import FAMILIES
from topoopt.limits import EXPLAIN_TIME_S
from topoopt.loader import validate_instance
from topoopt.models.design import SCHEMA_VERSION, ObjectiveValue, Provenance, SolveResult
from topoopt.models.instance import Instance
from topoopt.models.performance import Performance
from topoopt.options.problem import Problem
from topoopt.solver.binding import binding_families
from topoopt.solver.explain import deadline_outprices_budget, explain_infeasible, explain_job_cost
from topoopt.solver.extract import chosen, extract
from topoopt.solver.model.core import DesignModel
from topoopt.solver.objectives.min_cost import min_cost
from topoopt.solver.objectives.min_job_cost import min_job_cost
from topoopt.solver.objectives.min_time import fastest_time_s
from topoopt.solver.run import OK, Settings, Stats


class UnsupportedObjective(ValueError):
    """The instance asks for an objective this version cannot optimise."""


@dataclass
class Found:
    """What the objective's search found: its status and, when solved, the model and solver
    holding the design, the objective's value and bound (min_cost, min_job_cost) and whether it is
    proven; ``problem``: the problem searched (min_time's carries its optimal time limit)."""

    problem: Problem
    status: int
    dm: DesignModel | None = None
    solver: cp_model.CpSolver | None = None
    proven: bool = False
    value: float | None = None
    bound: float | None = None


def search(problem: Problem, settings: Settings, stats: Stats) -> Found:
    """Run the instance's objective. The pre-check first proves the commonest "no" without a model."""
    objective = problem.instance.goal.objective
    if deadline_outprices_budget(problem) is not None:
        return Found(problem, cp_model.INFEASIBLE)  # proven by the pre-check, before any model is built
    if objective == "min_job_cost":
        found = min_job_cost(problem, settings, stats)
        if found.best is None:
            return Found(problem, found.status)
        best = found.best
        return Found(problem, found.status, best.dm, best.solver, found.proven, best.job_cost, found.bound)
    if objective == "min_time":
        best_s = fastest_time_s(problem, settings, stats)
        if best_s is not None:
            problem = problem.with_time_limit(best_s * (1 + 1e-9))
    status, dm, solver, value, bound = min_cost(problem, settings, stats)
    return Found(problem, status, dm, solver, stats.proven, value, bound)


def objective_value(kind: str, found: Found, performance: Performance | None) -> ObjectiveValue:
    """The objective's value, bound and relative gap; min_time's value is the design's time to train."""
    if kind == "min_time":
        days = performance.time_to_train_days if performance else None
        return ObjectiveValue(kind=kind, value=days, bound=days if found.proven else None,
                              gap=0.0 if found.proven else None)
    gap = 0.0 if found.proven else abs(found.value - found.bound) / max(abs(found.value), 1.0)
    return ObjectiveValue(kind=kind, value=found.value, bound=found.bound, gap=gap)


def solved_fields(kind: str, found: Found) -> dict:
    """The result's fields of a solved search: the design, its cost, performance and binding families."""
    dm, value = found.dm, found.solver.value
    design, cost, performance = extract(dm, value)
    # dm.problem: for min_job_cost the candidate's view, whose storage feeds the design's own rate.
    binding = binding_families(dm.problem, chosen(dm, value), design, cost, value(dm.vars.power_w["total"]))
    return dict(status="optimal" if found.proven else "feasible", objective=objective_value(kind, found, performance),
                design=design, cost=cost, performance=performance, binding=binding)


def solve(
    instance: Instance,
    *,
    workers: int = 1,
    seed: int = 0,
    time_limit_s: float | None = None,
    explain: bool = True,
    log: bool = False,
    explain_time_s: float | None = EXPLAIN_TIME_S,
    stats: Stats | None = None,
    on_proven: Callable[[SolveResult], None] | None = None,
) -> SolveResult:
    """Design the cheapest (or fastest) cluster for ``instance``; explain when none exists.

    ``time_limit_s``: a wall-clock limit on the whole solve, explanation included (and on each
    CP-SAT solve); past it the answer is what was found, labelled. ``explain_time_s``: the
    explanation's own limit (None: none); a conflict it could not shrink in time is not called
    minimal, a relaxation it could not finish not proven. ``stats``: where the solve records its
    stage and its CP-SAT solves as it goes (a caller may read it from another thread to report
    progress). ``on_proven``: called with the result as soon as infeasibility is proven, before
    the explanation is built. Raises :class:`topoopt.InputError` for an instance that is not valid
    (see :func:`topoopt.loader.validate_instance`).

    Examples
    --------
    >>> import topoopt
    >>> instance = topoopt.load_instance("instances/llama2-7b-finetune-8gpu.yaml").instance
    >>> result = topoopt.solve(instance)
    >>> result.status, result.design.nodes, result.design.gpu
    ('optimal', 1, 'rtx-4090')
    >>> topoopt.check_design(instance, result.design, result.cost, result.performance)
    []
    """
    instance = validate_instance(instance, ids=False)  # one not from the loader: schema, strings, budget terms
    stats = stats or Stats()
    settings = Settings(workers=workers, seed=seed, time_limit_s=time_limit_s, log=log).within(time_limit_s)
    problem = Problem.of(instance)
    kind = instance.goal.objective
    if kind == "min_job_cost" and problem.catalog.basis != "monthly_rent":
        raise UnsupportedObjective(
            f"goal.objective: min_job_cost needs a monthly_rent price book (rent per month × months of "
            f"training); price book {problem.catalog.price_book.id!r} is {problem.catalog.basis}, where a "
            "purchase does not scale with the training time — use min_cost (with a deadline) or min_time"
        )
    stats.stage = f"searching ({kind})"
    found = search(problem, settings, stats)
    none = ObjectiveValue(kind=kind, value=None, bound=None, gap=None)
    if found.status in OK:
        return finished(instance, settings, stats, **solved_fields(kind, found))
    if found.status != cp_model.INFEASIBLE:
        return finished(instance, settings, stats, status="unknown", objective=none)
    if not explain:
        return finished(instance, settings, stats, status="infeasible", objective=none)
    stats.stage = "explaining"  # before the announcement: an interruption after it is in the explanation
    if on_proven is not None:
        on_proven(finished(instance, settings, stats, status="infeasible", objective=none))
    explain_with = explain_job_cost if kind == "min_job_cost" else explain_infeasible
    explanation = explain_with(found.problem, settings.within(explain_time_s), stats)
    return finished(instance, settings, stats, status="infeasible", objective=none, explanation=explanation)


def finished(instance: Instance, settings: Settings, stats: Stats, **fields) -> SolveResult:
    """The result with these fields and the provenance of the solve so far."""
    provenance = Provenance(
        topoopt_version=__version__,
        ortools_version=ortools_version,
        instance_sha256=hashlib.sha256(instance.model_dump_json(by_alias=True).encode()).hexdigest(),
        seed=settings.seed,
        workers=settings.workers,
        solve_time_s=round(time.perf_counter() - stats.started, 4),
        solves=stats.solves,
    )
    return SolveResult(schema_version=SCHEMA_VERSION, provenance=provenance, **fields)


__all__ = ["FAMILIES", "UnsupportedObjective", "solve"]
