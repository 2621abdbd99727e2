"""Explaining "no" and "why this": minimal conflicts, relaxations and binding families.

On INFEASIBLE a pre-check first tries the commonest "no" in plain terms: the deadline needs more
nodes than the budget buys at the servers' prices alone (:func:`deadline_outprices_budget`).
Otherwise every family's assumption literal is passed to a pure feasibility solve; the core
CP-SAT returns is treated as a hint and shrunk by deletion to a minimal set that is verified
infeasible, each member necessary. Then, for each conflicting limit, the smallest change that
makes the instance feasible is computed by re-optimising with that one family relaxed.
"""

from __future__ import annotations

import functools

from topoopt.families import FAMILIES
from topoopt.models.design import ConflictItem, Explanation, Relaxation
from topoopt.options.problem import Problem
from topoopt.solver.explain.conflict import Conflict, explanation_model, minimal_conflict
from topoopt.solver.explain.detail import detail
from topoopt.solver.explain.precheck import deadline_outprices_budget
from topoopt.solver.explain.relax import relax_one
from topoopt.solver.run import Settings, Stats


def explain_infeasible(problem: Problem, settings: Settings, stats: Stats) -> Explanation:
    """The minimal conflict, the relaxation of each of its limits and, when the pre-check settles
    the conflict, its plain reason."""
    base = functools.cache(lambda: explanation_model(problem))
    relaxed: dict[str, tuple[Relaxation, int | None]] = {}

    def relaxation(family: str) -> tuple[Relaxation, int | None]:
        if family not in relaxed:
            stats.stage = f"explaining: relaxing {family}"
            relaxed[family] = relax_one(problem, family, settings, stats, base)
        return relaxed[family]

    def shown_necessary(family: str) -> bool:
        """A family whose relaxation solves the model with every other family enforced (the same
        problem: not prefiltered, and not the deadline, whose relaxation also resizes storage)
        is necessary in any conflict; the relaxation is needed for the report anyway."""
        if family in problem.prefilter or family in ("deadline_met", "priced_in_book"):
            return False
        return relaxation(family)[0].value is not None

    deadline_and_budget = ["deadline_met", "budget_cap"]
    reason = deadline_outprices_budget(problem.unfiltered())
    pair = [relaxation(family)[0] for family in deadline_and_budget] if reason is not None else []
    if pair and all(r.value is not None or not r.proven for r in pair):
        # The pre-check proves the pair cannot hold together, with every option. Each is
        # necessary: the budget's relaxation is a design that meets the deadline (and all else),
        # the deadline's one that meets the budget (its storage sized for its own rate, but the
        # storage families are then relaxed too): a verified minimal conflict — not shown
        # minimal when the time limit stopped a relaxation before it found a design.
        conflict = Conflict([f for f in FAMILIES if f in deadline_and_budget],
                            minimal=all(r.value is not None for r in pair))
    else:
        reason = None
        stats.stage = "explaining: shrinking the conflict"
        conflict = minimal_conflict(problem, settings, stats, shown_necessary, base())
    relaxations, nodes = [], problem.instance.constraints.pins.nodes
    for family in conflict.families:
        if family == "priced_in_book":
            continue
        found, relaxed_nodes = relaxation(family)
        relaxations.append(found)
        if family == "storage_nic_bandwidth_met" and nodes is None:
            nodes = relaxed_nodes
    items = [
        ConflictItem(family=f, description=FAMILIES[f].description, detail=detail(problem, f, nodes),
                     source=FAMILIES[f].source)
        for f in conflict.families
    ]
    return Explanation(conflict=items, minimal=conflict.minimal, relaxations=relaxations, precheck=reason)


def explain_job_cost(problem: Problem, settings: Settings, stats: Stats) -> Explanation:
    """Why no design exists: the minimal conflict of the ``min_cost`` model (:func:`explain_infeasible`).

    That model sizes storage for tokens / deadline (or for capacity and checkpoints alone without
    a deadline), ``min_job_cost`` for each design's own, faster rate. When the ``min_cost`` model
    has a design, that difference is the whole conflict, and it is reported as such.
    """
    explanation = explain_infeasible(problem, settings, stats)
    if explanation.conflict:
        return explanation
    family = "storage_bandwidth_met"
    sized = "tokens / deadline" if problem.deadline_s is not None else "capacity and checkpoints alone (no deadline)"
    item = ConflictItem(
        family=family, description=FAMILIES[family].description, source=FAMILIES[family].source,
        detail="min_job_cost feeds storage at each design's own training rate; at that rate no design meets "
               f"the other limits, which do hold with storage sized for {sized}",
    )
    relaxation = Relaxation(family=family, message=f"feasible as min_cost, whose storage is sized for {sized}")
    return Explanation(conflict=[item], relaxations=[relaxation])


__all__ = ["deadline_outprices_budget", "explain_infeasible", "explain_job_cost"]
