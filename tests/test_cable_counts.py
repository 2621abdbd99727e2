"""Assemblies between compute switches: the solver, the independent checker and the fabric
build-out count them alike (docs/model.md, "Cables and transceivers").

A transceiver kit's module ports are cabled one by one, so a twin-port module's two links may
reach two switches: kits are counted by the cages the links fill at each end. A one-piece cable
(DAC, ACC, AOC) joins one pair of switches, so it is counted per pair; it, like a kit fibre
carrying several links, serves only when those links divide the links per pair. The instances use an 8-port switch (4 twin cages) so that the
fabric needs one link per switch pair, where the two counts differ.
"""

from __future__ import annotations

import copy
import math

import pytest
from fabric_invariants import check_all
from solver_fixtures import TINY_CATALOG, TINY_PRICES, optimal, tiny

from topoopt.catalog import resolve_catalog
from topoopt.checker import check_design
from topoopt.fabric import build_fabric, fabric_graph

SW8 = {"id": "sw8", "name": "SW 8x400", "source": "estimate: a small test switch", "protocols": ["ib"], "cages": 4,
       "cage_form_factor": "osfp-twin-finned", "ports_per_cage": {400: 2}, "power_w": 300, "rack_units": 1}
TWIN_DAC = {"id": "dac-twin", "name": "Twin DAC 3 m", "source": "estimate: a test cable", "media": "dac", "gbps": 400,
            "links": 2, "a_form_factor": "osfp-twin-finned", "b_form_factor": "osfp-twin-finned", "max_reach_m": 3,
            "power_w_per_a_end": 0.1, "power_w_per_b_end": 0.1}
# A kit whose one fibre carries both links of a module (as a QSFP-DD SR8 module's MPO-16 as 2 x 200G).
ONE_FIBRE_KIT = {**TWIN_DAC, "id": "kit-one-fibre", "name": "Twin kit, one fibre", "media": "mmf", "links_per_fibre": 2}
FAR = {"budget.max": 1e9, "site.max_racks": 400, "goal.deadline_days": None, "site.distances": {"across_rows_m": 40}}
# 20 nodes × 4 rails on 4 down-ports per leaf: 20 leaves. 3 tiers need pods of 4 leaves (1 link per
# leaf-spine pair; 2 would give 10 pods of 2, more than a core's 8 ports), and 5 pods leave each
# core 1 link per pod: 1 link per spine-core pair too.
THREE_TIERS = {"constraints.pins.nodes": 20, "constraints.pins.nics_per_node": 4, "constraints.pins.tiers": 3}
# 8 nodes × 4 rails: 8 leaves, which a spine's 8 ports take with 1 link each.
TWO_TIERS = {"constraints.pins.nodes": 8, "constraints.pins.nics_per_node": 4, "constraints.pins.tiers": 2}
SHORT_RUNS = {"site.distances": {"in_row_m": 1, "across_rows_m": 2, "slack_m": 0}}


def small_switch(*changes: dict, extra: dict | None = None):
    """The tiny instance on the 8-port switch (and ``extra``, a cheap part between switches)."""
    catalog = copy.deepcopy(TINY_CATALOG)
    catalog["switches"] = [SW8 if s["id"] == "sw64" else s for s in catalog["switches"]]
    prices = {**{k: v for k, v in TINY_PRICES.items() if k != "sw64"}, "sw8": 5_000}
    if extra:
        catalog["cables"].append(extra)
        prices[extra["id"]] = 50
    merged = {**FAR, "catalog.add": catalog, "catalog.prices": prices}
    for change in changes:
        merged.update(change)
    return tiny(**merged)


def per_pair(design, between: str) -> int:
    """The count one assembly per switch pair would give (q = 2)."""
    f = design.fabric
    if between == "leaf-spine":
        return f.leaves * f.spines_per_pod * math.ceil(f.links_per_leaf_spine / 2)
    return f.spines * f.cores_per_plane * math.ceil(f.links_per_spine_core / 2)


def agree(instance, design) -> dict[str, int]:
    """Checker clean, no build-out warning, every invariant kept; the assemblies per class."""
    assert check_design(instance, design) == []
    fabric = build_fabric(design, instance)
    assert fabric.warnings == []
    check_all(design, fabric_graph(design, instance), resolve_catalog(instance).catalog)
    counts = {group.between: group.assemblies for group in design.links}
    for bundle in fabric.links:
        assert bundle.assemblies == design.links[bundle.group].assemblies, bundle.between
    return counts


