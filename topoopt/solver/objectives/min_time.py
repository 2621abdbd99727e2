"""``min_time``: the smallest time to train any design allows; min_cost then picks the cheapest
design that trains in that time (``topoopt.solver.solve``)."""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.options.problem import Problem
from topoopt.options.tables import NodeConfig
from topoopt.perf.job import FASTEST_CLASS
from topoopt.solver.bounds.cost_floor import CostFloor
from topoopt.solver.bounds.nodes import optimistic_nodes
from topoopt.solver.model import model_for
from topoopt.solver.run import OK, Settings, Stats, run
from topoopt.solver.search import BestFirst, Node, Solution, Visit


def fastest_time_s(problem: Problem, settings: Settings, stats: Stats, relaxed=frozenset()) -> float | None:
    """The smallest time to train any design allows (None when no design exists).

    Time is non-increasing in the node count, so each (configuration group, fabric class) pair is
    best at the most nodes the rules allow, which one CP-SAT solve finds (:class:`PairNode`).

    The pairs are searched best-first (search.py) by a lower bound on their time, refined in three
    steps, each at an upper bound on the node count: a GPU model and node size's groups
    (:class:`GpuModelNode`), one group (:class:`GroupNode`), one pair (:class:`PairNode`). The
    search stops when no bound beats the best time found, so the result is exact, and most pairs
    are never bounded one by one.
    """
    return BestFirst(FastestTimeSearch(problem, settings, stats, relaxed).roots(), deadline=settings.deadline).run().value


class FastestTimeSearch:
    """What the nodes of one fastest-time search share: the problem (with the prefiltered families
    of ``relaxed`` relaxed, as model_for's) and the node-count bounds that hold under ``relaxed``."""

    def __init__(self, problem: Problem, settings: Settings, stats: Stats, relaxed: frozenset[str]) -> None:
        self.p = p = problem.relaxing(relaxed) if relaxed & problem.prefilter else problem
        self.settings, self.stats, self.relaxed = settings, stats, relaxed
        self.dedicated_offered = any(s.mode == "dedicated" for s in p.options.storage_nets)
        # The bounds' storage mode: never slower than any design's.
        self.bounds_converged = not self.dedicated_offered
        # The cost floor bounds the nodes more tightly than optimistic_nodes, but it relies on the
        # budget, fabric, rack and site rules: only when nothing but the deadline is relaxed.
        self.floor = CostFloor(p) if relaxed <= {"deadline_met"} else None
        self.pinned = p.instance.constraints.pins.nodes if "pins_respected" not in relaxed else None
        self.by_class = p.fabric_classes()

    def roots(self) -> list[GpuModelNode]:
        """One node per GPU model and node size, its groups with the most nodes the rules may allow
        each (:func:`optimistic_nodes` without the fabric's cost)."""
        by_node: dict[tuple, list[tuple[list[NodeConfig], int]]] = {}
        for configs in self.p.config_groups():
            most = max(optimistic_nodes(self.p, c, None, self.relaxed) for c in configs)
            by_node.setdefault((configs[0].gpu.id, configs[0].server.gpus_per_node), []).append((configs, most))
        return [GpuModelNode.bounded(self, groups) for groups in by_node.values()]

    def time_s(self, configs: list[NodeConfig], cls: tuple[int, float], nodes: int) -> float | None:
        """The group's time on the class at ``nodes`` nodes in the bounds' storage mode."""
        return self.p.time_to_train_s(configs[0], cls, nodes, self.bounds_converged)

    def pair_most_nodes(self, configs: list[NodeConfig], cls: tuple[int, float]) -> int:
        """An upper bound on the pair's node count (below 1: the pair has no design): the most the
        budget buys at the cost floor (cost_floor.py) within a pinned count; optimistic_nodes with
        the fabric's cost when more than the deadline is relaxed."""
        fabrics = self.by_class[cls]
        if self.floor is None:
            return max(optimistic_nodes(self.p, c, fabrics, self.relaxed) for c in configs)
        speed = configs[0].speed_key
        ways = self.floor.ways(configs, [f for f in fabrics if f.tiers == 0 or f.speed_key == speed])
        most = self.floor.most_nodes(ways)
        return most if self.pinned is None else min(most, self.pinned)

    def most_nodes(self, configs: list[NodeConfig], fabrics, converged: bool | None) -> tuple[int, bool] | None:
        """The largest node count of the pair (restricted to one storage mode when given) and
        whether it needs a converged network; None when the pair has no design."""
        sub = model_for(self.p.restricted(configs, fabrics, converged), self.relaxed)  # relaxed: not prefiltered in p
        sub.model.maximize(2 * sub.vars.nodes + sub.net.dedicated)
        status, solver = run(sub.model, self.settings, self.stats)
        if status not in OK:
            return None
        return solver.value(sub.vars.nodes), bool(solver.value(sub.net.converged))


