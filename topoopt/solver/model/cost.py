"""The cost family: the design stays within the budget."""

from __future__ import annotations

from topoopt.solver.model.core import DesignModel


def budget_cap(dm: DesignModel) -> None:
    dm.add("budget_cap", dm.model.add(dm.vars.total_cost <= int(dm.problem.instance.budget.max)))
