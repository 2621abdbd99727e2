"""``min_job_cost``: the cheapest whole training job, exactly.

The job cost of a design is its rent per month times the months of rent its training is billed::

    job cost = cost per month × billed(time to train)

``billed`` (solver/billing.py) is the cheapest run of the price book's whole rental terms that
covers the time to train (in months of 30.4375 days, 365.25 / 12), in months of list rent; a book
without terms bills pro rata (time to train ÷ 30.4375 days). It never decreases with the time to
train, so a lower bound on the cost and a lower bound on the time give a lower bound on the job.

subject to every rule, the budget (a cap on the monthly rent) and the deadline when given. The
storage tier must feed the design's own training rate (``perf.evaluate(...).tokens_per_s``), as
for ``min_time``: the duration is what the job is charged for, so storage may not slow it down.

Why not one CP-SAT model. The time to train depends nonlinearly on the node-configuration group
(GPU, GPUs per node, rails, interconnect: :meth:`Problem.perf_key`), the fabric class (tiers,
oversubscription), the storage network mode (a converged network's reads share the compute NICs
and slow the step: ``Problem.hardware(..., converged=True)``) and the node count ``n``, and the
product cost × time is not linear either. So the search decomposes: a *candidate* is
``(group, fabric class, storage mode, n)``. Everything the performance model sees is fixed by the
candidate, so its duration ``D`` and its storage rate are constants, and the cheapest design of
the candidate is one CP-SAT ``min_cost`` solve of the model restricted to the group's
configurations, the class's fabric options and the mode's storage networks with ``nodes == n``;
its hot tier and its storage network's need are sized at that rate (as the checker sizes them:
checking/context.py ``throughput_target``). Its job cost is ``C*(candidate) × D(candidate)``.

Why the result is optimal. Every valid design belongs to exactly one candidate, and the cheapest
design of a candidate has the smallest job cost among that candidate's designs (``D`` is the same
for all of them), so the optimum is the smallest ``C* × D`` over the candidates. Candidates are
visited best-first by a *lower bound* on their job cost:

* ``n`` ranges over ``[n_lo, n_hi]`` per (group, class, mode): ``n_lo`` is the fewest nodes the
  model admits (``memory_fits``, ``deadline_met`` in that mode, a pinned count); ``n_hi`` is at
  first the most the racks, the budget at the node price alone, the site power and a pinned
  count allow (cost_floor.py ``CostFloor.cap``), and when the pair's range is first popped the
  most any way of buying its nodes allows with the cost floor below within the budget
  (``CostFloor.most_nodes``; :meth:`JobCostSearch.bound`): most pairs are never popped, and
  their bisection is skipped. No design lies outside the range. A converged pair keeps only the
  fabric options a converged network can use (a fabric at a speed some storage tier runs:
  network_definitions.py); a group whose speed no tier runs has no converged pair.
* :meth:`JobCostSearch.cost_floor` (cost_floor.py) bounds the monthly cost of any design of a
  candidate from below with the model's own counts at the cheapest options: nodes, the fabric's
  switches and cables, racks, the storage and management networks' least share, and storage at
  the rate ``tokens / D`` (at most the design's own).
  So ``cost_floor × D ≤ C* × D``.
* The floor does not decrease with ``n`` (every term grows with ``n``; the storage rate grows as
  ``D`` falls) and the time to train does not increase with ``n`` (the performance model may leave
  GPUs idle, docs/model.md; converged reads add ``c / n`` to a step), so a *range* ``low..high`` of a pair's node counts has no job cost
  below ``cost_floor(low, tokens / D(low)) × D(high)``. Each pair starts as one range
  ``n_lo..n_hi``, keyed without evaluating the pair (:meth:`JobCostSearch.first_keys`): the floor
  at ``n_lo`` with storage at rate 0, times the group's time on the fastest class and storage mode
  (one tier without oversubscription, dedicated: perf ``never_slower``) at the most nodes of any
  of its pairs. When popped it is tightened (above) and keyed as a range; a popped range is split
  in two (at the geometric mean), a popped one-count range becomes a candidate keyed by its own
  floor.

The search is search.py's, with ties, over :class:`RangeNode` and :class:`CandidateNode`: a
candidate is solved, a range is split. When the smallest key exceeds the best job cost found,
every remaining candidate (generated or not) has a job cost at least its key, so none is better:
the best found is optimal. Keys equal to the best are still solved, so ties are all found and
broken like the other objectives: fewer GPUs, then lower provisioned power, then catalog order of
the chosen options (each tied candidate is re-solved lexicographically).

With ``--time-limit-s`` the search stops when its candidates' CP-SAT time reaches the limit (each
solve gets what is left): search.py's time budget. The reported bound is then the smallest lower
bound of what was left open — a candidate stopped unproven (its CP-SAT bound times ``D``, or its
key) and the key at which the search stopped — never above the value; the status is ``feasible``
(``unknown`` without any design).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from fractions import Fraction

from ortools.sat.python import cp_model

from topoopt.options.networks import StorageNetOption
from topoopt.options.problem import Problem
from topoopt.options.tables import FabricOption, NodeConfig
from topoopt.perf import evaluate
from topoopt.perf.job import FASTEST_CLASS
from topoopt.solver.billing import Billing
from topoopt.solver.bounds.cost_floor import CostFloor, Way
from topoopt.solver.extract import chosen
from topoopt.solver.model import model_for
from topoopt.solver.model.core import DesignModel
from topoopt.solver.objectives.min_cost import canonical_placement, catalog_order, hint_vars, tie_break
from topoopt.solver.run import OK, Settings, Stats, hint_from, lexicographic, run
from topoopt.solver.search import BestFirst, Node, Solution, Visit


@dataclass
class Pair:
    """A node-configuration group (same perf key) with one fabric class and one storage network
    mode, and its node range."""

    configs: list[NodeConfig]
    fabrics: list[FabricOption]
    perf_class: tuple[int, float]
    converged: bool
    nets: list[StorageNetOption]
    """The mode's storage network options, as in the full problem (their catalog positions)."""
    ways: list[Way]
    n_lo: int = 1
    n_hi: int = 1
    bounded: bool = False
    """Whether ``n_hi`` is already the cost floor's (:meth:`JobCostSearch.bound`)."""