def _key(seconds: float | None) -> float:
    """A time bound as a key. None: nothing fits there; what it bounds is bounded one level down
    all the same, so 0 s keeps the key a lower bound."""
    return 0.0 if seconds is None else seconds


@dataclass(eq=False)
class GpuModelNode(Node):
    """A GPU model and node size: its configuration groups, each with the most nodes the rules may
    allow it. Bounded by the time on the best network of any of the groups at the most nodes of any
    (:meth:`Problem.time_to_train_s_best_network`)."""

    search: FastestTimeSearch
    groups: list[tuple[list[NodeConfig], int]]

    @classmethod
    def bounded(cls, search: FastestTimeSearch, groups: list[tuple[list[NodeConfig], int]]) -> GpuModelNode:
        nodes = max(most for _, most in groups)
        every = [configs for configs, _ in groups]
        seconds = search.p.time_to_train_s_best_network(every, nodes, search.bounds_converged)
        return cls(_key(seconds), search, groups)

    def visit(self, left_s: float | None) -> Visit:
        return Visit(children=[GroupNode.bounded(self.search, configs, most) for configs, most in self.groups])


@dataclass(eq=False)
class GroupNode(Node):
    """A configuration group: its pairs with every fabric class. Bounded by its time on the fastest
    class at the most nodes the rules may allow it."""

    search: FastestTimeSearch
    configs: list[NodeConfig]

    @classmethod
    def bounded(cls, search: FastestTimeSearch, configs: list[NodeConfig], most: int) -> GroupNode:
        return cls(_key(search.time_s(configs, FASTEST_CLASS, most)), search, configs)

    def visit(self, left_s: float | None) -> Visit:
        pairs = (PairNode.bounded(self.search, self.configs, cls) for cls in self.search.by_class)
        return Visit(children=[pair for pair in pairs if pair is not None])


@dataclass(eq=False)
class PairNode(Node):
    """A (configuration group, fabric class) pair. Bounded by its time on its class at an upper
    bound on its node count (:meth:`FastestTimeSearch.pair_most_nodes`).

    Evaluated at the most nodes the rules allow, one CP-SAT solve. A converged storage network
    never trains faster than a dedicated one at the same node count (its storage reads share the
    compute NICs), so the solve prefers a dedicated network among the largest counts; only when
    the largest count needs a converged network is the dedicated network's own largest count
    solved for too."""
    solves = True

    search: FastestTimeSearch
    configs: list[NodeConfig]
    perf_class: tuple[int, float]

    @classmethod
    def bounded(cls, search: FastestTimeSearch, configs: list[NodeConfig],
                perf_class: tuple[int, float]) -> PairNode | None:
        """The pair's node (None when the pair has no design)."""
        most = search.pair_most_nodes(configs, perf_class)
        if most < 1:
            return None
        seconds = search.time_s(configs, perf_class, most)
        return None if seconds is None else cls(seconds, search, configs, perf_class)

    def visit(self, left_s: float | None) -> Visit:
        search, cls = self.search, self.perf_class
        fabrics = search.by_class[cls]
        found = search.most_nodes(self.configs, fabrics, None)
        if found is None:
            return Visit()
        nodes, needs_converged = found
        times_s = [search.p.time_to_train_s(self.configs[0], cls, nodes, needs_converged)]
        if needs_converged and search.dedicated_offered:
            dedicated = search.most_nodes(self.configs, fabrics, False)
            if dedicated is not None:
                times_s.append(search.p.time_to_train_s(self.configs[0], cls, dedicated[0], False))
        return Visit(solutions=[Solution(seconds) for seconds in times_s if seconds is not None])
