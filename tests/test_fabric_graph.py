"""The installation graph of hand-built designs: counts, ports, rails, uplinks, cables, names."""

from __future__ import annotations

import re
from collections import Counter

import fabric_designs as fd
import networkx as nx
import pytest
from fabric_invariants import check_all, check_assemblies, switch_ports

import topoopt
from topoopt.fabric import FabricError
from topoopt.fabric import build_fabric as _build_fabric
from topoopt.fabric import fabric_graph as _fabric_graph

CATALOG = fd.CATALOG
CONSISTENT = [fd.one_tier_8_gpu, fd.one_tier_converged, fd.two_tier_32_dgx, fd.three_tier_dgx_a100, fd.three_tier_16k]


def build_fabric(design):
    return _build_fabric(design, catalog=CATALOG)


def fabric_graph(design):
    return _fabric_graph(design, catalog=CATALOG)


@pytest.fixture(scope="module", params=CONSISTENT, ids=lambda f: f.__name__)
def built(request):
    design = request.param()
    return design, fabric_graph(design)


def test_invariants_hold(built):
    design, graph = built
    assemblies = check_all(design, graph, CATALOG)
    assert assemblies == {(g.between, g.part): g.assemblies for g in design.links}
    assert build_fabric(design).warnings == []


def test_public_api_reexports_fabric_graph():
    design = fd.one_tier_8_gpu()
    graph = topoopt.fabric_graph(design, catalog=CATALOG)
    assert isinstance(graph, nx.MultiGraph)
    by_network = Counter(a["network"] for _, _, a in graph.edges(data=True))
    assert by_network == {"compute": 8, "storage": 4 + 4 + 2, "management": 8 + 2}


def test_one_tier_puts_all_eight_rails_on_one_switch():
    graph = fabric_graph(fd.one_tier_8_gpu())
    assert sorted(graph.nodes) == ["cold-01", "leaf-01", "mgmt-01", "rack01-node01", "rack01-pdu1", "rack01-pdu2",
                                   "sleaf-01", "storage-01"]
    ports = sorted(switch_ports(graph)["leaf-01"])
    assert ports == ["p1/1", "p1/2", "p2/1", "p2/2", "p3/1", "p3/2", "p4/1", "p4/2"]
    # twin-port kits: a cage's two links share one cable
    cables = {a["cable"] for _, _, a in graph.edges(data=True) if a["link_class"] == "node-leaf"}
    assert len(cables) == 4


def test_node_attributes_are_scalars_with_placement(built):
    _, graph = built
    for name, attrs in graph.nodes(data=True):
        assert all(isinstance(v, (str, int, float, bool)) for v in attrs.values()), name
        if attrs["role"] == "pdu":  # zero-U; it draws what the devices it feeds draw
            assert attrs["rack"] and attrs["u"] == 0 and attrs["power_w"] == 0
        else:
            assert attrs["rack"] and attrs["u"] >= 1 and attrs["power_w"] > 0


def test_names_follow_the_scheme(built):
    design, graph = built
    patterns = {
        "node": r"^rack\d{2,}-node\d{2,}$",
        "leaf": r"^leaf-r\d+(-\d+)?-\d{2,}$" if design.fabric.rail_optimized else r"^leaf-\d{2,}$",
        "spine": r"^spine-\d{2,}$",
        "core": r"^core-p\d+-\d{2,}$",
        "storage": r"^storage-\d{2,}$",
        "cold-storage": r"^cold-\d{2,}$",
        "storage-leaf": r"^sleaf-\d{2,}$",
        "storage-spine": r"^sspine-\d{2,}$",
        "storage-core": r"^score-p\d+-\d{2,}$",
        "mgmt-leaf": r"^mgmt-\d{2,}$",
        "mgmt-aggregation": r"^mgmt-agg-\d{2,}$",
        "pdu": r"^(rack|net|stor)\d{2,}-pdu\d+$",
    }
    if design.storage_network.mode == "converged":
        patterns["leaf"] = f"{patterns['leaf']}|^leaf-st-\\d{{2,}}$"
    for name, attrs in graph.nodes(data=True):
        assert re.match(patterns[attrs["role"]], name), name
    for name, attrs in graph.nodes(data=True):
        if attrs["role"] in ("node", "pdu"):
            assert name.startswith(attrs["rack"] + "-")


def test_build_is_deterministic():
    design = fd.three_tier_dgx_a100()
    first = sorted((u, v, k, tuple(sorted(a.items()))) for u, v, k, a in fabric_graph(design).edges(keys=True, data=True))
    second = sorted((u, v, k, tuple(sorted(a.items()))) for u, v, k, a in fabric_graph(design).edges(keys=True, data=True))
    assert first == second


def test_three_tier_pods_keep_scalable_units_together():
    fabric = build_fabric(fd.three_tier_dgx_a100())
    pods = {}
    for leaf in fabric.switches.leaves:
        pods.setdefault(leaf.pod, []).append(leaf.name)
    # 24 node leaves in scalable-unit order, 20 per pod: SUs 1-2 and rails 1-4 of SU 3 in pod 1;
    # the storage leaf of the converged storage network comes last.
    assert [len(p) for p in pods.values()] == [20, 5]
    assert pods[2] == [f"leaf-r{r}-03" for r in range(5, 9)] + ["leaf-st-01"]


def test_part_filled_cages_are_reported_not_hidden():
    design = fd.two_tier_hgx_odd(21)
    fabric = build_fabric(design)
    graph = fabric_graph(design)
    assemblies = check_assemblies(graph, CATALOG)
    # 21 nodes per rail on one leaf: 10 full twin-port cages + 1 half cage, on each of 8 rails.
    assert assemblies["node-leaf", "ndr-sr4-kit-50m"] == 8 * 11
    assert any("node-leaf" in w and "88" in w and "84" in w for w in fabric.warnings)


