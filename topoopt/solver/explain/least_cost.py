"""The least cost of a design with the budget relaxed: the budget an infeasible instance needs.

One CP-SAT model over every option finds it slowly: its presolve and search carry every
configuration group and fabric class at once (the infeasible example: 0.8 s). Every design belongs
to exactly one candidate (configuration group, fabric class, storage network mode — a pair,
:meth:`Problem.pairs` — and node count ``n``), so the least cost is the least of the candidates'
own, each one small ``minimise total cost`` solve of the model restricted to the pair with
``nodes >= n``. Candidates are solved best-first (search.py) by a lower bound on their cost, found
in steps (as ``fastest_time_s`` bounds time):

* a group's bound, shared by its pairs (:class:`GroupNode`): its cheapest server price times its
  fewest nodes on the class and storage mode never slower than any (one tier, no
  oversubscription, dedicated: perf ``never_slower``, so no pair of the group needs fewer;
  :meth:`Problem.fewest_nodes`), plus the cheapest storage that meets the needs (cost_floor.py
  ``CostFloor.storage``) — a design's cost includes at least its servers and its storage units;
* a pair's, computed when its group is popped: the cost floor (cost_floor.py) at the pair's own
  fewest nodes ``n`` — the floor grows with the node count, and no design of the pair has fewer.
  The pair's node (:class:`CandidateNode`) is solved once, over every count from ``n`` up: a
  pair with no design at all (the racks or the site's power hold fewer nodes than the deadline
  needs) is proven so by that one solve, where solving count by count would climb to the most
  nodes the model allows.

The search stops when no bound is below the least cost found, so the result is exact; at most one
solve per pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from topoopt.options.problem import OptionPair, Problem
from topoopt.options.tables import NodeConfig
from topoopt.perf.job import FASTEST_CLASS
from topoopt.solver.bounds.cost_floor import CostFloor, Way
from topoopt.solver.model import model_for
from topoopt.solver.run import OK, Settings, Stats, run
from topoopt.solver.search import BestFirst, Node, Solution, Visit

PROVE_NONE_AFTER = 4
"""Pairs solved without a design before ``proves_none`` is asked whether any design exists."""


def least_cost(problem: Problem, settings: Settings, stats: Stats,
               proves_none: Callable[[], bool] | None = None) -> int | None:
    """The least total cost of a design that meets every family but ``budget_cap`` (None when
    no design does). ``proves_none``: one solve of the whole relaxed model, asked once
    :data:`PROVE_NONE_AFTER` pairs in a row have no design — when no pair has one, the search
    would otherwise solve every pair to learn it; when it proves none, the rest are skipped."""
    search = LeastCostSearch(problem, settings, stats, proves_none)
    value = BestFirst(search.roots(), deadline=settings.deadline).run().value
    return None if value is None else int(value)


class LeastCostSearch:
    """What the nodes of one least-cost search share."""

    def __init__(self, problem: Problem, settings: Settings, stats: Stats,
                 proves_none: Callable[[], bool] | None = None) -> None:
        self.p, self.settings, self.stats = problem, settings, stats
        self.floor = CostFloor(problem)
        self.rate = problem.throughput_target or 0.0
        self.proves_none, self.pairs_without_design, self.none_exists = proves_none, 0, False

    def count_empty_pair(self) -> None:
        """A pair without a design, before any design was found: past the threshold, ask once
        whether any design exists at all."""
        self.pairs_without_design += 1
        if self.pairs_without_design == PROVE_NONE_AFTER and self.proves_none is not None:
            self.none_exists = self.proves_none()

    def roots(self) -> list[GroupNode]:
        """One node per configuration group that has a design."""
        storage = self.floor.storage(self.rate)
        groups = enumerate(self.p.config_groups())
        nodes = (GroupNode.bounded(self, group, configs, storage) for group, configs in groups)
        return [node for node in nodes if node is not None]


def group_bound(problem: Problem, configs: list[NodeConfig], storage_cost: float) -> float | None:
    """A lower bound on the cost of any design of the configuration group (None: it has none):
    its cheapest server price at its fewest nodes on the fastest class and storage mode, plus
    ``storage_cost``, the least the storage units cost."""
    fewest = problem.fewest_nodes(configs[0], FASTEST_CLASS, False)
    if fewest is None:
        return None
    return fewest * min(c.server_price or 0 for c in configs) + storage_cost


@dataclass(eq=False)
class GroupNode(Node):
    """A configuration group (``group``: its catalog position), bounded by :func:`group_bound`;
    expanded into its pairs' first candidates."""

    search: LeastCostSearch
    group: int
    configs: list[NodeConfig]

    @classmethod
    def bounded(cls, search: LeastCostSearch, group: int, configs: list[NodeConfig],
                storage_cost: float) -> GroupNode | None:
        bound = group_bound(search.p, configs, storage_cost)
        return None if bound is None else cls(bound, search, group, configs)

    def tie(self) -> tuple:
        return self.group, -1, 0

    def visit(self, left_s: float | None) -> Visit:
        p, floor, children = self.search.p, self.search.floor, []
        for rank, pair in enumerate(p.pairs_of(self.configs)):
            fewest = p.fewest_nodes(pair.configs[0], pair.perf_class, pair.converged)
            if fewest is not None:
                ways = floor.ways(pair.configs, pair.fabrics, pair.nets)
                children.append(CandidateNode(floor.at(ways, fewest, self.search.rate), self.search, self.group, rank,
                                              pair, ways, fewest))
        return Visit(children=children)


@dataclass(eq=False)
class CandidateNode(Node):
    """The pair's designs with ``n`` nodes or more (``rank``: its position in its group), bounded
    by the cost floor at ``n``; evaluated by one solve over all those counts at once."""

    solves = True
    search: LeastCostSearch
    group: int
    rank: int
    pair: OptionPair
    ways: list[Way]
    n: int

    def tie(self) -> tuple:
        return self.group, self.rank, self.n

    def visit(self, left_s: float | None) -> Visit:
        search = self.search
        if search.none_exists:
            return Visit()
        cost = _candidate_cost(search.p, self.pair, self.n, search.settings, search.stats)
        if cost is None:
            if search.pairs_without_design >= 0:
                search.count_empty_pair()
            return Visit()
        search.pairs_without_design = -1  # a design exists: never ask
        return Visit(solutions=[Solution(cost)])


def _candidate_cost(problem: Problem, pair: OptionPair, fewest: int, settings: Settings, stats: Stats) -> int | None:
    """The least cost of a design of the pair with at least ``fewest`` nodes, every family but
    ``budget_cap`` enforced (None: the pair has none)."""
    dm = model_for(problem.restricted(pair.configs, pair.fabrics, pair.converged), frozenset({"budget_cap"}))
    dm.model.add(dm.vars.nodes >= fewest)
    dm.model.minimize(dm.vars.total_cost)
    status, solver = run(dm.model, settings, stats)
    # The objective is an integer cost, reported as a double.
    return int(round(solver.objective_value)) if status in OK else None
