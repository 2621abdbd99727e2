"""Port-level wiring of a folded Clos, generated deterministically from the design's counts.

The rules (``docs/model.md``, "Fabric"), with the choices the counts leave open. ``r`` is the
rails per node, ``g`` the rails per leaf (``rails_per_leaf``), ``G = r/g`` the rail groups, ``x``
the leaves per rail group (``leaves_per_rail``), ``d``/``u`` a leaf's down-ports in use on the
fullest leaf and its uplinks, ``k`` the switch radix at the link speed.

* **Rail groups.** The ``r`` rails form ``G`` groups of ``g`` consecutive rails (group *i* holds
  rails ``i·g + 1 … i·g + g``). A leaf of group *i* takes those ``g`` ports of each of its nodes, on
  ``g`` consecutive leaf ports (node by node, rails in order).
* **Node → leaf.** The nodes are split evenly over the ``x`` leaves of every group, the same split
  for each group, and the nodes on leaf *j* of every group form scalable unit *j* (``su``).
  "Evenly" is counted in cable assemblies: a leaf takes whole assemblies (with ``q`` links per
  assembly, ``q / gcd(q, g)`` nodes: two nodes per twin-port cage at ``g = 1``, one node at ``g ≥
  2``), the shares differ by at most one assembly, and only the last leaf may hold a part-filled
  one — so no assembly is wasted. A leaf never holds more than ``c = d / g`` nodes (``d`` is the
  fullest leaf's ports in use): when whole assemblies would exceed that, every leaf takes
  ``floor(c/a)`` whole ones (``a`` nodes each) and the fewest leaves needed are topped up to ``c``
  with one part-filled assembly each — the count the design records (``deal``).
* **1 tier.** One switch per rail group (``G`` switches, each taking group *i* of every node); with
  ``G > 1`` the fabric is rail-only: no link joins the switches. With ``G = 1`` it is the single
  switch of every rail.
* **Names.** Leaves are ``leaf-r3-07`` (rail 3, 7th leaf of that rail) at ``g = 1`` and
  ``leaf-r5-8-07`` (rails 5–8) at ``1 < g < r``; with one rail group (``g = r``, or one rail) they
  are ``leaf-07``. A rail-only 1-tier switch is leaf 1 of its group (``leaf-r1-4-01``).
* **Leaf → spine (2 tiers).** A leaf's ``u`` uplinks (sized to the ports in use, not ``k/2``) are
  dealt over the ``S ≤ u`` spines: every pair gets ``L = floor(u/S)`` links
  (``links_per_leaf_spine``) and ``e = u mod S`` pairs one more, leaf *i*'s extra links going to
  spines ``(i·e + t) mod S``, ``t < e`` — one rotation across the leaves, so every spine carries
  ``floor`` or ``ceil`` of ``leaves·u / S`` links (:func:`leaf_spine_counts`). A spine's links take
  its ports in leaf order; a leaf's uplinks go to the spines in spine order.
* **3 tiers.** Leaves fill pods of ``leaves_per_pod`` in scalable-unit order (all rail groups of a
  scalable unit stay in one pod when they fit), every leaf reaches every spine of its pod with ``m``
  links; spine *j* of every pod reaches every core of plane *j* with ``links_per_spine_core`` links.
  Only the pods built are wired: with growth (``provisioned_nodes``) the cores keep their ports for
  the pods added later.
* **Ports.** Down-ports take the lowest port numbers; uplinks take the top ``ceil(u / ppc)`` cages
  (``ppc`` ports per cage), so the two link classes never share a cage (they use different parts)
  — unless the down-ports reach into those cages, when the uplinks follow the down-ports. On the
  upper device the ports of one link class are consecutive, and its links are grouped into
  assemblies of ``part.links`` in port order: an assembly fills ``part.a_ends`` whole cages
  (``links / a_ends`` logical ports per cage). Between switches a one-piece cable (DAC, ACC, AOC)
  never joins two lower switches, so its assemblies are counted per pair; a transceiver kit's
  modules are cabled port by port, so a cage's links may reach different switches and kits are
  counted by the cages filled at each end.

* **Converged storage** (:mod:`topoopt.fabric.storage` wires the units' ports). 1 tier: on the
  single switch after the node ports. ``converged_attach == "leaves"``: the
  ``compute_storage_leaves`` leaves that carry the units come after the nodes' leaves
  (``leaf-st-01`` …), take up to ``k − u`` unit ports each and uplink like every other leaf (``u``
  links, ``L`` per spine); in 3 tiers they fill the last pod(s). ``converged_attach == "top"``: on
  free ports of the top tier — the spines in 2 tiers, the cores in 3 tiers (see
  :func:`attach_on_top`); no switch is added for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from topoopt.fabric.devices import Assembler, Device, LinkBundle, Run, deal, uplink_base
from topoopt.fabric.hardware import FabricError, Hardware
from topoopt.fabric.names import node_port_names, numbered, port_names, width
from topoopt.models.design import Design

CABLE_PREFIX = {
    "node-leaf": "NL", "leaf-spine": "LS", "spine-core": "SC",
    "node-storage": "NS", "storage-unit": "SU", "storage-leaf-spine": "SS", "storage-spine-core": "SX",
    "mgmt": "MG", "mgmt-uplink": "MU",
}
"""Cable id prefix per link class; a second storage-unit group (cold units on another part) uses ``CU``."""


@dataclass
class Switches:
    """The compute switches of each tier, indexed the way the wiring rules address them."""

    leaves: list[Device]
    """Leaves in wiring order: scalable-unit-major, rail-group-minor; then the leaves carrying the
    storage units of a converged storage network. 1 tier: one switch per rail group."""
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

    @property
    def top(self) -> list[Device]:
        """The top tier in the order converged storage units are spread over it: the spines (2
        tiers), the cores plane by plane (3 tiers), the switches (1 tier)."""
        if self.cores:
            return [core for plane in self.cores for core in plane]
        if self.spines:
            return [spine for pod in self.spines for spine in pod]
        return list(self.leaves)


def new_bundle(design: Design, hw: Hardware, group_index: int, prefix: str | None = None) -> LinkBundle:
    """An empty bundle for the design's link group ``group_index``."""
    group, part = hw.groups[group_index]
    return LinkBundle(between=group.between, part=part, gbps=group.gbps, length_m=group.length_m,
                      network=group.network, prefix=prefix or CABLE_PREFIX[group.between], group=group_index,
                      in_rack_part=hw.in_rack_parts.get(group_index))


