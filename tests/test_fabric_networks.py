"""The storage and management networks of hand-built designs: ports, order, uplinks, errors, exports."""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict

import fabric_designs as fd
import pytest
from fabric_invariants import check_all

from topoopt.fabric import FabricError, write_outputs
from topoopt.fabric import build_fabric as _build_fabric
from topoopt.fabric import fabric_graph as _fabric_graph
from topoopt.fabric.draw import CLASS_COLOUR, NETWORK_NAME, fabric_dot
from topoopt.fabric.slurm import topology_conf

CATALOG = fd.CATALOG


def build_fabric(design):
    return _build_fabric(design, catalog=CATALOG)


def fabric_graph(design):
    return _fabric_graph(design, catalog=CATALOG)


def links_of(graph, link_class: str) -> list[dict]:
    return [a for _, _, a in graph.edges(data=True) if a["link_class"] == link_class]


def ports_on(graph, switch: str, link_class: str) -> list[str]:
    return [a["a_port"] for a in links_of(graph, link_class) if a["a_device"] == switch]


def test_every_node_reaches_the_storage_leaves_on_all_its_storage_ports():
    graph = fabric_graph(fd.two_tier_32_dgx())
    per_node = defaultdict(list)
    for link in links_of(graph, "node-storage"):
        per_node[link["b_device"]].append(link["b_port"])
    assert len(per_node) == 32
    assert {tuple(sorted(ports)) for ports in per_node.values()} == {("snic1/1", "snic1/2", "snic2/1", "snic2/2")}
    # Leaves fill in order: 64 ports = 16 nodes each on sleaf-01 and sleaf-02; sleaf-03 has the units.
    leaves = Counter(link["a_device"] for link in links_of(graph, "node-storage"))
    assert leaves == {"sleaf-01": 64, "sleaf-02": 64}
    units = {(link["a_device"], link["b_device"]) for link in links_of(graph, "storage-unit")}
    assert units == {("sleaf-03", "storage-01"), ("sleaf-03", "storage-02")}


def test_each_link_group_starts_on_a_fresh_cage():
    """One 200G storage switch (4 ports per cage): each of the node's 4 storage ports takes a 4-way
    splitter in cages 1-4 (a splitter joins one port index of up to 4 nodes), the hot unit's 4
    ports cage 5 and the cold unit's 2 half of cage 6 — never two parts or two keys in one cage."""
    graph = fabric_graph(fd.one_tier_8_gpu())
    node = sorted((link["a_port"], link["b_port"]) for link in links_of(graph, "node-storage"))
    # Cabled port-major (port 1 of every NIC first): snic1/1, snic2/1, snic1/2, snic2/2.
    assert node == [("p1/1", "snic1/1"), ("p2/1", "snic2/1"), ("p3/1", "snic1/2"), ("p4/1", "snic2/2")]
    by_unit = defaultdict(list)
    for link in links_of(graph, "storage-unit"):
        by_unit[link["b_device"]].append((link["a_port"], link["b_port"], link["part"]))
    assert sorted(by_unit["storage-01"]) == [(f"p5/{i}", f"data{i}", "ndr200-dr4-splitter-kit-qsfp112-50m")
                                             for i in range(1, 5)]
    assert sorted(by_unit["cold-01"]) == [(f"p6/{i}", f"data{i}", "test-200g-twin-to-4x-qsfp56-aoc-30m")
                                          for i in range(1, 3)]
    cables = {link["cable"] for link in links_of(graph, "storage-unit")}
    assert cables == {"SU-01", "CU-01"}


def test_a_splitter_joins_one_storage_port_of_consecutive_nodes():
    graph = fabric_graph(fd.two_tier_32_dgx())
    per_cable = defaultdict(list)
    for link in links_of(graph, "node-storage"):
        per_cable[link["cable"]].append((link["b_device"], link["b_port"]))
    assert len(per_cable) == 32
    for ends in per_cable.values():
        assert len(ends) == 4 and len({port for _, port in ends}) == 1 and len({node for node, _ in ends}) == 4


