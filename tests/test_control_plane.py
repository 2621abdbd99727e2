"""The control plane: the head nodes a cluster buys, racks, powers and manages
(docs/model.md, "Control plane")."""

from __future__ import annotations

import copy

import pytest
from example_outputs import written_example
from solver_fixtures import SRC, TINY_CATALOG, TINY_PRICES, optimal, tiny

from topoopt.checker import check_design
from topoopt.fabric import build_fabric
from topoopt.fabric.devices import Device
from topoopt.fabric.management import heads_apart
from topoopt.references import check_references

HEAD = {"id": "hd", "name": "Head node", "source": SRC, "power_w": 1100, "rack_units": 2}
DEAR_HEAD = {**HEAD, "id": "hd-dear", "power_w": 500, "rack_units": 1}


def with_heads(*heads: dict, **changes):
    """The tiny instance with head models (hd at $20,000, hd-dear at $30,000) in its catalog."""
    catalog = copy.deepcopy(TINY_CATALOG)
    catalog["control"] = list(heads)
    prices = {**TINY_PRICES, "hd": 20_000, "hd-dear": 30_000}
    return tiny(**{"catalog.add": catalog, "catalog.prices": prices, **changes})


PINNED = {"constraints.pins.server": "s80", "constraints.pins.nodes": 8}


def test_a_cluster_buys_the_reference_pair_of_the_least_priced_head_model():
    """8 pinned nodes, site.head_nodes unset: 2 × hd (not the dearer hd-dear, though it draws less).
    Against the same instance with ``head_nodes: 0`` (3 mixed r40 racks, the first with the switches
    and the storage unit at 34.313 kW): 2 × (1 in-band + 1 BMC) = 4 more management ports, still
    one m48 leaf; both head nodes in that first rack, 34.313 + 2 × 1.1 = 36.513 kW ≤ 40 kW; cost
    2 × $20,000 + 4 cat6 cords × $5 = $40,020 more."""
    base = optimal(with_heads(HEAD, DEAR_HEAD, **PINNED, **{"site.head_nodes": 0}))
    inst = with_heads(HEAD, DEAR_HEAD, **PINNED)
    result = optimal(inst)
    design, without = result.design, base.design
    assert (design.head_nodes.model, design.head_nodes.count) == ("hd", 2)
    assert design.management_network.ports == without.management_network.ports + 4
    assert result.cost.total == base.cost.total + 40_020
    line = next(x for x in result.cost.breakdown if x.item == "hd")
    assert (line.category, line.quantity, line.total) == ("server", 2, 40_000)
    first, first_before = design.racks[0], without.racks[0]
    assert first.holds == {**first_before.holds, "hd": 2}
    assert first.power_kw == pytest.approx(first_before.power_kw + 2.2, abs=2e-3)
    assert [g.count for g in design.racks] == [g.count for g in without.racks]
    assert check_design(inst, design, result.cost) == []
    fabric = build_fabric(design, inst)
    heads = [d for d in fabric.devices if d.role == "head"]
    assert [d.name for d in heads] == ["head01", "head02"] and all(d.rack for d in heads)
    managed = {b for bundle in fabric.links if bundle.between == "mgmt" for b in bundle.b_device}
    assert {"head01", "head02"} <= managed
    assert fabric.warnings == []


def test_a_single_node_manages_itself_unless_head_nodes_are_asked_for():
    one = {"constraints.pins.nodes": 1, "constraints.pins.server": "s80", "goal.deadline_days": None}
    assert optimal(with_heads(HEAD, **one)).design.head_nodes is None
    inst = with_heads(HEAD, **one, **{"site.head_nodes": 1})
    result = optimal(inst)
    assert (result.design.head_nodes.model, result.design.head_nodes.count) == ("hd", 1)
    assert check_design(inst, result.design, result.cost) == []


def test_the_checker_rejects_head_nodes_the_instance_does_not_ask_for():
    inst = with_heads(HEAD, DEAR_HEAD, **PINNED)
    design = optimal(inst).design
    for heads, fragment in (({"count": 3}, "3 × hd recorded; the instance asks for 2 × hd"),
                            ({"model": "hd-dear"}, "2 × hd-dear recorded; the instance asks for 2 × hd")):
        tampered = design.model_copy(update={"head_nodes": design.head_nodes.model_copy(update=heads)})
        found = [str(v) for v in check_design(inst, tampered)]
        assert any(fragment in v for v in found), found
    # Dropped from the design: the head nodes' line, racks and management ports go with them.
    found = {v.family for v in check_design(inst, design.model_copy(update={"head_nodes": None}))}
    assert {"head_nodes_built", "racks_available", "management_ports_cover"} <= found


