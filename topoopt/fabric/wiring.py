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

Links are stored column-wise (:class:`LinkBundle`) so the exports never pay per-edge object costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from topoopt.fabric.hardware import FabricError, Hardware
from topoopt.fabric.names import node_port_names, numbered, port_names, width
from topoopt.models.catalog import LinkPart
from topoopt.models.design import Design

CABLE_PREFIX = {"node-leaf": "NL", "leaf-spine": "LS", "spine-core": "SC"}


@dataclass(slots=True)
class Device:
    """One box: a node, a switch or a storage unit."""

    name: str
    role: str
    """``node``, ``leaf``, ``spine``, ``core`` or ``storage``."""
    model: str
    rack_units: int
    power_w: float
    ports: int
    """Logical compute ports: rails of a node, radix of a switch at the link speed, 0 for storage."""
    gpus: int = 0
    rail: int = 0
    su: int = 0
    pod: int = 0
    plane: int = 0
    rack: str = ""
    u: int = 0


@dataclass
class LinkBundle:
    """Every link of one link class, column-wise; index ``i`` is one logical link.

    End *a* is the upper device (leaf for node links, spine, core), end *b* the lower one.
    ``cable[i]`` is the index of the assembly carrying link ``i`` (into ``cable_ids``).
    """

    between: str
    part: LinkPart
    gbps: int
    length_m: float
    a_device: list[str] = field(default_factory=list)
    a_port: list[str] = field(default_factory=list)
    b_device: list[str] = field(default_factory=list)
    b_port: list[str] = field(default_factory=list)
    rail: list[int] = field(default_factory=list)
    cable: list[int] = field(default_factory=list)
    cable_ids: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.a_device)

    @property
    def assemblies(self) -> int:
        return len(self.cable_ids)

    def name_cables(self) -> None:
        """Give assemblies stable ids ``NL-0001`` … in wiring order."""
        count = (max(self.cable) + 1) if self.cable else 0
        prefix = CABLE_PREFIX[self.between]
        self.cable_ids = [numbered(f"{prefix}-", i + 1, count) for i in range(count)]


@dataclass
class Switches:
    """The switches of each tier, indexed the way the wiring rules address them."""

    leaves: list[Device]
    """Leaves in wiring order: scalable-unit-major, rail-minor when rail-optimized."""
    spines: list[list[Device]]
    """``spines[pod][j]`` (2 tiers: one pod)."""
    cores: list[list[Device]]
    """``cores[plane][c]``."""


def deal(total: int, bins: int, cap: int, grain: int) -> list[int]:
    """Split ``total`` items over ``bins`` bins of at most ``cap``, evenly in whole grains.

    Shares differ by at most one grain and only the last non-empty bin holds a part grain, so the
    number of grains used is ``ceil(total / grain)``. Falls back to an item-even split when whole
    grains cannot respect ``cap``.

    >>> deal(33, 3, 32, 2)
    [12, 12, 9]
    """
    if bins < 1:
        raise FabricError("no leaf to wire nodes to")
    grains = math.ceil(total / grain)
    base, extra = divmod(grains, bins)
    sizes = [(base + (1 if j < extra else 0)) * grain for j in range(bins)]
    overshoot = sum(sizes) - total
    for j in range(bins - 1, -1, -1):
        if overshoot == 0:
            break
        cut = min(overshoot, sizes[j])
        sizes[j] -= cut
        overshoot -= cut
    if max(sizes, default=0) > cap:
        base, extra = divmod(total, bins)
        sizes = [base + (1 if j < extra else 0) for j in range(bins)]
    if max(sizes, default=0) > cap:
        raise FabricError(f"{total} ports do not fit {bins} leaves of {cap} down-ports")
    return sizes


def uplink_base(radix: int, ports_per_cage: int, down: int, up: int) -> int:
    """First port index of the uplinks: the top ``ceil(up / ppc)`` cages, else right after ``down``."""
    top = radix - math.ceil(up / ports_per_cage) * ports_per_cage
    if top >= math.ceil(down / ports_per_cage) * ports_per_cage:
        return top
    return down


class _Assembler:
    """Appends links of one upper device and groups them into assemblies in port order."""

    def __init__(self, bundle: LinkBundle) -> None:
        self.bundle = bundle
        self.next_cable = 0

    def add_device(self, a_device: str, a_ports: list[str], b_devices: list[str], b_ports: list[str],
                   rails: list[int] | None = None) -> None:
        b = self.bundle
        count = len(a_ports)
        if count == 0:
            return
        per = b.part.links
        b.a_device.extend([a_device] * count)
        b.a_port.extend(a_ports)
        b.b_device.extend(b_devices)
        b.b_port.extend(b_ports)
        b.rail.extend(rails if rails is not None else [0] * count)
        first = self.next_cable
        b.cable.extend(first + t // per for t in range(count))
        self.next_cable = first + math.ceil(count / per)


def check_shape(design: Design, hw: Hardware) -> None:
    """Raise :class:`FabricError` unless the counts describe a wirable folded Clos."""
    fs, n, r, k = design.fabric, design.nodes, design.nics_per_node, hw.radix
    d, u, m = fs.leaf_down_ports, fs.leaf_up_ports, fs.links_per_leaf_spine
    problems = []
    if fs.tiers != design.tiers:
        problems.append(f"design.tiers {design.tiers} != fabric.tiers {fs.tiers}")
    if fs.tiers and d + u > k:
        problems.append(f"leaf ports {d} down + {u} up exceed the radix {k} of {hw.switch.id}")
    if fs.tiers == 0:
        if n != 1 or fs.leaves or fs.spines or fs.cores or design.links:
            problems.append("a design without a compute fabric has one node, no switches and no links")
    elif fs.tiers == 1:
        if fs.leaves != 1 or fs.spines or fs.cores:
            problems.append("a 1-tier fabric has exactly one switch")
        if n * r > k:
            problems.append(f"{n * r} node ports exceed the {k} ports of one {hw.switch.id}")
    elif rail_optimized(design):
        if fs.leaves_per_rail * d < n:
            problems.append(f"{fs.leaves_per_rail} leaves per rail × {d} down-ports < {n} nodes")
    elif fs.leaves * d < n * r:
        problems.append(f"{fs.leaves} leaves × {d} down-ports < {n * r} node ports")
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
    for link_class in required_link_classes(design):
        if link_class not in hw.parts:
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
        and fs.leaves == design.nics_per_node * fs.leaves_per_rail
    )


