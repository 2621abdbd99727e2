"""Design → installation: every device with its rack and U, every link with its ports and cable.

:func:`build_fabric` is the one entry point; the graph, the exports and the drawings all read the
:class:`Fabric` it returns, so they agree by construction. The installation has three networks:
the compute fabric (:mod:`topoopt.fabric.wiring`), the storage network
(:mod:`topoopt.fabric.storage`) and the management network (:mod:`topoopt.fabric.management`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from topoopt.fabric.devices import Device, LinkBundle
from topoopt.fabric.floor import FloorPlan, Spot, plan_floor
from topoopt.fabric.hardware import FabricError, Hardware, catalog_for, resolve_hardware
from topoopt.fabric.management import make_management_switches, seat_leaves, wire_management
from topoopt.fabric.names import management_port_names, numbered
from topoopt.fabric.racks import RackPlan, nodes_by_rack, plan_racks, rack_pdus
from topoopt.fabric.storage import StorageSwitches, make_storage_switches, make_units, wire_storage
from topoopt.fabric.wiring import Switches, check_shape, make_switches, wire
from topoopt.models.catalog import Catalog, LinkPart
from topoopt.models.design import Design, LinkGroup
from topoopt.models.instance import Distances, Instance


@dataclass
class Fabric:
    """The concrete installation of one design."""

    design: Design
    hardware: Hardware
    nodes: list[Device]
    switches: Switches
    """The compute fabric's switches."""
    storage_switches: StorageSwitches
    mgmt_leaves: list[Device]
    mgmt_aggregation: list[Device]
    storage: list[Device]
    """Hot storage units."""
    cold_storage: list[Device]
    links: list[LinkBundle]
    racks: RackPlan
    pdus: list[Device] = field(default_factory=list)
    """Every rack's PDUs (zero-U, on the management network)."""
    heads: list[Device] = field(default_factory=list)
    """The cluster head nodes (on the management network)."""
    warnings: list[str] = field(default_factory=list)
    """Where the installation and the design's own counts disagree, or a rack exceeds its class."""
    floor_warnings: list[str] = field(default_factory=list)
    """Cables the floor plan stands farther apart than the site's run of their class."""
    floor: FloorPlan = field(default_factory=lambda: FloorPlan(Distances(), 1))
    """Where each rack stands: each cable's length (:meth:`cable_run_m`)."""
    _rack_of: dict[str, str] | None = field(default=None, repr=False)
    _assemblies: dict[int, dict] = field(default_factory=dict, repr=False)

    @property
    def compute_switches(self) -> list[Device]:
        """The compute fabric's switches: leaves (wiring order), spines (pod-major), cores (plane-major)."""
        spines = [s for pod in self.switches.spines for s in pod]
        cores = [c for plane in self.switches.cores for c in plane]
        return self.switches.leaves + spines + cores

    @property
    def management_switches(self) -> list[Device]:
        return self.mgmt_leaves + self.mgmt_aggregation

    @property
    def switch_list(self) -> list[Device]:
        """Every switch: compute fabric, then storage network, then management network."""
        return self.compute_switches + self.storage_switches.all + self.management_switches

    @property
    def units(self) -> list[Device]:
        """Every storage unit: hot tier, then cold tier."""
        return self.storage + self.cold_storage

    @property
    def devices(self) -> list[Device]:
        return self.nodes + self.switch_list + self.units + self.heads + self.pdus

    def racks_of(self, ends: list[str]) -> set[str]:
        """The racks of the devices at an assembly's ``ends``."""
        if self._rack_of is None:
            self._rack_of = {device.name: device.rack for device in self.devices}
        return {self._rack_of[end] for end in ends}

    def one_rack(self, ends: list[str]) -> bool:
        """The devices at an assembly's ``ends`` share a rack."""
        return len(self.racks_of(ends)) == 1

    def cable_run_m(self, bundle: LinkBundle, ends: list[str]) -> float:
        """An assembly's length: from where the floor plan stands its racks (:meth:`FloorPlan.run_m`);
        it may pass its link class's run (:func:`_beyond_the_site` says where)."""
        return self.floor.run_m(self.racks_of(ends), bundle.length_m)

    def cable_part(self, bundle: LinkBundle, ends: list[str]) -> LinkPart:
        """An assembly's part: the bundle's in-rack part when the devices at its ``ends`` share a
        rack and the design names one, else the bundle's part."""
        return bundle.in_rack_part if bundle.in_rack_part is not None and self.one_rack(ends) else bundle.part

    def assemblies(self, bundle: LinkBundle) -> dict[int, tuple[LinkPart, float]]:
        """Per assembly (index into the bundle's ``cable_ids``): its part and its length (kept
        once the cables are named: every export reads them)."""
        key = id(bundle)
        if key not in self._assemblies:
            self._assemblies[key] = {cable: (self.cable_part(bundle, ends), self.cable_run_m(bundle, ends))
                                     for cable, ends in bundle.assembly_ends().items()}
        return self._assemblies[key]

    def parts_bought(self, bundle: LinkBundle) -> Counter:
        """Assemblies of the bundle per part id (:meth:`cable_part` of each)."""
        return Counter(part.id for part, _ in self.assemblies(bundle).values())