def test_storage_leaves_reach_every_storage_spine_on_their_top_cages():
    """qm9700 at 200G: 128 ports, 64 down (cages 1-16) and 64 up (cages 17-32); 2 spines × 32 links;
    the kits of one (spine, leaf) pair never reach another leaf."""
    graph = fabric_graph(fd.two_tier_32_dgx())
    uplinks = links_of(graph, "storage-leaf-spine")
    per_pair = Counter((link["b_device"], link["a_device"]) for link in uplinks)
    assert per_pair == {(leaf, spine): 32 for leaf in ("sleaf-01", "sleaf-02", "sleaf-03")
                        for spine in ("sspine-01", "sspine-02")}
    cages = {int(re.match(r"p(\d+)/", link["b_port"]).group(1)) for link in uplinks}
    assert cages == set(range(17, 33))
    per_cable = defaultdict(set)
    for link in uplinks:
        per_cable[link["cable"]].add((link["a_device"], link["b_device"]))
    assert len(per_cable) == 48 and all(len(pairs) == 1 for pairs in per_cable.values())


def test_converged_units_hang_off_extra_compute_leaves():
    design = fd.three_tier_dgx_a100()
    graph = fabric_graph(design)
    fabric = build_fabric(design)
    [leaf] = fabric.switches.storage_leaves
    assert leaf.name == "leaf-st-01" and graph.nodes[leaf.name]["carries_storage"] is True
    units = links_of(graph, "storage-unit")
    assert {(u["a_device"], u["network"]) for u in units} == {("leaf-st-01", "storage")}
    assert sorted(u["a_port"] for u in units) == sorted(f"p{i}" for i in range(1, 9))
    # It uplinks like every leaf: to the 20 spines of its pod (pod 2).
    spines = {u["a_device"] for u in links_of(graph, "leaf-spine") if u["b_device"] == leaf.name}
    assert len(spines) == 20 and {graph.nodes[s]["pod"] for s in spines} == {2}
    # No nodes under it, and Slurm's topology (compute jobs) leaves it out.
    assert not [u for u in links_of(graph, "node-leaf") if u["a_device"] == leaf.name]
    assert "leaf-st" not in topology_conf(fabric)


def test_converged_single_switch_takes_units_after_the_node_ports():
    graph = fabric_graph(fd.one_tier_converged())
    assert sorted(ports_on(graph, "leaf-01", "node-leaf"), key=lambda p: int(p[1:])) == [f"p{i}" for i in range(1, 17)]
    assert sorted(ports_on(graph, "leaf-01", "storage-unit"), key=lambda p: int(p[1:])) == [f"p{i}" for i in range(17, 25)]
    assert not [n for n, a in graph.nodes(data=True) if a["role"] in ("storage-leaf", "storage-spine")]


def test_management_leaves_fill_in_order_and_pair_up():
    """16k: 6,645 management ports on 145 leaves of 46, pairs of aggregation switches take 46
    leaves each (each switch keeps 2 of its 48 ports for the site's management core): leaf 47 is
    the first of pair 2 (mgmt-agg-03, mgmt-agg-04)."""
    design = fd.three_tier_16k()
    graph = fabric_graph(design)
    loads = Counter(link["a_device"] for link in links_of(graph, "mgmt"))
    assert [loads[leaf] for leaf in sorted(loads)] == [46] * 144 + [21]
    first = [link for link in links_of(graph, "mgmt") if link["a_device"] == "mgmt-001"]
    # rack by rack: its nodes, each with its in-band and out-of-band port on the same leaf, then
    # the rack's two PDUs
    assert [(link["b_device"], link["b_port"]) for link in first[:4]] == [
        ("rack001-node01", "mgmt"), ("rack001-node01", "oob"), ("rack001-node02", "mgmt"), ("rack001-node02", "oob")]
    assert {"rack001-pdu1", "rack001-pdu2", "rack002-node01"} <= {link["b_device"] for link in first}
    above = defaultdict(set)
    for link in links_of(graph, "mgmt-uplink"):
        above[link["b_device"]].add(link["a_device"])
    assert above["mgmt-046"] == {"mgmt-agg-01", "mgmt-agg-02"}
    assert above["mgmt-047"] == {"mgmt-agg-03", "mgmt-agg-04"}
    assert above["mgmt-121"] == {"mgmt-agg-05", "mgmt-agg-06"}
    assert above["mgmt-145"] == {"mgmt-agg-07", "mgmt-agg-08"}
    # every leaf's uplinks sit on its two top ports
    assert {link["b_port"] for link in links_of(graph, "mgmt-uplink")} == {"p47", "p48"}


