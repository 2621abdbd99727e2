"""CP-SAT settings: the solver must never call a feasible model infeasible.

Relaxing families can only widen the feasible set, so a model that is feasible with some families
enforced is feasible with none. CP-SAT 9.15's "greater than at least one of" detection broke that
on the model below (INFEASIBLE at the root with every family free, OPTIMAL with two of them
enforced); solver/run.py turns the detection off.
"""

from __future__ import annotations

from solver_fixtures import TINY_PRICES, tiny

from topoopt.solver.explain import _infeasible, _model
from topoopt.solver.problem import Problem
from topoopt.solver.run import Settings, Stats


def test_relaxing_every_family_keeps_a_feasible_model_feasible():
    prices = {k: v for k, v in TINY_PRICES.items() if k != "nic400"}
    instance = tiny(**{"catalog.prices": prices, "constraints.pins.nodes": 2})
    model = _model(Problem(instance))
    assert not _infeasible(model, ["priced_in_book", "pins_respected"], Settings(), Stats())
    assert not _infeasible(model, [], Settings(), Stats())