def build_fabric(design: Design, instance: Instance | None = None, *, catalog: Catalog | None = None) -> Fabric:
    """Build the installation of ``design`` deterministically from its counts.

    The catalog is ``catalog`` when given, else the instance's resolved catalog, else the built-in
    one. Raises :class:`~topoopt.fabric.hardware.FabricError` when an id is unknown or the counts
    cannot be wired.
    """
    resolved = catalog if catalog is not None else catalog_for(instance)
    hw = resolve_hardware(design, resolved)
    check_shape(design, hw)
    nodes = _make_nodes(design, hw)
    switches = make_switches(design, hw)
    storage_switches = make_storage_switches(design, hw)
    mgmt_leaves, mgmt_aggregation = make_management_switches(design, hw)
    hot, cold = make_units(design, hw)
    heads = _make_heads(design, hw)
    links = wire(design, hw, nodes, switches)
    links += wire_storage(design, hw, nodes, hot, cold, switches, storage_switches)
    fabric = Fabric(design=design, hardware=hw, nodes=nodes, switches=switches, storage_switches=storage_switches,
                    mgmt_leaves=mgmt_leaves, mgmt_aggregation=mgmt_aggregation, storage=hot, cold_storage=cold,
                    links=links, racks=RackPlan(racks=[]), heads=heads)
    fabric.racks = plan_racks(design, hw, nodes, fabric.switch_list + heads, fabric.units, _above_nodes(links, nodes))
    fabric.pdus = rack_pdus(fabric.racks, {r.id: r.pdus for r in (hw.rack_class, hw.infra_rack_class)})
    distances = instance.site.distances if instance is not None else Distances()
    # The management leaves take the devices rack by rack along the floor, so each serves racks
    # that stand together. Their own racks then move among what they serve, so the floor is
    # planned, the management wired, the floor planned again, and the management wired once more.
    managed = nodes + fabric.compute_switches + storage_switches.all + hot + cold + heads + fabric.pdus
    ports = _management_ports(resolved, managed)
    management: list[LinkBundle] = []
    for _ in range(2):
        floor = plan_floor(fabric.racks.racks, links + management, fabric.devices, distances)
        management = wire_management(design, hw, _managed_in_order(floor, managed), ports, mgmt_leaves,
                                     mgmt_aggregation)
        seat_leaves(management[0], managed, mgmt_leaves, fabric.racks.racks, floor)
    links += management
    for bundle in links:
        bundle.name_cables()
    fabric.floor = plan_floor(fabric.racks.racks, links, fabric.devices, distances)
    fabric.warnings = _check_parts(fabric) + _compare_links(fabric) + fabric.racks.warnings
    fabric.floor_warnings = _beyond_the_site(fabric)
    return fabric


