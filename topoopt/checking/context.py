"""What every rule reads: the instance, the design, the resolved catalog items and derived amounts.

Catalog look-ups are tolerant: an id the catalog lacks resolves to None, the family that owns
the item reports it, and the rules that would need it skip their arithmetic rather than guess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from topoopt import perf
from topoopt.catalog import ResolvedCatalog, resolve_catalog
from topoopt.checking import derive
from topoopt.checking.networks_view import NetworksView
from topoopt.checking.units import SECONDS_PER_DAY
from topoopt.models.catalog import ControlNode, Interconnect, LinkPart, Nic, RackClass, Server, StorageTier, Switch
from topoopt.models.design import Cost, Design, LinkGroup, RackGroup, Violation
from topoopt.models.instance import Instance
from topoopt.models.performance import Performance, StorageNeeds
from topoopt.perf.storage import converged_storage_gb_per_step

Rule = Callable[["CheckContext"], list[Violation]]


@dataclass
class CheckContext(NetworksView):
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
    def head(self) -> tuple[ControlNode, int] | None:
        """The design's head-node model and count (None without head nodes or when the catalog
        lacks the model)."""
        h = self.design.head_nodes
        model = None if h is None else self._item("control", h.model)
        return None if model is None else (model, h.count)

    @cached_property
    def head_host(self) -> RackGroup | None:
        """The group of racks of one model whose last rack also holds the head nodes (its
        ``holds``); None when the head nodes take racks of their own or mixed racks."""
        return next((g for g in self.design.racks if g.role in ("network", "storage") and g.holds), None)

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
    def rack_class(self) -> RackClass | None:
        """The nodes' rack class: that of the compute racks or of the mixed racks (or of the
        first rack group)."""
        groups = self.rack_groups("compute") or self.rack_groups("mixed") or list(self.design.racks)
        return self._item("racks", groups[0].rack_class) if groups else None

    @cached_property
    def infra_rack_class(self) -> RackClass | None:
        """The network and storage racks' class; with mixed racks (which hold the switches), or
        without a network or storage rack, the nodes'."""
        groups = [g for g in self.rack_groups("network") + self.rack_groups("storage") if g.count]
        if self.rack_groups("mixed") or not groups:
            return self.rack_class
        return self._item("racks", groups[0].rack_class)

    def rack_class_of(self, role: str) -> RackClass | None:
        """The class of a rack role's racks: the nodes' for compute and mixed racks, else the
        network and storage racks'."""
        return self.rack_class if role in ("compute", "mixed") else self.infra_rack_class

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
        """The fabric the design's free choices imply (tiers, switch, rails per leaf, leaves per rail
        group, uplinks, spines and links per pair or links per pair and cores per plane, where
        converged storage units attach), or None when the switch cannot run the link speed or a
        2- or 3-tier fabric records no leaf per rail group."""
        fabric = self.design.fabric
        if self.has_fabric and self.radix < 1:
            return None
        if fabric.tiers >= 2 and fabric.leaves_per_rail < 1:
            return None
        return derive.fabric_counts(
            self.nodes, self.rails, self.radix, fabric.tiers, rails_per_leaf=fabric.rails_per_leaf,
            leaves_per_rail=fabric.leaves_per_rail, up=fabric.leaf_up_ports, spines_2tier=fabric.spines,
            links_per_leaf_spine=fabric.links_per_leaf_spine, cores_per_plane=fabric.cores_per_plane,
            storage_ports=self.unit_slots if self.converged and self.has_fabric else 0,
            attach=self.storage_net.converged_attach,
        )

    @property
    def provisioned_nodes(self) -> int | None:
        """``site.provision_fabric_for_nodes`` (growth), None when the instance asks for none."""
        return self.instance.site.provision_fabric_for_nodes

    @property
    def growing(self) -> bool:
        """Growth asked beyond the nodes built: the fabric's rules are also checked at ``N`` and the
        uplink sizing rule (``uplinks_balanced``) is waived."""
        return self.provisioned_nodes is not None and self.provisioned_nodes > self.nodes

    @cached_property
    def leaf_down_max(self) -> int | None:
        """``D``, the most down-ports a compute leaf may fill: ``k − u`` in 2 tiers, the 3-tier
        split's ``D`` (None when ``u`` is no split's), the whole switch in 1 tier."""
        f, k = self.design.fabric, self.radix
        if f.tiers == 1:
            return k
        if f.tiers == 2:
            return k - f.leaf_up_ports
        if f.tiers == 3:
            return derive.split_down_for_up(k, f.leaf_up_ports)
        return None

    @cached_property
    def growth_counts(self) -> derive.FabricCounts | None:
        """The fabric at ``N`` provisioned nodes (2 and 3 tiers): ``x_N = ceil(N / floor(D/g))``
        leaves per rail group, the same uplinks, spines per pair and cores; None without growth
        beyond the nodes built, or when it cannot be derived."""
        f, c = self.design.fabric, self.counts
        if not self.growing or c is None or f.tiers < 2 or self.leaf_down_max is None:
            return None
        x_n = derive.growth_leaves_per_group(self.provisioned_nodes, f.rails_per_leaf, self.leaf_down_max)
        if x_n is None:
            return None
        return derive.fabric_counts(
            self.provisioned_nodes, self.rails, self.radix, f.tiers, rails_per_leaf=f.rails_per_leaf,
            leaves_per_rail=x_n, up=f.leaf_up_ports, spines_2tier=f.spines,
            links_per_leaf_spine=f.links_per_leaf_spine, cores_per_plane=f.cores_per_plane,
            storage_ports=self.unit_slots if self.converged else 0, attach=self.storage_net.converged_attach,
        )

    # ---- lengths and power

    @cached_property
    def lengths_m(self) -> dict[str, float]:
        """Cable run per link class where the racks put its ends."""
        d = self.instance.site.distances
        lengths = derive.link_lengths_m(d, self.instance.site.max_racks)
        racks = sum(g.count for g in self.design.racks)
        return derive.placed_runs_m(lengths, d.in_rack_m, d.in_row_m + d.slack_m, one_rack=self.one_rack,
                                    switches_one_rack=self.compute_switches_one_rack,
                                    one_row=derive.in_one_row(racks, bool(self.rack_groups("mixed")), d.racks_per_row),
                                    floor_m=derive.floor_diagonal_m(racks, d))

    @cached_property
    def one_rack(self) -> bool:
        """One mixed rack holds every device."""
        mixed = self.rack_groups("mixed")
        return bool(mixed) and sum(g.count for g in mixed) == 1

    @cached_property
    def in_rack_classes(self) -> frozenset[str]:
        """The link classes whose every cable runs within one rack."""
        return derive.in_rack_classes(self.lengths_m, one_rack=self.one_rack,
                                      switches_one_rack=self.compute_switches_one_rack)

    @cached_property
    def compute_switches_one_rack(self) -> bool:
        """One rack holds every switch of the compute switches' model (with the storage and
        management switches of that model): a mixed rack holding them all, or, in racks of one
        model each, the model fits in one rack of the network racks' class."""
        if self.switch is None or self.infra_rack_class is None:
            return False
        count = sum(n for s, n in self.switch_counts if s.id == self.switch.id)
        mixed = self.rack_groups("mixed")
        if mixed:
            return any(g.count == 1 and g.holds.get(self.switch.id, 0) >= count for g in mixed)
        per_rack = derive.devices_per_rack(self.infra_rack_class, self.power_of_switch_w(self.switch),
                                           self.switch.rack_units)
        return count <= per_rack

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
        tiers and oversubscription class ``ρ = ceil(d/u)``, and, when the storage network is converged, the
        storage reads that share the compute NICs (``converged_storage_gb_per_step``); None when
        the catalog lacks a piece."""
        server, interconnect = self.server, self.interconnect
        gpu = None if server is None else self.catalog.catalog.by_id("gpus").get(server.gpu)
        if gpu is None or interconnect is None:
            return None
        f, c = self.design.fabric, self.counts
        # The performance model sees the whole class ρ = ceil(d/u) of the down-ports in use.
        if f.tiers > 1 and c is not None and c.up >= 1:
            oversubscription = float(derive.oversubscription_class(c.down, c.up))
        elif f.tiers > 1 and f.leaf_up_ports:
            oversubscription = float(derive.oversubscription_class(f.leaf_down_ports, f.leaf_up_ports))
        else:
            oversubscription = 1.0
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
        (min_time, min_job_cost: the time to train is the objective, so storage may not slow it),
        none otherwise."""
        goal = self.instance.goal
        if goal.objective in ("min_time", "min_job_cost"):
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