Candidate = tuple[DesignModel, cp_model.CpSolver, int, bool]
"""A solved candidate: its model, the solver holding its cheapest design, that cost, and whether
CP-SAT proved it the least."""


@dataclass
class Solved:
    """One candidate's cheapest design."""

    key: tuple
    """(exact job cost, GPUs, power W, catalog order) — the order of the objective and its ties."""
    job_cost: float
    dm: DesignModel
    solver: cp_model.CpSolver
    proven: bool


@dataclass
class JobCostResult:
    status: int
    best: Solved | None = None
    bound: float | None = None
    proven: bool = True
    candidates_solved: int = 0
    perf_evaluations: int = 0
    unproven: list[float] = field(default_factory=list)


class JobCostSearch:
    """The best-first search of the module docstring over one problem."""

    def __init__(self, problem: Problem, settings: Settings, stats: Stats) -> None:
        self.problem, self.settings, self.stats = problem, settings, stats
        self.tokens = problem.instance.workload.training.tokens
        self._durations: dict[tuple, float | None] = {}
        self.floor = CostFloor(problem)
        self.billing = Billing.of(problem.catalog.price_book)
        self.result = JobCostResult(status=cp_model.INFEASIBLE)

    # -- the pieces ---------------------------------------------------------------------------------
    def exact_job_cost(self, cost: float, seconds: float) -> Fraction:
        """Rent per month × months billed for ``seconds`` under the book's terms (billing.py)."""
        return Fraction(cost) * self.billing.months(seconds)

    def job_cost(self, cost: float, seconds: float) -> float:
        """:meth:`exact_job_cost` as a float; an infinite cost floor (no design) stays infinite."""
        if not math.isfinite(cost):
            return cost * float(self.billing.months(seconds))
        return float(self.exact_job_cost(cost, seconds))

    def duration_s(self, pair: Pair, n: int) -> float | None:
        """Time to train the candidate in its storage mode (cached: the whole group shares it)."""
        key = (self.problem.perf_key(pair.configs[0]), pair.perf_class, pair.converged, n)
        if key not in self._durations:
            self.result.perf_evaluations += 1
            self._durations[key] = self.problem.time_to_train_s(pair.configs[0], pair.perf_class, n, pair.converged)
        return self._durations[key]

    def rate(self, pair: Pair, n: int) -> float:
        """The candidate's own training rate (tokens/s) in its storage mode: what its storage feeds."""
        p = self.problem
        performance = evaluate(p.job, p.hardware(pair.configs[0], pair.perf_class, n, pair.converged))
        return 0.0 if performance is None else performance.tokens_per_s

    def pairs(self) -> list[Pair]:
        """Every (group, fabric class, storage mode) with a non-empty node range, in catalog order."""
        p = self.problem
        pinned = p.pinned_nodes
        found = []
        for option in p.pairs():
            fewest = p.fewest_nodes(option.configs[0], option.perf_class, option.converged)
            if fewest is None:
                continue
            ways = self.floor.ways(option.configs, option.fabrics, option.nets)
            pair = Pair(option.configs, option.fabrics, option.perf_class, option.converged, option.nets, ways)
            pair.n_lo, pair.n_hi = fewest, max((self.floor.cap(way) for way in ways), default=0)
            if pinned is not None:
                pair.n_hi = min(pair.n_hi, pinned)
            if ways and pair.n_lo <= pair.n_hi:
                found.append(pair)
        return found

    def bound(self, pair: Pair) -> None:
        """Tighten the pair's ``n_hi`` to the most nodes the budget buys at the cost floor."""
        if not pair.bounded:
            pair.n_hi, pair.bounded = min(pair.n_hi, self.floor.most_nodes(pair.ways)), True

    def first_keys(self, pairs: list[Pair]) -> list[float]:
        """Each pair's first key, without an evaluation of its own: the cost floor at its fewest
        nodes with storage at rate 0, times the time its group trains on the never-slower class
        and storage mode (one tier without oversubscription, dedicated) at the most nodes any of
        the group's pairs may have — at most the floor and the time of any of its candidates."""
        p = self.problem
        most: dict[tuple, tuple[NodeConfig, int]] = {}
        for pair in pairs:
            group = p.perf_key(pair.configs[0])
            config, n = most.get(group, (pair.configs[0], 0))
            most[group] = config, max(n, pair.n_hi)
        # None: nothing fits even there; 0 s then keeps the key a lower bound.
        fastest_s = {group: p.time_to_train_s(config, FASTEST_CLASS, n) or 0.0 for group, (config, n) in most.items()}
        self.result.perf_evaluations += len(fastest_s)
        return [self.job_cost(self.cost_floor(pair, pair.n_lo, 0.0), fastest_s[p.perf_key(pair.configs[0])])
                for pair in pairs]

    def cost_floor(self, pair: Pair, n: int, tokens_per_s: float) -> float:
        """A lower bound on the monthly cost of any design of the candidate (module docstring)."""
        return self.floor.at(pair.ways, n, tokens_per_s)

    def model(self, pair: Pair, n: int, tokens_per_s: float | None = None) -> DesignModel:
        """The candidate's model: the pair's options and storage mode, ``nodes == n``, the hot tier
        and the storage network's need at ``tokens_per_s`` (default: the candidate's own rate)."""
        rate = self.rate(pair, n) if tokens_per_s is None else tokens_per_s
        dm = model_for(self.problem.rated(rate).restricted(pair.configs, pair.fabrics, pair.converged))
        dm.model.add(dm.vars.nodes == n)
        return dm

    def catalog_rank(self, pair: Pair, dm: DesignModel, value) -> tuple:
        """The chosen options' catalog positions in the full problem, in catalog_order's order."""
        pick = chosen(dm, value)
        parts = tuple(pick.parts[cls].index if cls in pick.parts else -1 for cls in dm.options.parts)
        return (pair.configs[pick.config.index].index, pair.fabrics[pick.fabric.index].index, *parts,
                pick.rack_index, pick.infra_rack_index, pick.storage_index, pair.nets[pick.storage_net.index].index, pick.cold.index,
                pick.management.index)

    def finish(self, pair: Pair, n: int, seconds: float, solved: Candidate) -> Solved | None:
        """The candidate's ties broken lexicographically (GPUs and power, then catalog order) at its
        least cost: from its solve when that proved the cost least, else from a new model whose
        cost is minimised again first."""
        dm, solver, cost, proven = solved
        if proven:
            dm.model.add(dm.vars.total_cost <= cost)
            hint_from(dm.model, solver, hint_vars(dm))
            objectives = [tie_break(dm), *catalog_order(dm)]
        else:
            dm = self.model(pair, n)
            objectives = [dm.vars.total_cost, tie_break(dm), *catalog_order(dm)]
        status, solver, _, _ = lexicographic(dm.model, objectives, self.settings, self.stats, hint_vars(dm))
        if status not in OK:
            return None
        status, solver = canonical_placement(dm, self.settings, self.stats, status, solver)
        cost = solver.value(dm.vars.total_cost)
        key = (self.exact_job_cost(cost, seconds), solver.value(dm.vars.gpus), solver.value(dm.vars.power_w["total"]),
               self.catalog_rank(pair, dm, solver.value))
        return Solved(key, float(key[0]), dm, solver, proven=status == cp_model.OPTIMAL)

    # -- the search ---------------------------------------------------------------------------------
    def run(self) -> JobCostResult:
        res = self.result
        pairs = self.pairs()
        roots = [RangeNode(key, self, pair, pair.n_lo, pair.n_hi) for pair, key in zip(pairs, self.first_keys(pairs))]
        outcome = BestFirst(roots, ties=True, limit_s=self.settings.time_limit_s, deadline=self.settings.deadline).run()
        res.unproven = outcome.open_bounds
        if not outcome.best:
            # Nothing found: infeasible, unless a candidate was left unsolved or unproven.
            res.proven = outcome.proven(None)
            res.status = cp_model.INFEASIBLE if res.proven else cp_model.UNKNOWN
            return res
        finished = [s for s in (self.finish(*solution.payload) for solution in outcome.best) if s is not None]
        if not finished:
            res.status = cp_model.UNKNOWN
            res.proven = False
            return res
        res.best = min(finished, key=lambda s: s.key)
        # Unproven candidates whose bound is not below the best cannot hold a better job.
        res.bound = outcome.bound(res.best.job_cost)
        res.proven = outcome.proven(res.best.job_cost) and all(s.proven for s in finished)
        res.status = cp_model.OPTIMAL if res.proven else cp_model.FEASIBLE
        return res


