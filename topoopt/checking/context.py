"""What every rule reads: the instance, the design, the resolved catalog items and derived amounts.

Catalog look-ups are tolerant: an id the catalog lacks resolves to None, the family that owns
the item reports it, and the rules that would need it skip their arithmetic rather than guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from topoopt import perf
from topoopt.catalog import ResolvedCatalog, resolve_catalog
from topoopt.checking import derive, networks
from topoopt.models.catalog import Interconnect, LinkPart, Nic, RackClass, Server, StorageTier, Switch
from topoopt.models.design import Cost, Design, LinkGroup, RackGroup, StorageNetwork, Violation
from topoopt.models.instance import Instance
from topoopt.models.performance import Performance, StorageNeeds
from topoopt.perf.storage import converged_storage_gb_per_step

Rule = Callable[["CheckContext"], list[Violation]]
SECONDS_PER_DAY = 86_400.0


@dataclass
class CheckContext:
    instance: Instance
    design: Design
    catalog: ResolvedCatalog
    cost: Cost | None = None
    performance: Performance | None = None

    # ---- catalog items named by the design (None when the catalog lacks the id)

    def _item(self, kind: str, item_id: str):
        return self.catalog.catalog.by_id(kind).get(item_id)

    @cached_property
    def server(self) -> Server | None:
        return self._item("servers", self.design.server)

    @cached_property
    def nic(self) -> Nic | None:
        return self._item("nics", self.design.nic)

    @cached_property
    def interconnect(self) -> Interconnect | None:
        return self._item("interconnects", self.design.interconnect)

    @property
    def has_fabric(self) -> bool:
        """Tiers 0 is a single node without a compute fabric: no switch, no links."""
        return self.design.fabric.tiers > 0

    @cached_property
    def switch(self) -> Switch | None:
        return self._item("switches", self.design.fabric.switch) if self.has_fabric else None

    @cached_property
    def storage_tier(self) -> StorageTier | None:
        return self._item("storage", self.design.storage.tier)

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
    def rack_class(self) -> RackClass | None:
        """The design's one rack class: that of its compute racks (or of its first rack group)."""
        groups = self.rack_groups("compute") or list(self.design.racks)
        return self._item("racks", groups[0].rack_class) if groups else None

    def cable(self, part_id: str) -> LinkPart | None:
        return self._item("cables", part_id)

    def part(self, link_class: str) -> LinkPart | None:
        group = self.link_group(link_class)
        return None if group is None else self._item("cables", group.part)

    @property
    def all_parts(self) -> list[LinkPart]:
        """Every cable/transceiver of the catalog: provisioned power assumes any of them may be fitted."""
        return list(self.catalog.catalog.cables)

    # ---- design record look-ups

    def link_group(self, link_class: str) -> LinkGroup | None:
        groups = [g for g in self.design.links if g.between == link_class]
        return groups[0] if groups else None

    def rack_groups(self, role: str) -> list[RackGroup]:
        return [g for g in self.design.racks if g.role == role]

    # ---- derived amounts

    @property
    def nodes(self) -> int:
        return self.design.nodes

    @property
    def rails(self) -> int:
        return self.design.nics_per_node

    @property
    def gbps(self) -> int:
        """The link speed: the interconnect's line rate (the design's own record when unknown)."""
        return self.interconnect.gbps if self.interconnect is not None else self.design.link_gbps

    @property
    def radix(self) -> int:
        """Logical switch ports at the link speed (0 when the switch is unknown or cannot run it)."""
        return self.switch.radix(self.gbps) if self.switch is not None else 0

    @property
    def node_form_factor(self) -> str | None:
        """The server's own compute cages (DGX twin-port OSFP) or else the NIC's cage."""
        if self.server is not None and self.server.compute_port_form_factor:
            return self.server.compute_port_form_factor
        return self.nic.port_form_factor if self.nic is not None else None

    @property
    def node_ports_per_cage(self) -> int:
        if self.server is not None and self.server.compute_port_form_factor:
            return self.server.compute_ports_per_cage
        return 1

    @cached_property
    def counts(self) -> derive.FabricCounts | None:
        """The fabric the design's free choices imply, or None when the switch cannot run the link speed."""
        fabric = self.design.fabric
        if self.has_fabric and (self.radix < 1 or fabric.leaf_down_ports < 1):
            return None
        return derive.fabric_counts(
            self.nodes, self.rails, self.radix, fabric.tiers, fabric.leaf_down_ports, fabric.leaf_up_ports,
            fabric.spines, fabric.cores_per_plane, fabric.links_per_leaf_spine,
            storage_ports=self.unit_ports if self.converged and self.has_fabric else 0,
        )

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
        """``nics · ports`` of the storage NIC (all ports used), or the compute rails when converged;
        the record's own figure when the NIC is unknown."""
        if self.converged:
            return self.rails
        if self.storage_nic is None:
            return self.storage_net.ports_per_node
        return self.storage_net.nics_per_node * self.storage_nic.ports

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
        storage switch cannot run the storage speed, or the tier count is not 1 or 2."""
        net = self.storage_net
        if self.converged or net.tiers not in (1, 2) or self.storage_radix < (2 if net.tiers == 2 else 1):
            return None
        return networks.storage_fabric_counts(self.nodes * self.storage_ports_per_node, self.unit_ports,
                                              self.storage_radix, net.tiers, net.spines)

    @property
    def n_storage_switches(self) -> int:
        """Storage leaves and spines implied (the record's when they cannot be derived)."""
        if self.converged:
            return 0
        c = self.storage_counts
        return c.leaves + c.spines if c is not None else self.storage_net.leaves + self.storage_net.spines

    # ---- the management network

    @cached_property
    def mgmt_speeds_gbps(self) -> tuple[int, int] | None:
        return None if self.mgmt_switch is None else networks.management_speeds_gbps(self.mgmt_switch)

    @property
    def mgmt_radix(self) -> int:
        """Management switch ports at its device speed."""
        return 0 if self.mgmt_speeds_gbps is None else self.mgmt_switch.radix(self.mgmt_speeds_gbps[0])

    @cached_property
    def mgmt_devices(self) -> list[tuple[str, int, int]]:
        """``(what, count, oob ports)`` of every device on the management network: nodes, compute
        and storage switches, hot and cold storage units (management switches themselves are not)."""
        devices = []
        if self.server is not None:
            devices.append((self.server.id, self.nodes, self.server.oob_ports))
        if self.switch is not None:
            devices.append((self.switch.id, self.n_switches, self.switch.oob_ports))
        if self.storage_switch is not None:
            devices.append((self.storage_switch.id, self.n_storage_switches, self.storage_switch.oob_ports))
        devices += [(tier.id, units, tier.oob_ports) for _, tier, units in self.storage_tiers if tier is not None]
        return devices

    @cached_property
    def mgmt_ports(self) -> int:
        return networks.management_ports([(count, oob) for _, count, oob in self.mgmt_devices])

    @cached_property
    def mgmt_counts(self) -> networks.ManagementCounts | None:
        """The management network implied; None when the switch is unknown or has under 3 device ports."""
        if self.mgmt_radix < 3:
            return None
        return networks.management_counts(self.mgmt_ports, self.mgmt_radix)

    @property
    def n_mgmt_switches(self) -> int:
        c, m = self.mgmt_counts, self.design.management_network
        return c.leaves + c.aggregation if c is not None else m.leaves + m.aggregation

    # ---- lengths and power

    @cached_property
    def lengths_m(self) -> dict[str, float]:
        d = self.instance.site.distances
        return derive.link_lengths_m(d.in_row_m, d.across_rows_m, d.slack_m)

    @cached_property
    def node_power_w(self) -> float | None:
        """The node's compute side (``derive.node_power_w``) plus its storage side
        (``derive.storage_nic_power_w``): dedicated storage NICs bought separately and the
        hungriest module in every storage NIC port."""
        if self.server is None or self.node_form_factor is None:
            return None
        bought_nic_w = self.nic.power_w if self.nic is not None and self.server.builtin_compute_nics is None else 0.0
        compute_w = derive.node_power_w(
            self.server.power_w, self.rails, self.node_form_factor, self.node_ports_per_cage, self.gbps,
            self.all_parts, nic_power_w=bought_nic_w, fabric=self.design.tiers > 0,
        )
        nic = self.storage_nic
        if self.converged or nic is None:
            return compute_w
        bought = 0 if self.server.builtin_storage_nics is not None else self.storage_net.nics_per_node
        return compute_w + derive.storage_nic_power_w(nic, bought, self.storage_ports_per_node, self.storage_gbps,
                                                      self.all_parts)

    @cached_property
    def switch_power_w(self) -> float | None:
        return None if self.switch is None else derive.switch_power_w(self.switch, self.all_parts)

    def power_of_switch_w(self, switch: Switch) -> float:
        return derive.switch_power_w(switch, self.all_parts)

    @property
    def n_switches(self) -> int:
        """Switches the fabric implies (the design's own counts when the fabric cannot be derived)."""
        if self.counts is not None:
            return self.counts.leaves + self.counts.spines + self.counts.cores
        f = self.design.fabric
        return f.leaves + f.spines + f.cores

    # ---- the performance model's view of the design

    @cached_property
    def job(self) -> perf.Job:
        return perf.Job.from_instance(self.instance, self.catalog.catalog)

    @cached_property
    def hardware(self) -> perf.Hardware | None:
        """The hardware perf evaluates: the server's GPU (whatever the record says), the fabric's
        tiers and exact ``d/u`` oversubscription, and, when the storage network is converged, the
        storage reads that share the compute NICs (``converged_storage_gb_per_step``); None when
        the catalog lacks a piece."""
        server, interconnect = self.server, self.interconnect
        gpu = None if server is None else self.catalog.catalog.by_id("gpus").get(server.gpu)
        if gpu is None or interconnect is None:
            return None
        f = self.design.fabric
        oversubscription = f.leaf_down_ports / f.leaf_up_ports if f.tiers > 1 and f.leaf_up_ports else 1.0
        # Without a fabric there is no scale-out traffic: to perf that is the same as one switch.
        return perf.Hardware(
            gpu=gpu, gpus_per_node=server.gpus_per_node, nodes=self.nodes, nics_per_node=self.rails,
            link_gbps=interconnect.gbps, interconnect=interconnect, tiers=max(f.tiers, 1),
            oversubscription=oversubscription,
            converged_storage_gb_per_step=converged_storage_gb_per_step(self.job) if self.converged else 0.0,
        )

    @cached_property
    def evaluation(self) -> Performance | None:
        """perf's fastest layout that fits on this hardware (None when nothing fits)."""
        return None if self.hardware is None else perf.evaluate(self.job, self.hardware)

    @cached_property
    def throughput_target(self) -> float | None:
        """Tokens/s the storage must feed: tokens / deadline (min_cost), the design's own rate
        (min_time), none otherwise."""
        goal = self.instance.goal
        if goal.objective == "min_time":
            return None if self.evaluation is None else self.evaluation.tokens_per_s
        if goal.deadline_days is None:
            return None
        return self.instance.workload.training.tokens / (goal.deadline_days * SECONDS_PER_DAY)

    @cached_property
    def storage_needs(self) -> StorageNeeds:
        """Read, write and capacity needs at the throughput target (zero rate when there is none)."""
        return perf.storage_needs(self.job, self.throughput_target or 0.0)


def build_context(
    instance: Instance, design: Design, cost: Cost | None = None, performance: Performance | None = None
) -> CheckContext:
    """Resolve the instance's catalog and bundle everything the rules read."""
    return CheckContext(instance=instance, design=design, catalog=resolve_catalog(instance), cost=cost,
                        performance=performance)
