"""Designs returned by the solver build into installations that keep every fabric invariant, for
the compute fabric, the storage network and the management network alike."""

from __future__ import annotations

import csv
from collections import Counter

import pytest
from fabric_invariants import check_all
from solver_fixtures import tiny

import topoopt
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
    # Without the 256-port storage switch, 40 nodes' storage ports need 2 tiers of 32-port switches.
    "storage-two-tier": {**FAR, "constraints.pins.nodes": 40, "constraints.pins.storage_network": "dedicated",
                         "constraints.switches.deny": ["esw256"]},
    "cold-tier": {"constraints.pins.nodes": 4, "workload.checkpoint.archive_days": 30},
}


@pytest.fixture(scope="module", params=sorted(CASES))
def solved(request):
    instance = tiny(**CASES[request.param])
    result = topoopt.solve(instance)
    assert result.status == "optimal", result.explanation
    return request.param, instance, result


def test_solved_design_keeps_the_invariants(solved):
    _, instance, result = solved
    design = result.design
    catalog = resolve_catalog(instance).catalog
    graph = fabric_graph(design, instance)
    assemblies = check_all(design, graph, catalog)
    fabric = build_fabric(design, instance)
    wiring_notes = [w for w in fabric.warnings if "wiring needs" in w]
    # Racks, link counts and every other count agree; only part-filled cages may add kits.
    assert wiring_notes == [w for w in fabric.warnings]
    declared = Counter()
    for group in design.links:
        declared[group.between, group.part] += group.assemblies
    for (between, part), count in declared.items():
        if assemblies[between, part] != count:
            assert any(w.startswith(between) for w in wiring_notes)
    networks = Counter(attrs["network"] for _, _, attrs in graph.edges(data=True))
    assert networks["storage"] and networks["management"]


def test_solved_design_renders(solved, tmp_path):
    _, instance, result = solved
    outputs = render(result, instance, tmp_path)
    with open(tmp_path / "bom.csv", newline="", encoding="utf-8-sig") as handle:
        bom = list(csv.DictReader(handle))
    assert float(bom[-1]["extended_price"]) == result.cost.total
    assert sum(float(row["extended_price"]) for row in bom[:-1]) == pytest.approx(result.cost.total)
    with open(tmp_path / "cables.csv", newline="", encoding="utf-8-sig") as handle:
        cables = Counter(row["part"] for row in csv.DictReader(handle))
    if not [w for w in outputs.warnings if not w.startswith("floor plan:")]:  # counts agree: the BOM is the schedule
        assert cables == Counter({row["part"]: int(row["quantity"]) for row in bom if row["category"] == "cable"})
    assert len(outputs.files) >= 8


def test_the_solver_covers_the_interesting_shapes():
    shapes = {name: topoopt.solve(tiny(**CASES[name])).design
              for name in ("cheapest", "three-tier-rails", "storage-two-tier", "cold-tier")}
    assert shapes["cheapest"].tiers == 0
    assert shapes["three-tier-rails"].tiers == 3 and shapes["three-tier-rails"].fabric.pods > 1
    assert shapes["storage-two-tier"].storage_network.tiers == 2
    assert shapes["cold-tier"].cold_storage is not None
