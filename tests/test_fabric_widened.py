"""The widened fabric space (schema 1.5) built port by port: rail groups (several rails per leaf),
rail-only 1 tier, leaf uplinks sized to the ports in use, converged storage on the top tier.

The designs are hand-written (tests/fabric_designs.py); the cable schedule written to
``cables.csv`` is read back and compared with the design's counts independently of the build's
own checks: links and assemblies per link class, no port used twice, no port beyond the switch's
cages at its speed, every node port cabled once.
"""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict

import fabric_designs as fd
import pytest
from fabric_invariants import check_all

from topoopt.fabric import FabricError, build_fabric, fabric_graph, write_outputs
from topoopt.fabric.devices import deal
from topoopt.fabric.draw import fabric_dot
from topoopt.fabric.names import node_port_names
from topoopt.fabric.rendering import find_dot
from topoopt.fabric.slurm import topology_conf

CATALOG = fd.CATALOG
SWITCH_PORT = re.compile(r"^p(\d+)(?:/(\d+))?$")
SWITCH_ROLES = {"leaf", "spine", "core", "storage-leaf", "storage-spine", "mgmt-leaf", "mgmt-aggregation"}


def build(design):
    return build_fabric(design, catalog=CATALOG)


def links_of(fabric, link_class: str) -> list[tuple[str, str, str, str]]:
    """``(a_device, a_port, b_device, b_port)`` of every link of a class."""
    return [link for bundle in fabric.links if bundle.between == link_class
            for link in zip(bundle.a_device, bundle.a_port, bundle.b_device, bundle.b_port)]


@pytest.fixture(scope="module", params=fd.WIDENED, ids=lambda f: f.__name__)
def written(request, tmp_path_factory):
    design = request.param()
    out = tmp_path_factory.mktemp(request.param.__name__)
    outputs = write_outputs(fd.result_for(design), None, out, catalog=CATALOG)
    return design, out, outputs


