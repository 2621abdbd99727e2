"""The independent checker: re-verify a design from the instance, the catalog and ``topoopt.perf``.

It never imports ortools or ``topoopt.solver``; it is the oracle the solver is tested against.
Every constraint family of ``topoopt.families`` has one rule here (``CHECKER_RULES``), stated in
its docstring and recomputed from first principles (docs/model.md):

>>> violations = check_design(instance, result.design, result.cost)  # doctest: +SKIP
>>> [str(v) for v in violations]  # doctest: +SKIP
['rack_power_within_limit: compute racks (air-30kw): 3 × dgx-h100 at 10.4 kW = 31.2 kW > 30.0 kW']
"""

from __future__ import annotations

from topoopt.checking import (
    cabling,
    control,
    fabric,
    management,
    node,
    racks,
    selection,
    storage,
    storage_network,
    workload,
)
from topoopt.checking import cost as costing
from topoopt.checking.context import CheckContext, Rule, build_context
from topoopt.families import FAMILIES
from topoopt.models.design import Cost, Design, Violation
from topoopt.models.instance import Instance
from topoopt.models.performance import Performance

CHECKER_RULES: dict[str, Rule] = {
    **workload.RULES,
    **costing.RULES,
    **selection.RULES,
    **node.RULES,
    **fabric.RULES,
    **cabling.RULES,
    **racks.RULES,
    **storage.RULES,
    **storage_network.RULES,
    **management.RULES,
    **control.RULES,
}
"""Family id -> rule; each rule returns every violation of its family it finds."""


def check_design(
    instance: Instance, design: Design, cost: Cost | None = None, performance: Performance | None = None
) -> list[Violation]:
    """Every violated rule of ``design`` for ``instance``, grouped by family in registry order.

    With ``cost`` (and ``performance``), the reported figures must also equal the recomputed ones
    (family ``budget_cap``, item ``reported cost``; family ``deadline_met``, item ``reported
    performance``). An empty list means the design is valid.

    Examples
    --------
    >>> import topoopt
    >>> instance = topoopt.load_instance("instances/llama2-7b-finetune-8gpu.yaml").instance
    >>> design = topoopt.solve(instance).design
    >>> topoopt.check_design(instance, design)
    []
    >>> sorted({v.family for v in topoopt.check_design(instance, design.model_copy(update={"nodes": 2}))})[:3]
    ['deadline_met', 'head_nodes_built', 'leaf_ports_cover_endpoints']
    """
    ctx = build_context(instance, design, cost, performance)
    return run_rules(ctx)


def run_rules(ctx: CheckContext) -> list[Violation]:
    violations: list[Violation] = []
    for family in FAMILIES:
        violations += CHECKER_RULES[family](ctx)
    return violations


def recompute_cost(instance: Instance, design: Design) -> Cost:
    """The design's cost priced from the instance's price book at whole-unit prices."""
    return costing.cost_of(build_context(instance, design))


__all__ = ["CHECKER_RULES", "check_design", "recompute_cost"]