def test_asking_for_head_nodes_without_a_head_model_is_an_instance_error():
    problems = check_references(tiny(**{"site.head_nodes": 2}))
    assert [path for path, _ in problems] == [("site", "head_nodes")]
    assert "prices no head model" in problems[0][1]


@pytest.mark.parametrize("name", ["llama3-70b-roce-cny", "llama2-7b-finetune-8gpu"])
def test_examples_buy_head_nodes_for_clusters_only(name):
    design = written_example(f"{name}.yaml").result.design  # the session's solve (example_outputs.py)
    if design.nodes > 1:
        assert (design.head_nodes.model, design.head_nodes.count) == ("head-node-2u", 2)
    else:
        assert design.head_nodes is None


def test_an_infiniband_fabric_past_the_embedded_subnet_manager_says_its_fabric_manager_is_not_bought():
    """4 DGX H100 on 8 NDR rails and 12 qm9700: 44 InfiniBand nodes, within the 2,048 a switch's
    subnet manager serves; recorded with 256 nodes: 256 × 8 + 12 = 2,060, past it; with its 4
    storage-unit ports converged on the fabric, 2,064."""
    from checker_fixtures import base_design

    from topoopt.cli.summary import subnet_manager_line

    design = base_design()
    assert subnet_manager_line(design) == []
    big = design.model_copy(update={"nodes": 256})
    (line,) = subnet_manager_line(big)
    assert "fabric manager (UFM servers) for 2,060 InfiniBand nodes" in line
    converged = big.storage_network.model_copy(update={"mode": "converged"})
    (line,) = subnet_manager_line(big.model_copy(update={"storage_network": converged}))
    assert "for 2,064 InfiniBand nodes" in line


def test_a_head_model_no_allowed_rack_cools_is_passed_over():
    """The cheaper hd is liquid-cooled and the tiny catalog's one rack class (r40) is air-cooled:
    the design takes the dearer air-cooled hd-dear, on both sides of the checker line."""
    inst = with_heads({**HEAD, "cooling": "liquid"}, DEAR_HEAD, **PINNED)
    result = optimal(inst)
    assert (result.design.head_nodes.model, result.design.head_nodes.count) == ("hd-dear", 2)
    assert check_design(inst, result.design, result.cost) == []


def test_a_head_node_id_must_not_be_another_items():
    inst = with_heads({**HEAD, "id": "s80"}, **{"catalog.prices": TINY_PRICES})
    problems = check_references(inst)
    assert [path for path, _ in problems] == [("catalog", "add", "control", 0, "id")]
    assert "already the id of another catalog item" in problems[0][1]


def test_the_bill_of_a_design_without_a_cost_counts_the_head_nodes():
    from topoopt.fabric.export import _counts

    inst = with_heads(HEAD, **PINNED)
    fabric = build_fabric(optimal(inst).design, inst)
    assert ("server", "hd", 2) in _counts(fabric)


def test_rack_and_power_explanations_name_the_head_nodes_beside_the_nodes():
    from topoopt.options.problem import Problem
    from topoopt.solver.explain.detail import racks_available, site_power_within_limit

    problem = Problem.of(with_heads(HEAD, **PINNED, **{"site.power_cap_kw": 50}))
    heads = "beside the nodes, 2 × hd head nodes (site.head_nodes) at 1,100 W and 2U each"
    assert racks_available(problem, 8).endswith(heads)
    assert site_power_within_limit(problem, 8) == f"site power cap 50 kW; {heads}"
    assert heads not in racks_available(problem, 1)  # a single node has none


P27 = {"constraints.pins.server": "s80", "constraints.pins.nodes": 27, "constraints.pins.tiers": 2,
       "constraints.pins.nics_per_node": 1}


