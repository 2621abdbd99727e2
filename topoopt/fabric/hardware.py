"""The catalog items a design names, and the per-device numbers the build-out needs.

A :class:`~topoopt.models.design.Design` holds ids and counts. Building the installation needs the
items behind the ids (rack units, cages, ports per cage, end power) and the provisioned power of
each device, by the rules of ``docs/model.md`` ("Racks and power") as ``topoopt.catalog.power``
computes them (a dedicated storage network adds the storage NICs and their optics to the node); a
storage unit draws its ``power_w``.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.catalog import load_builtin_catalog, resolve_catalog
from topoopt.catalog.power import node_power_w, storage_nic_power_w, switch_power_w
from topoopt.fabric.names import UPLINK_PORT_PREFIX, port_names
from topoopt.models.catalog import Catalog, ControlNode, LinkPart, Nic, RackClass, Server, StorageTier, Switch
from topoopt.models.design import Design, LinkGroup
from topoopt.models.instance import Instance


class FabricError(ValueError):
    """A design the installation cannot be built from: unknown catalog ids or inconsistent counts."""


@dataclass(frozen=True)
class StorageNetHardware:
    """The storage network's items: a dedicated network's storage NIC and switch (both None when
    the storage network is converged on the compute fabric)."""

    nic: Nic | None
    nics_bought: bool
    """Storage NICs bought for the node (not built into the server)."""
    switch: Switch | None
    ports_per_cage: int
    """Logical storage-switch ports per cage at the storage link speed."""
    radix: int
    switch_power_w: float

    def cage_ports(self, gbps: int) -> int:
        """Logical ports per storage-switch cage at ``gbps`` (storage units may run another speed
        than the link speed, in cages of their own); 0 without a storage switch."""
        return self.switch.ports_per_cage.get(gbps, 0) if self.switch is not None else 0


@dataclass(frozen=True)
class ManagementHardware:
    """The management leaf model at its device speed, the cages its uplinks take (its own uplink
    cages, or the top of its device cages), and the aggregation model at the uplink speed."""

    switch: Switch
    ports_per_cage: int
    """Logical ports per device cage at the device speed."""
    radix: int
    """Logical device-cage ports at the device speed."""
    uplink_ports: list[str]
    """The leaf's two uplink port names, one to each switch of its aggregation pair."""
    uplink_ports_per_cage: int
    """Logical ports per leaf uplink cage at the uplink speed."""
    power_w: float
    aggregation: Switch
    aggregation_ports_per_cage: int
    """Logical ports per aggregation cage at the uplink speed (0: the model cannot run it)."""
    aggregation_power_w: float

    @property
    def aggregation_radix(self) -> int:
        return self.aggregation.cages * self.aggregation_ports_per_cage

    @property
    def leaves_per_pair(self) -> int:
        """Leaves an aggregation pair takes: each switch keeps 2 ports for the site's management core."""
        return self.aggregation_radix - 2


@dataclass(frozen=True)
class Hardware:
    """Everything the build-out reads from the catalog for one design."""

    server: Server
    nic: Nic
    switch: Switch | None
    """None for a single node without a compute fabric (0 tiers)."""
    groups: list[tuple[LinkGroup, LinkPart]]
    """Every link group of the design with its part, in the design's order."""
    in_rack_parts: dict[int, LinkPart]
    """By link group index: the part of its assemblies within one rack, where the design names one."""
    rack_class: RackClass
    """The nodes' racks' class (compute or mixed racks)."""
    infra_rack_class: RackClass
    """The network and storage racks' class (the nodes' with mixed racks)."""
    storage: StorageTier
    cold_storage: StorageTier | None
    storage_net: StorageNetHardware
    management: ManagementHardware
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
    head: ControlNode | None = None
    """The head-node model (None without head nodes)."""


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


def _ports_per_cage(switch: Switch, gbps: int, what: str) -> int:
    per_cage = switch.ports_per_cage.get(gbps, 0)
    if per_cage < 1:
        raise FabricError(f"{what} {switch.id} has no ports at {gbps} Gb/s")
    return per_cage


def _rack_classes(design: Design, catalog: Catalog) -> tuple[RackClass, RackClass]:
    """The nodes' racks' class and the network and storage racks' (each role group shares one)."""
    found = []
    for roles in (("compute", "mixed"), ("network", "storage")):
        ids = {group.rack_class for group in design.racks if group.role in roles}
        if len(ids) > 1:
            raise FabricError(f"the {'/'.join(roles)} racks must share one rack class, found {sorted(ids)}")
        found.append(ids.pop() if ids else None)
    nodes, infra = found
    if nodes is None:
        raise FabricError("the design records no compute or mixed racks")
    racks = catalog.by_id("racks")
    return _lookup(racks, nodes, "rack class"), _lookup(racks, infra or nodes, "rack class")


