"""The best-first engine (topoopt/solver/search.py) against exhaustive evaluation.

Random small trees of nodes, each holding a few solutions (small integers, so ties are common) and
keyed by an admissible bound (at most every value below it, lowered by a random slack): the
engine's best value is the least value of the whole tree; with ties, every solution of that value
is found; with a time budget, the bound it reports is never above the least value. An inadmissible
bound makes it miss the least value, which these properties catch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hypothesis import find, given, settings
from hypothesis import strategies as st

from topoopt.solver.search import BestFirst, Node, Solution, Visit

MAX_DEPTH = 3
MANY = settings(max_examples=10 * settings.default.max_examples)
"""Ten times the active profile's examples: the engine's properties are cheap."""


@dataclass(eq=False)
class TreeNode(Node):
    name: str
    values: list[int]
    kids: list[TreeNode]
    spent_s: float = 0.0
    visited: list[str] = field(default_factory=list)
    """Shared by the whole tree: the names of the nodes visited, in order."""

    def visit(self, left_s: float | None) -> Visit:
        self.visited.append(self.name)
        solutions = [Solution(value, payload=(self.name, index)) for index, value in enumerate(self.values)]
        return Visit(children=list(self.kids), solutions=solutions, spent_s=self.spent_s)


class SolvingNode(TreeNode):
    """A node whose visit spends the time budget. Given less than it needs, it stops unproven:
    it reports its worst value only, and its own bound for what it missed below it."""

    solves = True

    def visit(self, left_s: float | None) -> Visit:
        if left_s is None or left_s >= self.spent_s or not self.values:
            return super().visit(left_s)
        self.visited.append(self.name)
        worst = Solution(max(self.values), payload=(self.name, self.values.index(max(self.values))))
        return Visit(solutions=[worst], open_bound=self.bound, spent_s=left_s)


def every_solution(node: TreeNode) -> list[tuple[int, tuple[str, int]]]:
    """(value, payload) of every solution below ``node``, itself included: exhaustive evaluation."""
    found = [(value, (node.name, index)) for index, value in enumerate(node.values)]
    for kid in node.kids:
        found += every_solution(kid)
    return found


@st.composite
def trees(draw, name: str = "r", visited: list | None = None, inflate: int = 0, solving: bool = False) -> TreeNode:
    """A tree of at most MAX_DEPTH levels below the root. Each node's bound is the least value
    below it minus a random slack (admissible), plus ``inflate`` (inadmissible when positive);
    a node with nothing below it gets any bound, ``inf`` included."""
    visited = [] if visited is None else visited
    values = draw(st.lists(st.integers(0, 6), max_size=2))
    width = draw(st.integers(0, 3)) if name.count(".") < MAX_DEPTH else 0
    kids = [draw(trees(f"{name}.{k}", visited, inflate, solving)) for k in range(width)]
    kind = SolvingNode if solving and draw(st.booleans()) else TreeNode
    node = kind(0.0, name, values, kids, draw(st.sampled_from([0.0, 0.5, 1.0])), visited)
    below = [value for value, _ in every_solution(node)]
    if below:
        node.bound = min(below) - draw(st.sampled_from([0, 0, 0, 1, 2.5])) + inflate
    else:
        node.bound = draw(st.sampled_from([0.0, 3.0, 7.0, math.inf]))
    return node


def least(tree: TreeNode) -> int | None:
    return min((value for value, _ in every_solution(tree)), default=None)


@MANY
@given(trees())
def test_the_best_value_is_the_least_of_every_solution(tree):
    outcome = BestFirst([tree]).run()
    assert outcome.value == least(tree)
    assert all(solution.value == outcome.value for solution in outcome.best)
    assert outcome.open_bounds == []


@MANY
@given(trees())
def test_with_ties_every_solution_of_the_least_value_is_found(tree):
    outcome = BestFirst([tree], ties=True).run()
    expected = [payload for value, payload in every_solution(tree) if value == least(tree)]
    assert sorted(solution.payload for solution in outcome.best) == sorted(expected)


@MANY
@given(trees())
def test_no_node_keyed_above_the_least_value_is_visited(tree):
    """Best-first visits only what it must: a node keyed above the least value cannot hold it
    (at the least value itself, the tie order decides)."""
    BestFirst([tree]).run()
    optimum = least(tree)
    keys = {node.name: node.bound for node in nodes_of(tree)}
    assert optimum is None or all(keys[name] <= optimum for name in tree.visited)


def nodes_of(tree: TreeNode) -> list[TreeNode]:
    return [tree, *(node for kid in tree.kids for node in nodes_of(kid))]


@MANY
@given(trees(solving=True), st.sampled_from([0.25, 0.75, 1.5, 0.0, None]), st.booleans())
def test_a_time_budget_reports_an_honest_bound(tree, limit_s, ties):
    """Whenever the budget stops the search or an evaluation short of time stops unproven, no
    solution is below the bound reported; a value reported proven is the least."""
    outcome = BestFirst([tree], ties=ties, limit_s=limit_s).run()
    optimum = least(tree)
    if outcome.proven(outcome.value):
        assert outcome.value == optimum
    elif optimum is not None:
        assert outcome.bound(math.inf if outcome.value is None else outcome.value) <= optimum


def test_equal_keys_go_in_tie_then_insertion_order():
    visited: list[str] = []

    class Tied(TreeNode):
        def tie(self) -> tuple:
            return (0 if self.name == "c" else 1,)

    roots = [Tied(1.0, name, [], [], visited=visited) for name in "abc"] + [Tied(0.0, "d", [], [], visited=visited)]
    BestFirst(roots).run()
    assert visited == ["d", "c", "a", "b"]


def test_an_inadmissible_bound_is_caught():
    """The properties have teeth: with bounds raised by 1 (no longer at most every value below),
    some tree makes the engine miss its least value."""
    tree = find(trees(inflate=1), lambda tree: BestFirst([tree]).run().value != least(tree),
                settings=settings(max_examples=2000, database=None))
    assert BestFirst([tree]).run().value != least(tree)
