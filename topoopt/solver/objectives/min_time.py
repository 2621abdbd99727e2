"""``min_time``: the smallest time to train any design allows; min_cost then picks the cheapest
design that trains in that time (``topoopt.solver.solve``)."""

from __future__ import annotations

import heapq
import itertools
import math

from topoopt.options.problem import Problem
from topoopt.perf.job import FASTEST_CLASS
from topoopt.solver.bounds.cost_floor import CostFloor
from topoopt.solver.bounds.nodes import optimistic_nodes
from topoopt.solver.model import model_for
from topoopt.solver.run import OK, Settings, Stats, run


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
    while queue and queue[0][0] < best and settings.remaining_s() != 0.0:
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
