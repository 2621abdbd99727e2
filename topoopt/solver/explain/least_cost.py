"""The least cost of a design with the budget relaxed: the budget an infeasible instance needs.

One CP-SAT model over every option finds it slowly: its presolve and search carry every
configuration group and fabric class at once (the infeasible example: 0.8 s). Every design belongs
to exactly one candidate (configuration group, fabric class, storage network mode — a pair,
:meth:`Problem.pairs` — and node count ``n``), so the least cost is the least of the candidates'
own, each one small ``minimise total cost`` solve of the model restricted to the pair with
``nodes == n``. Candidates are solved best-first by a lower bound on their cost, found in steps
(as ``fastest_time_s`` bounds time):

* a group's bound, shared by its pairs: its cheapest server price times its fewest nodes on the
  class and storage mode never slower than any (one tier, no oversubscription, dedicated:
  perf ``never_slower``, so no pair of the group needs fewer; :meth:`Problem.fewest_nodes`), plus
  the cheapest storage that meets the needs (cost_floor.py ``CostFloor.storage``) — a design's
  cost includes at least its servers and its storage units;
* a pair's, computed when its group is popped: the cost floor (cost_floor.py) at the pair's own
  fewest nodes ``n`` — the floor grows with the node count, and no design of the pair has fewer.
  This entry is the candidate ``(pair, n)`` and, at once, every larger count: when it is popped,
  the candidate is solved and the pair comes back keyed by the floor at ``n + 1``.

The search stops when no bound is below the least cost found, so the result is exact. The floor
grows by at least a node's price per node, so a pair comes back only while its floor stays below
the least cost found (a cost of 0 stops the search: no bound is below it).
"""

from __future__ import annotations

import heapq
import math

from topoopt.perf.job import FASTEST_CLASS
from topoopt.solver.bounds.cost_floor import CostFloor
from topoopt.options.tables import MAX_NODES, NodeConfig
from topoopt.options.problem import OptionPair, Problem
from topoopt.solver.model import model_for
from topoopt.solver.run import OK, Settings, Stats, run


def least_cost(problem: Problem, settings: Settings, stats: Stats) -> int | None:
    """The least total cost of a design that meets every family but ``budget_cap`` (None when
    no design does)."""
    p = problem
    floor = CostFloor(p)
    rate = p.throughput_target or 0.0
    storage = floor.storage(rate)
    most = MAX_NODES if p.pinned_nodes is None else p.pinned_nodes
    # Entries (cost bound, group, pair rank, n, group's configurations or (pair, its ways)):
    # rank -1 for a group.
    queue: list[tuple] = []
    for group, configs in enumerate(p.config_groups()):
        bound = group_bound(p, configs, storage)
        if bound is not None:
            heapq.heappush(queue, (bound, group, -1, 0, configs))
    best = math.inf
    while queue and queue[0][0] < best and settings.remaining_s() != 0.0:
        _, group, rank, n, item = heapq.heappop(queue)
        if rank < 0:
            for rank, pair in enumerate(p.pairs_of(item)):
                fewest = p.fewest_nodes(pair.configs[0], pair.perf_class, pair.converged)
                if fewest is not None:
                    ways = floor.ways(pair.configs, pair.fabrics, pair.nets)
                    heapq.heappush(queue, (floor.at(ways, fewest, rate), group, rank, fewest, (pair, ways)))
            continue
        pair, ways = item
        cost = _candidate_cost(p, pair, n, settings, stats)
        if cost is not None and cost < best:
            best = cost
        if n < most:
            heapq.heappush(queue, (floor.at(ways, n + 1, rate), group, rank, n + 1, item))
    return None if best == math.inf else int(best)


def group_bound(problem: Problem, configs: list[NodeConfig], storage_cost: float) -> float | None:
    """A lower bound on the cost of any design of the configuration group (None: it has none):
    its cheapest server price at its fewest nodes on the fastest class and storage mode, plus
    ``storage_cost``, the least the storage units cost."""
    fewest = problem.fewest_nodes(configs[0], FASTEST_CLASS, False)
    if fewest is None:
        return None
    return fewest * min(c.server_price or 0 for c in configs) + storage_cost


def _candidate_cost(problem: Problem, pair: OptionPair, nodes: int, settings: Settings, stats: Stats) -> int | None:
    """The least cost of a design of the pair with ``nodes`` nodes, every family but
    ``budget_cap`` enforced."""
    dm = model_for(problem.restricted(pair.configs, pair.fabrics, pair.converged), frozenset({"budget_cap"}))
    dm.m.add(dm.v.nodes == nodes)
    dm.m.minimize(dm.v.total_cost)
    status, solver = run(dm.m, settings, stats)
    # The objective is an integer cost, reported as a double.
    return int(round(solver.objective_value)) if status in OK else None
