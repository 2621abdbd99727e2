"""The storage network, cold tier and management network of the exhaustive enumeration.

Written from docs/model.md ("Storage network", "Cold tier", "Management network"), the catalog and
the instance, never from the solver's code. For one compute candidate (node configuration, fabric,
node count, hot tier and units) :func:`storage_networks` lists every storage network the rules
allow — converged on the compute fabric, or dedicated: storage NIC model and count, speed, storage
switch, 1 tier or 2 non-blocking tiers with every spine count — with the cold tier, and
:func:`management_networks` every management switch. Parts of these link classes are the cheapest
admitted fitting part that reaches the class's run at the design's placement (``PLACEMENTS``: one
rack, mixed racks in one row, racks across the site): provisioned power does not depend on the part
fitted (every cage counts the hungriest module), so the cheapest is the optimum's. A network is
listed with its cables at every placement where they exist; :meth:`Network.at` fixes one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from topoopt.checking import derive
from topoopt.checking.networks import management_leaf, storage_leaf_splits, unit_slots
from topoopt.checking.text import ceil_div
from topoopt.models.catalog import LinkPart, Nic, StorageTier, Switch
from topoopt.models.design import LinkGroup, ManagementNetwork, StorageNetwork, SwitchGroup

TOLERANCE = 1e-9
MGMT_DEVICE_FORM_FACTOR = "rj45"
PLACEMENTS = ("rack", "row", "site")
"""Everything in one mixed rack; several mixed racks (one row); racks of one model each."""


def switch_protocol(protocol: str) -> str:
    return "ib" if protocol == "ib" else "ethernet"


def _by_cages(part) -> bool:
    """A transceiver kit of several links between switches: counted by the cages it fills."""
    return not part.one_piece and part.links > 1


def _kits(part, upper_cages: int, lower_cages: int) -> int:
    """Kits filling ``upper_cages`` and ``lower_cages``: ``max(ceil(A / a_ends), ceil(B / b_ends))``."""
    return max(ceil_div(upper_cages, part.a_ends), ceil_div(lower_cages, part.b_ends))


@dataclass
class Network:
    """What a storage (or management) network adds to a compute candidate: before it is placed,
    its cables at each placement where they exist (``placed``) and its least cost; placed
    (:meth:`at`), that placement's."""

    cost: int = 0  # NICs, cables and (management) switches; storage switches are priced per model
    node_extra_w: float = 0.0
    switches: dict[str, int] = field(default_factory=dict)  # model -> count (racks, power, cost)
    switch_groups: list[SwitchGroup] = field(default_factory=list)
    links: list[LinkGroup] = field(default_factory=list)
    counts: derive.FabricCounts | None = None  # compute counts with converged storage leaves
    record: StorageNetwork | ManagementNetwork | None = None
    cold: tuple[StorageTier, int] | None = None
    placed: dict[str, tuple[int, list[LinkGroup]]] = field(default_factory=dict)  # placement -> (cost, links)

    @classmethod
    def cabled(cls, placed: dict[str, tuple[int, list[LinkGroup]]], **kwargs) -> Network | None:
        """A network whose (cost, links) at each placement are ``placed``'s; None when none has them."""
        if not placed:
            return None
        return cls(cost=min(cost for cost, _ in placed.values()), placed=placed, **kwargs)

    def at(self, placement: str) -> Network | None:
        """This network at ``placement``; None where its cables do not exist."""
        if placement not in self.placed:
            return None
        cost, links = self.placed[placement]
        return replace(self, cost=cost, links=links, placed={placement: self.placed[placement]})