def _above_nodes(links: list[LinkBundle], nodes: list[Device]) -> dict[str, float]:
    """Per switch some node plugs into, the middle position of the nodes it serves (halfway
    between the first and the last, as indices into ``nodes``)."""
    index = {node.name: i for i, node in enumerate(nodes)}
    ends: dict[str, tuple[int, int]] = {}
    for bundle in links:
        for a, b in zip(bundle.a_device, bundle.b_device):
            if b in index:
                first, last = ends.get(a, (index[b], index[b]))
                ends[a] = (min(first, index[b]), max(last, index[b]))
    return {name: (first + last) / 2 for name, (first, last) in ends.items()}


def _managed_in_order(floor: FloorPlan, devices: list[Device]) -> list[Device]:
    """The devices on the management network in the order the leaves take them: rack by rack along
    the floor, row by row, odd rows from their first position and even rows from their last (so
    racks next in the order stand together and one leaf serves racks that do), a rack's devices in
    the order given (its nodes, switches, storage units and head nodes, then its PDUs)."""
    last = Spot(row=1 << 30, position=0)

    def along(device: Device) -> tuple[int, int]:
        spot = floor.spots.get(device.rack, last)
        return spot.row, spot.position if spot.row % 2 else -spot.position
    return sorted(devices, key=along)


def _management_ports(catalog: Catalog, devices: list[Device]) -> dict[tuple[str, str], list[str]]:
    """Management port names per ``(role, model)`` from the catalog's ``oob_ports``: servers, head
    nodes and storage tiers add an in-band port, switches do not."""
    kinds = {"node": catalog.by_id("servers"), "storage": catalog.by_id("storage"),
             "cold-storage": catalog.by_id("storage"), "head": catalog.by_id("control")}
    switches = catalog.by_id("switches")
    return {(d.role, d.model): management_port_names(1, in_band=False) if d.role == "pdu" else
            management_port_names(kinds.get(d.role, switches)[d.model].oob_ports, in_band=d.role in kinds)
            for d in devices}


def _make_heads(design: Design, hw: Hardware) -> list[Device]:
    """The head nodes ``head01`` … (none when the design has none)."""
    model = hw.head
    if model is None:
        return []
    count = design.head_nodes.count
    return [Device(name=numbered("head", i + 1, count), role="head", model=model.id, rack_units=model.rack_units,
                   power_w=model.power_w, ports=0, network="management") for i in range(count)]


def _make_nodes(design: Design, hw: Hardware) -> list[Device]:
    n = design.nodes
    if design.gpus != n * hw.server.gpus_per_node:
        raise FabricError(f"{design.gpus} GPUs != {n} nodes × {hw.server.gpus_per_node} GPUs of {hw.server.id}")
    per_rack = nodes_by_rack(design, hw)
    if sum(per_rack) != n:
        raise FabricError(f"the racks hold {sum(per_rack)} nodes, the design has {n}")
    rack_width = max(2, len(str(len(per_rack))))
    slot_width = max(2, len(str(max(per_rack, default=1))))
    return [
        Device(
            name=f"rack{rack + 1:0{rack_width}d}-node{slot + 1:0{slot_width}d}",
            role="node",
            model=hw.server.id,
            rack_units=hw.server.rack_units,
            power_w=hw.node_power_w,
            ports=design.nics_per_node,
            gpus=hw.server.gpus_per_node,
        )
        for rack, count in enumerate(per_rack) for slot in range(count)
    ]