def test_breakout_assembly_reaches_two_nodes():
    graph = fabric_graph(fd.two_tier_hgx_odd(21))
    by_cable = {}
    for _, _, attrs in graph.edges(data=True):
        if attrs["link_class"] == "node-leaf":
            by_cable.setdefault(attrs["cable"], []).append(attrs)
    first = by_cable["NL-01"]
    assert [a["b_device"] for a in first] == ["rack01-node01", "rack01-node02"]
    assert {a["a_port"] for a in first} == {"p1/1", "p1/2"}
    assert {a["b_port"] for a in first} == {"nic1"}


def rail_one_loads(design) -> list[int]:
    loads = Counter()
    for _, _, attrs in fabric_graph(design).edges(data=True):
        if attrs["link_class"] == "node-leaf" and attrs["rail"] == 1:
            loads[attrs["a_device"]] += 1
    return sorted(loads.values(), reverse=True)


def test_nodes_split_evenly_over_the_leaves_of_a_rail():
    # 33 nodes on 2 leaves per rail, the fullest holding ceil(33 / 2) = 17 (its 17 down-ports in
    # use): 17 + 16 in 9 + 8 kits, as many as 18 + 15 would take.
    design = fd.two_tier_hgx_odd(33)
    assert design.fabric.leaf_down_ports == 17
    assert rail_one_loads(design) == [17, 16]
    assert check_assemblies(fabric_graph(design), CATALOG)["node-leaf", "ndr-sr4-kit-50m"] == 8 * 17
    # A record with room on the leaves (the down-ports a leaf could take, not those in use) gets
    # whole kits on every leaf but the last: 18 + 15.
    roomy = design.model_copy(update={"fabric": design.fabric.model_copy(update={"leaf_down_ports": 32})})
    assert rail_one_loads(roomy) == [18, 15]


def test_unknown_catalog_id_is_a_fabric_error():
    design = fd.two_tier_32_dgx().model_copy(update={"server": "no-such-server"})
    with pytest.raises(FabricError, match="no-such-server"):
        build_fabric(design)


def test_counts_that_cannot_be_wired_are_a_fabric_error():
    design = fd.two_tier_32_dgx()
    too_few = design.model_copy(update={"nodes": 40, "gpus": 320})
    with pytest.raises(FabricError, match="leaves per rail"):
        build_fabric(too_few)
    unbalanced = design.model_copy(update={"fabric": design.fabric.model_copy(update={"links_per_leaf_spine": 7})})
    with pytest.raises(FabricError, match="spines"):
        build_fabric(unbalanced)


def test_single_node_without_fabric():
    base = fd.one_tier_8_gpu()
    mgmt = base.management_network.model_copy(update={"ports": 9})  # no compute switch to manage
    design = base.model_copy(update={
        "tiers": 0,
        "fabric": base.fabric.model_copy(update={"tiers": 0, "switch": "none", "leaves": 0, "leaf_down_ports": 0,
                                                 "pods": 0, "leaves_per_pod": 0, "leaves_per_rail": 0}),
        "switches": [g.model_copy(update={"ports_used": 9}) if g.tier == "mgmt-leaf" else g
                     for g in base.switches if g.network != "compute"],
        "links": [g.model_copy(update={"count": 9, "assemblies": 9}) if g.between == "mgmt" else g
                  for g in base.links if g.network != "compute"],
        "management_network": mgmt,
    })
    fabric = build_fabric(design)
    graph = fabric_graph(design)
    assert fabric.compute_switches == [] and not [e for e in graph.edges(data=True) if e[2]["network"] == "compute"]
    assert sorted(graph.nodes) == ["cold-01", "mgmt-01", "rack01-node01", "rack01-pdu1", "rack01-pdu2", "sleaf-01",
                                   "storage-01"]
    # without a fabric the node draws its server's 10,200 W and its 4 storage cages' 4 × 5 W only
    assert fabric.nodes[0].power_w == pytest.approx(10_220)
    assert fabric.warnings == []
    check_all(design, graph, CATALOG)


def test_invariant_checks_catch_a_reused_port_and_a_missing_uplink():
    """The checks above can fail: corrupt a correct graph and they do."""
    from fabric_invariants import check_ports, check_uplinks

    design = fd.two_tier_32_dgx()
    graph = fabric_graph(design)
    edges = [(u, v, k) for u, v, k, a in graph.edges(keys=True, data=True) if a["link_class"] == "leaf-spine"]
    first, second = graph.edges[edges[0]], graph.edges[edges[1]]
    second["a_port"] = first["a_port"]
    with pytest.raises(AssertionError):
        check_ports(design, graph, CATALOG)
    graph = fabric_graph(design)
    graph.remove_edge(*edges[0])
    with pytest.raises(AssertionError):
        check_uplinks(design, graph)


def test_a_part_that_does_not_fill_its_cages_is_reported():
    design = fd.two_tier_32_dgx()
    # a single-port-per-end part on twin-port cages at both ends
    wrong = design.model_copy(update={"links": [design.links[0].model_copy(update={"part": "hdr-aoc-30m"}),
                                                *design.links[1:]]})
    warnings = build_fabric(wrong).warnings
    assert any("hdr-aoc-30m" in w and "port_form_factor_match" in w for w in warnings)
    assert not [w for w in build_fabric(design).warnings if "port_form_factor_match" in w]