def test_three_tier_kits_fill_twin_cages_with_links_to_two_switches():
    instance = small_switch(THREE_TIERS)
    design = optimal(instance).design
    f = design.fabric
    assert (f.tiers, f.links_per_leaf_spine, f.links_per_spine_core) == (3, 1, 1)
    counts = agree(instance, design)
    # Fewer kits than one per pair: a twin module carries links to two switches. Spine–core has
    # an odd number of pods, so each core part-fills one cage: more than links / 2.
    for between in ("leaf-spine", "spine-core"):
        assert counts[between] < per_pair(design, between)
    spine_core = next(g for g in design.links if g.between == "spine-core")
    assert f.pods % 2 == 1 and counts["spine-core"] > spine_core.count // 2


def test_two_tier_kits_fill_twin_cages_with_links_to_two_switches():
    instance = small_switch(TWO_TIERS)
    design = optimal(instance).design
    assert design.fabric.tiers == 2 and design.fabric.links_per_leaf_spine == 1
    assert agree(instance, design)["leaf-spine"] < per_pair(design, "leaf-spine")


@pytest.mark.parametrize(("part", "carrier"), [(TWIN_DAC, "a dac cable"), (ONE_FIBRE_KIT, "a fibre")])
def test_two_links_to_one_switch_serve_only_pairs_with_whole_multiples(part, carrier):
    # Cheap and in reach, but with one link per pair the DAC (or the kit's one fibre) would leave
    # half of each cage idle or share it with links to another switch: the kit is used instead.
    instance = small_switch(THREE_TIERS, SHORT_RUNS, extra=part)
    design = optimal(instance).design
    assert {g.between: g.part for g in design.links if g.between in ("leaf-spine", "spine-core")} == {
        "leaf-spine": "sw-sr50", "spine-core": "sw-sr50"}
    agree(instance, design)
    # Counted as its kind is (a cable per pair, a kit by cages like sw-sr50), only the pairing is wrong.
    swapped = design.model_copy(update={"links": [
        g.model_copy(update={"part": part["id"],
                             "assemblies": per_pair(design, g.between) if part is TWIN_DAC else g.assemblies})
        if g.between == "leaf-spine" else g for g in design.links]})
    found = [str(v) for v in check_design(instance, swapped) if part["id"] in str(v)]
    assert found == [f"port_form_factor_match: leaf-spine links ({part['id']}): {carrier} carries 2 links to one "
                     "far switch, the switches have 1 links per pair: its cages would be part-filled or shared"]


def test_a_one_piece_cable_between_switches_is_counted_per_pair():
    # Four leaves fit a spine's 8 ports with two links each, which a twin DAC fills (and two
    # spines cost less than four).
    instance = small_switch(TWO_TIERS, SHORT_RUNS, {"constraints.pins.nodes": 4}, extra=TWIN_DAC)
    design = optimal(instance).design
    leaf_spine = next(g for g in design.links if g.between == "leaf-spine")
    assert leaf_spine.part == "dac-twin" and design.fabric.links_per_leaf_spine % 2 == 0
    assert agree(instance, design)["leaf-spine"] == per_pair(design, "leaf-spine")


NINE_NODES = {"constraints.pins.nodes": 9, "constraints.pins.nics_per_node": 1, "constraints.pins.tiers": 2}


def test_a_leaf_takes_whole_breakouts_of_its_own_nodes():
    """9 nodes × 1 rail on 8-port leaves, non-blocking: a leaf uses at most 4 down-ports, so 3
    leaves of ``c = ceil(9/3) = 3`` nodes. A 2-node breakout (sr50: one twin cage to two nodes)
    never spans two leaves, so each leaf takes 2 (one leg idle): 3 × 2 = 6, not ceil(9/2) = 5.
    The solver, the checker and the build-out count 6; a design that records 5 is rejected."""
    instance = small_switch(NINE_NODES)
    design = optimal(instance).design
    f = design.fabric
    assert (f.leaves, f.leaf_down_ports) == (3, 3)
    node_leaf = next(i for i, g in enumerate(design.links) if g.between == "node-leaf")
    assert (design.links[node_leaf].part, design.links[node_leaf].assemblies) == ("sr50", 6)
    fabric = build_fabric(design, instance)
    assert fabric.warnings == []
    assert [b.assemblies for b in fabric.links if b.between == "node-leaf"] == [6]
    links = [g.model_copy(update={"assemblies": 5}) if i == node_leaf else g for i, g in enumerate(design.links)]
    found = [str(v) for v in check_design(instance, design.model_copy(update={"links": links}))]
    assert any("node-leaf links (sr50): 5 assemblies recorded" in v and "= 6" in v for v in found), found
