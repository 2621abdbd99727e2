"""The storage network: storage units, storage switches and their links, from the design's counts.

Rules (the issue-8 design record :class:`~topoopt.models.design.StorageNetwork`), with the
choices the counts leave open:

* **Units.** ``design.storage.units`` hot units (``storage-01`` …) and ``design.cold_storage.units``
  cold units (``cold-01`` …); every unit's ``network_ports`` data ports are attached.
* **Dedicated.** Every node has ``nics_per_node × nic.ports`` storage ports (``snic1/1`` …), of
  which ``ports_per_node`` are cabled, port-major (``snic1/1``, ``snic2/1``, ``snic1/2`` …: port 1
  of every NIC first), all at ``link_gbps``; the others stay empty. One tier: one storage switch
  takes every node and unit port. Two tiers: a storage leaf has ``leaf_down_ports`` down-ports and
  ``leaf_up_ports`` uplinks (``k // 2`` each in records without them; ``k`` the switch's radix at
  the link speed), and reaches every storage spine with ``m = up / spines`` links.
  Three tiers: pods of ``P = floor(k/2) / m`` leaves (in order) and ``Q = up / m`` spines
  (``sspine-01`` … pod by pod), ``m = links_per_leaf_spine``; leaf *i* of a pod reaches spine *j*
  of its pod with ``m`` links (its uplinks in spine order, the spine's down-ports in leaf order);
  spine *j* of every pod reaches each of the ``C = cores / Q`` cores of plane *j* (``score-p1-01``
  …) with ``u2 / C`` links from its ``u2 = k − floor(k/2)`` uplinks.
* **Converged.** No storage NICs: the units hang off the compute fabric — in 2 or 3 tiers off the
  extra ``compute_storage_leaves`` leaves (``leaf-st-01`` …, ``k − u`` unit ports each) when
  ``converged_attach`` is ``leaves``, or off free ports of the spines (2 tiers) or cores (3 tiers)
  when it is ``top`` (spread evenly, see :func:`topoopt.fabric.wiring.attach_on_top`); in 1 tier
  off the single switch after the node ports.
* **Order.** Endpoint ports are dealt to the switches in order — the nodes' storage ports (node by
  node), then the hot units', then the cold units' — each switch filled before the next, and each
  link group starting on a fresh cable assembly (never a cage shared by two parts).
* **Assemblies.** As the model counts them: one joins the same storage port (``snic1/1``) of
  consecutive nodes on a switch, like a rail (``ports_per_node × ceil(nodes / part.links)``),
  and one serves one storage unit (``units × ceil(ports / part.links)``). Between storage
  switches a one-piece cable joins one (upper, lower) pair, ``ceil(links per pair / part.links)``
  each; transceiver kits are counted by the cages their modules fill at each end
  (``LinkBundle.kits_by_cage``: a module's ports may reach several switches).
* **Parts.** Node ports use the ``node-storage`` link group, leaf–spine links the
  ``storage-leaf-spine`` group, spine–core links the ``storage-spine-core`` group. Unit ports use
  the design's ``storage-unit`` groups in order (hot tier, then cold tier), or the only one for
  both.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.fabric.devices import Assembler, Device, LinkBundle, Run, fill, uplink_base
from topoopt.fabric.hardware import FabricError, Hardware
from topoopt.fabric.names import cabled_storage_port_names, data_port_names, numbered, port_names, width
from topoopt.fabric.wiring import Switches, attach_on_top, converged_on_top, group_index, new_bundle
from topoopt.fabric.wiring import storage_leaf_ports as compute_storage_leaf_ports
from topoopt.models.catalog import StorageTier
from topoopt.models.design import Design


@dataclass
class StorageSwitches:
    """The dedicated storage network's switches (empty when converged)."""

    leaves: list[Device]
    spines: list[Device]
    cores: list[Device]

    @property
    def all(self) -> list[Device]:
        return self.leaves + self.spines + self.cores


def make_units(design: Design, hw: Hardware) -> tuple[list[Device], list[Device]]:
    """The hot and the cold storage units."""

    def units(tier: StorageTier, count: int, prefix: str, role: str) -> list[Device]:
        return [Device(name=numbered(prefix, i + 1, count), role=role, model=tier.id, rack_units=tier.rack_units,
                       power_w=tier.power_w, ports=tier.network_ports, network="storage") for i in range(count)]

    hot = units(hw.storage, design.storage.units, "storage-", "storage")
    cold = units(hw.cold_storage, design.cold_storage.units, "cold-", "cold-storage") if hw.cold_storage else []
    return hot, cold


