"""The checker's view of a design's storage and management networks: their catalog items and the
counts their free choices imply (``networks`` gives the arithmetic).

A mixin of ``CheckContext``: it reads the context's instance, design, catalog and compute-side
amounts (``nodes``, ``rails``, ``gbps``, ``switch``, ``n_switches``, ``server``, ``storage_tier``).
Catalog look-ups are tolerant: an unknown id resolves to None and the arithmetic that needs it
falls back to the design's own record.
"""

from __future__ import annotations

from functools import cached_property

from topoopt.checking import networks
from topoopt.models.catalog import Nic, StorageTier, Switch
from topoopt.models.design import LinkGroup, StorageNetwork


class NetworksView:
    # ---- catalog items of the storage and management networks

    @cached_property
    def cold_tier(self) -> StorageTier | None:
        cold = self.design.cold_storage
        return None if cold is None else self._item("storage", cold.tier)

    @property
    def storage_net(self) -> StorageNetwork:
        return self.design.storage_network

    @property
    def converged(self) -> bool:
        """Storage traffic rides the compute NICs and fabric (no storage NICs or switches)."""
        return self.storage_net.mode == "converged"

    @cached_property
    def storage_nic(self) -> Nic | None:
        nic = self.storage_net.nic
        return None if self.converged or nic is None else self._item("nics", nic)

    @cached_property
    def storage_switch(self) -> Switch | None:
        switch = self.storage_net.switch
        return None if self.converged or switch is None else self._item("switches", switch)

    @cached_property
    def mgmt_switch(self) -> Switch | None:
        return self._item("switches", self.design.management_network.switch)

    @cached_property
    def mgmt_aggregation_switch(self) -> Switch | None:
        """The aggregation model (the leaves' in records before it was recorded)."""
        m = self.design.management_network
        return self._item("switches", m.aggregation_switch or m.switch)

    # ---- the storage network

    @property
    def storage_gbps(self) -> int:
        """Speed of every storage port: the compute link speed when converged, else the record's choice."""
        return self.gbps if self.converged else self.storage_net.link_gbps

    @property
    def storage_radix(self) -> int:
        """Storage switch ports at the storage speed (0 when unknown or it cannot run that speed)."""
        return self.storage_switch.radix(self.storage_gbps) if self.storage_switch is not None else 0

    @cached_property
    def storage_ports_per_node(self) -> int:
        """Storage ports cabled per node: the record's choice (1 … the storage NICs' ports and the
        server's ``storage_ports_max``: nic_fits_server), or the compute rails when converged."""
        if self.converged:
            return self.rails
        return self.storage_net.ports_per_node

    @property
    def storage_leaf_split(self) -> tuple[int, int] | None:
        """``(d, u)`` of a 2- or 3-tier storage leaf as recorded; None (non-blocking ``floor(k/2)`` each)
        when the record predates the split (both 0)."""
        net = self.storage_net
        if net.leaf_down_ports == 0 and net.leaf_up_ports == 0:
            return None
        return net.leaf_down_ports, net.leaf_up_ports

    @property
    def storage_leaf_uplinks(self) -> int:
        """Uplinks of a 2- or 3-tier storage leaf: the recorded split's, or ``floor(k/2)`` (non-blocking)."""
        split = self.storage_leaf_split
        return split[1] if split is not None else self.storage_radix // 2

    @cached_property
    def storage_tiers(self) -> list[tuple[str, StorageTier | None, int]]:
        """``(role, tier, units)`` of the hot tier and, when the design has one, the cold tier."""
        tiers = [("hot", self.storage_tier, self.design.storage.units)]
        if self.design.cold_storage is not None:
            tiers.append(("cold", self.cold_tier, self.design.cold_storage.units))
        return tiers

    @cached_property
    def unit_ports(self) -> int:
        """Storage-unit data ports: ``units · network_ports`` over the hot and cold tiers (a tier the
        catalog lacks counts its record's ports)."""
        records = {"hot": self.design.storage, "cold": self.design.cold_storage}
        return sum(units * tier.network_ports if tier is not None else records[role].ports
                   for role, tier, units in self.storage_tiers)

    def unit_group(self, role: str) -> LinkGroup | None:
        """The storage-unit link group carrying the ``role`` ("hot" or "cold") tier's units."""
        return next((group for group, carried in self.unit_link_groups if any(r == role for r, _, _ in carried)), None)

    @cached_property
    def unit_slots(self) -> int:
        """Switch ports the hot and cold units take at the storage speed (``networks.unit_slots``:
        their ports, or the whole cages of units running another speed than their group's)."""
        records = {"hot": self.design.storage, "cold": self.design.cold_storage}
        switch = self.switch if self.converged else self.storage_switch
        ppc = switch.ports_per_cage.get(self.storage_gbps, 0) if switch is not None else 0
        total = 0
        for role, tier, units in self.storage_tiers:
            group = self.unit_group(role)
            if tier is None or group is None:
                total += records[role].ports
                continue
            total += networks.unit_slots(units, tier.network_ports, group.gbps, self.storage_gbps,
                                         self.cable(group.part), ppc)
        return total

    @cached_property
    def storage_protocols(self) -> set[str] | None:
        """Switch protocols ("ib", "ethernet") the storage network can run: the compute
        interconnect's when converged; else those the storage switch speaks and the storage NIC runs
        at the storage speed. None when a piece is unknown."""
        if self.converged:
            return None if self.interconnect is None else {networks.switch_protocol(self.interconnect.protocol)}
        if self.storage_nic is None or self.storage_switch is None:
            return None
        return self.nic_protocols_at(self.storage_nic, self.storage_gbps) & set(self.storage_switch.protocols)

    def nic_protocols_at(self, nic: Nic, gbps: int) -> set[str]:
        """Switch protocols of the interconnects ``nic`` runs at ``gbps``."""
        known = self.catalog.catalog.by_id("interconnects")
        return {networks.switch_protocol(known[i].protocol) for i in nic.interconnects
                if i in known and known[i].gbps == gbps}

    @cached_property
    def unit_link_groups(self) -> list[tuple[LinkGroup, list[tuple[str, StorageTier | None, int]]]]:
        """The ``storage-unit`` link groups, each with the tiers whose ports it carries as
        ``(role, tier, ports)``: one group may carry both tiers, or one group each (their ports
        may differ in form factor). Of the ways to share the tiers among the groups, the one whose
        link counts and part form factors agree best with the tiers is taken; a group left
        without a tier carries none."""
        groups = [g for g in self.design.links if g.between == "storage-unit"]
        records = {"hot": self.design.storage, "cold": self.design.cold_storage}
        tiers = [(role, tier, units * tier.network_ports if tier is not None else records[role].ports)
                 for role, tier, units in self.storage_tiers]
        if not groups:
            return []
        if len(groups) == 1:
            return [(groups[0], tiers)]

        def mismatches(assignment) -> int:
            bad = 0
            for group, carried in assignment:
                part = self.cable(group.part)
                bad += group.count != sum(ports for _, _, ports in carried)
                bad += sum(1 for _, tier, _ in carried
                           if part is not None and tier is not None and part.b_form_factor != tier.port_form_factor)
            return bad

        options = []
        for order in (tiers, tiers[::-1]):
            # One tier per group, in order; groups beyond the tiers carry none.
            options.append([(g, [order[i]] if i < len(order) else []) for i, g in enumerate(groups)])
        return min(options, key=mismatches)

    @cached_property
    def storage_counts(self) -> networks.StorageFabricCounts | None:
        """The dedicated storage network the free choices imply; None when converged, or when the
        storage switch cannot run the storage speed, or the tier count is not 1, 2 or 3."""
        net = self.storage_net
        if self.converged or net.tiers not in (1, 2, 3) or self.storage_radix < (2 if net.tiers >= 2 else 1):
            return None
        return networks.storage_fabric_counts(self.nodes * self.storage_ports_per_node, self.unit_ports,
                                              self.storage_radix, net.tiers, net.spines,
                                              self.storage_leaf_split if net.tiers >= 2 else None, self.unit_slots,
                                              net.links_per_leaf_spine, net.cores)

    @property
    def n_storage_switches(self) -> int:
        """Storage leaves and spines implied (the record's when they cannot be derived)."""
        if self.converged:
            return 0
        c, net = self.storage_counts, self.storage_net
        return c.leaves + c.spines + c.cores if c is not None else net.leaves + net.spines + net.cores

    # ---- the management network

    @cached_property
    def mgmt_leaf(self) -> networks.ManagementLeaf | None:
        """The management leaf model's ports (None when the switch is unknown)."""
        return None if self.mgmt_switch is None else networks.management_leaf(self.mgmt_switch)

    @cached_property
    def mgmt_aggregation_radix(self) -> int:
        """Aggregation switch ports at the leaves' uplink speed (0 when unknown or it cannot run it)."""
        switch = self.mgmt_aggregation_switch
        return 0 if switch is None or self.mgmt_leaf is None else switch.radix(self.mgmt_leaf.uplink_gbps)

    @cached_property
    def mgmt_devices(self) -> list[tuple[str, int, int, int]]:
        """``(what, count, in-band ports, oob ports)`` of every device on the management network:
        nodes, compute and storage switches (no in-band port of their own), hot and cold storage
        units, head nodes, and the racks (a port per PDU); management switches themselves are not."""
        devices = []
        if self.server is not None:
            devices.append((self.server.id, self.nodes, 1, self.server.oob_ports))
        if self.switch is not None:
            devices.append((self.switch.id, self.n_switches, 0, self.switch.oob_ports))
        if self.storage_switch is not None:
            devices.append((self.storage_switch.id, self.n_storage_switches, 0, self.storage_switch.oob_ports))
        devices += [(tier.id, units, 1, tier.oob_ports) for _, tier, units in self.storage_tiers if tier is not None]
        if self.head is not None:
            devices.append((self.head[0].id, self.head[1], 1, self.head[0].oob_ports))
        for rack_id in dict.fromkeys(g.rack_class for g in self.design.racks):  # the PDUs of every rack recorded
            rack = self._item("racks", rack_id)
            if rack is not None:
                devices.append((f"{rack_id} rack", sum(g.count for g in self.design.racks if g.rack_class == rack_id),
                                0, rack.pdus))
        return devices

    @cached_property
    def mgmt_ports(self) -> int:
        return networks.management_ports([device[1:] for device in self.mgmt_devices])

    @cached_property
    def mgmt_counts(self) -> networks.ManagementCounts | None:
        """The management network implied; None when the leaf switch is unknown or has no device
        port besides its uplinks."""
        if self.mgmt_leaf is None or self.mgmt_leaf.down < 1:
            return None
        return networks.management_counts(self.mgmt_ports, self.mgmt_leaf.down, self.mgmt_aggregation_radix)

    @property
    def n_mgmt_leaves(self) -> int:
        c = self.mgmt_counts
        return c.leaves if c is not None else self.design.management_network.leaves

    @property
    def n_mgmt_aggregation(self) -> int:
        c = self.mgmt_counts
        return c.aggregation if c is not None else self.design.management_network.aggregation

    @property
    def switch_counts(self) -> list[tuple[Switch, int]]:
        """Every known switch model of the design with the switches implied of it, per role
        (compute, storage, management leaves, management aggregation; a model may repeat)."""
        found = [(self.switch, self.n_switches), (self.storage_switch, self.n_storage_switches),
                 (self.mgmt_switch, self.n_mgmt_leaves), (self.mgmt_aggregation_switch, self.n_mgmt_aggregation)]
        return [(switch, count) for switch, count in found if switch is not None]