def test_every_device_of_every_network_is_managed():
    graph = fabric_graph(fd.two_tier_32_dgx())
    managed = Counter(link["b_device"] for link in links_of(graph, "mgmt"))
    for name, attrs in graph.nodes(data=True):
        # A node or storage unit: in band and out of band; a data switch or a rack PDU: its
        # management port; a management switch: none.
        expected = (0 if attrs["role"] in ("mgmt-leaf", "mgmt-aggregation")
                    else 2 if attrs["role"] in ("node", "storage") else 1)
        assert managed[name] == expected, name


def test_devices_and_links_carry_their_network():
    graph = fabric_graph(fd.one_tier_8_gpu())
    networks = {name: attrs["network"] for name, attrs in graph.nodes(data=True)}
    assert networks == {"rack01-node01": "compute", "leaf-01": "compute", "sleaf-01": "storage",
                        "storage-01": "storage", "cold-01": "storage", "mgmt-01": "management",
                        "rack01-pdu1": "management", "rack01-pdu2": "management"}
    per_class = {(a["link_class"], a["network"]) for _, _, a in graph.edges(data=True)}
    assert per_class == {("node-leaf", "compute"), ("node-storage", "storage"), ("storage-unit", "storage"),
                         ("mgmt", "management")}
    assert graph.nodes["rack01-node01"]["storage_nic"] == "cx7-qsfp112-2x200g"
    assert graph.nodes["cold-01"]["capacity_tb"] == 1000


@pytest.mark.parametrize("change, message", [
    ({"spines": 3}, "do not divide"),
    ({"leaves": 2}, "left over"),
])
def test_storage_counts_that_cannot_be_wired_are_a_fabric_error(change, message):
    design = fd.two_tier_32_dgx()
    broken = design.model_copy(update={"storage_network": design.storage_network.model_copy(update=change)})
    with pytest.raises(FabricError, match=message):
        build_fabric(broken)


def test_management_counts_that_cannot_be_wired_are_a_fabric_error():
    design = fd.two_tier_32_dgx()
    no_pair = design.model_copy(update={"management_network": design.management_network.model_copy(
        update={"aggregation": 0})})
    with pytest.raises(FabricError, match="aggregation"):
        build_fabric(no_pair)
    too_few = design.model_copy(update={"management_network": design.management_network.model_copy(
        update={"leaves": 1})})
    with pytest.raises(FabricError, match="management leaves"):
        build_fabric(too_few)


def test_a_storage_link_count_the_design_disagrees_with_is_reported():
    design = fd.two_tier_32_dgx()
    wrong = design.model_copy(update={"links": [g.model_copy(update={"count": 120}) if g.between == "node-storage"
                                                else g for g in design.links]})
    assert "node-storage: wiring has 128 links, the design counts 120" in build_fabric(wrong).warnings


def rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def test_exports_cover_the_three_networks(tmp_path):
    design = fd.two_tier_32_dgx()
    write_outputs(fd.result_for(design), None, tmp_path, catalog=CATALOG)
    cables = rows(tmp_path / "cables.csv")
    assemblies = Counter(row["network"] for row in cables)
    assert assemblies == {"compute": 128 + 128, "storage": 32 + 2 + 48, "management": 107 + 6}
    racks = rows(tmp_path / "racks.csv")
    # management: 3 leaves, 2 aggregation switches and the 11 racks' 22 PDUs
    assert Counter(row["network"] for row in racks) == {"compute": 32 + 12, "storage": 5 + 2, "management": 5 + 22}
    assert {row["rack"] for row in racks if row["role"].startswith("mgmt")} == {"net02"}
    devices = {row["name"]: row["role"] for row in rows(tmp_path / "netbox-devices.csv")}
    assert devices["sleaf-01"] == "storage-leaf" and devices["mgmt-agg-01"] == "management-aggregation"
    assert devices["storage-01"] == "storage-hot"
    types = {row["label"].split("-")[0]: row["type"] for row in rows(tmp_path / "netbox-cables.csv")}
    assert types["MG"] == "cat6" and types["MU"] == "cat6a" and types["SS"] == "smf"
    bom = rows(tmp_path / "bom.csv")
    assert {row["part"] for row in bom if row["category"] == "switch"} == {"qm9700", "mgmt-48x1g-10g"}
    assert float(bom[-1]["extended_price"]) == sum(float(row["extended_price"]) for row in bom[:-1])