def storage_leaf_ports(design: Design, hw: Hardware) -> tuple[int, int]:
    """``(down, up)`` ports of a dedicated storage leaf: the whole radix in 1 tier; in 2 or 3 the
    design's split (half and half in records without one)."""
    k, sn = hw.storage_net.radix, design.storage_network
    if sn.tiers == 1:
        return k, 0
    if sn.leaf_down_ports == 0 and sn.leaf_up_ports == 0:
        return k // 2, k // 2
    return sn.leaf_down_ports, sn.leaf_up_ports


def make_storage_switches(design: Design, hw: Hardware) -> StorageSwitches:
    """The storage leaves, spines and cores of a dedicated storage network (3 tiers: each with
    its pod and plane)."""
    sn, net = design.storage_network, hw.storage_net
    if sn.mode == "converged" or net.switch is None:
        return StorageSwitches(leaves=[], spines=[], cores=[])
    problems = []
    down, up = storage_leaf_ports(design, hw)
    if sn.tiers >= 2 and (down < 1 or up < 1 or down + up > net.radix):
        problems.append(f"a storage leaf's {down} down- and {up} up-ports do not fit its {net.radix} ports")
    if sn.tiers == 1 and (sn.leaves != 1 or sn.spines):
        problems.append("a 1-tier storage network has exactly one switch")
    if sn.tiers == 2:
        if sn.spines < 1 or up % sn.spines:
            problems.append(f"{sn.spines} storage spines do not divide the {up} uplinks of a storage leaf")
        elif sn.leaves * (up // sn.spines) > net.radix:
            problems.append(f"{sn.leaves} storage leaves × {up // sn.spines} links exceed the spine radix {net.radix}")
    if sn.tiers == 3:
        problems += _three_tier_problems(design, hw)
    if sn.tiers != 3 and sn.cores:
        problems.append(f"a {sn.tiers}-tier storage network has no cores")
    if problems:
        raise FabricError("inconsistent storage network counts: " + "; ".join(problems))

    def switch(name: str, role: str) -> Device:
        return Device(name=name, role=role, model=net.switch.id, rack_units=net.switch.rack_units,
                      power_w=net.switch_power_w, ports=net.radix, network="storage")

    switches = StorageSwitches(
        leaves=[switch(numbered("sleaf-", j + 1, sn.leaves), "storage-leaf") for j in range(sn.leaves)],
        spines=[switch(numbered("sspine-", j + 1, sn.spines), "storage-spine") for j in range(sn.spines)], cores=[])
    if sn.tiers == 3:
        _, per_pod, planes, _ = storage_pod(design, hw)
        per_plane = sn.cores // planes
        switches.cores = [switch(f"score-p{j + 1}-{i + 1:0{width(per_plane)}d}", "storage-core")
                          for j in range(planes) for i in range(per_plane)]
        for i, leaf in enumerate(switches.leaves):
            leaf.pod = i // per_pod + 1
        for s, spine in enumerate(switches.spines):
            spine.pod, spine.plane = s // planes + 1, s % planes + 1
        for c, core in enumerate(switches.cores):
            core.plane = c // per_plane + 1
    return switches


def storage_pod(design: Design, hw: Hardware) -> tuple[int, int, int, int]:
    """3 tiers: ``(m, P, Q, u2)``: links per leaf–spine pair, leaves and spines per pod, spine uplinks."""
    m, k = design.storage_network.links_per_leaf_spine, hw.storage_net.radix
    _, up = storage_leaf_ports(design, hw)
    return m, (k // 2) // m if m else 0, up // m if m else 0, k - k // 2


def _three_tier_problems(design: Design, hw: Hardware) -> list[str]:
    """What makes a 3-tier record unwirable: ``m`` not dividing the uplinks (into 2 spines at
    least) and a spine's half, spines other than pods × Q, cores not ``Q`` planes of a count
    dividing ``u2``, or a core's ports exceeded."""
    sn, k = design.storage_network, hw.storage_net.radix
    m, per_pod, planes, spine_up = storage_pod(design, hw)
    _, up = storage_leaf_ports(design, hw)
    if m < 1 or up % m or (k // 2) % m or up // m < 2:
        return [f"{m} links per storage leaf–spine pair (dividing {up} uplinks into 2 spines at least, and {k // 2})"]
    pods = -(-sn.leaves // per_pod)
    problems = []
    if sn.spines != pods * planes:
        problems.append(f"{sn.spines} storage spines, {pods} pods × {planes} spines need {pods * planes}")
    per_plane = sn.cores // planes
    if per_plane < 1 or sn.cores % planes or spine_up % per_plane:
        problems.append(f"{sn.cores} storage cores are not {planes} planes of a count dividing {spine_up}")
    elif pods * (spine_up // per_plane) > k:
        problems.append(f"{pods} pods × {spine_up // per_plane} links exceed the core radix {k}")
    return problems


def wire_storage(design: Design, hw: Hardware, nodes: list[Device], hot: list[Device], cold: list[Device],
                 compute: Switches, storage: StorageSwitches) -> list[LinkBundle]:
    """Every storage-network link: node and unit ports to their switches, storage leaves to
    spines, storage spines to cores."""
    sn = design.storage_network
    unit_runs, unit_bundles = _unit_runs(design, hw, hot, cold)
    if sn.mode == "converged":
        _attach_converged(design, hw, compute, unit_runs)
        return unit_bundles
    net = hw.storage_net
    node_bundle = new_bundle(design, hw, group_index(hw, "node-storage"))
    names = cabled_storage_port_names(sn.nics_per_node, net.nic.ports, sn.ports_per_node)
    if not 1 <= sn.ports_per_node <= len(names) or len(names) != sn.ports_per_node:
        raise FabricError(f"{sn.nics_per_node} × {net.nic.id} have {sn.nics_per_node * net.nic.ports} ports, the "
                          f"design cables {sn.ports_per_node} storage ports per node")
    # An assembly joins the same storage port of consecutive nodes, as a rail's does (the model
    # counts ports_per_node × ceil(nodes / part.links) of them).
    node_run = Run(node_bundle, [node.name for node in nodes for _ in names], names * len(nodes),
                   keys=list(range(len(names))) * len(nodes), by_key=True)
    down, _ = storage_leaf_ports(design, hw)
    ports = port_names(net.switch.cages, net.ports_per_cage)
    # Units at another speed first: their whole cages then never leave part of a cage (or of a
    # leaf) unused behind the node ports, so the leaves hold exactly the ports the model counts.
    other = [run for run in unit_runs if run.cage_ports]
    fill(storage.leaves, ports, down, [*other, node_run, *(run for run in unit_runs if not run.cage_ports)],
         what=f"storage leaves ({net.switch.id})")
    bundles = [node_bundle, *unit_bundles]
    if sn.tiers == 2:
        bundles.append(_storage_leaf_spine(design, hw, storage))
    if sn.tiers == 3:
        bundles += _storage_three_tiers(design, hw, storage)
    return bundles


def _unit_runs(design: Design, hw: Hardware, hot: list[Device], cold: list[Device]) -> tuple[list[Run], list[LinkBundle]]:
    """One run per storage tier, and the bundles (one per storage-unit link group in use).

    The design lists one storage-unit link group per tier in use, hot first; a design with one
    group for both tiers puts both on it."""
    groups = [i for i, (group, _) in enumerate(hw.groups) if group.between == "storage-unit"]
    tiers = [(units, tier) for units, tier in ((hot, hw.storage), (cold, hw.cold_storage)) if units]
    if tiers and not groups:
        raise FabricError("no storage-unit link group (part) in the design")
    if len(groups) not in (1, len(tiers)):
        raise FabricError(f"{len(groups)} storage-unit link groups for {len(tiers)} storage tiers")
    bundles: dict[int, LinkBundle] = {}
    runs = []
    for position, (units, tier) in enumerate(tiers):
        index = groups[position] if len(groups) > 1 else groups[0]
        if index not in bundles:
            bundles[index] = new_bundle(design, hw, index, prefix="SU" if not bundles else "CU")
        names = data_port_names(tier.network_ports)
        bundle = bundles[index]
        # Units at another speed than the storage network's take whole cages (a cage runs one speed).
        other_speed = design.storage_network.mode == "dedicated" and bundle.gbps != design.storage_network.link_gbps
        cage_ports = hw.storage_net.cage_ports(bundle.gbps) if other_speed else 0
        # An assembly serves one unit (the model counts units × ceil(ports / part.links)).
        runs.append(Run(bundle, [unit.name for unit in units for _ in names], names * len(units),
                        keys=[unit.name for unit in units for _ in names], cage_ports=cage_ports))
    return runs, list(bundles.values())


def _attach_converged(design: Design, hw: Hardware, compute: Switches, runs: list[Run]) -> None:
    """Units on the compute fabric: the single switch after the node ports (1 tier); the top tier's
    free ports (``converged_attach == "top"``, :func:`~topoopt.fabric.wiring.attach_on_top`); else
    the storage leaves, ``k − u`` unit ports each."""
    fs = design.fabric
    if hw.switch is None:
        raise FabricError("a converged storage network needs a compute fabric")
    ports = port_names(hw.switch.cages, hw.switch_ports_per_cage)
    if fs.tiers == 1:
        taken = design.nodes * design.nics_per_node
        fill(compute.leaves, ports, hw.radix, runs, taken=taken, what=f"compute switch ({hw.switch.id})")
    elif converged_on_top(design):
        attach_on_top(design, hw, compute, runs)
    else:
        fill(compute.storage_leaves, ports, compute_storage_leaf_ports(design, hw), runs,
             what=f"storage leaves ({hw.switch.id})")


def _storage_leaf_spine(design: Design, hw: Hardware, storage: StorageSwitches) -> LinkBundle:
    """Every storage leaf reaches every storage spine with ``m = up / spines`` links (assemblies:
    :func:`_switch_bundle`)."""
    net = hw.storage_net
    bundle = _switch_bundle(design, hw, "storage-leaf-spine")
    out = Assembler(bundle)
    ports = port_names(net.switch.cages, net.ports_per_cage)
    down, up = storage_leaf_ports(design, hw)
    m = up // len(storage.spines)
    leaf_up = uplink_base(net.radix, net.ports_per_cage, down, up)
    for j, spine in enumerate(storage.spines):
        for i, leaf in enumerate(storage.leaves):
            out.add_device(spine.name, ports[i * m:(i + 1) * m], [leaf.name] * m, ports[leaf_up + j * m:leaf_up + (j + 1) * m])
    return bundle


def _switch_bundle(design: Design, hw: Hardware, link_class: str) -> LinkBundle:
    """A storage switch-to-switch bundle: a transceiver kit is counted by the cages it fills (its
    modules' ports may reach several switches), a one-piece cable per pair of switches."""
    bundle = new_bundle(design, hw, group_index(hw, link_class))
    bundle.kits_by_cage = not bundle.part.one_piece
    return bundle


def _storage_three_tiers(design: Design, hw: Hardware, storage: StorageSwitches) -> list[LinkBundle]:
    """3 tiers: leaf *i* of pod *p* reaches spine *j* of pod *p* with ``m`` links; spine *j* of
    every pod reaches each core of plane *j* with ``m2 = u2 / C`` links (assemblies:
    :func:`_switch_bundle`)."""
    net = hw.storage_net
    ports = port_names(net.switch.cages, net.ports_per_cage)
    down, up = storage_leaf_ports(design, hw)
    m, per_pod, planes, spine_up = storage_pod(design, hw)
    leaf_up = uplink_base(net.radix, net.ports_per_cage, down, up)
    spine_base = uplink_base(net.radix, net.ports_per_cage, per_pod * m, spine_up)
    leaf_spine = _switch_bundle(design, hw, "storage-leaf-spine")
    out = Assembler(leaf_spine)
    for s, spine in enumerate(storage.spines):
        pod, j = divmod(s, planes)
        for i, leaf in enumerate(storage.leaves[pod * per_pod:(pod + 1) * per_pod]):
            out.add_device(spine.name, ports[i * m:(i + 1) * m], [leaf.name] * m,
                           ports[leaf_up + j * m:leaf_up + (j + 1) * m])
    spine_core = _switch_bundle(design, hw, "storage-spine-core")
    out = Assembler(spine_core)
    per_plane = len(storage.cores) // planes
    m2 = spine_up // per_plane
    for c, core in enumerate(storage.cores):
        j, i = divmod(c, per_plane)
        for pod, spine in enumerate(storage.spines[j::planes]):
            out.add_device(core.name, ports[pod * m2:(pod + 1) * m2], [spine.name] * m2,
                           ports[spine_base + i * m2:spine_base + (i + 1) * m2])
    return [leaf_spine, spine_core]
