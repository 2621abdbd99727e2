"""The catalog items a design names, and the per-device numbers the build-out needs.

A :class:`~topoopt.models.design.Design` holds ids and counts. Building the installation needs the
items behind the ids (rack units, cages, ports per cage, end power) and the provisioned power of
each device, by the rules of ``docs/model.md`` ("Racks and power") as ``topoopt.catalog.power``
computes them; a storage unit draws its ``power_w``.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.catalog import load_builtin_catalog, resolve_catalog
from topoopt.catalog.power import node_power_w, switch_power_w
from topoopt.models.catalog import Catalog, LinkPart, Nic, RackClass, Server, StorageTier, Switch
from topoopt.models.design import Design
from topoopt.models.instance import Instance


class FabricError(ValueError):
    """A design the installation cannot be built from: unknown catalog ids or inconsistent counts."""


@dataclass(frozen=True)
class Hardware:
    """Everything the build-out reads from the catalog for one design."""

    server: Server
    nic: Nic
    switch: Switch | None
    """None for a single node without a compute fabric (0 tiers)."""
    parts: dict[str, LinkPart]
    """Link part per link class present in the design (``node-leaf``, ``leaf-spine``, ``spine-core``)."""
    rack_class: RackClass
    storage: StorageTier
    node_port_form_factor: str
    node_ports_per_cage: int
    rails: int
    """Compute NICs (rails) per node."""
    switch_ports_per_cage: int
    """Logical switch ports per cage at the design's link speed."""
    radix: int
    """Logical switch ports at the link speed: ``cages × switch_ports_per_cage``."""
    node_power_w: float
    switch_power_w: float

    @property
    def storage_power_w(self) -> float:
        return self.storage.power_w


def catalog_for(instance: Instance | None) -> Catalog:
    """The catalog a design was solved against: the instance's resolved one, or the built-in one."""
    if instance is None:
        return load_builtin_catalog()
    return resolve_catalog(instance).catalog


def _lookup(items: dict, item_id: str, kind: str):
    item = items.get(item_id)
    if item is None:
        raise FabricError(f"design names {kind} {item_id!r}, which the catalog does not have")
    return item


def resolve_hardware(design: Design, catalog: Catalog) -> Hardware:
    """Look up every id of ``design`` and compute the provisioned power per device.

    Raises :class:`FabricError` when an id is unknown or the switch cannot run the link speed.
    """
    server: Server = _lookup(catalog.by_id("servers"), design.server, "server")
    nic: Nic = _lookup(catalog.by_id("nics"), design.nic, "NIC")
    no_fabric = design.fabric.tiers == 0
    switch: Switch | None = None if no_fabric else _lookup(catalog.by_id("switches"), design.fabric.switch, "switch")
    cables = catalog.by_id("cables")
    parts = {group.between: _lookup(cables, group.part, "cable part") for group in design.links}
    rack_ids = {group.rack_class for group in design.racks}
    if len(rack_ids) != 1:
        raise FabricError(f"design must use exactly one rack class, found {sorted(rack_ids) or 'none'}")
    rack_class: RackClass = _lookup(catalog.by_id("racks"), rack_ids.pop(), "rack class")
    storage: StorageTier = _lookup(catalog.by_id("storage"), design.storage.tier, "storage tier")

    switch_ppc = switch.ports_per_cage.get(design.link_gbps, 0) if switch else 0
    if switch and switch_ppc < 1:
        raise FabricError(f"switch {switch.id} has no ports at {design.link_gbps} Gb/s")
    if server.compute_port_form_factor:
        node_ff, node_ppc = server.compute_port_form_factor, server.compute_ports_per_cage
    else:
        node_ff, node_ppc = nic.port_form_factor, 1
    rails = design.nics_per_node
    all_parts = list(catalog.cables)
    bought_nic = None if server.builtin_compute_nics else nic
    node_w = node_power_w(server, bought_nic, rails, node_ff, node_ppc, design.link_gbps, all_parts, fabric=not no_fabric)
    switch_w = switch_power_w(switch, all_parts) if switch else 0.0
    return Hardware(
        server=server,
        nic=nic,
        switch=switch,
        parts=parts,
        rack_class=rack_class,
        storage=storage,
        node_port_form_factor=node_ff,
        node_ports_per_cage=node_ppc,
        switch_ports_per_cage=switch_ppc,
        radix=switch.cages * switch_ppc if switch else 0,
        node_power_w=node_w,
        switch_power_w=switch_w,
        rails=rails,
    )