def resolve_hardware(design: Design, catalog: Catalog) -> Hardware:
    """Look up every id of ``design`` and compute the provisioned power per device.

    Raises :class:`FabricError` when an id is unknown or a switch cannot run its link speed.
    """
    server: Server = _lookup(catalog.by_id("servers"), design.server, "server")
    nic: Nic = _lookup(catalog.by_id("nics"), design.nic, "NIC")
    switches = catalog.by_id("switches")
    no_fabric = design.fabric.tiers == 0
    switch: Switch | None = None if no_fabric else _lookup(switches, design.fabric.switch, "switch")
    cables = catalog.by_id("cables")
    groups = [(group, _lookup(cables, group.part, "cable part")) for group in design.links]
    in_rack_parts = {i: _lookup(cables, group.in_rack_part, "cable part") for i, group in enumerate(design.links)
                     if group.in_rack_part is not None}
    rack_class, infra_rack_class = _rack_classes(design, catalog)
    tiers = catalog.by_id("storage")
    storage: StorageTier = _lookup(tiers, design.storage.tier, "storage tier")
    cold = _lookup(tiers, design.cold_storage.tier, "cold storage tier") if design.cold_storage else None

    switch_ppc = _ports_per_cage(switch, design.link_gbps, "switch") if switch else 0
    if server.compute_port_form_factor:
        node_ff, node_ppc = server.compute_port_form_factor, server.compute_ports_per_cage
    else:
        node_ff, node_ppc = nic.port_form_factor, 1
    rails = design.nics_per_node
    all_parts = list(catalog.cables)
    bought_nic = None if server.builtin_compute_nics else nic
    node_w = node_power_w(server, bought_nic, rails, node_ff, node_ppc, design.link_gbps, all_parts, fabric=not no_fabric)
    storage_net = _storage_net(design, catalog, server, all_parts)
    if storage_net.nic is not None:
        sn = design.storage_network
        node_w += storage_nic_power_w(server, storage_net.nic, sn.nics_per_node, sn.link_gbps, all_parts,
                                      sn.ports_per_node)
    return Hardware(
        server=server,
        nic=nic,
        switch=switch,
        groups=groups,
        in_rack_parts=in_rack_parts,
        rack_class=rack_class,
        infra_rack_class=infra_rack_class,
        storage=storage,
        cold_storage=cold,
        storage_net=storage_net,
        management=_management(design, catalog, all_parts),
        node_port_form_factor=node_ff,
        node_ports_per_cage=node_ppc,
        switch_ports_per_cage=switch_ppc,
        radix=switch.cages * switch_ppc if switch else 0,
        node_power_w=node_w,
        switch_power_w=switch_power_w(switch, all_parts) if switch else 0.0,
        rails=rails,
        head=_lookup(catalog.by_id("control"), design.head_nodes.model, "head node") if design.head_nodes else None,
    )


def _storage_net(design: Design, catalog: Catalog, server: Server, parts: list[LinkPart]) -> StorageNetHardware:
    sn = design.storage_network
    if sn.mode == "converged":
        return StorageNetHardware(nic=None, nics_bought=False, switch=None, ports_per_cage=0, radix=0,
                                  switch_power_w=0.0)
    if sn.nic is None or sn.switch is None:
        raise FabricError("a dedicated storage network names its storage NIC and storage switch")
    nic: Nic = _lookup(catalog.by_id("nics"), sn.nic, "storage NIC")
    switch: Switch = _lookup(catalog.by_id("switches"), sn.switch, "storage switch")
    per_cage = _ports_per_cage(switch, sn.link_gbps, "storage switch")
    builtin = server.builtin_storage_nics
    return StorageNetHardware(
        nic=nic,
        nics_bought=not (builtin is not None and builtin.nic == nic.id),
        switch=switch,
        ports_per_cage=per_cage,
        radix=switch.cages * per_cage,
        switch_power_w=switch_power_w(switch, parts),
    )


def _management(design: Design, catalog: Catalog, parts: list[LinkPart]) -> ManagementHardware:
    mn = design.management_network
    switches = catalog.by_id("switches")
    switch: Switch = _lookup(switches, mn.switch, "management switch")
    aggregation: Switch = _lookup(switches, mn.aggregation_switch or mn.switch, "management aggregation switch")
    per_cage = _ports_per_cage(switch, mn.link_gbps, "management switch")
    if switch.uplink_cages:
        up_per_cage = (switch.uplink_ports_per_cage or {}).get(mn.uplink_gbps, 0)
        if up_per_cage < 1:
            raise FabricError(f"management switch {switch.id} has no uplink ports at {mn.uplink_gbps} Gb/s")
        uplinks = port_names(switch.uplink_cages, up_per_cage, prefix=UPLINK_PORT_PREFIX)[:2]
    else:
        up_per_cage = _ports_per_cage(switch, mn.uplink_gbps, "management switch")
        uplinks = port_names(switch.cages, up_per_cage)[-2:]
    return ManagementHardware(
        switch=switch, ports_per_cage=per_cage, radix=switch.cages * per_cage, uplink_ports=uplinks,
        uplink_ports_per_cage=up_per_cage, power_w=switch_power_w(switch, parts), aggregation=aggregation,
        aggregation_ports_per_cage=aggregation.ports_per_cage.get(mn.uplink_gbps, 0),
        aggregation_power_w=switch_power_w(aggregation, parts),
    )
