"""Invariants every built installation must satisfy, checked from the graph alone.

Used by the hand-built-design tests and by the tests on designs the solver returned. Each check
recomputes its rule from the graph, the design and the catalog; none reads topoopt.fabric's
internals. The three networks are checked alike: every port used once, within the switch's radix
at its network's speed; link counts per class and part equal to the design's; balanced uplinks.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import networkx as nx

from topoopt.models.catalog import Catalog
from topoopt.models.design import Design

SWITCH_PORT = re.compile(r"^(p|up)(\d+)(?:/(\d+))?$")
"""A switch port: ``p<cage>`` or ``p<cage>/<lane>``; ``up<cage>`` on a management switch's own uplink cages."""
NETWORK_OF_ROLE = {
    "node": "compute", "leaf": "compute", "spine": "compute", "core": "compute",
    "storage-leaf": "storage", "storage-spine": "storage", "storage-core": "storage", "storage": "storage", "cold-storage": "storage",
    "mgmt-leaf": "management", "mgmt-aggregation": "management", "pdu": "management",
}
SWITCH_ROLES = {"leaf", "spine", "core", "storage-leaf", "storage-spine", "storage-core", "mgmt-leaf", "mgmt-aggregation"}


def _switch_ends(graph: nx.MultiGraph, attrs: dict):
    """The ends of a link that are switch data ports (not a switch's own management ports)."""
    for end in ("a", "b"):
        if end == "b" and attrs["link_class"] == "mgmt":
            continue
        if graph.nodes[attrs[f"{end}_device"]]["role"] in SWITCH_ROLES:
            yield end


def switch_ports(graph: nx.MultiGraph) -> dict[str, list[str]]:
    """Every switch data port in use, per switch (a port listed twice is used twice)."""
    used: dict[str, list[str]] = defaultdict(list)
    for _, _, attrs in graph.edges(data=True):
        for end in _switch_ends(graph, attrs):
            used[attrs[f"{end}_device"]].append(attrs[f"{end}_port"])
    return used


def _units(design: Design) -> Counter:
    units = Counter({"storage": design.storage.units})
    if design.cold_storage is not None:
        units["cold-storage"] = design.cold_storage.units
    return units


def check_counts(design: Design, graph: nx.MultiGraph, catalog: Catalog) -> None:
    """GPUs, nodes, switches per tier and network, storage units, rack PDUs, and links per class and
    part agree with the design; every device and link carries its network."""
    roles = Counter(attrs["role"] for _, attrs in graph.nodes(data=True))
    assert roles["node"] == design.nodes
    assert roles["pdu"] == sum(g.count * catalog.by_id("racks")[g.rack_class].pdus for g in design.racks)
    assert sum(a["gpus"] for _, a in graph.nodes(data=True) if a["role"] == "node") == design.gpus
    for group in design.switches:
        assert roles[group.tier] == group.count, group
        models = {a["model"] for _, a in graph.nodes(data=True) if a["role"] == group.tier}
        assert models == {group.model} and NETWORK_OF_ROLE[group.tier] == group.network, group
    assert sum(roles[r] for r in SWITCH_ROLES) == sum(g.count for g in design.switches)
    units = _units(design)
    assert roles["storage"] == units["storage"] and roles["cold-storage"] == units["cold-storage"]
    for name, attrs in graph.nodes(data=True):
        assert attrs["network"] == NETWORK_OF_ROLE[attrs["role"]], name
    links = Counter(attrs["link_class"] for _, _, attrs in graph.edges(data=True))
    declared = Counter()
    for group in design.links:
        declared[group.between] += group.count
    assert links == +declared
    cables = catalog.by_id("cables")
    groups_of: dict[str, list] = {}
    for group in design.links:  # the hot and the cold tier's storage-unit links are two groups
        groups_of.setdefault(group.between, []).append(group)
    for _, _, attrs in graph.edges(data=True):
        groups = [g for g in groups_of[attrs["link_class"]] if attrs["part"] in (g.part, g.in_rack_part)
                  and (attrs["gbps"], attrs["network"]) == (g.gbps, g.network)]
        assert groups and attrs["media"] == cables[attrs["part"]].media, attrs
        assert attrs["length_m"] > 0, attrs  # the floor plan's (fabric.floor_warnings where past the site's run)


def _speed_of(design: Design, role: str, link_class: str) -> int:
    """Speed of a switch port: its network's link speed (management uplinks at the uplink speed)."""
    if link_class == "mgmt-uplink":
        return design.management_network.uplink_gbps
    if role in ("mgmt-leaf", "mgmt-aggregation"):
        return design.management_network.link_gbps
    if role in ("storage-leaf", "storage-spine", "storage-core"):
        return design.storage_network.link_gbps
    return design.link_gbps