def required_link_classes(design: Design) -> list[str]:
    return ["node-leaf", "leaf-spine", "spine-core"][: design.fabric.tiers]


def make_switches(design: Design, hw: Hardware) -> Switches:
    """Create the switches with their names and tier attributes (no racks yet)."""
    fs, r = design.fabric, design.nics_per_node
    if hw.switch is None:
        return Switches(leaves=[], spines=[], cores=[])
    model, ru, power, k = hw.switch.id, hw.switch.rack_units, hw.switch_power_w, hw.radix

    def switch(name: str, role: str, **attrs: int) -> Device:
        return Device(name=name, role=role, model=model, rack_units=ru, power_w=power, ports=k, **attrs)

    leaves: list[Device] = []
    if rail_optimized(design):
        per_rail = fs.leaves_per_rail
        for j in range(per_rail):
            for rail in range(1, r + 1):
                leaves.append(switch(f"leaf-r{rail}-{j + 1:0{width(per_rail)}d}", "leaf", rail=rail, su=j + 1))
    else:
        leaves = [switch(numbered("leaf-", j + 1, fs.leaves), "leaf", su=j + 1) for j in range(fs.leaves)]
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
    """Every logical link of the design, grouped into assemblies; sets each node's ``su``."""
    if design.fabric.tiers == 0:
        return []
    bundles = [_node_leaf(design, hw, nodes, sw)]
    if design.fabric.tiers >= 2:
        bundles.append(_leaf_spine(design, hw, sw))
    if design.fabric.tiers == 3:
        bundles.append(_spine_core(design, hw, sw))
    for bundle in bundles:
        bundle.name_cables()
    return bundles


def _bundle(design: Design, hw: Hardware, link_class: str) -> LinkBundle:
    group = next(g for g in design.links if g.between == link_class)
    return LinkBundle(between=link_class, part=hw.parts[link_class], gbps=design.link_gbps, length_m=group.length_m)


def _node_leaf(design: Design, hw: Hardware, nodes: list[Device], sw: Switches) -> LinkBundle:
    fs, r = design.fabric, design.nics_per_node
    bundle = _bundle(design, hw, "node-leaf")
    out = _Assembler(bundle)
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
    sizes = deal(len(endpoints), len(sw.leaves), fs.leaf_down_ports if fs.tiers > 1 else hw.radix, grain)
    start = 0
    for leaf, size in zip(sw.leaves, sizes):
        block = endpoints[start:start + size]
        start += size
        for node, _ in block:
            if not node.su:
                node.su = leaf.su
        out.add_device(leaf.name, leaf_ports[:size], [n.name for n, _ in block],
                       [node_ports[rail - 1] for _, rail in block], [rail for _, rail in block])
    return bundle


def _leaf_spine(design: Design, hw: Hardware, sw: Switches) -> LinkBundle:
    fs = design.fabric
    bundle = _bundle(design, hw, "leaf-spine")
    out = _Assembler(bundle)
    ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    m = fs.links_per_leaf_spine
    leaf_up = uplink_base(hw.radix, hw.switch_ports_per_cage, fs.leaf_down_ports, fs.leaf_up_ports)
    for p, pod_spines in enumerate(sw.spines):
        pod_leaves = [leaf for leaf in sw.leaves if leaf.pod == p + 1]
        count = len(pod_leaves) * m
        b_devices = [leaf.name for leaf in pod_leaves for _ in range(m)]
        for j, spine in enumerate(pod_spines):
            b_ports = [ports[leaf_up + j * m + t] for _ in pod_leaves for t in range(m)]
            out.add_device(spine.name, ports[:count], b_devices, b_ports)
    return bundle


def _spine_core(design: Design, hw: Hardware, sw: Switches) -> LinkBundle:
    fs = design.fabric
    bundle = _bundle(design, hw, "spine-core")
    out = _Assembler(bundle)
    ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    m2 = fs.links_per_spine_core
    spine_up = uplink_base(hw.radix, hw.switch_ports_per_cage, fs.leaves_per_pod * fs.links_per_leaf_spine,
                           fs.spine_up_ports)
    count = len(sw.spines) * m2
    for j, plane in enumerate(sw.cores):
        b_devices = [pod[j].name for pod in sw.spines for _ in range(m2)]
        for c, core in enumerate(plane):
            b_ports = [ports[spine_up + c * m2 + t] for _ in sw.spines for t in range(m2)]
            out.add_device(core.name, ports[:count], b_devices, b_ports)
    return bundle
