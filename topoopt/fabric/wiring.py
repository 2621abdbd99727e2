"""Port-level wiring of a folded Clos, generated deterministically from the design's counts.

The rules (``docs/model.md``, "Fabric"), with the choices the counts leave open:

* **Node → leaf.** In a rail-optimized fabric rail *i* of every node lands on leaf group *i*, and
  the nodes are split evenly over the ``leaves_per_rail`` leaves of each rail. "Evenly" is counted
  in cable assemblies: a leaf takes whole assemblies (a twin-port cage = two nodes), the shares
  differ by at most one assembly, and only the last leaf of a rail may hold a part-filled one — so
  no assembly is wasted. The nodes on leaf *j* of every rail form scalable unit *j* (``su``).
  Without rails every node port is dealt out to the leaves the same way.
* **Leaf → spine (2 tiers).** Every leaf reaches every spine with ``links_per_leaf_spine`` links.
* **3 tiers.** Leaves fill pods of ``leaves_per_pod`` in scalable-unit order (all rails of a
  scalable unit stay in one pod when they fit), every leaf reaches every spine of its pod; spine *j*
  of every pod reaches every core of plane *j* with ``links_per_spine_core`` links.
* **Ports.** Down-ports take the lowest port numbers; uplinks take the top cages, so the two link
  classes never share a cage (they use different parts). On the upper device the ports of one link
  class are consecutive, and its links are grouped into assemblies of ``part.links`` in port order:
  an assembly fills ``part.a_ends`` whole cages (``links / a_ends`` logical ports per cage).
  Between switches a one-piece cable (DAC, ACC, AOC) never joins two lower switches, so its
  assemblies are counted per pair; a transceiver kit's modules are cabled port by port, so a
  cage's links may reach different switches and kits are counted by the cages filled at each end.

* **Converged storage.** The ``compute_storage_leaves`` leaves that carry the storage units come
  after the nodes' leaves (``leaf-st-01`` …) and uplink like every other leaf; in 3 tiers they
  fill the last pod(s). Their down-ports are wired by :mod:`topoopt.fabric.storage`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from topoopt.fabric.devices import Assembler, Device, LinkBundle, deal, uplink_base
from topoopt.fabric.hardware import FabricError, Hardware
from topoopt.fabric.names import node_port_names, numbered, port_names, width
from topoopt.models.design import Design

CABLE_PREFIX = {
    "node-leaf": "NL", "leaf-spine": "LS", "spine-core": "SC",
    "node-storage": "NS", "storage-unit": "SU", "storage-leaf-spine": "SS",
    "mgmt": "MG", "mgmt-uplink": "MU",
}
"""Cable id prefix per link class; a second storage-unit group (cold units on another part) uses ``CU``."""


@dataclass
class Switches:
    """The compute switches of each tier, indexed the way the wiring rules address them."""

    leaves: list[Device]
    """Leaves in wiring order: scalable-unit-major, rail-minor when rail-optimized; then the leaves
    carrying the storage units of a converged storage network."""
    spines: list[list[Device]]
    """``spines[pod][j]`` (2 tiers: one pod)."""
    cores: list[list[Device]]
    """``cores[plane][c]``."""

    @property
    def node_leaves(self) -> list[Device]:
        """The leaves the nodes attach to (all but the storage leaves)."""
        return [leaf for leaf in self.leaves if not leaf.carries_storage]

    @property
    def storage_leaves(self) -> list[Device]:
        return [leaf for leaf in self.leaves if leaf.carries_storage]


def new_bundle(design: Design, hw: Hardware, group_index: int, prefix: str | None = None) -> LinkBundle:
    """An empty bundle for the design's link group ``group_index``."""
    group, part = hw.groups[group_index]
    return LinkBundle(between=group.between, part=part, gbps=group.gbps, length_m=group.length_m,
                      network=group.network, prefix=prefix or CABLE_PREFIX[group.between], group=group_index)