def test_a_bare_design_counts_every_network_in_the_bom(tmp_path):
    design = fd.two_tier_hgx_odd(21)
    from topoopt.models.design import ObjectiveValue, SolveResult

    bare = SolveResult(status="feasible", objective=ObjectiveValue(kind="min_cost", value=None, bound=None, gap=None),
                       design=design)
    write_outputs(bare, None, tmp_path, catalog=CATALOG)
    bom = {(row["category"], row["part"]): int(row["quantity"]) for row in rows(tmp_path / "bom.csv")}
    assert bom[("nic", "cx7-qsfp112-2x200g")] == 21  # bought storage NICs, one per node
    assert bom[("switch", "qm9700")] == 8 + 4 + 1 and bom[("switch", "mgmt-48x1g-10g")] == 2 + 2
    assert bom[("storage", "nvme-of-array")] == 1
    # a switch has one management port; 9 racks (6 compute, 2 network, 1 storage) 2 PDUs each
    assert bom[("cable", "cat6-rj45-1g-100m")] == 2 * (21 + 1) + 12 + 1 + 2 * 9


def test_drawing_tells_the_networks_apart():
    design = fd.two_tier_32_dgx()
    dot = fabric_dot(build_fabric(design), fd.result_for(design))
    for network, name in NETWORK_NAME.items():
        assert f"cluster_net_{network}" in dot and name in dot
    for group in design.links:
        colour = CLASS_COLOUR[group.between]
        assert re.search(rf'color="{colour}"[^\]]*tooltip="[\d,]+ × ', dot), group.between
    assert len(set(CLASS_COLOUR.values())) == len(CLASS_COLOUR)
    # management lines end at the table of managed devices, which counts every port once
    managed = re.search(r"on the management network</b> · ([\d,]+) ports", dot)
    assert int(managed.group(1).replace(",", "")) == design.management_network.ports


@pytest.mark.parametrize("make", [fd.one_tier_converged, fd.two_tier_hgx_odd], ids=lambda f: f.__name__)
def test_other_shapes_keep_the_invariants(make):
    design = make()
    check_all(design, fabric_graph(design), CATALOG)


def _one_switch_fill(capacity: int):
    from topoopt.fabric.devices import Device, LinkBundle, Run, fill

    part = CATALOG.by_id("cables")["ndr200-dr4-splitter-kit-qsfp112-50m"]  # 4 links per assembly
    bundle = LinkBundle(between="node-storage", part=part, gbps=200, length_m=17)
    switch = Device(name="sleaf-01", role="storage-leaf", model="qm9700", rack_units=1, power_w=1, ports=16)
    nodes = ["n1", "n1", "n2", "n2", "n3", "n3"]
    run = Run(bundle, nodes, ["a", "b"] * 3, keys=[0, 1] * 3, by_key=True)
    fill([switch], [f"p{i}" for i in range(1, 17)], capacity, [run])
    return bundle


def test_fill_keeps_one_key_per_assembly_when_it_fits():
    bundle = _one_switch_fill(capacity=8)
    assert bundle.a_port == ["p1", "p2", "p3", "p5", "p6", "p7"]
    assert bundle.b_port == ["a", "a", "a", "b", "b", "b"] and bundle.cable == [0, 0, 0, 1, 1, 1]


def test_fill_packs_in_order_when_fresh_assemblies_would_not_fit():
    bundle = _one_switch_fill(capacity=6)  # 3 + skip 1 + 3 = 7 ports > 6
    assert bundle.a_port == [f"p{i}" for i in range(1, 7)]
    assert bundle.b_port == ["a", "b"] * 3 and bundle.cable == [0, 0, 0, 0, 1, 1]
