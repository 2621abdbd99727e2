"""The CP-SAT designer: ``solve(instance) -> SolveResult``.

``min_cost`` is one lexicographic solve (cost, then GPUs and power, then catalog order).
``min_time`` first finds, for each (node configuration, fabric class) pair, the largest node count
the rules allow — time to train is non-increasing in the node count, so that pair's best time —
visiting pairs in order of an optimistic bound and stopping when no pair can beat the best; then
it solves ``min_cost`` under the optimal time. ``min_job_cost`` (rent per month × months of
training) is a best-first search over (configuration group, fabric class, node count) candidates
with one ``min_cost`` solve each (job_cost.py). Before any of them, a pre-check proves the
commonest "no" without a model: the deadline needs more nodes than the budget buys at the servers'
prices alone (explain.py ``deadline_outprices_budget``). Infeasible instances are explained
(explain.py).
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import math
import time

from ortools import __version__ as ortools_version
from ortools.sat.python import cp_model

from topoopt import __version__
from topoopt.families import FAMILIES
from topoopt.models.design import SCHEMA_VERSION, ObjectiveValue, Provenance, SolveResult
from topoopt.models.instance import Instance
from topoopt.perf.job import FASTEST_CLASS
from topoopt.solver.build import POWER_MAX_W, DesignModel
from topoopt.solver.cost_floor import CostFloor
from topoopt.solver.binding import binding_families
from topoopt.solver.explain import deadline_outprices_budget, explain_infeasible
from topoopt.solver.extract import chosen, extract
from topoopt.solver.job_cost import explain_job_cost, min_job_cost
from topoopt.solver.options import MAX_NODES, part_fits_node_end, part_fits_switch_end, per_rack
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


CATALOG_ORDER_MAX = 2**53
"""Largest sum of coefficients in one catalog-order objective: CP-SAT rejects an objective that
may overflow 64-bit integers (MODEL_INVALID), and up to 2**53 it is also exact as a double."""


def catalog_order(dm: DesignModel) -> list:
    """Linear expressions ranking designs by the catalog order of their options, lexicographically:
    node configuration first, then fabric, parts, rack class, storage tier, storage network, cold
    tier and management switch. Groups share one expression while its weights fit
    :data:`CATALOG_ORDER_MAX`; a large catalog needs several, minimised one after the other."""
    o, v = dm.options, dm.v
    groups = [
        [(c.index, v.use_nc[c.index]) for c in o.node_configs],
        [(f.index, v.use_fo[f.index]) for f in o.fabrics],
        *[[(p.index, v.use_part[cls, p.index]) for p in ps] for cls, ps in o.parts.items()],
        list(enumerate(v.use_rack)),
        list(enumerate(v.use_storage)),
        list(enumerate(dm.n.use_sn)),
        list(enumerate(dm.n.use_cold)),
        list(enumerate(dm.n.use_mgmt)),
    ]
    expressions, expression, weight, total = [], 0, 1, 0
    for group in reversed(groups):  # least significant first
        coefficients = sum(index for index, _ in group)
        if weight > 1 and total + weight * coefficients > CATALOG_ORDER_MAX:
            expressions.append(expression)
            expression, weight, total = 0, 1, 0
        expression += weight * sum(index * lit for index, lit in group)
        total += weight * coefficients
        weight *= len(group) + 1
    expressions.append(expression)
    return expressions[::-1]  # most significant first


def tie_break(dm: DesignModel):
    """Fewer GPUs first, then lower provisioned power."""
    return dm.v.gpus * (POWER_MAX_W + 1) + dm.v.power_w["total"]


def hint_vars(dm: DesignModel) -> list:
    v = dm.v
    return [*v.use_nc, *v.use_fo, *v.use_rack, *v.use_storage, *v.use_part.values(), *dm.n.use_sn, *dm.n.use_cold,
            *dm.n.use_mgmt, v.nodes]


def min_cost(problem: Problem, settings: Settings, stats: Stats, relaxed=frozenset()):
    """Cheapest design (cost, GPUs, power, catalog order). Returns (status, dm, solver, value, bound)."""
    dm = model_for(problem, relaxed)
    objectives = [dm.v.total_cost, tie_break(dm), *catalog_order(dm)]
    status, solver, value, bound = lexicographic(dm.m, objectives, settings, stats, hint_vars(dm))
    return status, dm, solver, value, bound


def fabric_cost_per_node(problem: Problem, config, fabrics) -> float:
    """A lower bound on the fabric cost one node adds with these fabric options: its share of
    leaf ports (or the single switch's), of node cables, and of leaf uplink cables."""
    parts = problem.options.parts
    best = math.inf
    for f in fabrics:
        if f.speed_key != config.speed_key:
            continue
        if f.tiers == 0:
            return 0.0
        node_links = [p.unit_price / p.part.links for p in parts["node-leaf"] if p.unit_price is not None
                      and part_fits_switch_end(p.part, f.switch, f.gbps, "a") and part_fits_node_end(p.part, config)]
        if not node_links or f.unit_price is None:
            continue
        per_port = f.unit_price / f.down + min(node_links)
        if f.tiers >= 2:
            uplinks = [p.unit_price / p.part.links for p in parts["leaf-spine"] if p.unit_price is not None
                       and part_fits_switch_end(p.part, f.switch, f.gbps, "a")]
            per_port += f.up / f.down * min(uplinks, default=0.0)
        best = min(best, config.rails * per_port)
    return best


def optimistic_nodes(problem: Problem, config, fabrics, relaxed: frozenset[str]) -> int:
    """An upper bound on the nodes of any design with this configuration and these fabric
    options (None: any, the fabric then left out of the budget): pins, budget (nodes, racks and
    fabric at their cheapest), racks and site power, each unless relaxed. None of them can be
    exceeded, so the bound is safe for pruning."""
    inst, o = problem.instance, problem.options
    node_w = config.power_w(o.all_parts)
    bounds = [MAX_NODES]
    if inst.constraints.pins.nodes is not None and "pins_respected" not in relaxed:
        bounds.append(inst.constraints.pins.nodes)
    per = max((per_rack(r.rack, node_w, config.server.rack_units) for r in o.racks), default=0)
    if config.unit_price and "budget_cap" not in relaxed:
        # Beyond one node a fabric is needed: each node costs at least its server, its NICs, its
        # share of the cheapest rack and of the cheapest fabric.
        rack_share = min((r.unit_price or 0 for r in o.racks), default=0) / max(per, 1)
        fabric = 0.0 if fabrics is None else fabric_cost_per_node(problem, config, fabrics)
        per_node = config.unit_price + rack_share + fabric
        bounds.append(int(inst.budget.max // per_node) if per_node < math.inf else 1)
    if "racks_available" not in relaxed:
        bounds.append(inst.site.max_racks * per)
    if inst.site.power_cap_kw is not None and "site_power_within_limit" not in relaxed:
        bounds.append(int(inst.site.power_cap_kw * 1000 // node_w))
    return max(1, min(bounds))


def fastest_time_s(problem: Problem, settings: Settings, stats: Stats, relaxed=frozenset()) -> float | None:
    """The smallest time to train any design allows (None when no design exists).

    Time is non-increasing in the node count, so each (configuration group, fabric class) pair is
    best at the most nodes the rules allow, which one CP-SAT solve finds. A converged storage
    network never trains faster than a dedicated one at the same node count (its storage reads
    share the compute NICs), so the solve prefers a dedicated network among the largest counts;
    only when the largest count needs a converged network is the dedicated network's own largest
    count solved for too.

    The pairs are searched best-first by a lower bound on their time, refined in three steps, each
    at the most nodes the rules may allow (:func:`optimistic_nodes` without the fabric's cost): the
    time on the best network of a GPU model and node size's groups
    (:meth:`Problem.time_to_train_s_best_network`) bounds all their pairs; a group's time on the
    fastest fabric class bounds its pairs; a pair's time on its own class at an upper bound on its
    node count (the most nodes the budget buys at the cost floor, cost_floor.py; optimistic_nodes
    when more than the deadline is relaxed) bounds the pair. The search stops when no bound beats
    the best time found, so the result is exact, and most pairs are never bounded one by one.
    """
    p = problem.relaxing(relaxed) if relaxed & problem.prefilter else problem  # as model_for's
    dedicated_offered = any(s.mode == "dedicated" for s in p.options.storage_nets)
    bounds_converged = not dedicated_offered  # the bounds' storage mode: never slower than any design's
    # The cost floor bounds the nodes more tightly than optimistic_nodes, but it relies on the
    # budget, fabric, rack and site rules: only when nothing but the deadline is relaxed.
    floor = CostFloor(p) if relaxed <= {"deadline_met"} else None
    pinned = p.instance.constraints.pins.nodes if "pins_respected" not in relaxed else None
    by_class = p.fabric_classes()

    def pair_bound(configs, cls) -> float | None:
        """A lower bound on the pair's time (None when it has no design)."""
        fabrics = by_class[cls]
        if floor is None:
            most = max(optimistic_nodes(p, c, fabrics, relaxed) for c in configs)
        else:
            speed = configs[0].speed_key
            most = floor.most_nodes(floor.ways(configs, [f for f in fabrics if f.tiers == 0 or f.speed_key == speed]))
            most = most if pinned is None else min(most, pinned)
            if most < 1:
                return None  # no design of the pair fits the budget
        return p.time_to_train_s(configs[0], cls, most, bounds_converged)

    def most_nodes(configs, fabrics, converged: bool | None):
        """The largest node count of the pair (restricted to one storage mode when given) and
        whether it needs a converged network; None when the pair has no design."""
        sub = model_for(p.restricted(configs, fabrics, converged), relaxed)  # relaxed is not prefiltered in p
        sub.m.maximize(2 * sub.v.nodes + sub.n.dedicated)
        status, solver = run(sub.m, settings, stats)
        if status not in OK:
            return None
        return solver.value(sub.v.nodes), bool(solver.value(sub.n.converged))

    # Entries (time bound, order, kind, item): a GPU model and node size's groups (kind 0), one
    # group (kind 1, its configurations) or a pair (kind 2, (configurations, class)). None for a
    # bound: nothing fits there; what it bounds is bounded one level down all the same.
    queue: list[tuple] = []
    order = itertools.count()

    def push(bound: float | None, kind: int, item) -> None:
        heapq.heappush(queue, (0.0 if bound is None else bound, next(order), kind, item))

    by_node: dict[tuple, list[tuple[list, int]]] = {}  # (GPU, GPUs per node) -> (group, its most nodes)
    for configs in p.config_groups():
        most = max(optimistic_nodes(p, c, None, relaxed) for c in configs)
        by_node.setdefault((configs[0].gpu.id, configs[0].server.gpus_per_node), []).append((configs, most))
    for groups in by_node.values():
        nodes = max(most for _, most in groups)
        push(p.time_to_train_s_best_network([configs for configs, _ in groups], nodes, bounds_converged), 0, groups)
    best = math.inf
    while queue and queue[0][0] < best:
        _, _, kind, item = heapq.heappop(queue)
        if kind == 0:
            for configs, most in item:
                push(p.time_to_train_s(configs[0], FASTEST_CLASS, most, bounds_converged), 1, configs)
            continue
        if kind == 1:
            for each in by_class:
                bound = pair_bound(item, each)
                if bound is not None:
                    push(bound, 2, (item, each))
            continue
        configs, cls = item
        found = most_nodes(configs, by_class[cls], None)
        if found is None:
            continue
        nodes, needs_converged = found
        candidates = [p.time_to_train_s(configs[0], cls, nodes, needs_converged)]
        if needs_converged and dedicated_offered:
            dedicated = most_nodes(configs, by_class[cls], False)
            if dedicated is not None:
                candidates.append(p.time_to_train_s(configs[0], cls, dedicated[0], False))
        for seconds in candidates:
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
