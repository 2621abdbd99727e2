"""Design → installation: every device with its rack and U, every link with its ports and cable.

:func:`build_fabric` is the one entry point; the graph, the exports and the drawings all read the
:class:`Fabric` it returns, so they agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topoopt.fabric.hardware import FabricError, Hardware, catalog_for, resolve_hardware
from topoopt.fabric.names import numbered
from topoopt.fabric.racks import RackPlan, compute_racks, nodes_per_rack, plan_racks
from topoopt.fabric.wiring import Device, LinkBundle, Switches, check_shape, make_switches, wire
from topoopt.models.catalog import Catalog
from topoopt.models.design import Design
from topoopt.models.instance import Instance


@dataclass
class Fabric:
    """The concrete installation of one design."""

    design: Design
    hardware: Hardware
    nodes: list[Device]
    switches: Switches
    storage: list[Device]
    links: list[LinkBundle]
    racks: RackPlan
    warnings: list[str] = field(default_factory=list)
    """Where the installation and the design's own counts disagree, or a rack exceeds its class."""

    @property
    def switch_list(self) -> list[Device]:
        """All switches: leaves (wiring order), spines (pod-major), cores (plane-major)."""
        spines = [s for pod in self.switches.spines for s in pod]
        cores = [c for plane in self.switches.cores for c in plane]
        return self.switches.leaves + spines + cores

    @property
    def devices(self) -> list[Device]:
        return self.nodes + self.switch_list + self.storage

    def bundle(self, link_class: str) -> LinkBundle | None:
        return next((b for b in self.links if b.between == link_class), None)


def build_fabric(design: Design, instance: Instance | None = None, *, catalog: Catalog | None = None) -> Fabric:
    """Build the installation of ``design`` deterministically from its counts.

    The catalog is ``catalog`` when given, else the instance's resolved catalog, else the built-in
    one. Raises :class:`~topoopt.fabric.hardware.FabricError` when an id is unknown or the counts
    cannot be wired.
    """
    hw = resolve_hardware(design, catalog if catalog is not None else catalog_for(instance))
    check_shape(design, hw)
    nodes = _make_nodes(design, hw)
    switches = make_switches(design, hw)
    storage = [
        Device(name=numbered("storage-", i + 1, design.storage.units), role="storage", model=hw.storage.id,
               rack_units=hw.storage.rack_units, power_w=hw.storage_power_w, ports=0)
        for i in range(design.storage.units)
    ]
    links = wire(design, hw, nodes, switches)
    fabric = Fabric(design=design, hardware=hw, nodes=nodes, switches=switches, storage=storage, links=links,
                    racks=RackPlan(racks=[]))
    fabric.racks = plan_racks(design, hw, nodes, fabric.switch_list, storage)
    fabric.warnings = _check_parts(hw, design.fabric.tiers) + _compare_links(design, links) + fabric.racks.warnings
    return fabric


def _make_nodes(design: Design, hw: Hardware) -> list[Device]:
    n = design.nodes
    if design.gpus != n * hw.server.gpus_per_node:
        raise FabricError(f"{design.gpus} GPUs != {n} nodes × {hw.server.gpus_per_node} GPUs of {hw.server.id}")
    per = nodes_per_rack(design, hw)
    racks = compute_racks(n, per)
    rack_width = max(2, len(str(racks)))
    slot_width = max(2, len(str(per)))
    return [
        Device(
            name=f"rack{i // per + 1:0{rack_width}d}-node{i % per + 1:0{slot_width}d}",
            role="node",
            model=hw.server.id,
            rack_units=hw.server.rack_units,
            power_w=hw.node_power_w,
            ports=design.nics_per_node,
            gpus=hw.server.gpus_per_node,
        )
        for i in range(n)
    ]


def _check_parts(hw: Hardware, tiers: int) -> list[str]:
    """Parts whose ends do not carry a whole cage's logical ports (``links / ends`` per cage), and
    multi-link node cables in a rail-optimized fabric."""
    notes = []
    for link_class, part in hw.parts.items():
        lower = hw.node_ports_per_cage if link_class == "node-leaf" else hw.switch_ports_per_cage
        for end, ends, per_cage in (("a", part.a_ends, hw.switch_ports_per_cage), ("b", part.b_ends, lower)):
            if part.links != ends * per_cage:
                notes.append(f"{link_class}: {part.id} carries {part.links} links on {ends} {end}-end cage(s), "
                             f"the cage there has {per_cage} ports [port_form_factor_match]")
        if link_class == "node-leaf" and tiers > 1 and part.media in ("dac", "acc", "aoc") and part.links > part.b_ends:
            notes.append(f"node-leaf: {part.id} is a cable whose node end carries {part.links // part.b_ends} links; "
                         "it cannot split them over the leaves of a rail-optimized fabric [port_form_factor_match]")
    return notes


def _compare_links(design: Design, links: list[LinkBundle]) -> list[str]:
    """Differences between the wired links / assemblies and the design's link groups."""
    notes = []
    for bundle in links:
        group = next(g for g in design.links if g.between == bundle.between)
        if len(bundle) != group.count:
            notes.append(f"{bundle.between}: wiring has {len(bundle)} links, the design counts {group.count}")
        if bundle.assemblies != group.assemblies:
            notes.append(
                f"{bundle.between}: wiring needs {bundle.assemblies} × {bundle.part.id}, the design counts "
                f"{group.assemblies} (part-filled cages on some switches)"
            )
    return notes