def test_beyond_mixed_racks_head_nodes_share_the_last_rack_of_a_model_that_has_room():
    """27 nodes take 9 compute racks and racks of one model each (two of them also hold the 2 m48
    management leaves; the m48 aggregation pair keeps a rack): the 4.488 kW rack of the compute
    switches has room for 2 × 1.1 kW, so the head nodes add no rack: 13 racks either way, and
    2 × $20,000 + 4 cords × $5 = $40,020 more. Three 19 kW head nodes (57 kW) fit no 40 kW rack
    beside anything: 2 racks of their own (2 per rack)."""
    base = optimal(with_heads(HEAD, **P27, **{"site.head_nodes": 0}))
    inst = with_heads(HEAD, **P27)
    result = optimal(inst)
    racks = result.design.racks
    assert sum(g.count for g in racks) == sum(g.count for g in base.design.racks) == 13
    assert result.cost.total == base.cost.total + 40_020
    (host,) = [g for g in racks if g.holds and g.role != "compute"]
    assert next(g for g in racks if g.role == "compute").holds == {"m48": 2}
    before = next(g for g in base.design.racks if g.role == host.role and g.power_kw == pytest.approx(host.power_kw - 2.2))
    assert host.holds == {"hd": 2} and host.count == before.count
    assert check_design(inst, result.design, result.cost) == []
    fabric = build_fabric(result.design, inst)
    assert fabric.warnings == [] and len({d.rack for d in fabric.heads}) == 1
    # Recorded in a rack that cannot take them, or beside other devices: rejected.
    crowded = [g.model_copy(update={"holds": {"hd": 2}}) if g.role == "compute" else
               g.model_copy(update={"holds": {}}) for g in racks]
    found = {v.family for v in check_design(inst, result.design.model_copy(update={"racks": crowded}))}
    assert "racks_available" in found
    heavy = with_heads({**HEAD, "power_w": 19_000}, **P27, **{"site.head_nodes": 3})
    result = optimal(heavy)
    own = [g for g in result.design.racks if g.role == "network" and g.power_kw == pytest.approx(38.0)]
    assert not any(g.holds for g in result.design.racks if g.role != "compute") and [g.count for g in own] == [2]
    assert check_design(heavy, result.design, result.cost) == []


def _order(spec: str) -> list[Device]:
    """Devices from ``"name:ports …"``; a name starting with ``h`` is a head node."""
    return [Device(name=name, role="head" if name.startswith("h") else "node", model=ports, rack_units=1,
                   power_w=0.0, ports=int(ports))
            for name, ports in (item.split(":") for item in spec.split())]


@pytest.mark.parametrize("spec, leaf_ports, expected", [
    # Ports x 0–1, y 2–3, z 4, h1 5–6, h2 7–8: both on the second leaf of 5 ports (5–9); h2
    # moves to the latest place ending on the first, before y (2–3), and h1 stays on the second.
    ("x:2 y:2 z:1 h1:2 h2:2 w:1", 5, "x h2 y z h1 w"),
    # Both on the first leaf of 4 ports (0–3): h2 moves to the first place starting at 4, before y.
    ("h1:2 h2:2 x:2 y:2", 4, "h1 x h2 y"),
    # In band (a head's first port) on the first leaf both, h2's out-of-band port on the second:
    # h2 moves after x, to 5–6 (the last place; the other devices fill exactly one leaf).
    ("a:1 h1:2 h2:2 x:2", 4, "a h1 x h2"),
    ("h1:2 h2:2 x:3", 4, "h1 x h2"),
    # Already apart in band (h1's port 3 on the first leaf, h2's 5 on the second), and one leaf
    # only: no move.
    ("a:1 b:2 h1:2 h2:2 c:1", 4, "a b h1 h2 c"),
    ("h1:2 h2:2 x:1", 5, "h1 h2 x"),
])
def test_head_nodes_take_two_management_leaves(spec, leaf_ports, expected):
    """An HA pair of head nodes reached in band through one management switch fails with it: the
    build-out deals the second to the neighbouring leaf (fabric/management.py, heads_apart)."""
    order = heads_apart(_order(spec), lambda device: int(device.model), leaf_ports)
    assert " ".join(device.name for device in order) == expected


@pytest.mark.parametrize("name", ["llama3-70b-roce-cny", "llama3-405b-16k-usd", "llama3-405b-2k-rows-usd"])
def test_the_examples_head_nodes_hang_off_two_management_leaves(name):
    fabric = written_example(f"{name}.yaml").fabric
    leaves = {a for bundle in fabric.links if bundle.between == "mgmt"
              for a, b, port in zip(bundle.a_device, bundle.b_device, bundle.b_port) if b.startswith("head")
              and port == "mgmt"}  # in band
    assert len(fabric.heads) == 2 and len(leaves) == 2, leaves
