"""Placement: mixed racks for small designs, cable runs from where the ends sit, cooling matched to
the rack class, and the BOM equal to the wiring (docs/model.md, "Racks and power", "Cable runs")."""

from __future__ import annotations

import copy
import csv
import math
from collections import Counter
from pathlib import Path

import pytest
from example_outputs import written_example
from hypothesis import event, given
from solver_fixtures import TINY_CATALOG, TINY_PRICES, conflict, infeasible, optimal, tiny
from strategies import build, instance_data

import topoopt
from topoopt.catalog import resolve_catalog
from topoopt.checker import check_design
from topoopt.fabric import build_fabric
from topoopt.loader import load_instance

REPO = Path(__file__).resolve().parent.parent
SMALL_EXAMPLES = ["llama3-70b-roce-cny", "llama3-70b-job-cost-cny", "estimate-pinned-h100", "video-storage-bound",
                  "llama2-7b-finetune-8gpu"]


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(params=SMALL_EXAMPLES)
def rendered(request):
    """The example's session solve and output set (example_outputs.py)."""
    written = written_example(f"{request.param}.yaml")
    return request.param, written.instance, written.result, written.out, written.warnings


def test_the_bom_is_the_wiring(rendered):
    """Every cable part is bought exactly as often as the schedule cables it."""
    _, _, _, out, warnings = rendered
    assert warnings == []
    bought = {row["part"]: int(row["quantity"]) for row in rows(out / "bom.csv") if row["category"] == "cable"}
    assert Counter(row["part"] for row in rows(out / "cables.csv")) == bought
    lengths = Counter()
    for row in rows(out / "cable-lengths.csv"):
        lengths[row["part"]] += int(row["quantity"])
    assert lengths == bought


def test_a_cable_within_one_rack_runs_the_in_rack_distance(rendered):
    _, instance, _, out, _ = rendered
    d = instance.site.distances
    rack_of = {row["device"]: row["rack"] for row in rows(out / "racks.csv")}
    within = 0
    for cable in rows(out / "cables.csv"):
        ends = [cable["a_device"], *cable["b_device"].split("+")]
        if len({rack_of[end] for end in ends}) == 1:
            within += 1
            assert float(cable["length_m"]) <= d.in_rack_m, cable
    assert within  # every small example has a rack holding a device and its switch


def test_a_cable_between_racks_is_as_long_as_the_floor_puts_its_racks_apart(rendered):
    """cables.csv against racks.csv: a cable between racks is in_rack_m + rack_width_m per position
    + row_pitch_m per row + slack_m, whole metres up (docs/model.md, "Floor plan and cable
    lengths"); in these small designs, within its class's run."""
    _, instance, result, out, _ = rendered
    d = instance.site.distances
    spot, rack_of = {}, {}
    for row in rows(out / "racks.csv"):
        spot[row["rack"]] = (int(row["row"]), int(row["position"]))
        rack_of[row["device"]] = row["rack"]
    run_of = {group.between: group.length_m for group in result.design.links}
    between = 0
    for cable in rows(out / "cables.csv"):
        racks = {rack_of[end] for end in [cable["a_device"], *cable["b_device"].split("+")]}
        if len(racks) > 1:
            between += 1
            apart = max(abs(a[1] - b[1]) * d.rack_width_m + abs(a[0] - b[0]) * d.row_pitch_m
                        for a in map(spot.get, racks) for b in map(spot.get, racks))
            assert float(cable["length_m"]) == math.ceil(d.in_rack_m + apart + d.slack_m), cable
            assert float(cable["length_m"]) <= run_of[cable["link_class"]], cable
    assert between or len(spot) == 1


def _too_long_within_a_rack(cables: list[dict], rack_of: dict[str, str], instance) -> list[str]:
    """The cables whose ends share a rack and whose part is a one-piece cable longer than
    in_rack_m + slack_m (read off the catalog, not the build-out)."""
    catalog = {part.id: part for part in resolve_catalog(instance).catalog.cables}
    limit_m = instance.site.distances.in_rack_m + instance.site.distances.slack_m
    return [f"{cable['id']} {cable['part']}" for cable in cables
            if len({rack_of[end] for end in [cable["a_device"], *cable["b_device"].split("+")]}) == 1
            and catalog[cable["part"]].one_piece and catalog[cable["part"]].max_reach_m > limit_m]


def _coiled_in_the_build_out(fabric, instance) -> list[str]:
    """:func:`_too_long_within_a_rack` over the build-out's assemblies, each at its own part."""
    rack_of = {device.name: device.rack for device in fabric.devices}
    cables = [{"id": bundle.cable_ids[cable], "a_device": ends[0], "b_device": "+".join(ends[1:]),
               "part": fabric.cable_part(bundle, ends).id}
              for bundle in fabric.links for cable, ends in bundle.assembly_ends().items()]
    return _too_long_within_a_rack(cables, rack_of, instance)


