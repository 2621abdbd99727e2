"""An impossible ask a planner makes (benchmarks/impossible/): proven infeasible and explained
with what is proven said. How long it takes belongs to the benchmark, not here."""

from __future__ import annotations

from pathlib import Path

from topoopt.loader import load_instance
from topoopt.solver import solve

ASKS = Path(__file__).resolve().parents[1] / "benchmarks" / "impossible"


def test_405b_in_30_days_for_a_rent_of_1_5m_cny_is_explained():
    """405B on 1T tokens in 30 days for CNY 1.5M a month, 20 racks, 300 kW, NDR only: the deadline
    needs more servers than the budget rents, and no budget alone would do (300 kW hold too few
    nodes for the deadline), while a longer deadline would."""
    result = solve(load_instance(ASKS / "llama3-405b-30d-ndr-300kw.yaml").instance)
    assert result.status == "infeasible"
    explanation = result.explanation
    assert [item.family for item in explanation.conflict] == ["deadline_met", "budget_cap"]
    assert explanation.minimal
    by_family = {r.family: r for r in explanation.relaxations}
    assert by_family["deadline_met"].proven and by_family["deadline_met"].value > 30
    assert by_family["budget_cap"].proven and by_family["budget_cap"].value is None
