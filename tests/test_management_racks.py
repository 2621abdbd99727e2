"""Management leaves in compute racks (docs/model.md, "Racks and power"): one in a rack, where a
full compute rack's nodes and the leaf fit the class's power, rack units and cooling."""

from __future__ import annotations

import copy
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml
from solver_fixtures import TINY_CATALOG, optimal, tiny

from topoopt.checker import check_design
from topoopt.fabric import build_fabric
from topoopt.fabric.floor_svg import LEAF_MARK, write_floor_svg
from topoopt.loader import validate_instance

REPO = Path(__file__).resolve().parent.parent

P27 = {"constraints.pins.server": "s80", "constraints.pins.nodes": 27, "constraints.pins.tiers": 2,
       "constraints.pins.nics_per_node": 1, "site.head_nodes": 0}


def hungry(server_w: float):
    """P27 with the s80 server drawing ``server_w``."""
    catalog = copy.deepcopy(TINY_CATALOG)
    catalog["servers"][0]["power_w"] = server_w
    return tiny(**P27, **{"catalog.add": catalog})


@pytest.fixture(scope="module")
def hosted():
    inst = tiny(**P27)
    return inst, optimal(inst)


def test_a_full_compute_rack_with_room_holds_a_management_leaf(hosted, tmp_path):
    """27 s80 nodes at 10,252.67 W (10,200 W + a 25 W NIC + what the storage network adds) take 9
    r40 racks of 3 (30.758 kW). 85 management ports need 2 m48 leaves (46 device ports each) and an
    m48 aggregation pair; a 100 W leaf beside 3 nodes, 30.858 kW ≤ 40 kW and 3 × 8 + 1 U ≤ 42 U,
    so two compute racks hold the leaves and the m48 network rack keeps the pair (0.2 kW). The
    racks stay 13 (the pair keeps its rack), so the tie rule puts the leaves in the compute racks.
    The build-out seats each leaf at the top of a compute rack it serves, one in a rack, and
    floor.svg marks those racks."""
    inst, result = hosted
    design = result.design
    compute = next(g for g in design.racks if g.role == "compute")
    assert (compute.count, compute.nodes_per_rack, compute.holds, compute.power_kw) == (9, 3, {"m48": 2}, 30.858)
    assert design.management_network.leaves == 2 and design.management_network.aggregation == 2
    assert sum(g.count for g in design.racks) == 13
    assert [g.power_kw for g in design.racks if g.role == "network"][-1] == 0.2
    assert check_design(inst, design, result.cost) == []
    fabric = build_fabric(design, inst)
    assert fabric.warnings == []
    rack_of = {d.name: d.rack for d in fabric.devices}
    role_of = {rack.name: rack.role for rack in fabric.racks.racks}
    cords = next(b for b in fabric.links if b.between == "mgmt")
    seats = [leaf.rack for leaf in fabric.mgmt_leaves]
    assert len(set(seats)) == 2 and {role_of[r] for r in seats} == {"compute"}
    for leaf in fabric.mgmt_leaves:
        served = {rack_of[b] for a, b in zip(cords.a_device, cords.b_device) if a == leaf.name}
        assert leaf.rack in served and leaf.u == 42  # at the top of a rack it serves
    # floor.svg marks the two racks (and the legend) with the leaf's bar.
    drawing = ElementTree.parse(write_floor_svg(fabric, tmp_path / "floor.svg")).getroot()
    marked = [g.get("data-rack") for g in drawing.iter("{http://www.w3.org/2000/svg}g")
              if any(r.get("fill") == LEAF_MARK for r in g.iter("{http://www.w3.org/2000/svg}rect"))]
    assert sorted(marked) == sorted(seats)


def test_a_full_compute_rack_without_room_keeps_the_leaves_out():
    """s80 at 13,250 W: 3 nodes draw 39.907 kW of the r40's 40, and a 100 W leaf would make
    40.008 kW: the leaves stand in a network rack with the aggregation pair (4 × m48, 0.4 kW)."""
    inst = hungry(13_250)
    result = optimal(inst)
    design = result.design
    compute = next(g for g in design.racks if g.role == "compute")
    assert (compute.count, compute.power_kw, compute.holds) == (9, 39.907, {})
    assert [g.power_kw for g in design.racks if g.role == "network"][-1] == 0.4
    assert check_design(inst, design, result.cost) == []
    # Recorded there anyway: the checker finds the rack over its power.
    crowded = [g.model_copy(update={"holds": {"m48": 2}, "power_kw": 40.008}) if g.role == "compute" else g
               for g in design.racks]
    found = [str(v) for v in check_design(inst, design.model_copy(update={"racks": crowded}))]
    assert any("rack_power_within_limit" in v and "3 × s80 at 13.303 kW + 1 × m48 at 0.1 kW = 40.008 kW > 40.0 kW" in v
               for v in found), found


@pytest.mark.parametrize("holds, power_kw, fragment", [
    ({"sw64": 2}, 30.858, "hold 2 × sw64; beside their nodes compute racks hold management leaves only"),
    ({"m48": 10}, 30.858, "hold 10 management leaves, one in a rack: more than the 2 leaves or the 9 racks"),
    ({}, 30.858, "30.858 kW recorded for the fullest rack; 3 × s80 at 10.252 kW = 30.758 kW"),
])
def test_the_checker_rejects_what_compute_racks_cannot_hold(hosted, holds, power_kw, fragment):
    inst, result = hosted
    racks = [g.model_copy(update={"holds": holds, "power_kw": power_kw}) if g.role == "compute" else g
             for g in result.design.racks]
    found = [str(v) for v in check_design(inst, result.design.model_copy(update={"racks": racks}))]
    assert any(fragment in v for v in found), found


def test_head_nodes_join_a_racked_model_when_every_management_leaf_sits_in_a_compute_rack():
    """A 70B job on the 405B example's site with 200 racks: 52 HGX H200 in 13 compute racks, its 4
    management leaves (mgmt-48x1g-4x10g) one in each of 4 of them, so that model has no rack of its
    own. Its empty 'last rack' holds no head node: the 2 head nodes join the last rack of the
    aggregation pair's model (mgmt-48x10g-sfpplus), as the solver counted, and the rack plan is
    the design's (the extraction once recorded them in the leaves' model, no rack at all)."""
    data = yaml.safe_load((REPO / "instances" / "llama3-405b-16k-usd.yaml").read_text(encoding="utf-8"))
    data["workload"]["model"] = "llama3-70b"
    data["workload"]["training"].update(tokens=2.0e12, global_batch_sequences=512)
    data["workload"]["data"]["dataset_tb"] = 8
    data["goal"]["deadline_days"] = 60
    data["budget"]["max"] = 2.0e8
    data["site"].update(max_racks=200, power_cap_kw=4000)
    instance = validate_instance(data)
    design = optimal(instance).design
    assert check_design(instance, design) == []
    compute = next(g for g in design.racks if g.role == "compute")
    assert (design.nodes, compute.count, compute.holds) == (52, 13, {"mgmt-48x1g-4x10g": 4})
    (host,) = [g for g in design.racks if g.holds and g.role == "network"]
    assert host.holds == {"head-node-2u": 2}
    fabric = build_fabric(design, instance)
    assert fabric.warnings == []
    (rack,) = {head.rack for head in fabric.heads}
    held = {device.model for r in fabric.racks.racks if r.name == rack for device in r.devices}
    assert held == {"mgmt-48x10g-sfpplus", "head-node-2u"}