def test_no_cable_within_one_rack_is_longer_than_the_rack_allows(rendered):
    """A one-piece cable is as long as its reach: no cables.csv row whose ends share a rack is a
    part longer than in_rack_m + slack_m (the demo's 16 node–leaf breakouts in its first rack are
    3 m DACs, not 30 m AOCs)."""
    _, instance, _, out, _ = rendered
    rack_of = {row["device"]: row["rack"] for row in rows(out / "racks.csv")}
    assert _too_long_within_a_rack(rows(out / "cables.csv"), rack_of, instance) == []


@pytest.mark.parametrize("name", ["llama3-70b-rent-usd", "llama3-70b-buy-usd", "llama3-405b-16k-usd",
                                  "llama3-405b-2k-rows-usd", "frontier-131k"])
def test_the_other_examples_wire_what_they_buy_and_coil_no_cable(name):
    """The same on the bundled examples the rendered fixture leaves out, from the build-out: every
    part is bought as often as the build-out wires it, and no cable is coiled in a rack."""
    written = written_example(f"{name}.yaml")
    instance, design, fabric = written.instance, written.result.design, written.fabric
    assert fabric.warnings == []
    wired, bought = Counter(), Counter()
    for bundle in fabric.links:
        wired.update(fabric.parts_bought(bundle))
    for group in design.links:
        bought.update(dict(group.bought))
    assert +wired == +bought
    assert _coiled_in_the_build_out(fabric, instance) == []
    node_leaf = sorted(fabric.cable_run_m(bundle, ends) for bundle in fabric.links if bundle.between == "node-leaf"
                       for ends in bundle.assembly_ends().values())
    run = next(group.length_m for group in design.links if group.between == "node-leaf")
    assert node_leaf[len(node_leaf) // 2] < run  # lengths from the floor plan: most cables are shorter
    # The floor plan keeps the site's runs in the 70B designs and the 405B (its management leaves
    # sit in the compute racks they serve). frontier-131k's storage leaves (th5, as the compute
    # leaves) share the compute leaves' racks; the one serving the middle nodes, 75 racks of them,
    # has some on both sides of the network rows, so a few node–storage cables pass the 35 m run,
    # none its 50 m kit (docs/model.md, "Floor plan and cable lengths").
    past = {w.split(" cable")[0].split()[-1] for w in fabric.floor_warnings}
    assert past == {"frontier-131k": {"node-storage"}}.get(name, set())
    assert not any("beyond" in w for w in fabric.floor_warnings)
    # Leaves and spines share a rack only where racks of their own would take one more: the 2k
    # rows' 32 leaves and 16 spines, 13 to a rack, fill 4 racks together, 3 + 2 apart.
    shared = [r.name for r in fabric.racks.racks if {"leaf", "spine"} <= {d.role for d in r.devices}]
    assert len(shared) == {"frontier-131k": 1, "llama3-405b-2k-rows-usd": 1}.get(name, 0)


def test_the_demo_buys_its_in_rack_cables_as_dacs():
    """The demo's first rack holds its only compute switch (th4-64x400), its only storage switch
    (tor-32x100), 4 of its 16 nodes and both object-store units. Hand-derived: node–leaf 4 nodes ×
    8 rails / 2 links = 16 breakout DACs (¥60) for 16 breakout AOCs (¥180), node–storage 4 nodes ×
    1 port = 4 100G DACs (¥30) for AOCs (¥60), storage-unit 2 units × ceil(2 ports / 4 legs) = 2
    25G breakout DACs (¥30) for AOCs (¥80): ¥1,920 + ¥120 + ¥100 = ¥2,140 less than buying every
    cable at the 17 m run (¥497,380, the design before in-rack twins and head nodes). The head
    nodes add 2 × ¥9,000, and their 4 management ports (50 in all) two mgmt-48x1g-10g leaves and
    their aggregation pair (4 × ¥510) in place of one mgmt-48x1g-4x10g (¥386), with 4 more cords
    (¥4) and 4 uplink cords (¥6)."""
    result = written_example("llama3-70b-roce-cny.yaml").result
    twins = {g.between: (g.part, g.assemblies, g.in_rack_part, g.in_rack_assemblies) for g in result.design.links}
    assert twins["node-leaf"] == ("200g-qsfpdd-breakout-aoc-30m", 64, "200g-qsfpdd-breakout-dac-3m", 16)
    assert twins["node-storage"] == ("100g-aoc-qsfp28-to-qsfp56-30m", 16, "100g-dac-qsfp28-to-qsfp56-3m", 4)
    assert twins["storage-unit"] == ("25g-breakout-aoc-30m", 2, "25g-breakout-dac-3m", 2)
    heads = 2 * 9_000 + 4 * 510 - 386 + 4 * 4 + 4 * 6
    assert result.cost.total == 497_380 - 16 * (180 - 60) - 4 * (60 - 30) - 2 * (80 - 30) + heads


def test_netbox_cables_run_their_assemblys_length(rendered):
    """Every NetBox cable (one per lane, labelled ``<assembly id>.<lane>``) has its assembly's run
    from cables.csv, the in-rack run included."""
    _, _, _, out, _ = rendered
    run = {cable["id"]: cable["length_m"] for cable in rows(out / "cables.csv")}
    lanes = rows(out / "netbox-cables.csv")
    assert lanes and all(float(lane["length"]) == float(run[lane["label"].rsplit(".", 1)[0]]) for lane in lanes)


@pytest.mark.parametrize("name, most", [("llama3-70b-roce-cny", 4), ("llama3-70b-job-cost-cny", 5),
                                        ("estimate-pinned-h100", 6)])
def test_small_examples_share_racks(name, most):
    """Racks of one model each add a rack per switch model and one for storage to the nodes'
    racks; the nodes' racks have room for those devices (e.g. 4 × 10.3 kW DGX H100 in a 45 kW
    rack leave 3.9 kW, enough for two 1.3 kW switches and a management switch)."""
    design = written_example(f"{name}.yaml").result.design
    assert sum(group.count for group in design.racks) <= most
    assert {group.role for group in design.racks} == {"mixed"}


def test_nodes_and_their_gear_share_two_racks():
    """Four s80 nodes draw over 10.2 kW each: a 40 kW rack holds three, so four take two racks.
    The rest — a compute switch, a storage switch, a management switch and a storage unit, each
    at most 2.6 kW provisioned, 8.1 kW together — fits beside them (at most 30.6 kW of nodes
    where one rack holds three, 20.4 kW where each holds two): two mixed racks, where racks of one
    model each would be 2 + 3 + 1 = 6."""
    design = optimal(tiny(**{"constraints.pins.nodes": 4, "constraints.pins.server": "s80"})).design
    assert [(group.role, group.count) for group in design.racks] in ([("mixed", 2)], [("mixed", 1), ("mixed", 1)])
    assert sum(group.nodes_per_rack * group.count for group in design.racks) == 4


def test_one_rack_runs_in_rack_so_a_short_dac_serves():
    """Two nodes and everything else in one rack: node–leaf runs in_rack_m, 3 m by default (the
    slack is for runs between racks), within the 3 m DAC's reach ($300 against $2,500 for the
    50 m kit)."""
    design = optimal(tiny(**{"constraints.pins.nodes": 2})).design
    assert [(group.role, group.count) for group in design.racks] == [("mixed", 1)]
    node_leaf = next(group for group in design.links if group.between == "node-leaf")
    assert (node_leaf.part, node_leaf.length_m) == ("dac3", 3.0)
    # In a rack whose cables run 4 m, the DAC is too short and the kit is bought.
    long = {"site.distances.in_rack_m": 4, "constraints.pins.nodes": 2}
    node_leaf = next(g for g in optimal(tiny(**long)).design.links if g.between == "node-leaf")
    assert (node_leaf.part, node_leaf.length_m) == ("sr50", 4.0)


def _with_long_aocs() -> dict:
    """The tiny catalog plus two 30 m AOCs cheaper than the parts they could replace: one on the
    DAC's cages ($200 against $300), one on the storage kit's ($400 against $600)."""
    catalog = copy.deepcopy(TINY_CATALOG)
    catalog["cables"] += [
        {"id": "aoc30", "name": "AOC 30 m", "source": "estimate: test fixture", "media": "aoc", "gbps": 400,
         "links": 2, "a_form_factor": "osfp-twin-finned", "a_ends": 1, "b_form_factor": "osfp-flat", "b_ends": 2,
         "max_reach_m": 30, "power_w_per_a_end": 1, "power_w_per_b_end": 1},
        {"id": "q28-aoc30", "name": "100G AOC 30 m", "source": "estimate: test fixture", "media": "aoc", "gbps": 100,
         "a_form_factor": "qsfp28", "b_form_factor": "qsfp28", "max_reach_m": 30,
         "power_w_per_a_end": 1, "power_w_per_b_end": 1},
    ]
    return {"catalog.add": catalog, "catalog.prices": {**TINY_PRICES, "aoc30": 200, "q28-aoc30": 400}}


def test_no_long_one_piece_cable_is_coiled_in_a_rack():
    """A one-piece cable is as long as its reach, so within one rack it may be no longer than
    in_rack_m + slack_m (3 + 2 = 5 m). Two nodes and everything else in one rack: the 3 m DAC
    ($300), not the cheaper 30 m AOC ($200), joins nodes and leaf, and the storage network keeps
    its 100 m kit ($600: its fibre is cut to the run), not the 30 m AOC ($400). Between racks the
    AOCs are the cheapest that reach: four nodes in two racks (17 m runs; the first holds the
    leaf, the management leaf, the object unit and 3 nodes, the second the storage switch and the
    fourth node). The node–storage AOC serves the three nodes away from the storage switch; the
    node beside it is cabled by the in-rack twin, the 100 m kit (no DAC fits those cages). The
    node–leaf AOC's two legs reach two nodes, which the first rack could split from the leaf, so it
    is ruled out there and the kits ($2,500) are bought."""
    one_rack = optimal(tiny(**_with_long_aocs(), **{"constraints.pins.nodes": 2}))
    assert [(group.role, group.count) for group in one_rack.design.racks] == [("mixed", 1)]
    parts = {group.between: group.part for group in one_rack.design.links}
    assert (parts["node-leaf"], parts["node-storage"]) == ("dac3", "q28-sr100")
    assert check_design(tiny(**_with_long_aocs(), **{"constraints.pins.nodes": 2}), one_rack.design) == []
    two_racks = optimal(tiny(**_with_long_aocs(), **{"constraints.pins.nodes": 4, "constraints.pins.server": "s80"}))
    assert sum(group.count for group in two_racks.design.racks) == 2
    bought = {group.between: group.bought for group in two_racks.design.links}
    assert bought["node-leaf"] == [("sr50", 2)]
    assert bought["node-storage"] == [("q28-aoc30", 3), ("q28-sr100", 1)]
    assert bought["storage-unit"] == [("q28-aoc30", 2)]


def test_a_long_one_piece_cable_within_one_rack_is_rejected():
    """The checker applies the rule too: the one-rack design with its DACs swapped for the 30 m
    AOC (same cages, same count) is a cable_reach finding."""
    inst = tiny(**_with_long_aocs(), **{"constraints.pins.nodes": 2})
    design = optimal(inst).design
    links = [g.model_copy(update={"part": "aoc30"}) if g.between == "node-leaf" else g for g in design.links]
    found = [str(v) for v in check_design(inst, design.model_copy(update={"links": links}))]
    assert any("cable_reach: node-leaf links (aoc30): a 30 m cable within one rack, longer than 5 m" in v
               for v in found), found


@pytest.mark.parametrize("change, finding", [
    ({"in_rack_part": None, "in_rack_assemblies": 0}, "a 30 m cable within one rack, longer than 5 m"),
    ({"in_rack_assemblies": 2}, "2 assemblies bought as q28-sr100 within one rack; the racks put 1 there"),
    ({"in_rack_part": "cat6"}, "in-rack part cat6 does not fit the same cages with the same links as q28-aoc30"),
])
def test_in_rack_cables_the_racks_do_not_give_are_rejected(change, finding):
    """The checker counts the in-rack twins from the racks: on the two-rack design above, the
    node beside the storage switch without its twin (the 30 m AOC coiled), twins miscounted, or a
    twin of other cages, are cable_reach findings."""
    inst = tiny(**_with_long_aocs(), **{"constraints.pins.nodes": 4, "constraints.pins.server": "s80"})
    design = optimal(inst).design
    assert check_design(inst, design) == []
    links = [g.model_copy(update=change) if g.between == "node-storage" else g for g in design.links]
    found = [str(v) for v in check_design(inst, design.model_copy(update={"links": links}))]
    assert any(f"cable_reach: node-storage links (q28-aoc30): {finding}" in v for v in found), found


def test_a_run_the_racks_do_not_give_is_rejected():
    """The checker recomputes each run from the racks: an in-rack run on a design whose nodes and
    leaf sit in different racks is a cable_reach finding."""
    inst = tiny(**{"constraints.pins.nodes": 4, "constraints.pins.server": "s80"})
    design = optimal(inst).design
    node_leaf = next(i for i, g in enumerate(design.links) if g.between == "node-leaf")
    links = [g.model_copy(update={"length_m": 5.0}) if i == node_leaf else g for i, g in enumerate(design.links)]
    found = [str(v) for v in check_design(inst, design.model_copy(update={"links": links}))]
    assert any("cable_reach: node-leaf links: length 5 m recorded, the site gives 17 m" in v for v in found), found


def test_racks_of_one_model_each_in_one_row_run_their_uplinks_along_the_row():
    """27 pinned s80 nodes on a 2-tier fabric take 13 racks of one model each. Without a row size
    only mixed racks share a row, and the management uplinks run across rows (50 + 2 m); with
    ``racks_per_row`` 13 the racks stand in one row and they run in_row_m + slack (15 + 2 m) at no
    higher cost. The checker recomputes the run from the racks: with 12 per row they span rows,
    and 17 m is short of the 24 m the site's floor of 40 racks spans (ceil(40 / 12) + 2 = 6 rows:
    3 + 11 × 0.6 + 5 × 2.4 + 2 = 23.6 m, whole metres up), the run of a class across rows."""
    pins = {"constraints.pins.server": "s80", "constraints.pins.nodes": 27, "constraints.pins.tiers": 2,
            "constraints.pins.nics_per_node": 1}
    apart = optimal(tiny(**pins))
    in_row = tiny(**pins, **{"site.distances.racks_per_row": 13})
    together = optimal(in_row)
    assert sum(g.count for g in together.design.racks) == 13
    assert [g.length_m for r in (apart, together) for g in r.design.links if g.between == "mgmt-uplink"] == [52.0, 17.0]
    assert together.cost.total <= apart.cost.total
    assert check_design(in_row, together.design) == []
    found = [str(v) for v in check_design(tiny(**pins, **{"site.distances.racks_per_row": 12}), together.design)]
    assert any("cable_reach: mgmt-uplink links: length 17 m recorded, the site gives 24 m" in v for v in found), found


def test_mixed_racks_stay_within_the_rows_size():
    """20 pinned s80 nodes fill seven mixed racks; with rows of two racks the design takes no mixed
    racks beyond a row, so its racks span rows and the management uplinks run across them: 50 + 2 m,
    capped by the floor of the site's 30 racks (ceil(30 / 2) + 2 = 17 rows: 3 + 0.6 + 16 × 2.4 + 2
    = 44 m)."""
    pins = {"constraints.pins.server": "s80", "constraints.pins.nodes": 20, "constraints.pins.tiers": 2,
            "constraints.pins.nics_per_node": 1}
    assert {g.role for g in optimal(tiny(**pins)).design.racks} == {"mixed"}
    inst = tiny(**pins, **{"site.distances.racks_per_row": 2, "site.max_racks": 30})
    design = optimal(inst).design
    assert "mixed" not in {g.role for g in design.racks} and sum(g.count for g in design.racks) > 2
    assert [g.length_m for g in design.links if g.between == "mgmt-uplink"] == [44.0]
    assert check_design(inst, design) == []


def _with_liquid_racks_only() -> dict:
    catalog = copy.deepcopy(TINY_CATALOG)
    catalog["racks"] = [{"id": "l80", "name": "80 kW liquid rack", "source": "estimate: test fixture",
                         "power_kw": 80, "rack_units": 42, "cooling": "liquid"}]
    return {"catalog.add": catalog, "catalog.prices.l80": 8_000, "catalog.prices.r40": None}


def test_air_cooled_servers_are_not_racked_in_liquid_racks():
    result = infeasible(tiny(**_with_liquid_racks_only()))
    assert "rack_power_within_limit" in conflict(result)


def _with_liquid_servers() -> dict:
    catalog = copy.deepcopy(TINY_CATALOG)
    for server in catalog["servers"]:
        server["cooling"] = "liquid"
    catalog["racks"].append({"id": "l80", "name": "80 kW liquid rack", "source": "estimate: test fixture",
                             "power_kw": 80, "rack_units": 42, "cooling": "liquid"})
    return {"catalog.add": catalog, "catalog.prices.l80": 8_000}


def test_liquid_cooled_servers_sit_in_liquid_racks_beside_air_cooled_network_racks():
    """Network and storage racks take a class of their own (docs/model.md, "Racks and power"):
    liquid-cooled nodes go in the liquid class, the air-cooled switches and the storage units in
    the air-cooled one, and the checker accepts the two classes."""
    inst = tiny(**_with_liquid_servers())
    design = optimal(inst).design
    classes = {g.role: g.rack_class for g in design.racks}
    assert classes["compute"] == "l80" and classes["network"] == "r40", design.racks
    assert check_design(inst, design) == []


def test_each_rack_class_brings_its_own_pdus_onto_the_management_network():
    """Liquid racks with 4 PDUs beside air network and storage racks with 2: the management
    network serves every rack's PDUs at its class's count, and the build-out racks them so."""
    overrides = _with_liquid_servers()
    overrides["catalog.add"]["racks"][-1]["pdus"] = 4
    inst = tiny(**overrides, **{"constraints.pins.server": "s80", "constraints.pins.nodes": 27,
                                "constraints.pins.tiers": 2, "constraints.pins.nics_per_node": 1})
    design = optimal(inst).design
    pdus = {"l80": 4, "r40": 2}
    by_class = Counter()
    for g in design.racks:
        by_class[g.rack_class] += g.count
    assert set(by_class) == {"l80", "r40"}
    fabric = build_fabric(design, inst)
    assert len(fabric.pdus) == sum(count * pdus[c] for c, count in by_class.items())
    assert check_design(inst, design) == []
    # Recorded as if every rack had 2 PDUs: the checker counts the liquid racks' 4 each.
    two_each = design.management_network.ports - 2 * by_class["l80"]
    tampered = design.management_network.model_copy(update={"ports": two_each})
    found = [str(v) for v in check_design(inst, design.model_copy(update={"management_network": tampered}))]
    assert any(f"{by_class['l80']} × l80 rack × 4 + {by_class['r40']} × r40 rack × 2" in v for v in found), found


def test_ownership_charges_each_device_the_pue_of_its_racks_cooling():
    """Liquid-cooled nodes at the liquid PUE, the air-cooled network and storage racks at the air
    PUE: the reported PUE is their power-weighted mean, and the checker recomputes it."""
    pue = {"air": 1.5, "rear_door": 1.35, "liquid": 1.1}
    operation = {"months": 36, "electricity_price_per_kwh": 0.08, "average_load": 0.8, "pue": pue,
                 "facility_per_rack_per_month": 1000}
    inst = tiny(**_with_liquid_servers(), **{"site.operation": operation})
    result = optimal(inst)
    owned, design = result.cost.ownership, result.design
    compute = next(g for g in design.racks if g.role == "compute")  # its fullest rack's power
    node_kw = design.nodes * compute.power_kw / min(compute.nodes_per_rack, design.nodes)
    expected = (node_kw * pue["liquid"] + (owned.it_power_kw - node_kw) * pue["air"]) / owned.it_power_kw
    assert pue["liquid"] < owned.pue < pue["air"]
    assert owned.pue == pytest.approx(expected, rel=1e-3)
    assert check_design(inst, design, result.cost) == []


def test_liquid_cooled_servers_with_only_liquid_racks_are_explained_by_the_switches_cooling():
    """With the site's racks all liquid-cooled, the air-cooled management switches every design has
    find no rack, and the explanation says so rather than only listing powers."""
    result = infeasible(tiny(**_with_liquid_servers(), **{"site.rack_classes": ["l80"]}))
    item = next(item for item in result.explanation.conflict if item.family == "rack_power_within_limit")
    assert "l80 80 kW/42U liquid" in item.detail, item.detail
    assert "management switches allowed are air-cooled" in item.detail, item.detail


def test_liquid_cooled_servers_pinned_to_an_air_rack_class_are_explained_by_their_cooling():
    """The pin fixes the nodes' class only: the explanation lists the classes it leaves the nodes
    (not the liquid one) and names the cooling that rules them out."""
    result = infeasible(tiny(**_with_liquid_servers(), **{"constraints.pins.rack_class": "r40"}))
    item = next(item for item in result.explanation.conflict if item.family == "rack_power_within_limit")
    assert "l80" not in item.detail, item.detail
    assert "servers allowed are liquid-cooled, their allowed rack classes air-cooled" in item.detail, item.detail


def test_switches_in_liquid_mixed_racks_are_rejected_whatever_other_groups_say():
    """Mixed racks hold the switches: an air-cooled switch in a liquid mixed rack is a finding even
    beside an empty network rack group of an air class."""
    pins = {"constraints.pins.server": "s80", "constraints.pins.nodes": 6, "constraints.pins.tiers": 2,
            "constraints.pins.nics_per_node": 1}
    design = optimal(tiny(**pins)).design
    assert {g.role for g in design.racks} == {"mixed"}
    liquid = [g.model_copy(update={"rack_class": "l80"}) for g in design.racks]
    empty = liquid[0].model_copy(update={"rack_class": "r40", "role": "network", "count": 0, "nodes_per_rack": 0,
                                         "power_kw": 0.0, "holds": {}})
    found = [str(v) for v in check_design(tiny(**pins, **_with_liquid_servers()),
                                          design.model_copy(update={"racks": liquid + [empty]}))]
    assert any("in l80: air-cooled, the rack class is liquid-cooled" in v for v in found), found


def _with_liquid_storage() -> dict:
    catalog = copy.deepcopy(TINY_CATALOG)
    for tier in catalog["storage"]:
        tier["cooling"] = "liquid"
    return {"catalog.add": catalog}


def test_liquid_cooled_storage_units_need_a_liquid_class_for_their_racks():
    """Storage units sit in the network and storage racks' class, which must cool them: with an
    air-cooled class only, liquid units find no rack, and the checker rejects them in an air rack."""
    design = optimal(tiny(**{"constraints.pins.nodes": 1})).design
    liquid = tiny(**{"constraints.pins.nodes": 1}, **_with_liquid_storage())
    assert "rack_power_within_limit" in conflict(infeasible(liquid))
    found = [str(v) for v in check_design(liquid, design)]
    assert any(f"{design.storage.tier} in r40: liquid-cooled, the rack class is air-cooled" in v for v in found), found


def test_a_design_with_two_classes_for_its_network_racks_is_rejected():
    """The network and storage racks share one class: a design recording two is a racks_available
    finding."""
    inst = tiny(**{"constraints.pins.nodes": 27, "constraints.pins.server": "s80", **_with_liquid_servers()})
    design = optimal(inst).design
    network = [i for i, g in enumerate(design.racks) if g.role == "network"]
    racks = [g.model_copy(update={"rack_class": "r40" if g.rack_class != "r40" else "l80"}) if i == network[0] else g
             for i, g in enumerate(design.racks)]
    found = [str(v) for v in check_design(inst, design.model_copy(update={"racks": racks}))]
    assert any("rack classes for the network and storage racks" in v for v in found), found


def test_the_checker_rejects_an_air_cooled_server_in_a_liquid_rack():
    design = optimal(tiny(**{"constraints.pins.nodes": 1})).design
    racks = [g.model_copy(update={"rack_class": "l80"}) for g in design.racks]
    found = [str(v) for v in check_design(tiny(**_with_liquid_racks_only()), design.model_copy(update={"racks": racks}))]
    assert f"rack_power_within_limit: {design.server} in l80: air-cooled, the rack class is liquid-cooled" in found, found


@given(instance_data(objective="min_cost", loose=True))
def test_generated_designs_buy_what_the_build_out_wires(data):
    """On generated instances too, the build-out wires exactly the assemblies the design buys,
    part by part: no cage left part-filled, no kit bought that nobody cables."""
    instance = build(data)
    result = topoopt.solve(instance, explain=False)
    if result.design is None:
        event(result.status)
        return
    fabric = build_fabric(result.design, instance)
    assert fabric.warnings == []
    wired, bought = Counter(), Counter()
    for bundle in fabric.links:
        wired[bundle.part.id] += bundle.assemblies
    for group in result.design.links:
        bought[group.part] += group.assemblies
    assert wired == bought
    event(f"{len(result.design.links)} link classes")


@given(instance_data(objective="min_cost", loose=True))
def test_generated_designs_coil_no_cable_in_a_rack(data):
    """On generated instances, no cable whose ends share a rack is longer than the rack allows,
    and the build-out runs within one rack exactly the in-rack assemblies the design buys."""
    instance = build(data)
    result = topoopt.solve(instance, explain=False)
    if result.design is None:
        event(result.status)
        return
    fabric = build_fabric(result.design, instance)
    for bundle in fabric.links:
        group = result.design.links[bundle.group]
        in_rack = fabric.parts_bought(bundle)[group.in_rack_part] if group.in_rack_part else 0
        assert in_rack == group.in_rack_assemblies
    assert _coiled_in_the_build_out(fabric, instance) == []
    event("in-rack twins" if any(g.in_rack_part for g in result.design.links) else "no in-rack twin")


def test_storage_and_management_cables_in_one_rack_are_bought_for_the_rack():
    """The video example without its head nodes fits one rack (their 2.2 kW take it to a second):
    its storage units' cables run in_rack_m (3 m), within the 3 m QSFP28 DAC's reach ($100), where
    a run in the row (17 m) would take the 30 m AOC ($250); the management cords run 3 m too.
    Placement picks the storage and management parts as it picks the compute ones."""
    instance = load_instance(REPO / "instances" / "video-storage-bound.yaml").instance
    design = topoopt.solve(instance.with_changes({"site.head_nodes": 0}), explain=False).design
    assert [(group.role, group.count) for group in design.racks] == [("mixed", 1)]
    runs = {group.between: (group.part, group.length_m) for group in design.links if group.network != "compute"}
    assert runs["storage-unit"] == ("100g-dac-qsfp28-to-qsfp112-3m", 3.0)
    assert runs["mgmt"][1] == 3.0


def _twin_kit(part_id: str, media: str, reach_m: int) -> dict:
    """A 400G twin-port kit between the tiny catalog's sw64 cages."""
    return {"id": part_id, "name": f"Twin kit {reach_m} m", "source": "estimate: test fixture", "media": media,
            "gbps": 400, "links": 2, "a_form_factor": "osfp-twin-finned", "a_ends": 1,
            "b_form_factor": "osfp-twin-finned", "b_ends": 1, "max_reach_m": reach_m,
            "power_w_per_a_end": 17, "power_w_per_b_end": 17}


def _far_rows(per_row: int | None, *kits: dict, **changes):
    """64 pinned s80 nodes × 8 rails on a 2-tier sw64 fabric, across rows 95 m (+ 2 m slack), with
    a 500 m twin kit at $3,000 (and ``kits``) beside the tiny catalog's 50 m twin kit at $2,000."""
    catalog = copy.deepcopy(TINY_CATALOG)
    catalog["cables"] += [_twin_kit("sw-dr500", "smf", 500), *kits]
    rows = {} if per_row is None else {"site.distances.racks_per_row": per_row}
    return tiny(**{"constraints.pins.server": "s80", "constraints.pins.nodes": 64, "constraints.pins.tiers": 2,
                   "constraints.pins.nics_per_node": 8, "catalog.add": catalog, "catalog.prices.sw-dr500": 3_000,
                   "site.distances.across_rows_m": 95, "site.max_racks": 60, **rows, **changes})


def test_a_floor_of_few_rows_runs_its_leaf_spine_links_on_short_optics():
    """512 node ports at 32 down / 32 up: 16 leaves, 8 spines and 256 twin leaf–spine kits, in 27
    racks. Without a row size the kits run across rows, 97 m: the 500 m kit. With rows of 4 the
    floor has at most ceil(27 / 4) + 2 = 9 rows, so no two racks stand farther apart than
    3 + 3 × 0.6 + 8 × 2.4 + 2 = 26 m: the 50 m kit, $256,000 less (256 × $1,000), and every
    placed leaf–spine cable within 26 m. With rows of 1, 29 rows: 3 + 28 × 2.4 + 2 = 72.2 → 73 m,
    past 50: the 500 m kit again; the checker recomputes the floor from the racks."""
    found = {}
    for per_row in (None, 4, 1):
        instance = _far_rows(per_row)
        result = optimal(instance)
        (group,) = [g for g in result.design.links if g.between == "leaf-spine"]
        assert sum(g.count for g in result.design.racks) == 27 and group.assemblies == 256
        assert check_design(instance, result.design) == []
        found[per_row] = (group.length_m, dict(group.bought), result.cost.total)
    assert [found[p][:2] for p in (None, 4, 1)] == [(97.0, {"sw-dr500": 256}), (26.0, {"sw-sr50": 256}),
                                                    (73.0, {"sw-dr500": 256})]
    assert found[None][2] - found[4][2] == 256 * 1_000 and found[1][2] == found[None][2]
    design = optimal(_far_rows(4)).design
    fabric = build_fabric(design, _far_rows(4))
    placed = [fabric.cable_run_m(b, ends) for b in fabric.links if b.between == "leaf-spine"
              for ends in b.assembly_ends().values()]
    assert len(placed) == 256 and max(placed) <= 26 and fabric.floor_warnings == []
    found_rows_1 = [str(v) for v in check_design(_far_rows(1), design)]
    assert any("cable_reach: leaf-spine links: length 26 m recorded, the site gives 73 m" in v for v in found_rows_1), \
        found_rows_1


def test_a_rack_limit_is_raised_only_to_a_count_whose_floor_the_parts_reach():
    """The 64-node design of the test above, in rows of 4, needs 27 racks. With a twin kit of 20 m
    at $1,500 and ``max_racks: 14`` every run is capped by the floor of 14 racks, 6 rows:
    3 + 3 × 0.6 + 5 × 2.4 + 2 = 18.8 → 19 m, which the 20 m kit reaches; the budget buys 27 racks
    with it (256 × $500 below the 50 m kit's design). But 27 racks stand on 9 rows (26 m), past
    the 20 m kit (it serves at most 4 × (6 − 2) = 16 racks), so at ``max_racks: 27`` the design
    needs the 50 m kit and the budget falls $128,000 short: raising the rack limit alone is not
    enough, and the explanation must not offer it."""
    def far_rows(**changes):
        return _far_rows(4, _twin_kit("sw-sr20", "mmf", 20), **{"catalog.prices.sw-sr20": 1_500, **changes})
    cost_50m = optimal(far_rows()).cost.total
    budget = {"budget.max": cost_50m - 256 * 500}
    result = infeasible(far_rows(**{"site.max_racks": 14, **budget}))
    assert "racks_available" in conflict(result)
    (racks,) = [r for r in result.explanation.relaxations if r.family == "racks_available"]
    assert racks.value is None and racks.message == "relaxing racks_available alone is not enough", racks
    assert topoopt.solve(far_rows(**{"site.max_racks": 27, **budget}), explain=False).status == "infeasible"
