"""Invariants every built installation must satisfy, checked from the graph alone.

Used by the hand-built-design tests and by the tests on designs the solver returned. Each check
recomputes its rule from the graph and the catalog; none reads topoopt.fabric's internals.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import networkx as nx

from topoopt.models.catalog import Catalog
from topoopt.models.design import Design

SWITCH_PORT = re.compile(r"^p(\d+)(?:/(\d+))?$")


def switch_ports(graph: nx.MultiGraph) -> dict[str, list[str]]:
    """Every switch port in use, per switch (a port listed twice is used twice)."""
    used: dict[str, list[str]] = defaultdict(list)
    for _, _, attrs in graph.edges(data=True):
        for end in ("a", "b"):
            device = attrs[f"{end}_device"]
            if graph.nodes[device]["role"] in ("leaf", "spine", "core"):
                used[device].append(attrs[f"{end}_port"])
    return used


def check_counts(design: Design, graph: nx.MultiGraph, catalog: Catalog) -> None:
    """GPUs, nodes, switches per tier, storage and links per class agree with the design."""
    roles = Counter(attrs["role"] for _, attrs in graph.nodes(data=True))
    assert roles["node"] == design.nodes
    assert sum(a["gpus"] for _, a in graph.nodes(data=True) if a["role"] == "node") == design.gpus
    for group in design.switches:
        assert roles[group.tier] == group.count, group
    assert roles["storage"] == design.storage.units
    links = Counter(attrs["link_class"] for _, _, attrs in graph.edges(data=True))
    assert links == Counter({g.between: g.count for g in design.links if g.count})
    for group in design.links:
        part = catalog.by_id("cables")[group.part]
        for _, _, attrs in graph.edges(data=True):
            if attrs["link_class"] == group.between:
                assert (attrs["part"], attrs["gbps"], attrs["length_m"], attrs["media"]) == (
                    group.part, group.gbps, group.length_m, part.media)


def check_ports(design: Design, graph: nx.MultiGraph, catalog: Catalog) -> None:
    """No switch port used twice or beyond the radix; every NIC port used exactly once."""
    switch = catalog.by_id("switches").get(design.fabric.switch)
    per_cage = switch.ports_per_cage[design.link_gbps] if switch else 0
    used = switch_ports(graph)
    for device, ports in used.items():
        assert len(ports) == len(set(ports)), f"{device} uses a port twice"
        assert len(ports) <= switch.cages * per_cage
        for port in ports:
            cage, lane = SWITCH_PORT.match(port).groups()
            assert 1 <= int(cage) <= switch.cages
            assert 1 <= int(lane or 1) <= per_cage and (lane is None) == (per_cage == 1)
    for group in design.switches:
        in_use = sum(len(p) for d, p in used.items() if graph.nodes[d]["role"] == group.tier)
        assert in_use == group.ports_used, group
    for node, attrs in graph.nodes(data=True):
        if attrs["role"] != "node" or design.tiers == 0:
            continue
        edges = [e for _, _, e in graph.edges(node, data=True)]
        assert len(edges) == design.nics_per_node
        assert len({e["b_port"] for e in edges}) == design.nics_per_node
        assert sorted(e["rail"] for e in edges) == list(range(1, design.nics_per_node + 1))


def check_rails(design: Design, graph: nx.MultiGraph) -> None:
    """Rail i of every node on a leaf of rail i; each rail's nodes spread evenly over its leaves."""
    if not design.fabric.rail_optimized:
        return
    load: Counter = Counter()
    for _, _, attrs in graph.edges(data=True):
        if attrs["link_class"] == "node-leaf":
            leaf = graph.nodes[attrs["a_device"]]
            assert leaf["rail"] == attrs["rail"]
            load[attrs["a_device"]] += 1
    per_rail: dict[int, list[int]] = defaultdict(list)
    for leaf, count in load.items():
        per_rail[graph.nodes[leaf]["rail"]].append(count)
    part = next(g for g in design.links if g.between == "node-leaf")
    assert len(per_rail) == design.nics_per_node
    for counts in per_rail.values():
        assert sum(counts) == design.nodes and len(counts) == design.fabric.leaves_per_rail
        assert max(counts) - min(counts) <= max(2, part.count // part.assemblies)


def check_uplinks(design: Design, graph: nx.MultiGraph) -> None:
    """Every leaf reaches every spine of its pod (and none other) with links_per_leaf_spine links;
    spine j of every pod reaches every core of plane j with links_per_spine_core links."""
    fs = design.fabric
    if fs.tiers < 2:
        return
    pairs = Counter()
    for _, _, attrs in graph.edges(data=True):
        if attrs["link_class"] in ("leaf-spine", "spine-core"):
            pairs[(attrs["b_device"], attrs["a_device"])] += 1
    nodes = graph.nodes
    leaves = [n for n, a in nodes(data=True) if a["role"] == "leaf"]
    spines = [n for n, a in nodes(data=True) if a["role"] == "spine"]
    for leaf in leaves:
        pod_spines = [s for s in spines if fs.tiers == 2 or nodes[s]["pod"] == nodes[leaf]["pod"]]
        assert len(pod_spines) == (fs.spines if fs.tiers == 2 else fs.spines_per_pod)
        for spine in pod_spines:
            assert pairs[(leaf, spine)] == fs.links_per_leaf_spine
        assert sum(pairs[(leaf, s)] for s in spines) == fs.leaf_up_ports
    if fs.tiers == 3:
        cores = [n for n, a in nodes(data=True) if a["role"] == "core"]
        assert len({nodes[c]["plane"] for c in cores}) == fs.spines_per_pod
        for spine in spines:
            for core in cores:
                expected = fs.links_per_spine_core if nodes[core]["plane"] == nodes[spine]["plane"] else 0
                assert pairs[(spine, core)] == expected


def check_connected(graph: nx.MultiGraph) -> None:
    """The compute fabric (nodes and switches) is one connected graph."""
    compute = graph.subgraph(n for n, a in graph.nodes(data=True) if a["role"] != "storage")
    assert nx.is_connected(compute)


def check_assemblies(graph: nx.MultiGraph, catalog: Catalog) -> dict[str, int]:
    """Every cable carries at most ``part.links`` links from ``a_ends`` cages of one upper device;
    returns the number of assemblies per link class."""
    cables: dict[str, list[dict]] = defaultdict(list)
    for _, _, attrs in graph.edges(data=True):
        cables[attrs["cable"]].append(attrs)
    per_class: Counter = Counter()
    for cable, links in cables.items():
        part = catalog.by_id("cables")[links[0]["part"]]
        assert len(links) <= part.links
        assert len({link["a_device"] for link in links}) == 1
        cages = {SWITCH_PORT.match(link["a_port"]).group(1) for link in links}
        assert len(cages) <= part.a_ends
        per_class[links[0]["link_class"]] += 1
    return dict(per_class)


def check_all(design: Design, graph: nx.MultiGraph, catalog: Catalog) -> dict[str, int]:
    check_counts(design, graph, catalog)
    check_ports(design, graph, catalog)
    check_rails(design, graph)
    check_uplinks(design, graph)
    check_connected(graph)
    assemblies = check_assemblies(graph, catalog)
    for group in design.links:
        # The design counts ceil(links / part.links); part-filled cages can only add to that.
        assert assemblies.get(group.between, 0) >= math.ceil(group.count / catalog.by_id("cables")[group.part].links)
    return assemblies
