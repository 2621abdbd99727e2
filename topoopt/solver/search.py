"""The best-first search that min_time (objectives/min_time.py), the least-cost explanation
(explain/least_cost.py) and min_job_cost (objectives/min_job_cost.py) each run over their own
nodes.

A search is a tree of nodes, each keyed by its ``bound``: a lower bound on the value of every
solution below it. The heap pops the node of the smallest key; visiting it expands it into
children (each keyed by its own bound), evaluates it into solutions, or both (a candidate that
comes back as the candidates after it). The search stops when the smallest key is not below the
best value found. That is exact when every bound is *admissible* (at most the value of every
solution below its node): every solution not yet found lies below an open node, so it is worth at
least that node's key, hence at least the best value. A child keyed ``inf`` holds no solution and
is dropped.

Ties. Without ``ties`` the search stops at a key equal to the best value: a solution there could
only tie. With ``ties`` it goes on while a key is within :data:`TIE_SLACK` (relative) of the best
value, so every solution whose value equals the best is found (values must then be non-negative:
the slack is relative); a key computed as the same float product as a value may round a hair above
it, hence the slack. Either way the solutions of the least ``rank`` (the exact order of solutions,
default their value) are all kept, in the order found, for the caller to break the tie.

Order. Among equal keys, a node's :meth:`Node.tie` goes first, then insertion order: the order is
deterministic, so the same solutions are evaluated in the same order on every run.

Time budget. With ``limit_s`` the search stops before visiting a node that ``solves`` once the time
the visits report spending has reached the limit; each visit is told the time left. With
``deadline`` (a ``time.perf_counter()`` instant: the whole command's or the explanation's limit) it
stops before any node once that instant has passed (bounding a node may cost performance-model
evaluations too). What was not
searched to the end has lower bounds, kept in :attr:`Outcome.open_bounds`: the key at which the
search stopped (the smallest open key: no open node is below it) and the lower bound each
evaluation reports when it stops unproven. No solution is below the least of them and the best
value, so the reported bound is honest.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

TIE_SLACK = 1e-12
"""Relative slack on "the smallest key exceeds the best value" when ties are searched: keys equal to
the best (float products of the same numbers) are still visited, so every tie is found."""


@dataclass(eq=False)
class Node(ABC):
    """One node of a search: what lies below it and a lower bound on its solutions' values."""

    bound: float
    """At most the value of every solution below the node (admissible): its key in the heap."""
    solves: ClassVar[bool] = False
    """Whether visiting the node spends the time budget: the budget is checked before such nodes."""

    def tie(self) -> tuple:
        """The order among nodes of equal keys, before insertion order (compared as tuples: every
        node of one search gives the same length)."""
        return ()

    @abstractmethod
    def visit(self, left_s: float | None) -> Visit:
        """Expand or evaluate the node; ``left_s``: the time budget left (None: no budget)."""


@dataclass(frozen=True)
class Solution:
    """One solution a visit found."""

    value: float
    """What the stop rule compares keys against."""
    rank: Any = None
    """The exact order of solutions (None: the value); the best are those of the least rank."""
    payload: Any = None

    @property
    def order(self) -> Any:
        return self.value if self.rank is None else self.rank


@dataclass
class Visit:
    """What visiting a node found."""

    children: list[Node] = field(default_factory=list)
    solutions: list[Solution] = field(default_factory=list)
    open_bound: float | None = None
    """When the node's evaluation stopped unproven: a lower bound on the solutions it may have missed."""
    spent_s: float = 0.0
    """The time the visit spent, charged to the budget."""


@dataclass
class Outcome:
    """What a search found, and how far it got."""

    best: list[Solution]
    """Every solution of the least rank found, in the order found (empty: none found)."""
    open_bounds: list[float]
    """Lower bounds on what was not searched to the end (empty: the search ran to its stop rule)."""

    @property
    def value(self) -> float | None:
        """The best value found (None: no solution)."""
        return self.best[0].value if self.best else None

    def bound(self, value: float) -> float:
        """A lower bound on every solution's value when the best one is worth ``value`` (the best
        value, or what the caller made of the best solution): the least of it and the open bounds."""
        return min([value, *self.open_bounds])

    def proven(self, value: float | None) -> bool:
        """Whether no solution is below ``value`` (as for :meth:`bound`); None: none was found, and
        whether none exists."""
        return not self.open_bounds if value is None else all(bound >= value for bound in self.open_bounds)


class BestFirst:
    """The search of the module docstring over the nodes pushed before :meth:`run`."""

    def __init__(self, roots: list[Node], *, ties: bool = False, limit_s: float | None = None,
                 deadline: float | None = None) -> None:
        self.ties, self.limit_s, self.deadline = ties, limit_s, deadline
        self._heap: list[tuple] = []
        self._pushed = itertools.count()
        for node in roots:
            self.push(node)

    def push(self, node: Node) -> None:
        if node.bound < math.inf:
            heapq.heappush(self._heap, (node.bound, node.tie(), next(self._pushed), node))

    def beyond(self, key: float, best: float) -> bool:
        """The stop rule: nothing keyed ``key`` or more can beat (or, with ties, tie) ``best``."""
        return key > best * (1 + TIE_SLACK) if self.ties else key >= best

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def run(self) -> Outcome:
        best: list[Solution] = []
        open_bounds: list[float] = []
        spent_s = 0.0
        while self._heap and not self.beyond(self._heap[0][0], best[0].value if best else math.inf):
            key, _, _, node = heapq.heappop(self._heap)
            left_s = None if self.limit_s is None else self.limit_s - spent_s
            if node.solves and left_s is not None and left_s <= 0 or self.past_deadline():
                open_bounds.append(key)
                break
            visit = node.visit(left_s)
            spent_s += visit.spent_s
            if visit.open_bound is not None:
                open_bounds.append(visit.open_bound)
            for solution in visit.solutions:
                if not best or solution.order < best[0].order:
                    best = [solution]
                elif solution.order == best[0].order:
                    best.append(solution)
            for child in visit.children:
                self.push(child)
        return Outcome(best, open_bounds)
