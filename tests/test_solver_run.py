"""CP-SAT settings: the solver must never call a feasible model infeasible.

Relaxing families can only widen the feasible set, so a model that is feasible with some families
enforced is feasible with none. CP-SAT 9.15's "greater than at least one of" detection broke that
on the model below (INFEASIBLE at the root with every family free, OPTIMAL with two of them
enforced); solver/run.py turns the detection off.
"""

from __future__ import annotations

from ortools.sat.python.cp_model_helper import FlatIntExpr
from solver_fixtures import TINY_PRICES, tiny

from topoopt.options.problem import Problem
from topoopt.solver.explain.conflict import _infeasible, explanation_model
from topoopt.solver.run import Settings, Stats, lexicographic


def test_relaxing_every_family_keeps_a_feasible_model_feasible():
    prices = {k: v for k, v in TINY_PRICES.items() if k != "nic400"}
    instance = tiny(**{"catalog.prices": prices, "constraints.pins.nodes": 2})
    model = explanation_model(Problem.of(instance))
    assert not _infeasible(model, ["priced_in_book", "pins_respected"], Settings(), Stats())
    assert not _infeasible(model, [], Settings(), Stats())


def test_catalog_order_splits_before_its_coefficients_overflow(monkeypatch):
    """A large catalog's catalog-order weights exceed 64 bits (CP-SAT: MODEL_INVALID, so the
    status was 'unknown'); the ranking is then split over several lexicographic objectives, each
    within CATALOG_ORDER_MAX, and the tie-broken design is the same."""
    import topoopt.solver as solver
    from topoopt.solver.model import new_model
    from topoopt.solver.objectives import min_cost

    instance = tiny(**{"constraints.pins.nodes": 2})
    whole = solver.solve(instance, explain=False)
    problem = Problem.of(instance)
    dm = new_model(problem)
    assert len(min_cost.catalog_order(dm)) == 1
    monkeypatch.setattr(min_cost, "CATALOG_ORDER_MAX", 100)
    parts = min_cost.catalog_order(dm)
    assert len(parts) > 1
    for expression in parts:
        coefficients = sorted(FlatIntExpr(expression).coeffs)
        # Within the limit, or one group alone (its positions 1..k at weight 1: it cannot be split).
        assert sum(coefficients) <= 100 or coefficients == list(range(1, len(coefficients) + 1))
    placements: list = []  # the canonical-placement stages of mixed racks, recorded as they are built
    placement_order = min_cost.placement_order
    monkeypatch.setattr(min_cost, "placement_order",
                        lambda dm, found: placements.append(stages := placement_order(dm, found)) or stages)
    split = solver.solve(instance, explain=False)
    assert split.status == whole.status == "optimal"
    # cost, tie-break, the catalog order's parts, fewer racks, the most management leaves in
    # compute racks, the placement stages
    assert split.provenance.solves == 2 + len(parts) + 2 + sum(len(stages) for stages in placements)
    assert split.design == whole.design



def test_lexicographic_fixes_each_stage_at_its_exact_integer_optimum():
    """Past 2**53 the objective's double is off by whole units: 2**54 + 3 reads as 2**54 + 4, which
    would let the second stage raise y to 4 at an unchanged first objective."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x, y = m.new_int_var(1, 1, "x"), m.new_int_var(3, 5, "y")
    status, solver, first, _ = lexicographic(m, [x * 2**54 + y, -y], Settings(), Stats(), [x, y])
    assert status == cp_model.OPTIMAL
    assert first == 2**54 + 3
    assert solver.value(y) == 3