def group_index(hw: Hardware, link_class: str) -> int:
    """Index of the (first) link group of ``link_class``; :class:`FabricError` when there is none."""
    for index, (group, _) in enumerate(hw.groups):
        if group.between == link_class:
            return index
    raise FabricError(f"no {link_class} link group (part) in the design")


# ---------------------------------------------------------------------------------------------
# Shape


def rails_per_leaf(design: Design) -> int:
    """``g``: the rails of a node one leaf (or 1-tier switch) carries. A 1-tier fabric of a single
    switch carries every rail, whatever the record says (a schema-1.4 record has no
    ``rails_per_leaf`` and reads 1 there)."""
    fs = design.fabric
    if fs.tiers == 1 and fs.leaves == 1 and not fs.rail_only:
        return max(design.nics_per_node, 1)
    return max(fs.rails_per_leaf, 1)


def rail_groups(design: Design) -> int:
    """``G = r/g``: the rail groups, each with its own leaves (1 tier: its own switch)."""
    return max(design.nics_per_node // rails_per_leaf(design), 1)


def grouped(design: Design) -> bool:
    """Leaves named and drawn by rail group: a compute fabric with several rail groups
    (rail-optimized or multi-rail in 2 and 3 tiers, rail-only in 1 tier)."""
    return design.fabric.tiers >= 1 and rail_groups(design) > 1


def rails_of_group(design: Design, group: int) -> list[int]:
    """The rails (1-based) of rail group ``group`` (0-based)."""
    g = rails_per_leaf(design)
    return list(range(group * g + 1, group * g + g + 1))


def rail_label(first: int, g: int) -> str:
    """``r3`` for one rail, ``r5-8`` for rails 5–8 (leaf names)."""
    return f"r{first}" if g == 1 else f"r{first}-{first + g - 1}"


def rail_text(first: int, g: int) -> str:
    """``rail 3`` / ``rails 5–8`` (drawings)."""
    return f"rail {first}" if g == 1 else f"rails {first}–{first + g - 1}"


def converged_on_leaves(design: Design) -> bool:
    sn = design.storage_network
    return sn.mode == "converged" and design.fabric.tiers >= 2 and sn.converged_attach == "leaves"


def converged_on_top(design: Design) -> bool:
    sn = design.storage_network
    return sn.mode == "converged" and design.fabric.tiers >= 2 and sn.converged_attach == "top"


def storage_leaf_count(design: Design) -> int:
    """Compute-fabric leaves that carry the storage units (converged storage on leaves)."""
    sn = design.storage_network
    return sn.compute_storage_leaves if sn.mode == "converged" and sn.converged_attach == "leaves" else 0


def storage_leaf_ports(design: Design, hw: Hardware) -> int:
    """Unit ports a storage leaf of the compute fabric takes: ``k − u``."""
    return hw.radix - design.fabric.leaf_up_ports


def leaf_spine_counts(leaf: int, up: int, spines: int) -> list[int]:
    """2 tiers: the links from leaf number ``leaf`` (0-based, wiring order) to each spine:
    ``floor(u/S)``, plus one on the ``e = u mod S`` spines ``(leaf·e + t) mod S``, ``t < e``."""
    low, extra = divmod(up, spines)
    counts = [low] * spines
    for t in range(extra):
        counts[(leaf * extra + t) % spines] += 1
    return counts


def top_down_ports(design: Design) -> list[int]:
    """Down-ports in use on each top-tier switch: on spine *j* (2 tiers) its leaves' links
    (:func:`leaf_spine_counts`), ``pods·m2`` on every core (3 tiers)."""
    fs = design.fabric
    if fs.tiers == 2 and fs.spines >= 1:
        low, extra = divmod(fs.leaves * fs.leaf_up_ports, fs.spines)
        return [low + (1 if j < extra else 0) for j in range(fs.spines)]
    if fs.tiers == 3:
        return [fs.pods * fs.links_per_spine_core] * fs.cores
    return []


def check_shape(design: Design, hw: Hardware) -> None:
    """Raise :class:`FabricError` unless the counts describe a wirable folded Clos.

    This checks what the wiring needs (ports within the radix, leaves for the nodes, balanced
    uplinks, the rail groups); the checker (``topoopt.checking``) checks every model rule. A leaf's
    ``leaf_down_ports`` must hold its nodes (``g·ceil(n/x) ≤ d``); a design recording more is wired
    as the nodes need.
    """
    fs, n, r, k = design.fabric, design.nodes, design.nics_per_node, hw.radix
    d, u, m = fs.leaf_down_ports, fs.leaf_up_ports, fs.links_per_leaf_spine
    sn = design.storage_network
    converged = sn.mode == "converged"
    extra = storage_leaf_count(design) if fs.tiers >= 2 else sn.compute_storage_leaves if converged else 0
    g = rails_per_leaf(design) if fs.tiers else fs.rails_per_leaf
    problems = []
    if fs.tiers != design.tiers:
        problems.append(f"design.tiers {design.tiers} != fabric.tiers {fs.tiers}")
    if fs.tiers and (g < 1 or r % g):
        problems.append(f"{g} rails per leaf do not divide the {r} rails of a node")
        raise FabricError("inconsistent fabric counts: " + "; ".join(problems))
    groups = r // g if fs.tiers else 0
    if fs.rail_only != (fs.tiers == 1 and groups > 1):
        problems.append(f"rail_only is {fs.rail_only}, but a {fs.tiers}-tier fabric with {groups} rail groups "
                        f"{'is' if fs.tiers == 1 and groups > 1 else 'is not'} rail-only")
    if fs.rail_optimized != (fs.tiers >= 2 and groups > 1):
        problems.append(f"rail_optimized is {fs.rail_optimized}, but a {fs.tiers}-tier fabric with {groups} rail "
                        f"groups {'is' if fs.tiers >= 2 and groups > 1 else 'is not'} rail-optimized")
    if fs.tiers and d + u > k:
        problems.append(f"leaf ports {d} down + {u} up exceed the radix {k} of {hw.switch.id}")
    if extra and fs.tiers < 2:
        problems.append(f"{extra} storage leaves in a {fs.tiers}-tier compute fabric (only 2 or 3 tiers have leaves)")
    if converged and sn.converged_attach == "top" and sn.compute_storage_leaves and fs.tiers >= 2:
        problems.append(f"{sn.compute_storage_leaves} storage leaves, but the storage units attach to the top tier")
    if converged and fs.tiers == 1 and groups > 1:
        problems.append("a converged storage network on a rail-only fabric (a unit would reach one rail group only)")
    if fs.tiers == 0:
        if n != 1 or fs.leaves or fs.spines or fs.cores or any(grp.between in COMPUTE_CLASSES for grp, _ in hw.groups):
            problems.append("a design without a compute fabric has one node, no switches and no compute links")
        if converged:
            problems.append("a converged storage network needs a compute fabric")
    elif fs.tiers == 1:
        if fs.leaves != groups or fs.spines or fs.cores:
            problems.append(f"a 1-tier fabric has one switch per rail group ({groups}), not {fs.leaves} switches, "
                            f"{fs.spines} spines and {fs.cores} cores")
        units = sn.unit_ports if converged else 0
        if g * n + units > k:
            problems.append(f"{g * n} node ports + {units} storage-unit ports exceed the {k} ports of one {hw.switch.id}")
    else:
        x = fs.leaves_per_rail
        if x < 1 or fs.leaves != groups * x + extra:
            problems.append(f"{fs.leaves} leaves != {groups} rail groups × {x} leaves per rail group + {extra} "
                            "storage leaves")
        elif x > n:
            problems.append(f"{x} leaves per rail group for {n} nodes (a leaf without nodes)")
        elif g * math.ceil(n / x) > d:
            problems.append(f"{x} leaves per rail group × {d // g} nodes ({d} down-ports, {g} rails per leaf) "
                            f"< {n} nodes")
        if converged_on_leaves(design) and extra * (k - u) < sn.unit_ports:
            problems.append(f"{extra} storage leaves × {k - u} ports (k − u) < {sn.unit_ports} storage-unit ports")
        if converged_on_top(design):
            top = fs.spines if fs.tiers == 2 else fs.cores
            if sn.unit_ports + sum(top_down_ports(design)) > top * k:
                problems.append(f"{sn.unit_ports} storage-unit ports do not fit the free ports of {top} "
                                f"{'spines' if fs.tiers == 2 else 'cores'}")
    if fs.tiers == 2:
        if fs.spines < 1 or fs.spines > u or m != u // fs.spines or (u % fs.spines and 2 * fs.spines <= u):
            problems.append(f"{u} leaf uplinks over {fs.spines} spines are not {m} links per pair (evenly, or 1–2 "
                            f"per pair over u/2 < spines < u)")
        elif fs.leaves * u > fs.spines * k:
            problems.append(f"{fs.leaves} leaves × {u} uplinks exceed {fs.spines} spines × radix {k}")
        if fs.cores:
            problems.append("a 2-tier fabric has no cores")
    if fs.tiers == 3:
        q, p, u2, c, m2 = fs.spines_per_pod, fs.leaves_per_pod, fs.spine_up_ports, fs.cores_per_plane, fs.links_per_spine_core
        if q * m != u:
            problems.append(f"{q} spines per pod × {m} links != {u} leaf uplinks")
        if p < 1 or fs.pods != math.ceil(fs.leaves / p):
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


COMPUTE_CLASSES = ("node-leaf", "leaf-spine", "spine-core")


def required_link_classes(design: Design) -> list[str]:
    """The compute fabric's link classes, by tier count."""
    return list(COMPUTE_CLASSES[: design.fabric.tiers])


# ---------------------------------------------------------------------------------------------
# Switches


def make_switches(design: Design, hw: Hardware) -> Switches:
    """Create the compute switches with their names and tier attributes (no racks yet).

    A leaf's ``rail`` is the first rail of its rail group when there are several groups."""
    fs = design.fabric
    if hw.switch is None or fs.tiers == 0:
        return Switches(leaves=[], spines=[], cores=[])
    model, ru, power, k = hw.switch.id, hw.switch.rack_units, hw.switch_power_w, hw.radix

    def switch(name: str, role: str, **attrs) -> Device:
        return Device(name=name, role=role, model=model, rack_units=ru, power_w=power, ports=k, **attrs)

    g, groups = rails_per_leaf(design), rail_groups(design)
    per_group = 1 if fs.tiers == 1 else fs.leaves_per_rail
    leaves: list[Device] = []
    for j in range(per_group):
        for i in range(groups):
            if groups > 1:
                first = i * g + 1
                name = f"leaf-{rail_label(first, g)}-{j + 1:0{width(per_group)}d}"
                leaves.append(switch(name, "leaf", rail=first, su=j + 1))
            else:
                leaves.append(switch(numbered("leaf-", j + 1, per_group), "leaf", su=j + 1))
    extra = storage_leaf_count(design) if fs.tiers >= 2 else 0
    leaves += [switch(numbered("leaf-st-", j + 1, extra), "leaf", carries_storage=True) for j in range(extra)]
    pods = fs.pods if fs.tiers == 3 else 1
    per_pod = fs.leaves_per_pod if fs.tiers == 3 else max(len(leaves), 1)
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


# ---------------------------------------------------------------------------------------------
# Links


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


def node_grain(links_per_assembly: int, g: int) -> int:
    """Nodes per whole assembly on a leaf: ``q / gcd(q, g)`` (a node brings ``g`` ports)."""
    q = max(links_per_assembly, 1)
    return q // math.gcd(q, g)


def _node_leaf(design: Design, hw: Hardware, nodes: list[Device], sw: Switches) -> LinkBundle:
    fs = design.fabric
    bundle = _bundle(design, hw, "node-leaf")
    out = Assembler(bundle)
    leaf_ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    node_ports = node_port_names(design.nics_per_node, hw.node_ports_per_cage)
    g, groups = rails_per_leaf(design), rail_groups(design)
    leaves = sw.node_leaves
    per_group = len(leaves) // groups
    cap = (hw.radix if fs.tiers == 1 else fs.leaf_down_ports) // g
    sizes = deal(len(nodes), per_group, cap, node_grain(bundle.part.links, g), what="nodes", bins_what="leaves")
    start = 0
    for j, size in enumerate(sizes):
        block = nodes[start:start + size]
        start += size
        for node in block:
            node.su = j + 1
        for i in range(groups):
            leaf = leaves[j * groups + i]
            rails = rails_of_group(design, i)
            out.add_device(leaf.name, leaf_ports[:size * g], [node.name for node in block for _ in rails],
                           [node_ports[rail - 1] for _ in block for rail in rails], [rail for _ in block for rail in rails])
    return bundle


def _switch_bundle(design: Design, hw: Hardware, link_class: str) -> LinkBundle:
    """A switch-to-switch bundle: a transceiver kit is counted by the cages it fills, a one-piece
    cable per pair of switches (docs/model.md, "Cables and transceivers")."""
    bundle = _bundle(design, hw, link_class)
    bundle.kits_by_cage = not bundle.part.one_piece
    return bundle


def leaf_uplink_base(design: Design, hw: Hardware, leaf: Device) -> int:
    """First uplink port index of ``leaf``: the top cages, above its down-ports (``d`` for a node
    leaf, ``k − u`` for a storage leaf)."""
    fs = design.fabric
    down = storage_leaf_ports(design, hw) if leaf.carries_storage else fs.leaf_down_ports
    return uplink_base(hw.radix, hw.switch_ports_per_cage, down, fs.leaf_up_ports)


def _leaf_spine(design: Design, hw: Hardware, sw: Switches) -> LinkBundle:
    fs = design.fabric
    bundle = _switch_bundle(design, hw, "leaf-spine")
    out = Assembler(bundle)
    ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    m = fs.links_per_leaf_spine
    if fs.tiers == 2:
        _two_tier_leaf_spine(design, hw, sw, out, ports)
        return bundle
    for p, pod_spines in enumerate(sw.spines):
        pod_leaves = [leaf for leaf in sw.leaves if leaf.pod == p + 1]
        bases = [leaf_uplink_base(design, hw, leaf) for leaf in pod_leaves]
        count = len(pod_leaves) * m
        b_devices = [leaf.name for leaf in pod_leaves for _ in range(m)]
        for j, spine in enumerate(pod_spines):
            b_ports = [ports[base + j * m + t] for base in bases for t in range(m)]
            out.add_device(spine.name, ports[:count], b_devices, b_ports, per_pair=bundle.part.one_piece)
    return bundle


def _two_tier_leaf_spine(design: Design, hw: Hardware, sw: Switches, out: Assembler, ports: list[str]) -> None:
    """2 tiers: leaf *i* sends ``leaf_spine_counts(i, u, S)[j]`` links to spine *j*, on its uplink
    ports in spine order; spine *j* takes them on its lowest ports in leaf order."""
    fs = design.fabric
    spines = sw.spines[0]
    counts = [leaf_spine_counts(i, fs.leaf_up_ports, len(spines)) for i in range(len(sw.leaves))]
    offsets = [[sum(row[:j]) for j in range(len(spines))] for row in counts]
    bases = [leaf_uplink_base(design, hw, leaf) for leaf in sw.leaves]
    for j, spine in enumerate(spines):
        b_devices = [leaf.name for i, leaf in enumerate(sw.leaves) for _ in range(counts[i][j])]
        b_ports = [ports[bases[i] + offsets[i][j] + t] for i in range(len(sw.leaves)) for t in range(counts[i][j])]
        out.add_device(spine.name, ports[:len(b_ports)], b_devices, b_ports, per_pair=out.bundle.part.one_piece)


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


# ---------------------------------------------------------------------------------------------
# Converged storage on the top tier


def attach_on_top(design: Design, hw: Hardware, sw: Switches, runs: list[Run]) -> None:
    """Storage-unit ports on free ports of the top tier (``converged_attach == "top"``).

    The rule: each unit's ports are cut into assemblies of ``part.links`` ports (hot units, then
    cold units, each unit's ports in order), and the assemblies are dealt round-robin over the top
    tier — spines ``spine-01``, ``spine-02`` … (2 tiers), cores plane by plane ``core-p1-01``,
    ``core-p1-02`` …, ``core-p2-01`` … (3 tiers) — one rotation across all units, skipping a switch
    whose free ports are full (a near-balanced spine tier's busier spines have fewer), so the switches
    carry the same number of unit assemblies, give or take one, until one is full. On a switch they take the top
    ports, counting down a whole assembly at a time (the top cage first), so the low ports stay
    free for the leaves (pods) the switch already reaches and those added later (growth). An
    assembly serves one unit, as the model counts them (``units × ceil(ports / part.links)``).
    Raises :class:`FabricError` when every switch's free ports above its down-ports in use are full.
    """
    top = sw.top
    if not top:
        raise FabricError("converged storage on the top tier needs spines or cores")
    ppc = hw.switch_ports_per_cage
    ports = port_names(hw.switch.cages, ppc)
    floors = [math.ceil(down / ppc) * ppc for down in top_down_ports(design)]
    next_top = [hw.radix] * len(top)
    turn = 0
    for run in runs:
        q = max(run.bundle.part.links, 1)
        out = Assembler(run.bundle)
        out.next_cable = max(run.bundle.cable, default=-1) + 1
        keys = run.keys if run.keys is not None else list(range(len(run.b_devices)))
        start = 0
        while start < len(keys):
            stop = start
            while stop < len(keys) and keys[stop] == keys[start] and stop - start < q:
                stop += 1
            room = [s % len(top) for s in range(turn, turn + len(top))
                    if next_top[s % len(top)] - q >= floors[s % len(top)]]
            if not room:
                raise FabricError(f"{run.bundle.between} ports left over: the free ports of {len(top)} "
                                  f"{top[0].role}s above their down-ports in use are full")
            s = room[0]
            turn = s + 1
            low = next_top[s] - q
            next_top[s] = low
            out.add_device(top[s].name, ports[low:low + stop - start], run.b_devices[start:stop], run.b_ports[start:stop])
            start = stop
