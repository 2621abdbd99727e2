"""An impossible ask a planner makes (benchmarks/impossible/): proven infeasible and explained
with what is proven said. How long it takes belongs to the benchmark, not here."""

from __future__ import annotations

from pathlib import Path

from topoopt.loader import load_instance
from topoopt.solver import solve

ASKS = Path(__file__).resolve().parents[1] / "benchmarks" / "impossible"


def test_405b_in_30_days_for_a_rent_of_1_5m_cny_is_explained():
    """405B on 1T tokens in 30 days for CNY 1.5M a month, 20 racks, 300 kW, NDR only: the deadline
    needs more servers than 300 kW power, and no power limit alone would do (the budget rents too
    few servers for the deadline), nor would the budget alone (the power), while a longer deadline
    would. Asked with every server of the
    book (catalog.include_not_offered): limited to what the CNY market offers, the explanation is
    about memory and the servers on offer instead."""
    instance = load_instance(ASKS / "llama3-405b-30d-ndr-300kw.yaml").instance
    every_server = instance.catalog.model_copy(update={"include_not_offered": True})
    result = solve(instance.model_copy(update={"catalog": every_server}))
    assert result.status == "infeasible"
    explanation = result.explanation
    # Two minimal conflicts: the deadline with the power, and the deadline with the budget; the
    # explanation names one, and relaxing its other family alone is proven not enough.
    families = [item.family for item in explanation.conflict]
    assert families in (["deadline_met", "site_power_within_limit"], ["deadline_met", "budget_cap"])
    assert explanation.minimal
    by_family = {r.family: r for r in explanation.relaxations}
    assert by_family["deadline_met"].proven and by_family["deadline_met"].value > 30
    other = by_family[families[1]]
    assert other.proven and other.value is None


def test_an_explanation_cut_short_by_its_time_limit_says_so():
    """With next to no time, the explanation still names a proven-infeasible conflict, and what it
    could not prove is labelled: the conflict not shown minimal or a relaxation not proven —
    never 'relaxing it alone is not enough' without a proof."""
    instance = load_instance(ASKS / "llama3-70b-7d-8-racks.yaml").instance
    result = solve(instance, explain_time_s=0.01)
    assert result.status == "infeasible"
    explanation = result.explanation
    assert explanation.conflict
    unproven = [r for r in explanation.relaxations if not r.proven]
    assert not explanation.minimal or unproven
    assert all("alone is not enough" not in r.message for r in unproven)


def test_the_time_limit_bounds_the_whole_solve_with_its_explanation():
    full = solve(load_instance(ASKS / "llama3-70b-7d-8-racks.yaml").instance, explain_time_s=None)
    cut = solve(load_instance(ASKS / "llama3-70b-7d-8-racks.yaml").instance, time_limit_s=1.0, explain_time_s=None)
    assert full.explanation.minimal and all(r.proven for r in full.explanation.relaxations)
    assert cut.status in ("infeasible", "unknown")
    if cut.status == "infeasible":
        assert not cut.explanation.minimal or not all(r.proven for r in cut.explanation.relaxations)