def group_index(hw: Hardware, link_class: str) -> int:
    """Index of the (first) link group of ``link_class``; :class:`FabricError` when there is none."""
    for index, (group, _) in enumerate(hw.groups):
        if group.between == link_class:
            return index
    raise FabricError(f"no {link_class} link group (part) in the design")


def storage_leaf_count(design: Design) -> int:
    """Compute-fabric leaves that carry the storage units (converged storage network)."""
    sn = design.storage_network
    return sn.compute_storage_leaves if sn.mode == "converged" else 0


def check_shape(design: Design, hw: Hardware) -> None:
    """Raise :class:`FabricError` unless the counts describe a wirable folded Clos."""
    fs, n, r, k = design.fabric, design.nodes, design.nics_per_node, hw.radix
    d, u, m = fs.leaf_down_ports, fs.leaf_up_ports, fs.links_per_leaf_spine
    extra = storage_leaf_count(design)
    node_leaves = fs.leaves - extra
    problems = []
    if fs.tiers != design.tiers:
        problems.append(f"design.tiers {design.tiers} != fabric.tiers {fs.tiers}")
    if fs.tiers and d + u > k:
        problems.append(f"leaf ports {d} down + {u} up exceed the radix {k} of {hw.switch.id}")
    if extra and fs.tiers < 2:
        problems.append(f"{extra} storage leaves in a {fs.tiers}-tier compute fabric (only 2 or 3 tiers have leaves)")
    if fs.tiers == 0:
        if n != 1 or fs.leaves or fs.spines or fs.cores or any(g.between in COMPUTE_CLASSES for g, _ in hw.groups):
            problems.append("a design without a compute fabric has one node, no switches and no compute links")
        if design.storage_network.mode == "converged":
            problems.append("a converged storage network needs a compute fabric")
    elif fs.tiers == 1:
        if fs.leaves != 1 or fs.spines or fs.cores:
            problems.append("a 1-tier fabric has exactly one switch")
        units = design.storage_network.unit_ports if design.storage_network.mode == "converged" else 0
        if n * r + units > k:
            problems.append(f"{n * r} node ports + {units} storage-unit ports exceed the {k} ports of one {hw.switch.id}")
    elif rail_optimized(design):
        if fs.leaves_per_rail * d < n:
            problems.append(f"{fs.leaves_per_rail} leaves per rail × {d} down-ports < {n} nodes")
    elif node_leaves * d < n * r:
        problems.append(f"{node_leaves} node leaves × {d} down-ports < {n * r} node ports")
    if fs.tiers == 2:
        if fs.spines < 1 or fs.spines * m != u:
            problems.append(f"{fs.spines} spines × {m} links per leaf-spine pair != {u} leaf uplinks")
        if fs.leaves * m > k:
            problems.append(f"{fs.leaves} leaves × {m} links exceed the spine radix {k}")
        if fs.cores:
            problems.append("a 2-tier fabric has no cores")
    if fs.tiers == 3:
        q, p, u2, c, m2 = fs.spines_per_pod, fs.leaves_per_pod, fs.spine_up_ports, fs.cores_per_plane, fs.links_per_spine_core
        if q * m != u:
            problems.append(f"{q} spines per pod × {m} links != {u} leaf uplinks")
        if fs.pods != math.ceil(fs.leaves / p):
            problems.append(f"{fs.pods} pods != ceil({fs.leaves} leaves / {p} per pod)")
        if fs.spines != fs.pods * q:
            problems.append(f"{fs.spines} spines != {fs.pods} pods × {q}")
        if p * m + u2 > k:
            problems.append(f"spine ports {p * m} down + {u2} up exceed the radix {k}")
        if c * m2 != u2 or fs.cores != q * c:
            problems.append(f"{fs.cores} cores != {q} planes × {c}, or {c} × {m2} links != {u2} spine uplinks")
        if fs.pods * m2 > k:
            problems.append(f"{fs.pods} pods × {m2} links exceed the core radix {k}")
    classes = {group.between for group, _ in hw.groups}
    for link_class in required_link_classes(design):
        if link_class not in classes:
            problems.append(f"no {link_class} link group (part) in the design")
    if problems:
        raise FabricError("inconsistent fabric counts: " + "; ".join(problems))