def _cage_ports(fabric: Fabric, group: LinkGroup) -> tuple[int, int]:
    """Logical ports per cage at the upper (a) and lower (b) end of a link group (storage units at
    their group's speed)."""
    hw, link_class = fabric.hardware, group.between
    if link_class in ("leaf-spine", "spine-core"):
        return hw.switch_ports_per_cage, hw.switch_ports_per_cage
    if link_class == "node-leaf":
        return hw.switch_ports_per_cage, hw.node_ports_per_cage
    if link_class == "storage-unit" and fabric.design.storage_network.mode == "converged":
        return hw.switch_ports_per_cage, 1
    if link_class == "storage-unit":
        return hw.storage_net.cage_ports(group.gbps), 1
    if link_class == "node-storage":
        return hw.storage_net.ports_per_cage, 1
    if link_class in ("storage-leaf-spine", "storage-spine-core"):
        return hw.storage_net.ports_per_cage, hw.storage_net.ports_per_cage
    if link_class == "mgmt":
        return hw.management.ports_per_cage, 1
    return hw.management.aggregation_ports_per_cage, hw.management.uplink_ports_per_cage


def _check_parts(fabric: Fabric) -> list[str]:
    """Parts whose ends do not carry a whole cage's logical ports (``links / ends`` per cage), and
    multi-link node cables in a rail-optimized fabric."""
    notes = []
    for group, part in fabric.hardware.groups:
        link_class = group.between
        upper, lower = _cage_ports(fabric, group)
        for end, ends, per_cage in (("a", part.a_ends, upper), ("b", part.b_ends, lower)):
            if part.links != ends * per_cage:
                notes.append(f"{link_class}: {part.id} carries {part.links} links on {ends} {end}-end cage(s), "
                             f"the cage there has {per_cage} ports [port_form_factor_match]")
        if (link_class == "node-leaf" and fabric.design.fabric.tiers > 1 and part.one_piece
                and part.links > part.b_ends):
            notes.append(f"node-leaf: {part.id} is a cable whose node end carries {part.links // part.b_ends} links; "
                         "it cannot split them over the leaves of a rail-optimized fabric [port_form_factor_match]")
    return notes


def _beyond_the_site(fabric: Fabric) -> list[str]:
    """Link classes with cables the floor plan stands farther apart than the site's run of the
    class (the run the design chose the part for), and of those, how many pass the part's reach."""
    notes = []
    for bundle in fabric.links:
        longer = [(length_m, part) for part, length_m in fabric.assemblies(bundle).values() if length_m > bundle.length_m]
        if longer:
            beyond = sum(length_m > part.max_reach_m for length_m, part in longer)
            notes.append(f"floor plan: {len(longer):,} {bundle.between} cable(s) run up to "
                         f"{max(length_m for length_m, _ in longer):g} m, past the site's {bundle.length_m:g} m run of "
                         "the class" + (f", {beyond:,} beyond their part's reach" if beyond else "")
                         + ": stand those racks closer, or give the site's longer run")
    return notes


def _compare_links(fabric: Fabric) -> list[str]:
    """Differences between the wired links / assemblies and the design's link groups."""
    design, links = fabric.design, fabric.links
    notes = []
    wired = {bundle.group for bundle in links}
    for index, group in enumerate(design.links):
        if index not in wired and group.count:
            notes.append(f"{group.between}: the design counts {group.count} links on {group.part}, none are wired")
    for bundle in links:
        group = design.links[bundle.group]
        if len(bundle) != group.count:
            notes.append(f"{bundle.between}: wiring has {len(bundle)} links, the design counts {group.count}")
        if bundle.assemblies != group.assemblies:
            why = ("part-filled cages on some switches" if bundle.assemblies > group.assemblies else
                   "the wiring fills its assemblies fuller than the design counts them")
            notes.append(f"{bundle.between}: wiring needs {bundle.assemblies} × {bundle.part.id}, the design counts "
                         f"{group.assemblies} ({why})")
        in_rack = fabric.parts_bought(bundle)[group.in_rack_part] if group.in_rack_part else 0
        if in_rack != group.in_rack_assemblies:
            notes.append(f"{bundle.between}: {in_rack} assemblies run within one rack, the design buys "
                         f"{group.in_rack_assemblies} × {group.in_rack_part} for them")
    return notes
