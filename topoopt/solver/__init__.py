"""The CP-SAT designer: ``solve(instance) -> SolveResult``.

``min_cost`` is one lexicographic solve (cost, then GPUs and power, then catalog order).
``min_time`` first finds, for each (node configuration, fabric class) pair, the largest node count
the rules allow — time to train is non-increasing in the node count, so that pair's best time —
visiting pairs in order of an optimistic bound and stopping when no pair can beat the best; then
it solves ``min_cost`` under the optimal time. Infeasible instances are explained (explain.py).
"""

from __future__ import annotations

import hashlib
import math
import time

from ortools import __version__ as ortools_version
from ortools.sat.python import cp_model

from topoopt import __version__
from topoopt.families import FAMILIES
from topoopt.models.design import ObjectiveValue, Provenance, SolveResult
from topoopt.models.instance import Instance
from topoopt.solver.build import POWER_MAX_W, DesignModel
from topoopt.solver.binding import binding_families
from topoopt.solver.explain import explain_infeasible
from topoopt.solver.extract import chosen, extract
from topoopt.solver.options import MAX_NODES
from topoopt.solver.problem import Problem
from topoopt.solver.run import OK, Settings, Stats, lexicographic, run


class UnsupportedObjective(ValueError):
    """The instance asks for an objective this version cannot optimise."""


def model_for(problem: Problem, relaxed: frozenset[str] = frozenset()) -> DesignModel:
    """The model with every family enforced except ``relaxed`` (whose options it keeps)."""
    if relaxed & problem.prefilter:
        problem = problem.relaxing(relaxed)
    return enforce_all(DesignModel(problem, throughput_target_tokens_per_s=problem.throughput_target), relaxed)


def enforce_all(dm: DesignModel, relaxed: frozenset[str] = frozenset()) -> DesignModel:
    """Fix every family's assumption literal to true, except the relaxed ones (left free)."""
    for family, literal in dm.assumption.items():
        if family not in relaxed:
            dm.m.add(literal == 1)
    return dm


def catalog_order(dm: DesignModel):
    """A linear expression ranking designs by the catalog order of their options, lexicographically."""
    o, v = dm.options, dm.v
    groups = [
        [(c.index, v.use_nc[c.index]) for c in o.node_configs],
        [(f.index, v.use_fo[f.index]) for f in o.fabrics],
        *[[(p.index, v.use_part[cls, p.index]) for p in ps] for cls, ps in o.parts.items()],
        list(enumerate(v.use_rack)),
        list(enumerate(v.use_storage)),
    ]
    expression, weight = 0, 1
    for group in reversed(groups):
        expression += weight * sum(index * lit for index, lit in group)
        weight *= len(group) + 1
    return expression


def tie_break(dm: DesignModel):
    """Fewer GPUs first, then lower provisioned power."""
    return dm.v.gpus * (POWER_MAX_W + 1) + dm.v.power_w["total"]


def hint_vars(dm: DesignModel) -> list:
    v = dm.v
    return [*v.use_nc, *v.use_fo, *v.use_rack, *v.use_storage, *v.use_part.values(), v.nodes]


def min_cost(problem: Problem, settings: Settings, stats: Stats, relaxed=frozenset()):
    """Cheapest design (cost, GPUs, power, catalog order). Returns (status, dm, solver, value, bound)."""
    dm = model_for(problem, relaxed)
    objectives = [dm.v.total_cost, tie_break(dm), catalog_order(dm)]
    status, solver, value, bound = lexicographic(dm.m, objectives, settings, stats, hint_vars(dm))
    return status, dm, solver, value, bound


def fastest_time_s(problem: Problem, settings: Settings, stats: Stats, relaxed=frozenset()) -> float | None:
    """The smallest time to train any design allows (None when no design exists)."""
    dm = model_for(problem, relaxed)
    budget = problem.instance.budget.max
    pairs = []
    for config in dm.options.node_configs:
        price = config.unit_price or 0
        optimistic_nodes = min(MAX_NODES, int(budget // price) if price and "budget_cap" not in relaxed else MAX_NODES)
        pinned = problem.instance.constraints.pins.nodes
        if pinned is not None and "pins_respected" not in relaxed:
            optimistic_nodes = min(optimistic_nodes, pinned)
        for perf_class in dm.v.use_cls:
            bound = problem.time_to_train_s(config, perf_class, max(optimistic_nodes, 1))
            if bound is not None:
                pairs.append((bound, config.index, perf_class, config))
    pairs.sort(key=lambda item: (item[0], item[1], item[2]))
    best = math.inf
    dm.m.maximize(dm.v.nodes)
    for bound, _, perf_class, config in pairs:
        if bound >= best:
            break
        dm.m.clear_assumptions()
        dm.m.add_assumptions([dm.v.use_nc[config.index], dm.v.use_cls[perf_class]])
        status, solver = run(dm.m, settings, stats)
        if status not in OK:
            continue
        seconds = problem.time_to_train_s(config, perf_class, solver.value(dm.v.nodes))
        if seconds is not None and seconds < best:
            best = seconds
    return None if best == math.inf else best


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
    if objective == "min_job_cost":
        raise UnsupportedObjective(
            "goal.objective: min_job_cost is not supported yet; use min_cost with a deadline or min_time"
        )
    if objective == "min_time":
        best = fastest_time_s(problem, settings, stats)
        if best is not None:
            problem.time_limit_s = best * (1 + 1e-9)
    status, dm, solver, value, bound = min_cost(problem, settings, stats)
    result = dict(schema_version="1.0")
    if status in OK:
        design, cost, performance = extract(dm, solver.value)
        proven = stats.proven
        if objective == "min_time":
            obj_value = performance.time_to_train_days if performance else None
            obj = ObjectiveValue(kind=objective, value=obj_value, bound=obj_value if proven else None,
                                 gap=0.0 if proven else None)
        else:
            gap = 0.0 if proven else abs(value - bound) / max(abs(value), 1.0)
            obj = ObjectiveValue(kind=objective, value=value, bound=bound, gap=gap)
        binding = binding_families(problem, chosen(dm, solver.value), design, cost, solver.value(dm.v.power_w["total"]))
        result.update(status="optimal" if proven else "feasible", objective=obj, design=design, cost=cost,
                      performance=performance, binding=binding)
    elif status == cp_model.INFEASIBLE:
        explanation = explain_infeasible(problem, settings, stats) if explain else None
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