def rail_optimized(design: Design) -> bool:
    """Rail *i* of every node on leaf group *i*: needs rails and one leaf group per rail."""
    fs = design.fabric
    return (
        fs.tiers >= 2
        and fs.rail_optimized
        and design.nics_per_node > 1
        and fs.leaves == design.nics_per_node * fs.leaves_per_rail + storage_leaf_count(design)
    )


COMPUTE_CLASSES = ("node-leaf", "leaf-spine", "spine-core")


def required_link_classes(design: Design) -> list[str]:
    """The compute fabric's link classes, by tier count."""
    return list(COMPUTE_CLASSES[: design.fabric.tiers])


def make_switches(design: Design, hw: Hardware) -> Switches:
    """Create the compute switches with their names and tier attributes (no racks yet)."""
    fs, r = design.fabric, design.nics_per_node
    if hw.switch is None:
        return Switches(leaves=[], spines=[], cores=[])
    model, ru, power, k = hw.switch.id, hw.switch.rack_units, hw.switch_power_w, hw.radix

    def switch(name: str, role: str, **attrs) -> Device:
        return Device(name=name, role=role, model=model, rack_units=ru, power_w=power, ports=k, **attrs)

    extra = storage_leaf_count(design)
    leaves: list[Device] = []
    if rail_optimized(design):
        per_rail = fs.leaves_per_rail
        for j in range(per_rail):
            for rail in range(1, r + 1):
                leaves.append(switch(f"leaf-r{rail}-{j + 1:0{width(per_rail)}d}", "leaf", rail=rail, su=j + 1))
    else:
        node_leaves = fs.leaves - extra
        leaves = [switch(numbered("leaf-", j + 1, node_leaves), "leaf", su=j + 1) for j in range(node_leaves)]
    leaves += [switch(numbered("leaf-st-", j + 1, extra), "leaf", carries_storage=True) for j in range(extra)]
    pods = fs.pods if fs.tiers == 3 else 1
    per_pod = fs.leaves_per_pod if fs.tiers == 3 else max(fs.leaves, 1)
    for index, leaf in enumerate(leaves):
        leaf.pod = index // per_pod + 1
    spines: list[list[Device]] = []
    if fs.tiers == 2:
        spines = [[switch(numbered("spine-", s + 1, fs.spines), "spine", pod=1, plane=s + 1) for s in range(fs.spines)]]
    elif fs.tiers == 3:
        q = fs.spines_per_pod
        spines = [
            [switch(numbered("spine-", p * q + j + 1, fs.spines), "spine", pod=p + 1, plane=j + 1) for j in range(q)]
            for p in range(pods)
        ]
    cores: list[list[Device]] = []
    if fs.tiers == 3:
        c = fs.cores_per_plane
        cores = [
            [switch(f"core-p{j + 1}-{i + 1:0{width(c)}d}", "core", plane=j + 1) for i in range(c)]
            for j in range(fs.spines_per_pod)
        ]
    return Switches(leaves=leaves, spines=spines, cores=cores)


def wire(design: Design, hw: Hardware, nodes: list[Device], sw: Switches) -> list[LinkBundle]:
    """Every compute-fabric link of the design, grouped into assemblies; sets each node's ``su``.
    Cable ids are given by the caller, once every bundle is complete."""
    if design.fabric.tiers == 0:
        return []
    bundles = [_node_leaf(design, hw, nodes, sw)]
    if design.fabric.tiers >= 2:
        bundles.append(_leaf_spine(design, hw, sw))
    if design.fabric.tiers == 3:
        bundles.append(_spine_core(design, hw, sw))
    return bundles


