"""The checker's rule groups, one module per group of constraint families.

Every module exports ``RULES: dict[str, Rule]`` mapping a family id (``topoopt.families``) to a
function ``rule(ctx) -> list[Violation]``. Nothing here imports ortools or ``topoopt.solver``:
the checker recomputes every rule from the instance, the catalog and ``topoopt.perf``.
"""
