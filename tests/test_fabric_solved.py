"""Designs returned by the solver build into installations that keep every fabric invariant."""

from __future__ import annotations

import csv

import pytest
from solver_fixtures import tiny

import topoopt
from fabric_invariants import check_all
from topoopt.catalog import resolve_catalog
from topoopt.fabric import build_fabric, fabric_graph, render

FAR = {"budget.max": 1e9, "site.max_racks": 400, "goal.deadline_days": None, "site.distances": {"across_rows_m": 40}}
CASES = {
    "cheapest": {},
    "one-switch": {"constraints.pins.nodes": 4},
    "two-tier": {**FAR, "constraints.pins.nodes": 40, "constraints.pins.tiers": 2},
    "rails-odd-nodes": {**FAR, "constraints.pins.nodes": 9, "constraints.pins.tiers": 2,
                        "constraints.pins.nics_per_node": 8},
    "three-tier-rails": {**FAR, "constraints.pins.nodes": 300, "constraints.pins.nics_per_node": 8},
}


@pytest.fixture(scope="module", params=sorted(CASES))
def solved(request):
    instance = tiny(**CASES[request.param])
    result = topoopt.solve(instance)
    assert result.status == "optimal", result.explanation
    return instance, result


def test_solved_design_keeps_the_invariants(solved):
    instance, result = solved
    design = result.design
    catalog = resolve_catalog(instance).catalog
    graph = fabric_graph(design, instance)
    assemblies = check_all(design, graph, catalog)
    fabric = build_fabric(design, instance)
    wiring_notes = [w for w in fabric.warnings if "wiring needs" in w]
    # Racks, link counts and every other count agree; only part-filled cages may add kits.
    assert wiring_notes == [w for w in fabric.warnings]
    for group in design.links:
        if assemblies[group.between] != group.assemblies:
            assert any(w.startswith(group.between) for w in wiring_notes)


def test_solved_design_renders(solved, tmp_path):
    instance, result = solved
    outputs = render(result, instance, tmp_path)
    with open(tmp_path / "bom.csv", newline="", encoding="utf-8") as handle:
        total = list(csv.DictReader(handle))[-1]
    assert float(total["extended_price"]) == result.cost.total
    assert len(outputs.files) >= 8


def test_the_solver_covers_the_interesting_shapes():
    shapes = {name: topoopt.solve(tiny(**changes)).design for name, changes in CASES.items()
              if name in ("cheapest", "three-tier-rails")}
    assert shapes["cheapest"].tiers == 0
    assert shapes["three-tier-rails"].tiers == 3 and shapes["three-tier-rails"].fabric.pods > 1