def schedule(out) -> list[dict]:
    """One row per link from ``cables.csv`` (an assembly's ports are joined with ``+``)."""
    with open(out / "cables.csv", newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    links = []
    for row in rows:
        a_ports, b_ports = row["a_port"].split("+"), row["b_port"].split("+")
        b_devices = row["b_device"].split("+")
        b_devices = b_devices * len(b_ports) if len(b_devices) == 1 else b_devices
        assert len(a_ports) == len(b_ports) == len(b_devices)
        for a_port, b_device, b_port in zip(a_ports, b_devices, b_ports):
            links.append({**row, "a_port": a_port, "b_device": b_device, "b_port": b_port})
    return links


def test_the_cable_schedule_is_the_design_counts(written):
    design, out, outputs = written
    links = schedule(out)
    per_class = Counter((link["link_class"], link["part"]) for link in links)
    assemblies = Counter()
    for link_class, part, _ in {(link["link_class"], link["part"], link["id"]) for link in links}:
        assemblies[link_class, part] += 1
    declared_links, declared_assemblies = Counter(), Counter()
    for group in design.links:
        declared_links[group.between, group.part] += group.count
        declared_assemblies[group.between, group.part] += group.assemblies
    assert per_class == declared_links
    assert assemblies == declared_assemblies
    assert [w for w in outputs.warnings if "dot" not in w] == []


def test_no_port_is_used_twice_nor_beyond_the_radix(written):
    design, out, _ = written
    links = schedule(out)
    ends = Counter()
    for link in links:
        ends[link["a_device"], link["a_port"]] += 1
        ends[link["b_device"], link["b_port"]] += 1
    assert max(ends.values()) == 1
    graph = fabric_graph(design, catalog=CATALOG)
    switches = CATALOG.by_id("switches")
    for link in links:
        for end in ("a", "b"):
            name = link[f"{end}_device"]
            role = graph.nodes[name]["role"]
            if role not in SWITCH_ROLES or (end == "b" and link["link_class"] == "mgmt"):
                continue
            switch = switches[graph.nodes[name]["model"]]
            speed = {"storage-leaf": design.storage_network.link_gbps, "storage-spine": design.storage_network.link_gbps,
                     "mgmt-leaf": 1, "mgmt-aggregation": 1}.get(role, design.link_gbps)
            cage, lane = SWITCH_PORT.match(link[f"{end}_port"]).groups()
            assert 1 <= int(cage) <= switch.cages, link
            assert 1 <= int(lane or 1) <= switch.ports_per_cage[speed], link


def test_every_node_port_is_cabled_once(written):
    design, out, _ = written
    node_links = [link for link in schedule(out) if link["link_class"] == "node-leaf"]
    per_node = defaultdict(list)
    for link in node_links:
        per_node[link["b_device"]].append(link["b_port"])
    assert len(per_node) == design.nodes
    expected = sorted(node_port_names(design.nics_per_node, 2))  # dgx-h100: 4 twin-port cages
    assert all(sorted(ports) == expected for ports in per_node.values())


@pytest.mark.parametrize("make", fd.WIDENED, ids=lambda f: f.__name__)
def test_invariants_hold(make):
    design = make()
    assemblies = check_all(design, fabric_graph(design, catalog=CATALOG), CATALOG)
    assert assemblies == {(g.between, g.part): g.assemblies for g in design.links}
    assert build(design).warnings == []


def test_sixteen_dgx_non_blocking_has_eight_leaves_of_16_down_16_up_and_two_spines():
    fabric = build(fd.two_tier_16_dgx())
    assert [leaf.name for leaf in fabric.switches.leaves] == [f"leaf-r{rail}-01" for rail in range(1, 9)]
    assert [s.name for pod in fabric.switches.spines for s in pod] == ["spine-01", "spine-02"]
    node_leaf, leaf_spine = links_of(fabric, "node-leaf"), links_of(fabric, "leaf-spine")
    assert len(node_leaf) == 128 and len(leaf_spine) == 128
    for rail, leaf in enumerate(fabric.switches.leaves, start=1):
        down = [(port, node, node_port) for a, port, node, node_port in node_leaf if a == leaf.name]
        # the 16 nodes' rail on the lowest 8 cages, two nodes per cage
        assert [port for port, _, _ in down] == [f"p{c}/{lane}" for c in range(1, 9) for lane in (1, 2)]
        assert {node_port for _, _, node_port in down} == {node_port_names(8, 2)[rail - 1]}
        up = [(spine, port) for spine, _, b, port in leaf_spine if b == leaf.name]
        # 16 uplinks on the top 8 cages, 8 to each spine
        assert sorted(port for _, port in up) == sorted(f"p{c}/{lane}" for c in range(25, 33) for lane in (1, 2))
        assert Counter(spine for spine, _ in up) == {"spine-01": 8, "spine-02": 8}
    # each spine's 64 ports are in use, 8 per leaf
    assert Counter(a for a, *_ in leaf_spine) == {"spine-01": 64, "spine-02": 64}


def test_four_rails_per_leaf_take_a_node_group_on_consecutive_ports():
    fabric = build(fd.two_tier_4_rails_per_leaf())
    assert [leaf.name for leaf in fabric.switches.leaves] == ["leaf-r1-4-01", "leaf-r5-8-01",
                                                              "leaf-r1-4-02", "leaf-r5-8-02"]
    node_leaf = links_of(fabric, "node-leaf")
    by_leaf = defaultdict(list)
    for leaf, port, node, node_port in node_leaf:
        by_leaf[leaf].append((port, node, node_port))
    nodes = [n.name for n in fabric.nodes]
    for leaf, first_nodes in (("leaf-r1-4-01", nodes[:8]), ("leaf-r5-8-02", nodes[8:])):
        links = by_leaf[leaf]
        assert [node for _, node, _ in links] == [n for n in first_nodes for _ in range(4)]
        assert [port for port, _, _ in links] == [f"p{c}/{lane}" for c in range(1, 17) for lane in (1, 2)]
    # rails 5-8 are the node's cages p3 and p4
    assert {node_port for _, _, node_port in by_leaf["leaf-r5-8-01"]} == {"p3/1", "p3/2", "p4/1", "p4/2"}
    # a node–leaf kit joins two rails of one node (leaf cage <-> node cage)
    graph = fabric_graph(fd.two_tier_4_rails_per_leaf(), catalog=CATALOG)
    cables = defaultdict(set)
    for _, _, attrs in graph.edges(data=True):
        if attrs["link_class"] == "node-leaf":
            cables[attrs["cable"]].add((attrs["b_device"], attrs["b_port"].split("/")[0]))
    assert len(cables) == 64 and all(len(ends) == 1 for ends in cables.values())
    # 32 uplinks per leaf on the top 16 cages, 8 to each of the 4 spines
    for leaf in by_leaf:
        up = [(spine, port) for spine, _, b, port in links_of(fabric, "leaf-spine") if b == leaf]
        assert sorted(port for _, port in up) == sorted(f"p{c}/{lane}" for c in range(17, 33) for lane in (1, 2))
        assert set(Counter(spine for spine, _ in up).values()) == {8}
    assert {n.su for n in fabric.nodes[:8]} == {1} and {n.su for n in fabric.nodes[8:]} == {2}


def test_rail_only_has_one_switch_per_rail_group_and_nothing_between_them():
    fabric = build(fd.rail_only_16_dgx())
    assert [leaf.name for leaf in fabric.compute_switches] == ["leaf-r1-4-01", "leaf-r5-8-01"]
    assert {b.between for b in fabric.links if b.network == "compute"} == {"node-leaf"}
    node_leaf = links_of(fabric, "node-leaf")
    for leaf, rails in (("leaf-r1-4-01", ["p1/1", "p1/2", "p2/1", "p2/2"]),
                        ("leaf-r5-8-01", ["p3/1", "p3/2", "p4/1", "p4/2"])):
        links = [(port, node, node_port) for a, port, node, node_port in node_leaf if a == leaf]
        assert len(links) == 64 == len({port for port, _, _ in links})  # the switch is full
        assert Counter(node for _, node, _ in links) == {n.name: 4 for n in fabric.nodes}
        assert {node_port for _, _, node_port in links} == set(rails)


def test_rail_only_slurm_topology_lists_every_node_once():
    fabric = build(fd.rail_only_16_dgx())
    text = topology_conf(fabric)
    switches = [line for line in text.splitlines() if line.startswith("SwitchName=")]
    assert switches == ["SwitchName=su01 Nodes=rack[01-04]-node[01-04]"]
    assert "leaf-r1-4-01" in text and "leaf-r5-8-01" in text and "Rail-only" in text


def test_grouped_leaves_stand_as_one_slurm_switch_per_scalable_unit():
    text = topology_conf(build(fd.two_tier_4_rails_per_leaf()))
    switches = [line for line in text.splitlines() if line.startswith("SwitchName=")]
    assert switches == ["SwitchName=su01 Nodes=rack[01-02]-node[01-04]",
                        "SwitchName=su02 Nodes=rack[03-04]-node[01-04]",
                        "SwitchName=spines Switches=su[01-02]"]
    assert "# su01: leaf-r1-4-01,leaf-r5-8-01" in text


def test_converged_units_spread_over_the_spines_top_ports():
    fabric = build(fd.converged_on_spines_16_dgx())
    assert not fabric.switches.storage_leaves and not fabric.storage_switches.all
    units = links_of(fabric, "storage-unit")
    assert [(a, port, unit, data) for a, port, unit, data in units] == [
        ("spine-01", "p32/1", "storage-01", "data1"), ("spine-01", "p32/2", "storage-01", "data2"),
        ("spine-02", "p32/1", "storage-01", "data3"), ("spine-02", "p32/2", "storage-01", "data4"),
        ("spine-03", "p32/1", "storage-02", "data1"), ("spine-03", "p32/2", "storage-02", "data2"),
        ("spine-04", "p32/1", "storage-02", "data3"), ("spine-04", "p32/2", "storage-02", "data4"),
    ]
    # the spines' down-ports: 8 leaves × 4 links on the lowest 16 cages
    down = Counter(a for a, *_ in links_of(fabric, "leaf-spine"))
    assert down == {f"spine-0{s}": 32 for s in range(1, 5)}
    assert max(int(SWITCH_PORT.match(port).group(1)) for _, port, *_ in links_of(fabric, "leaf-spine")) == 16


def test_converged_units_on_cores_in_three_tiers():
    """3 tiers, storage on the cores: three_tier_dgx_a100's 48 × dgx-a100 on qm8700 (k = 40) with
    its storage leaf dropped (24 leaves, 2 pods) and 2 cores per plane with 10 links per spine–core
    pair (a core uses 2 × 10 = 20 of 40 ports): the unit's 8 single-link ports go round-robin over
    the cores, plane by plane, each on the core's top port."""
    base = fd.three_tier_dgx_a100()
    # 24 node leaves, pods of 20 -> 2 pods; cores take 2 pods × 10 links = 20 of 40 ports.
    fabric_shape = base.fabric.model_copy(update={"leaves": 24, "pods": 2, "spines": 40, "links_per_spine_core": 10,
                                                  "cores_per_plane": 2, "cores": 40})
    sn = base.storage_network.model_copy(update={"compute_storage_leaves": 0, "converged_attach": "top"})
    design = base.model_copy(update={"fabric": fabric_shape, "storage_network": sn})
    from topoopt.fabric.hardware import resolve_hardware
    from topoopt.fabric.wiring import attach_on_top, check_shape, make_switches

    hw = resolve_hardware(design, CATALOG)
    check_shape(design, hw)
    sw = make_switches(design, hw)
    assert not sw.storage_leaves and len(sw.top) == 40
    from topoopt.fabric.storage import _unit_runs, make_units

    hot, cold = make_units(design, hw)
    runs, bundles = _unit_runs(design, hw, hot, cold)
    attach_on_top(design, hw, sw, runs)
    (bundle,) = bundles
    assert list(zip(bundle.a_device, bundle.a_port)) == [(f"core-p{p}-0{c}", "p40") for p in range(1, 5) for c in (1, 2)]
    assert bundle.b_port == [f"data{i}" for i in range(1, 9)]


def test_inconsistent_shapes_are_fabric_errors():
    design = fd.two_tier_16_dgx()
    fs = design.fabric

    def with_fabric(**changes):
        return design.model_copy(update={"fabric": fs.model_copy(update=changes)})

    cases = [
        (with_fabric(leaf_down_ports=50), "exceed the radix"),
        (with_fabric(links_per_leaf_spine=7), "not 7 links per pair"),
        (with_fabric(rails_per_leaf=3), "rails per leaf do not divide"),
        (with_fabric(rail_only=True), "rail_only"),
        (with_fabric(rail_optimized=False), "rail_optimized"),
        (with_fabric(leaves=9), "leaves != 8 rail groups"),
        (with_fabric(leaf_down_ports=15), "leaves per rail group"),
        (with_fabric(leaves_per_rail=17, leaves=136, leaves_per_pod=136), "leaf without nodes"),
    ]
    rail_only = fd.rail_only_16_dgx()
    cases.append((rail_only.model_copy(update={"fabric": rail_only.fabric.model_copy(update={"leaves": 1})}),
                  "one switch per rail group"))
    converged = fd.converged_on_spines_16_dgx()
    too_many = converged.storage_network.model_copy(update={"unit_ports": 200})
    cases.append((converged.model_copy(update={"storage_network": too_many}), "free ports of 4 spines"))
    on_rail_only = rail_only.model_copy(update={"storage_network": converged.storage_network})
    cases.append((on_rail_only, "rail-only fabric"))
    for wrong, message in cases:
        with pytest.raises(FabricError, match=message):
            build(wrong)


def test_deal_keeps_a_leaf_within_its_down_ports_in_use():
    assert deal(33, 3, 12, 2) == [12, 12, 9]  # whole kits on all but the last leaf
    assert deal(33, 3, 11, 2) == [11, 11, 11]  # the cap wins: one part-filled kit per leaf
    assert deal(9, 2, 5, 2) == [5, 4]  # one leaf topped up to the cap: still ceil(9 / 2) kits
    # 3 leaves × floor(6/4) kits hold 12; 3 nodes more on leaves topped up to 6 (2 each): 2 leaves,
    # 5 kits in all (an item-even 5 + 5 + 5 would take 6).
    assert deal(15, 3, 6, 4) == [6, 6, 3]
    with pytest.raises(FabricError, match="16 nodes do not fit 1 leaves of 15"):
        deal(16, 1, 15, 2, what="nodes")


@pytest.mark.parametrize("make", fd.WIDENED, ids=lambda f: f.__name__)
def test_drawing_groups_leaves_by_rail_group(make, tmp_path):
    design = make()
    fabric = build(design)
    dot = fabric_dot(fabric, fd.result_for(design))
    if design.fabric.rails_per_leaf == 4:
        assert "rails 1–4" in dot and "rails 5–8" in dot
    if design.fabric.rail_only:
        assert "rail-only: one switch per rail group" in dot and "rail-only, 2 switches of 4 rails" in dot
    if design.storage_network.mode == "converged":
        assert "units on the spines" in dot
    if find_dot() is not None:
        import subprocess

        svg = subprocess.run([find_dot(), "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60, check=True)
        assert "<svg" in svg.stdout[:2000]