@dataclass(eq=False)
class RangeNode(Node):
    """Node counts ``low..high`` of a pair, bounded by ``cost_floor(low, tokens / D(low)) ×
    D(high)`` (module docstring); the pair's first range is keyed by :meth:`JobCostSearch.first_keys`
    instead. Expanded into the same range tightened (the pair's first), its two halves, or (one
    count) its candidate."""

    search: JobCostSearch
    pair: Pair
    low: int
    high: int

    @classmethod
    def bounded(cls, search: JobCostSearch, pair: Pair, low: int, high: int) -> RangeNode:
        seconds = search.duration_s(pair, low)
        rate = search.tokens / seconds if seconds else 0.0
        fastest_s = search.duration_s(pair, high) or 0.0
        return cls(search.job_cost(search.cost_floor(pair, low, rate), fastest_s), search, pair, low, high)

    def tie(self) -> tuple:
        return (1,)  # at equal keys a candidate (0) goes first

    def visit(self, left_s: float | None) -> Visit:
        search, pair, low, high = self.search, self.pair, self.low, self.high
        if not pair.bounded:
            # The pair's first range: tighten its end, then key it again.
            search.bound(pair)
            high = min(high, pair.n_hi)
            return Visit(children=[RangeNode.bounded(search, pair, low, high)] if low <= high else [])
        if low < high:
            # Split where the node count doubles as often as it halves: ranges near the fewest
            # nodes, where jobs are usually cheapest, get tight bounds soonest.
            middle = min(max(math.isqrt(low * high), low), high - 1)
            return Visit(children=[RangeNode.bounded(search, pair, low, middle),
                                   RangeNode.bounded(search, pair, middle + 1, high)])
        seconds = search.duration_s(pair, low)
        if not seconds:
            return Visit()
        bound = search.job_cost(search.cost_floor(pair, low, search.tokens / seconds), seconds)
        return Visit(children=[CandidateNode(bound, search, pair, low, seconds)])