def _bundle(design: Design, hw: Hardware, link_class: str) -> LinkBundle:
    return new_bundle(design, hw, group_index(hw, link_class))


def _node_leaf(design: Design, hw: Hardware, nodes: list[Device], sw: Switches) -> LinkBundle:
    fs, r = design.fabric, design.nics_per_node
    bundle = _bundle(design, hw, "node-leaf")
    out = Assembler(bundle)
    leaf_ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    node_ports = node_port_names(r, hw.node_ports_per_cage)
    grain = bundle.part.links
    if rail_optimized(design):
        sizes = deal(len(nodes), fs.leaves_per_rail, fs.leaf_down_ports, grain)
        start = 0
        for j, size in enumerate(sizes):
            block = nodes[start:start + size]
            start += size
            for node in block:
                node.su = j + 1
            names = [node.name for node in block]
            for rail in range(1, r + 1):
                leaf = sw.leaves[j * r + rail - 1]
                out.add_device(leaf.name, leaf_ports[:size], names, [node_ports[rail - 1]] * size, [rail] * size)
        return bundle
    endpoints = [(node, rail) for node in nodes for rail in range(1, r + 1)]
    leaves = sw.node_leaves
    sizes = deal(len(endpoints), len(leaves), fs.leaf_down_ports if fs.tiers > 1 else hw.radix, grain)
    start = 0
    for leaf, size in zip(leaves, sizes):
        block = endpoints[start:start + size]
        start += size
        for node, _ in block:
            if not node.su:
                node.su = leaf.su
        out.add_device(leaf.name, leaf_ports[:size], [n.name for n, _ in block],
                       [node_ports[rail - 1] for _, rail in block], [rail for _, rail in block])
    return bundle


def _switch_bundle(design: Design, hw: Hardware, link_class: str) -> LinkBundle:
    """A switch-to-switch bundle: a transceiver kit is counted by the cages it fills, a one-piece
    cable per pair of switches (docs/model.md, "Cables and transceivers")."""
    bundle = _bundle(design, hw, link_class)
    bundle.kits_by_cage = not bundle.part.one_piece
    return bundle


def _leaf_spine(design: Design, hw: Hardware, sw: Switches) -> LinkBundle:
    fs = design.fabric
    bundle = _switch_bundle(design, hw, "leaf-spine")
    out = Assembler(bundle)
    ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    m = fs.links_per_leaf_spine
    leaf_up = uplink_base(hw.radix, hw.switch_ports_per_cage, fs.leaf_down_ports, fs.leaf_up_ports)
    for p, pod_spines in enumerate(sw.spines):
        pod_leaves = [leaf for leaf in sw.leaves if leaf.pod == p + 1]
        count = len(pod_leaves) * m
        b_devices = [leaf.name for leaf in pod_leaves for _ in range(m)]
        for j, spine in enumerate(pod_spines):
            b_ports = [ports[leaf_up + j * m + t] for _ in pod_leaves for t in range(m)]
            out.add_device(spine.name, ports[:count], b_devices, b_ports, per_pair=bundle.part.one_piece)
    return bundle


def _spine_core(design: Design, hw: Hardware, sw: Switches) -> LinkBundle:
    fs = design.fabric
    bundle = _switch_bundle(design, hw, "spine-core")
    out = Assembler(bundle)
    ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    m2 = fs.links_per_spine_core
    spine_up = uplink_base(hw.radix, hw.switch_ports_per_cage, fs.leaves_per_pod * fs.links_per_leaf_spine,
                           fs.spine_up_ports)
    count = len(sw.spines) * m2
    for j, plane in enumerate(sw.cores):
        b_devices = [pod[j].name for pod in sw.spines for _ in range(m2)]
        for c, core in enumerate(plane):
            b_ports = [ports[spine_up + c * m2 + t] for _ in sw.spines for t in range(m2)]
            out.add_device(core.name, ports[:count], b_devices, b_ports, per_pair=bundle.part.one_piece)
    return bundle