class Networks:
    """The storage, cold and management choices of one instance."""

    def __init__(self, enumerator) -> None:
        self.e = enumerator
        self.instance = enumerator.instance
        self.catalog = enumerator.catalog
        self.parts = list(self.catalog.cables)
        d = self.instance.site.distances
        lengths = derive.link_lengths_m(d, self.instance.site.max_racks)
        self.runs = {placement: derive.placed_runs_m(lengths, d.in_rack_m, d.in_row_m + d.slack_m,
                                                     one_rack=placement == "rack", switches_one_rack=False,
                                                     one_row=placement != "site")
                     for placement in PLACEMENTS}
        self.need_gbps = enumerator.needs.network_gbps
        self._dedicated: dict[tuple, list[Network]] = {}
        self._parts: dict[tuple, LinkPart | None] = {}
        self._management: dict[int, list[Network]] = {}

    def price(self, item_id: str) -> int | None:
        return self.e.price(item_id)

    def part_between(self, a: tuple[str, int], b: tuple[str, int], gbps: int, length_m: float,
                     placement: str) -> LinkPart | None:
        """The cheapest part whose a-end fits (form factor, ports per cage) ``a`` and b-end ``b`` at
        ``gbps`` and reaches ``length_m`` at ``placement`` (cached)."""
        key = (a, b, gbps, length_m, placement)
        if key not in self._parts:
            self._parts[key] = self.cheapest_part(lambda p: derive.part_fits_cage(p, "a", *a, gbps)
                                                  and derive.part_fits_cage(p, "b", *b, gbps), length_m, placement)
        return self._parts[key]

    def cheapest_part(self, fits, length_m: float, placement: str) -> LinkPart | None:
        """The cheapest part that fits, reaches (within one rack at ``rack``: no one-piece cable
        longer than the rack allows), is priced and allowed."""
        rules, d = self.instance.constraints.cables, self.instance.site.distances
        found = [p for p in self.parts if fits(p) and p.max_reach_m >= length_m and self.price(p.id) is not None
                 and rules.admits(p.id)
                 and not (placement == "rack" and derive.too_long_in_rack(p, d.in_rack_m, d.slack_m))]
        return min(found, key=lambda p: self.price(p.id), default=None)

    # -- cold tier ------------------------------------------------------------------------------------
    def cold_tiers(self) -> list[tuple[StorageTier, int] | None]:
        """None (nothing archived) or every admitted object tier with the fewest units that hold
        the archive and take one checkpoint per interval."""
        needs, rules = self.e.needs, self.instance.constraints
        if needs.cold_capacity_tb <= 0:
            return [None] if rules.pins.cold_storage is None else []
        found = []
        for tier in self.catalog.storage:
            if (tier.kind != "object" or self.price(tier.id) is None or not rules.storage.admits(tier.id)
                    or rules.pins.cold_storage not in (None, tier.id)):
                continue
            units = max(1, math.ceil(needs.cold_capacity_tb * (1 - TOLERANCE) / tier.capacity_tb),
                        math.ceil(needs.cold_write_gb_per_s * (1 - TOLERANCE) / tier.write_gb_per_s))
            found.append((tier, units))
        return found

    # -- storage-unit links ---------------------------------------------------------------------------
    def unit_links(self, units: list[tuple[StorageTier, int]], switch: Switch, protocol: str, gbps: int, *,
                   same_speed: bool = False):
        """``{placement: (cost, links, switch ports taken)}`` of the units on a switch whose link
        speed is ``gbps``, at each placement where a part fits and reaches; empty when a unit
        cannot attach. A tier runs ``gbps`` when it can; otherwise (never with ``same_speed``: the
        compute fabric) the fastest speed it and the switch's cages share for which some placement
        has an admitted part, its units taking whole cages (docs/model.md)."""
        if any(protocol not in tier.protocols for tier, _ in units):
            return {}
        speeds = []
        for tier, _ in units:
            shared = [gbps] if gbps in tier.port_speeds_gbps else [] if same_speed else sorted(
                (g for g in tier.port_speeds_gbps if switch.ports_per_cage.get(g, 0) > 0), reverse=True)
            usable = [g for g in shared if any(self._unit_part(tier, switch, g, runs["storage-unit"], placement)
                                               for placement, runs in self.runs.items())]
            if not usable:
                return {}
            speeds.append(usable[0])
        placed = {}
        for placement, runs in self.runs.items():
            links, cost, slots, length_m = [], 0, 0, runs["storage-unit"]
            for (tier, count), unit_gbps in zip(units, speeds):
                part = self._unit_part(tier, switch, unit_gbps, length_m, placement)
                if part is None:
                    break
                assemblies = count * ceil_div(tier.network_ports, part.links)
                cost += assemblies * self.price(part.id)
                slots += unit_slots(count, tier.network_ports, unit_gbps, gbps, part, switch.ports_per_cage[gbps])
                links.append(LinkGroup(network="storage", between="storage-unit", count=count * tier.network_ports,
                                       part=part.id, assemblies=assemblies, length_m=length_m, gbps=unit_gbps))
            else:
                placed[placement] = (cost, links, slots)
        return placed

    def _unit_part(self, tier: StorageTier, switch: Switch, gbps: int, length_m: float,
                   placement: str) -> LinkPart | None:
        return self.part_between((switch.cage_form_factor, switch.ports_per_cage[gbps]), (tier.port_form_factor, 1),
                                 gbps, length_m, placement)

    # -- storage networks -----------------------------------------------------------------------------
    def storage_networks(self, node, fabric, n: int, counts, hot: tuple[StorageTier, int], keep,
                         mode: str | None = None, need_gbps: float | None = None) -> list[Network]:
        """Every storage network (with the cold tier) the rules allow for this compute candidate,
        less the dedicated ones ``keep`` (a filter over a list) drops; only of ``mode`` when given;
        each carrying ``need_gbps`` (default: at tokens / deadline). Dedicated networks do not
        depend on the compute fabric: they are listed once per (server, node count, hot tier, need)."""
        pins = self.instance.constraints.pins
        need = self.need_gbps if need_gbps is None else need_gbps
        found: list[Network] = []
        if mode in (None, "converged"):
            for cold in self.cold_tiers():
                units = [hot] + ([cold] if cold else [])
                unit_ports = sum(t.network_ports * c for t, c in units)
                if pins.storage_network in (None, "converged") and pins.storage_nic is None:
                    for converged in self.converged(node, fabric, n, counts, units, unit_ports, need):
                        converged.cold = cold
                        found.append(converged)
        if mode not in (None, "dedicated"):
            return found
        key = (node.server.id, n, hot[0].id, hot[1], need)
        if key not in self._dedicated:
            dedicated = []
            if pins.storage_network in (None, "dedicated"):
                for cold in self.cold_tiers():
                    units = [hot] + ([cold] if cold else [])
                    for network in self.dedicated(node, n, units, sum(t.network_ports * c for t, c in units), need):
                        network.cold = cold
                        dedicated.append(network)
            self._dedicated[key] = keep(dedicated)
        return found + self._dedicated[key]

    def converged(self, node, fabric, n: int, counts, units, unit_ports: int, need_gbps: float) -> list[Network]:
        """Storage on the compute fabric: its switch at the compute speed takes the units. Never on
        a rail-only fabric; 1 tier on the one switch; 2 or 3 tiers on ``ceil(U / (k − u))`` storage
        leaves whose uplinks carry the need, or on the top tier's free ports (docs/model.md)."""
        if fabric.tiers == 0 or (fabric.tiers == 1 and fabric.rails_per_leaf < node.rails):
            return []
        gbps = node.interconnect.gbps
        protocol = switch_protocol(node.interconnect.protocol)
        found = {placement: (cost, links) for placement, (cost, links, _) in
                 self.unit_links(units, fabric.switch, protocol, gbps, same_speed=True).items()}
        if not found or n * node.rails * gbps < need_gbps * (1 - TOLERANCE):
            return []
        provisioned = self.instance.site.provision_fabric_for_nodes
        growing = provisioned is not None and provisioned > n
        limit = self.instance.constraints.max_oversubscription
        networks = []
        for attach in (("leaves",) if fabric.tiers == 1 else ("leaves", "top")):
            with_units = fabric.counts(n, node.rails, unit_ports, attach)
            if fabric.tiers == 1:
                if with_units.ports_per_leaf > fabric.radix or (growing and fabric.rails_per_leaf * provisioned
                                                                + unit_ports > fabric.radix):
                    continue
            elif attach == "leaves":
                free = fabric.radix - fabric.up
                if free < 1 or with_units.storage_leaves * fabric.up * gbps < need_gbps * (1 - TOLERANCE):
                    continue
            if growing and fabric.tiers >= 2 and not self.e.grows_with(fabric, node, provisioned, limit, unit_ports,
                                                                      attach):
                continue
            record = StorageNetwork(mode="converged", nic=None, nics_per_node=0, ports_per_node=node.rails,
                                    link_gbps=gbps, node_gbps=float(node.rails * gbps), need_gbps=round(need_gbps, 3),
                                    switch=None, tiers=0, leaves=0, spines=0,
                                    compute_storage_leaves=with_units.storage_leaves, unit_ports=unit_ports,
                                    converged_attach=attach)
            networks.append(Network.cabled(found, counts=with_units, record=record))
        return networks

    def nic_choices(self, server) -> list[tuple[Nic, int, bool]]:
        nics = self.catalog.by_id("nics")
        if server.builtin_storage_nics is not None:
            nic = nics.get(server.builtin_storage_nics.nic)
            return [(nic, server.builtin_storage_nics.count, True)] if nic else []
        return [(nics[nic_id], count, False) for nic_id in server.storage_nic_options if nic_id in nics
                for count in range(1, server.max_storage_nics + 1)]

    def dedicated(self, node, n: int, units, unit_ports: int, need_gbps: float):
        """Storage NICs, every count of ports cabled, storage switches in 1 tier or 2 (every leaf
        split, every spine count); R2 caps what is cabled, the leaf uplinks carry the need."""
        for nic, nics, builtin in self.nic_choices(node.server):
            limit = min(nics * nic.ports, node.server.storage_ports_max or nics * nic.ports)
            for cabled in range(1, limit + 1):
                if self.instance.constraints.pins.storage_ports_per_node not in (None, cabled):
                    continue
                yield from self._dedicated_cabling(node, n, units, unit_ports, need_gbps, (nic, nics, builtin), cabled)

    def _dedicated_cabling(self, node, n: int, units, unit_ports: int, need_gbps: float, choice, cabled: int):
        rules, pins = self.instance.constraints, self.instance.constraints.pins
        interconnects = self.catalog.by_id("interconnects")
        for nic, nics, builtin in [choice]:
            nic_price = 0 if builtin else self.price(nic.id)
            if nic_price is None or not rules.storage_nics.admits(nic.id) or pins.storage_nic not in (None, nic.id):
                continue
            ports = cabled
            speeds = sorted({(switch_protocol(interconnects[i].protocol), interconnects[i].gbps)
                             for i in nic.interconnects if i in interconnects})
            for protocol, gbps in speeds:
                if n * ports * gbps < need_gbps * (1 - TOLERANCE):
                    continue
                if n * ports * gbps > max(8 * need_gbps, n * 400) * (1 + TOLERANCE):
                    continue  # R2
                end_w = max((p.power_w_per_b_end for p in self.parts
                             if derive.part_fits_cage(p, "b", nic.port_form_factor, 1, gbps)), default=0.0)
                node_extra_w = (0.0 if builtin else nics * nic.power_w) + ports * end_w
                for switch in self.catalog.switches:
                    k = switch.radix(gbps)
                    price = self.price(switch.id)
                    if (switch.role != "compute" or protocol not in switch.protocols or k < 1 or price is None
                            or not rules.switches.admits(switch.id)):
                        continue
                    per_cage = switch.ports_per_cage[gbps]
                    cage = (switch.cage_form_factor, per_cage)
                    # The switch ports the units take may differ by placement (their parts do).
                    by_slots: dict[int, dict] = {}
                    for placement, (unit_cost, unit_links, slots) in self.unit_links(units, switch, protocol,
                                                                                    gbps).items():
                        by_slots.setdefault(slots, {})[placement] = (unit_cost, unit_links)
                    for slots, found in by_slots.items():
                        yield from self._dedicated_shapes(
                            n, ports, need_gbps, nic, nics, nic_price, node_extra_w, switch, protocol, gbps, cage,
                            n * ports + slots, unit_ports, found)

    def _dedicated_shapes(self, n, ports, need_gbps, nic, nics, nic_price, node_extra_w, switch, protocol, gbps, cage,
                          endpoints, unit_ports, found):
        """The dedicated networks on ``switch`` with ``endpoints`` switch ports in use below the
        leaves' uplinks (node ports and the units' ports), 1 tier or every 2-tier shape."""
        k = switch.radix(gbps)
        # Per placement: the cost of the NICs and of the node and unit cables, those cables.
        edge = {}
        for placement, (unit_cost, unit_links) in found.items():
            length_m = self.runs[placement]["node-storage"]
            node_part = self.part_between(cage, (nic.port_form_factor, 1), gbps, length_m, placement)
            if node_part is None:
                continue
            node_assemblies = ports * ceil_div(n, node_part.links)
            node_links = [LinkGroup(network="storage", between="node-storage", count=n * ports,
                                    part=node_part.id, assemblies=node_assemblies, length_m=length_m,
                                    gbps=gbps)]
            edge[placement] = (n * nics * nic_price + node_assemblies * self.price(node_part.id) + unit_cost,
                               node_links + unit_links)
        if not edge:
            return
        common = dict(mode="dedicated", nic=nic.id, nics_per_node=nics, ports_per_node=ports,
                      link_gbps=gbps, node_gbps=float(ports * gbps), need_gbps=round(need_gbps, 3),
                      switch=switch.id, compute_storage_leaves=0, unit_ports=unit_ports)
        if endpoints <= k:
            yield Network.cabled(
                edge, node_extra_w=node_extra_w, switches={switch.id: 1},
                switch_groups=[SwitchGroup(network="storage", tier="storage-leaf", model=switch.id,
                                           count=1, ports_used=endpoints)],
                record=StorageNetwork(**common, tiers=1, leaves=1, spines=0))
        spine_parts = {placement: self.part_between(cage, cage, gbps, runs["storage-leaf-spine"], placement)
                       for placement, runs in self.runs.items()}
        per_cage = cage[1]
        for (down, half), spines in ((split, s) for split in storage_leaf_splits(k)
                                     for s in range(1, split[1] + 1) if split[1] % s == 0):
            leaves = ceil_div(endpoints, down)
            per_pair = half // spines
            if leaves * per_pair > k or leaves * half * gbps < need_gbps * (1 - TOLERANCE):
                continue
            placed = {}
            for placement, (cost, links) in edge.items():
                spine_part = spine_parts[placement]
                if spine_part is None or per_pair % spine_part.links_together:
                    continue
                assemblies = leaves * spines * ceil_div(per_pair, spine_part.links)
                if _by_cages(spine_part):  # kits: the cages filled, spines of leaves·m, leaves of u
                    assemblies = _kits(spine_part, spines * ceil_div(leaves * per_pair, per_cage),
                                       leaves * ceil_div(half, per_cage))
                placed[placement] = (cost + assemblies * self.price(spine_part.id), links + [LinkGroup(
                    network="storage", between="storage-leaf-spine", count=leaves * half,
                    part=spine_part.id, assemblies=assemblies,
                    length_m=self.runs[placement]["storage-leaf-spine"], gbps=gbps)])
            network = Network.cabled(
                placed, node_extra_w=node_extra_w, switches={switch.id: leaves + spines},
                switch_groups=[
                    SwitchGroup(network="storage", tier="storage-leaf", model=switch.id, count=leaves,
                                ports_used=endpoints + leaves * half),
                    SwitchGroup(network="storage", tier="storage-spine", model=switch.id, count=spines,
                                ports_used=leaves * half)],
                record=StorageNetwork(**common, tiers=2, leaves=leaves, spines=spines,
                                      leaf_down_ports=down, leaf_up_ports=half))
            if network is not None:
                yield network
        yield from self._three_tier_shapes(k, endpoints, need_gbps, node_extra_w, switch, gbps, cage, edge, common,
                                           spine_parts)

    def _three_tier_shapes(self, k, endpoints, need_gbps, node_extra_w, switch, gbps, cage, edge, common, spine_parts):
        """3 tiers (docs/model.md), only past k / m leaves (below it 2 tiers of the shape dominate):
        per split and m (1, or any divisor of the uplinks leaving 2 spines per pod at least when the
        leaf–spine part carries several links: the 2-tier spine counts), pods of
        floor(k/2) / m leaves and up / m spines, and each count C of cores per plane dividing the
        spines' k − floor(k/2) uplinks whose cores hold pods × uplinks / C ports."""
        core_parts = {placement: self.part_between(cage, cage, gbps, runs["storage-spine-core"], placement)
                      for placement, runs in self.runs.items()}
        per_cage = cage[1]
        multi = any(p is not None and p.links > 1 for p in spine_parts.values())
        half, spine_up = k // 2, k - k // 2
        for (down, up), m in ((split, m) for split in storage_leaf_splits(k)
                              for m in (range(1, split[1] + 1) if multi else (1,))):
            leaves = ceil_div(endpoints, down)
            if (up % m or half % m or half < m or up // m < 2 or leaves * m <= k
                    or leaves * up * gbps < need_gbps * (1 - TOLERANCE)):
                continue
            per_pod, planes = half // m, up // m
            pods = ceil_div(leaves, per_pod)
            spines = pods * planes
            for per_plane in (c for c in range(1, spine_up + 1) if spine_up % c == 0 and pods * (spine_up // c) <= k):
                m2 = spine_up // per_plane
                placed = {}
                for placement, (cost, links) in edge.items():
                    ls, sc = spine_parts[placement], core_parts[placement]
                    if ls is None or sc is None or m % ls.links_together or m2 % sc.links_together:
                        continue
                    ls_n, sc_n = leaves * planes * ceil_div(m, ls.links), spines * per_plane * ceil_div(m2, sc.links)
                    if _by_cages(ls):  # the last pod's spines carry its leaves' links only
                        last = leaves - per_pod * (pods - 1)
                        ls_n = _kits(ls, planes * ((pods - 1) * ceil_div(per_pod * m, per_cage)
                                                   + ceil_div(last * m, per_cage)), leaves * ceil_div(up, per_cage))
                    if _by_cages(sc):
                        sc_n = _kits(sc, planes * per_plane * ceil_div(pods * m2, per_cage),
                                     spines * ceil_div(spine_up, per_cage))
                    placed[placement] = (
                        cost + ls_n * self.price(ls.id) + sc_n * self.price(sc.id),
                        links + [LinkGroup(network="storage", between="storage-leaf-spine", count=leaves * up,
                                           part=ls.id, assemblies=ls_n, gbps=gbps,
                                           length_m=self.runs[placement]["storage-leaf-spine"]),
                                 LinkGroup(network="storage", between="storage-spine-core", count=spines * spine_up,
                                           part=sc.id, assemblies=sc_n, gbps=gbps,
                                           length_m=self.runs[placement]["storage-spine-core"])])
                cores = planes * per_plane
                network = Network.cabled(
                    placed, node_extra_w=node_extra_w, switches={switch.id: leaves + spines + cores},
                    switch_groups=[
                        SwitchGroup(network="storage", tier="storage-leaf", model=switch.id, count=leaves,
                                    ports_used=endpoints + leaves * up),
                        SwitchGroup(network="storage", tier="storage-spine", model=switch.id, count=spines,
                                    ports_used=leaves * up + spines * spine_up),
                        SwitchGroup(network="storage", tier="storage-core", model=switch.id, count=cores,
                                    ports_used=spines * spine_up)],
                    record=StorageNetwork(**common, tiers=3, leaves=leaves, spines=spines, cores=cores,
                                          links_per_leaf_spine=m, leaf_down_ports=down, leaf_up_ports=up))
                if network is not None:
                    yield network

    # -- management network ---------------------------------------------------------------------------
    def management_networks_cached(self, ports: int) -> list[Network]:
        """:meth:`management_networks`, listed once per port count."""
        if ports not in self._management:
            self._management[ports] = list(self.management_networks(ports))
        return self._management[ports]

    def management_networks(self, ports: int):
        """Every admitted management leaf model (``management_leaf``: d device ports, 2 uplinks)
        serving ``ports`` management ports in ceil(ports / d) leaves and, past one leaf, with every
        admitted management switch running the uplink speed as aggregation: 2 × ceil(leaves / (k_a − 2))
        switches, k_a its ports at that speed, 2 of them kept for the site's management core."""
        rules = self.instance.constraints
        admitted = [s for s in self.catalog.switches
                    if s.role == "management" and self.price(s.id) is not None and rules.switches.admits(s.id)]
        for switch in admitted:
            leaf = management_leaf(switch)
            if rules.pins.management_switch not in (None, switch.id) or leaf.down < 1:
                continue
            leaves = ceil_div(ports, leaf.down)
            # An aggregation switch keeps 2 ports for the site's management core.
            aggregations = [a for a in admitted if a.radix(leaf.uplink_gbps) > 2] if leaves > 1 else [None]
            for aggregation in aggregations:
                network = self._management_network(ports, switch, leaf, leaves, aggregation)
                if network is not None:
                    yield network

    def _management_network(self, ports: int, switch: Switch, leaf, leaves: int, aggregation: Switch | None):
        """The management network of ``leaves`` leaves of ``switch`` and their aggregation, cabled
        at every placement (None where no part fits)."""
        low, high = leaf.device_gbps, leaf.uplink_gbps
        k = aggregation.radix(high) - 2 if aggregation else 0
        groups_of = 2 * ceil_div(leaves, k) if aggregation else 0
        uplinks = 2 * leaves if aggregation else 0
        ff, price = switch.cage_form_factor, self.price(switch.id)
        placed = {}
        for placement, runs in self.runs.items():
            part = self.cheapest_part(lambda p: derive.part_fits_cage(p, "a", ff, switch.ports_per_cage[low], low)
                                      and derive.part_fits_cage(p, "b", MGMT_DEVICE_FORM_FACTOR, 1, low),
                                      runs["mgmt"], placement)
            if part is None:
                continue
            links = [LinkGroup(network="management", between="mgmt", count=ports, part=part.id,
                               assemblies=ceil_div(ports, part.links), length_m=runs["mgmt"], gbps=low)]
            cost = leaves * price + ceil_div(ports, part.links) * self.price(part.id)
            if aggregation:
                up = self.cheapest_part(
                    lambda p: derive.part_fits_cage(p, "a", aggregation.cage_form_factor,
                                                    aggregation.ports_per_cage[high], high)
                    and derive.part_fits_cage(p, "b", *leaf.uplink_cage, high), runs["mgmt-uplink"], placement)
                if up is None:
                    continue
                links.append(LinkGroup(network="management", between="mgmt-uplink", count=uplinks, part=up.id,
                                       assemblies=uplinks, length_m=runs["mgmt-uplink"], gbps=high))
                cost += groups_of * self.price(aggregation.id) + uplinks * self.price(up.id)
            placed[placement] = (cost, links)
        groups = [SwitchGroup(network="management", tier="mgmt-leaf", model=switch.id, count=leaves,
                              ports_used=ports + uplinks)]
        counts = {switch.id: leaves}
        if aggregation:
            groups.append(SwitchGroup(network="management", tier="mgmt-aggregation", model=aggregation.id,
                                      count=groups_of, ports_used=uplinks))
            counts[aggregation.id] = counts.get(aggregation.id, 0) + groups_of
        return Network.cabled(
            placed, switches=counts, switch_groups=groups,
            record=ManagementNetwork(switch=switch.id, aggregation_switch=aggregation.id if aggregation else None,
                                     ports=ports, leaves=leaves, aggregation=groups_of, leaf_down_ports=leaf.down,
                                     link_gbps=low, uplink_gbps=high))