def check_ports(design: Design, graph: nx.MultiGraph, catalog: Catalog) -> None:
    """Every port of every device used at most once; switch ports within their cages at the
    link's speed; every NIC, storage-NIC, management and storage-unit port used exactly once."""
    ends = Counter()
    for _, _, attrs in graph.edges(data=True):
        ends[attrs["a_device"], attrs["a_port"]] += 1
        ends[attrs["b_device"], attrs["b_port"]] += 1
    assert max(ends.values(), default=1) == 1, [k for k, v in ends.items() if v > 1][:5]
    switches = catalog.by_id("switches")
    for _, _, attrs in graph.edges(data=True):
        for end in _switch_ends(graph, attrs):
            device = graph.nodes[attrs[f"{end}_device"]]
            switch = switches[device["model"]]
            speed = _speed_of(design, device["role"], attrs["link_class"])
            kind, cage, lane = SWITCH_PORT.match(attrs[f"{end}_port"]).groups()
            if kind == "up":  # a management leaf's own uplink cages
                cages, per_cage = switch.uplink_cages, switch.uplink_ports_per_cage[speed]
            else:
                cages, per_cage = switch.cages, switch.ports_per_cage[speed]
            assert 1 <= int(cage) <= cages
            assert 1 <= int(lane or 1) <= per_cage and (lane is None) == (per_cage == 1)
    used = switch_ports(graph)
    for device, ports in used.items():
        role = graph.nodes[device]["role"]
        switch = switches[graph.nodes[device]["model"]]
        own_uplinks = [port for port in ports if port.startswith("up")]
        assert len(ports) - len(own_uplinks) <= switch.radix(_speed_of(design, role, ""))
    for group in design.switches:
        in_use = sum(len(p) for d, p in used.items() if graph.nodes[d]["role"] == group.tier)
        assert in_use == group.ports_used, group
    _check_device_ports(design, graph, catalog)


def _check_device_ports(design: Design, graph: nx.MultiGraph, catalog: Catalog) -> None:
    """Per device and link class, the number of distinct ports in use is the device's port count."""
    per_device: dict[str, Counter] = defaultdict(Counter)
    rails: dict[str, list[int]] = defaultdict(list)
    for _, _, attrs in graph.edges(data=True):
        per_device[attrs["b_device"]][attrs["link_class"]] += 1
        if attrs["link_class"] == "node-leaf":
            rails[attrs["b_device"]].append(attrs["rail"])
    servers, tiers, switches = catalog.by_id("servers"), catalog.by_id("storage"), catalog.by_id("switches")
    sn = design.storage_network
    for name, attrs in graph.nodes(data=True):
        counts = per_device[name]
        role = attrs["role"]
        if role == "node":
            expected = {"node-leaf": design.nics_per_node if design.tiers else 0,
                        "node-storage": sn.ports_per_node if sn.mode == "dedicated" else 0,
                        "mgmt": 1 + servers[attrs["model"]].oob_ports}
            if design.tiers:
                assert sorted(rails[name]) == list(range(1, design.nics_per_node + 1)), name
        elif role in ("storage", "cold-storage"):
            expected = {"storage-unit": tiers[attrs["model"]].network_ports, "mgmt": 1 + tiers[attrs["model"]].oob_ports}
        elif role in ("mgmt-leaf", "mgmt-aggregation"):
            aggregation = design.management_network.aggregation
            expected = {"mgmt-uplink": 2 if role == "mgmt-leaf" and aggregation else 0, "mgmt": 0}
        elif role == "pdu":
            expected = {"mgmt": 1}
        else:
            expected = {"mgmt": switches[attrs["model"]].oob_ports}
        for link_class, count in expected.items():
            assert counts[link_class] == count, (name, link_class, counts[link_class], count)