@dataclass(eq=False)
class CandidateNode(Node):
    """The candidate ``(pair, n)`` training in ``seconds``, bounded by its own cost floor times
    ``seconds``; evaluated by one ``min_cost`` solve (in what is left of the time limit)."""

    solves = True
    search: JobCostSearch
    pair: Pair
    n: int
    seconds: float

    def tie(self) -> tuple:
        return (0,)

    def visit(self, left_s: float | None) -> Visit:
        search, seconds = self.search, self.seconds
        settings = search.settings if left_s is None else dataclasses.replace(search.settings, time_limit_s=left_s)
        dm = search.model(self.pair, self.n)
        dm.model.minimize(dm.vars.total_cost)
        status, solver = run(dm.model, settings, search.stats, light=True)
        search.result.candidates_solved += 1
        visit = Visit(spent_s=solver.wall_time)
        if status == cp_model.INFEASIBLE:
            return visit
        if status != cp_model.OPTIMAL:
            # Stopped by the time limit: what this candidate could still reach.
            cp_bound = solver.best_objective_bound
            reach = search.job_cost(math.ceil(cp_bound - 1e-6), seconds) if math.isfinite(cp_bound) else self.bound
            visit.open_bound = max(self.bound, reach)
        if status in OK:
            cost = int(round(solver.objective_value))
            solved = dm, solver, cost, status == cp_model.OPTIMAL
            exact = search.exact_job_cost(cost, seconds)
            visit.solutions.append(Solution(float(exact), exact,
                                            (self.pair, self.n, seconds, solved)))
        return visit


def min_job_cost(problem: Problem, settings: Settings, stats: Stats) -> JobCostResult:
    """The design with the smallest job cost (module docstring); ``status`` as CP-SAT's."""
    return JobCostSearch(problem, settings, stats).run()