def check_rails(design: Design, graph: nx.MultiGraph) -> None:
    """With several rail groups (``g = rails_per_leaf`` consecutive rails each), every node's group
    *i* lands on leaves of group *i* (a leaf's ``rail`` is its group's first rail), all ``g`` ports of
    a node's group on one leaf; each group's nodes spread evenly over its leaves (one switch per
    group on a rail-only 1-tier fabric)."""
    fs = design.fabric
    g = fs.rails_per_leaf
    if not (fs.rail_optimized or fs.rail_only):
        return
    load: Counter = Counter()
    leaf_of: dict[tuple[str, int], set[str]] = defaultdict(set)
    for _, _, attrs in graph.edges(data=True):
        if attrs["link_class"] == "node-leaf":
            leaf = graph.nodes[attrs["a_device"]]
            assert leaf["rail"] <= attrs["rail"] < leaf["rail"] + g and (leaf["rail"] - 1) % g == 0
            load[attrs["a_device"]] += 1
            leaf_of[attrs["b_device"], (attrs["rail"] - 1) // g].add(attrs["a_device"])
    assert all(len(leaves) == 1 for leaves in leaf_of.values())
    per_group: dict[int, list[int]] = defaultdict(list)
    for leaf, count in load.items():
        per_group[graph.nodes[leaf]["rail"]].append(count // g)
    part = next(grp for grp in design.links if grp.between == "node-leaf")
    assert len(per_group) == design.nics_per_node // g
    for counts in per_group.values():
        assert sum(counts) == design.nodes and len(counts) == (1 if fs.rail_only else fs.leaves_per_rail)
        assert max(counts) - min(counts) <= max(2, part.count // part.assemblies)
        if fs.tiers >= 2:
            assert max(counts) * g <= fs.leaf_down_ports


def _pairs(graph: nx.MultiGraph, classes: tuple[str, ...]) -> Counter:
    pairs = Counter()
    for _, _, attrs in graph.edges(data=True):
        if attrs["link_class"] in classes:
            pairs[(attrs["b_device"], attrs["a_device"])] += 1
    return pairs


def check_uplinks(design: Design, graph: nx.MultiGraph) -> None:
    """Every compute leaf (those carrying storage units too) reaches every spine of its pod (and
    none other) with links_per_leaf_spine links (2 tiers: u mod S of them one more, every spine
    within one link of the others); spine j of every pod reaches every core of plane j
    with links_per_spine_core links; every storage leaf reaches every storage spine with
    (k/2) / spines links; every management leaf reaches both switches of one aggregation pair."""
    nodes = graph.nodes
    of_role = lambda role: [n for n, a in nodes(data=True) if a["role"] == role]  # noqa: E731
    fs = design.fabric
    if fs.tiers >= 2:
        pairs = _pairs(graph, ("leaf-spine", "spine-core"))
        spines = of_role("spine")
        for leaf in of_role("leaf"):
            pod_spines = [s for s in spines if fs.tiers == 2 or nodes[s]["pod"] == nodes[leaf]["pod"]]
            assert len(pod_spines) == (fs.spines if fs.tiers == 2 else fs.spines_per_pod)
            # Near-balanced 2 tiers: u mod S pairs carry one link more.
            extra = fs.leaf_up_ports % fs.spines if fs.tiers == 2 else 0
            assert sorted(pairs[(leaf, spine)] for spine in pod_spines) == sorted(
                [fs.links_per_leaf_spine] * (len(pod_spines) - extra) + [fs.links_per_leaf_spine + 1] * extra)
            assert sum(pairs[(leaf, s)] for s in spines) == fs.leaf_up_ports
        if fs.tiers == 2:
            # Every spine carries floor or ceil of the leaves' links / S (round-robin).
            loads = [sum(pairs[(leaf, spine)] for leaf in of_role("leaf")) for spine in spines]
            assert max(loads) - min(loads) <= 1
        if fs.tiers == 3:
            cores = of_role("core")
            assert len({nodes[c]["plane"] for c in cores}) == fs.spines_per_pod
            for spine in spines:
                for core in cores:
                    expected = fs.links_per_spine_core if nodes[core]["plane"] == nodes[spine]["plane"] else 0
                    assert pairs[(spine, core)] == expected
    sn = design.storage_network
    if sn.mode == "dedicated" and sn.tiers == 2:
        pairs = _pairs(graph, ("storage-leaf-spine",))
        leaves, spines = of_role("storage-leaf"), of_role("storage-spine")
        up = sn.leaf_up_ports or graph.nodes[leaves[0]]["ports"] // 2  # records without a split: k // 2
        for leaf in leaves:
            assert [pairs[(leaf, s)] for s in spines] == [up // len(spines)] * len(spines)
    if sn.mode == "dedicated" and sn.tiers == 3:
        _check_storage_three_tiers(sn, graph, of_role)
    mn = design.management_network
    pairs = _pairs(graph, ("mgmt-uplink",))
    aggregation = of_role("mgmt-aggregation")
    for leaf in of_role("mgmt-leaf"):
        above = sorted(a for a in aggregation if pairs[(leaf, a)])
        assert [pairs[(leaf, a)] for a in above] == ([1, 1] if mn.aggregation else [])
        if above:
            assert aggregation.index(above[1]) == aggregation.index(above[0]) + 1
            assert aggregation.index(above[0]) % 2 == 0


def _check_storage_three_tiers(sn, graph: nx.MultiGraph, of_role) -> None:
    """3 tiers: every storage leaf reaches the Q = up / m spines of its pod with m links each and
    no other; spine j of every pod reaches each core of plane j with u2 / C links and no other core,
    u2 = the spine's ports less its floor(k/2) down-ports."""
    nodes, m = graph.nodes, sn.links_per_leaf_spine
    pairs = _pairs(graph, ("storage-leaf-spine", "storage-spine-core"))
    leaves, spines, cores = of_role("storage-leaf"), of_role("storage-spine"), of_role("storage-core")
    planes = sn.leaf_up_ports // m
    for leaf in leaves:
        reached = {s: pairs[(leaf, s)] for s in spines if pairs[(leaf, s)]}
        assert set(reached.values()) == {m} and len(reached) == planes
        assert {nodes[s]["pod"] for s in reached} == {nodes[leaf]["pod"]}
    k = nodes[spines[0]]["ports"]
    per_core = (k - k // 2) // (len(cores) // planes)
    for spine in spines:
        reached = {c: pairs[(spine, c)] for c in cores if pairs[(spine, c)]}
        assert set(reached.values()) == {per_core} and len(reached) == len(cores) // planes
        assert {nodes[c]["plane"] for c in reached} == {nodes[spine]["plane"]}


def check_connected(design: Design, graph: nx.MultiGraph) -> None:
    """The whole installation is connected once the management aggregation pairs are joined (they
    reach the site's management core upstream, outside the design); so is the compute fabric
    (nodes and compute switches over compute links) and a dedicated storage network (nodes,
    storage switches and units)."""
    whole = nx.MultiGraph(graph)
    aggregation = [n for n, a in graph.nodes(data=True) if a["role"] == "mgmt-aggregation"]
    whole.add_edges_from(zip(aggregation, aggregation[1:]))
    assert nx.is_connected(whole)

    def connected(classes: tuple[str, ...]) -> bool:
        sub = nx.MultiGraph()
        sub.add_edges_from((u, v) for u, v, a in graph.edges(data=True) if a["link_class"] in classes)
        return nx.is_connected(sub)

    converged = design.storage_network.mode == "converged"
    if design.tiers:
        assert connected(("node-leaf", "leaf-spine", "spine-core") + (("storage-unit",) if converged else ()))
    if design.storage_network.mode == "dedicated":
        assert connected(("node-storage", "storage-unit", "storage-leaf-spine", "storage-spine-core"))


def _one_end(links: list[dict], end: str, ends: int) -> bool:
    """The links leave at most ``ends`` cages of one device at ``end``."""
    if len({link[f"{end}_device"] for link in links}) != 1:
        return False
    return len({SWITCH_PORT.match(link[f"{end}_port"]).group(1, 2) for link in links}) <= ends


def check_assemblies(graph: nx.MultiGraph, catalog: Catalog) -> dict[tuple[str, str], int]:
    """Every cable carries at most ``part.links`` links from ``a_ends`` cages of one upper device
    — or, for a transceiver kit between compute switches (numbered by the cages of its fuller
    end), into ``b_ends`` cages of one lower device; a one-piece cable between compute switches
    joins one pair of switches. Returns the number of assemblies per (link class, part)."""
    cables: dict[str, list[dict]] = defaultdict(list)
    for _, _, attrs in graph.edges(data=True):
        cables[attrs["cable"]].append(attrs)
    per_group: Counter = Counter()
    for links in cables.values():
        part = catalog.by_id("cables")[links[0]["part"]]
        link_class = links[0]["link_class"]
        assert len(links) <= part.links
        assert len({(link["link_class"], link["part"]) for link in links}) == 1
        between_switches = link_class in ("leaf-spine", "spine-core")
        if between_switches and not part.one_piece:
            assert _one_end(links, "a", part.a_ends) or _one_end(links, "b", part.b_ends), links
        else:
            assert _one_end(links, "a", part.a_ends), links
        if between_switches and part.one_piece:
            assert len({link["b_device"] for link in links}) == 1, links
        per_group[link_class, links[0]["part"]] += 1
    # A one-piece cable's end fills its cage: no other cable shares it.
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    for _, _, attrs in graph.edges(data=True):
        if attrs["link_class"] in ("leaf-spine", "spine-core") and catalog.by_id("cables")[attrs["part"]].one_piece:
            for end in ("a", "b"):
                cage = SWITCH_PORT.match(attrs[f"{end}_port"]).group(1, 2)
                holders[attrs[f"{end}_device"], cage].add(attrs["cable"])
    assert all(len(cables) == 1 for cables in holders.values()), holders
    return dict(per_group)


def check_all(design: Design, graph: nx.MultiGraph, catalog: Catalog) -> dict[tuple[str, str], int]:
    check_counts(design, graph, catalog)
    check_ports(design, graph, catalog)
    check_rails(design, graph)
    check_uplinks(design, graph)
    check_connected(design, graph)
    assemblies = check_assemblies(graph, catalog)
    for group in design.links:
        # The design counts ceil(links / part.links); part-filled cages can only add to that.
        key = (group.between, group.part)
        assert assemblies.get(key, 0) >= math.ceil(group.count / catalog.by_id("cables")[group.part].links)
    return assemblies
