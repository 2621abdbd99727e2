"""A lower bound on the monthly cost of any design with a given node configuration group, fabric
class and node count ``n`` — the pruning bound of the ``min_job_cost`` search (objectives/min_job_cost.py).

Every term is a part of the model's cost (definitions.py ``costs``) that no design of the candidate
avoids, counted as the model counts it, at the cheapest option:

* nodes: ``n ×`` the server price for a single node without a fabric, server and bought NICs
  otherwise;
* fabric: the cheapest fabric option's fewest switches (leaves ``ceil(rails × n / min(D, ρ·u))``
  whatever the rails per leaf, spines, cores and pods as in docs/model.md "Fabric"; for one tier
  ``ceil(rails × n / k)`` switches, several only in a rail-only fabric) times its price,
  plus cable assemblies per link class at the cheapest part whose ends fit (reach, lists and the
  DAC-splitting rule can only rule a part out, so they are ignored; node–leaf and between switches
  ``ceil(links / q)``, which neither the per-pair count of a cable nor the per-cage count of a kit
  goes below); infinite where the option's port rules (``leaf_ports_cover_endpoints``,
  ``spine_ports_cover_uplinks``, ``core_ports_cover_uplinks``) exclude ``n``;
* racks: at the cheapest rack class for the nodes (any class's least price for the network
  and storage racks), one single mixed rack when the nodes and the least other
  equipment (a storage unit, a management leaf, a compute leaf) fit in it; otherwise the compute
  racks ``ceil(n / nodes per rack)`` and, unless that many racks may be mixed
  (``MIXED_RACKS_MAX``), racks being homogeneous per device model, one rack for the storage units
  (at least one) and one for the compute fabric's switches (the management leaves may sit in
  compute racks);
* storage: the cheapest tier at the fewest whole units that meet the needs at a rate at most the
  design's own (in its storage network mode: a converged network's slower rate);
* storage network (the cheapest of the options of the mode): bought storage NICs ``n × NICs ×
  price``, node–storage cables ``ports per node × ceil(n / q)`` and, dedicated, one storage
  switch (a dedicated network has a leaf);
* management network (the cheapest option): one management switch (there is always a leaf) and
  cords for the nodes' own ports, ``ceil(n × (1 + out-of-band ports) / q)``.

Beyond that the storage and management networks only add to a design's cost, so the floor leaves
out their further switches and cables, a converged network's extra compute leaves, the cold tier,
storage-unit cables and the racks these need beyond the ones counted above. They also only add
node power, so the site-power cap on ``n`` (min_job_cost.py ``most_nodes``) taken at the compute
side's power stays an upper bound.

Each term is non-decreasing in ``n`` (and in the storage rate), which the search relies on.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cached_property

from topoopt.options.networks import StorageNetOption
from topoopt.options.problem import Problem
from topoopt.options.racks import MIXED_RACKS_MAX, devices_by_power, per_rack, rack_cools
from topoopt.options.tables import (
    MAX_NODES,
    NEAR_BALANCED,
    RUN_LEVELS,
    FabricOption,
    NodeConfig,
    near_balanced_spines,
    part_fits_node_end,
    part_fits_switch_end,
)


def _cheapest(parts: tuple[tuple[int, int], ...], assemblies) -> float:
    """The cheapest of ``(price, links per assembly)`` parts at ``assemblies(q)`` assemblies."""
    return min((price * assemblies(q) for price, q in parts), default=math.inf)


def spine_counts(f: FabricOption) -> tuple[int, ...]:
    """The spine counts a 2-tier option may have (a near-balanced one: each of its range)."""
    return tuple(near_balanced_spines(f.up)) if f.spines == NEAR_BALANCED else (f.spines,)


@dataclass(frozen=True)
class FabricFloor:
    """One fabric option's cost at ``n`` nodes, from the model's own counts (docs/model.md,
    "Fabric" and "Cables and transceivers") with the cheapest part that fits each link class.

    Exact switch counts; cable assemblies at the cheapest fitting part, ignoring the rules that
    could only rule a part out (reach, lists, the DAC-splitting rule), so never above the model.
    Infinite where the model's port rules rule the option out at ``n``.
    """

    option: FabricOption
    rails: int
    node_leaf: tuple[tuple[int, int], ...]
    leaf_spine: tuple[tuple[int, int], ...]
    spine_core: tuple[tuple[int, int], ...]
    spine_choices: tuple[int, ...] = ()
    """2 tiers: the spines of every option with this option's switch, speed,
    ratio and uplinks, fewest spines first: they differ only there, so one floor takes the first
    whose spines have the ports (the cheapest of them at ``n``)."""

    def cost(self, n: int) -> float:
        f, r = self.option, self.rails
        if f.tiers == 0:
            return 0.0 if n == 1 else math.inf
        endpoints = r * n
        if f.tiers == 1:
            # One switch holds every rail, or (rail-only, where the instance allows it) one switch
            # per group of g rails with g·n ≤ k: at least ceil(r·n / k) switches either way.
            if n > f.radix:  # leaf_ports_cover_endpoints
                return math.inf
            leaves, spines, cores = -(-endpoints // f.radix), 0, 0
        else:
            # A leaf uses at most D down-ports and, in its ratio class, ρ·u: whatever the rails per
            # leaf, the leaves hold every endpoint.
            leaves = -(-endpoints // min(f.down, f.ratio * f.up))
            if f.tiers == 2:
                fitting = [s for s in self.spine_choices or spine_counts(f)
                           if leaves * f.up <= s * f.radix]  # spine_ports_cover_uplinks
                if not fitting:
                    return math.inf
                spines, cores = fitting[0], 0
            else:
                pods = -(-leaves // f.leaves_per_pod)
                if pods * f.links_per_spine_core > f.radix:  # core_ports_cover_uplinks
                    return math.inf
                spines, cores = f.spines * pods, f.spines * f.cores_per_plane
        total = (f.unit_price or 0) * (leaves + spines + cores)
        # An assembly carries q links whatever rails it takes (h = gcd(q, g) ≤ q).
        total += _cheapest(self.node_leaf, lambda q: -(-endpoints // q))
        # Between switches a one-piece cable is counted per pair and a kit by cages filled; both
        # are at least ceil(links / q), which bounds either from below.
        if f.tiers >= 2:
            total += _cheapest(self.leaf_spine, lambda q: -(-(leaves * f.up) // q))
        if f.tiers == 3:
            total += _cheapest(self.spine_core, lambda q: -(-(spines * f.spine_up) // q))
        return total


@dataclass(eq=False)
class FabricFloors:
    """The fabric floors a node cage can use, with the cheapest at each ``n`` remembered (the ways
    of one cage share it)."""

    floors: tuple[FabricFloor, ...]
    _cheapest: dict[int, float] = field(default_factory=dict)

    def cost(self, n: int) -> float:
        if n not in self._cheapest:
            self._cheapest[n] = min((f.cost(n) for f in self.floors), default=math.inf)
        return self._cheapest[n]


@dataclass(frozen=True)
class NetworksFloor:
    """The storage and management networks' cost every design of ``n`` nodes pays at least
    (module docstring): ``(NIC price per node, node–storage price per assembly, links per
    assembly, switch price)`` per storage network option and ``(switch price, cord price, links
    per cord)`` per management option; the node's management ports are ``1 + oob``."""

    storage: tuple[tuple[int, int, int, int], ...]
    management: tuple[tuple[int, int, int], ...]
    node_mgmt_ports: int

    def cost(self, n: int) -> float:
        storage = min((nic * n + cable * -(-n // q) + switch for nic, cable, q, switch in self.storage), default=0)
        ports = self.node_mgmt_ports * n
        management = min((switch + cord * -(-ports // q) for switch, cord, q in self.management), default=0)
        return storage + management


@dataclass(frozen=True)
class Way:
    """One way a node of the pair can be bought, reduced to what the cost floor needs."""

    node_price: int
    """Server only for the fabric-less single node; server and its bought NICs otherwise."""
    racks: tuple[tuple[int, int, int], ...]
    """(rack price, nodes per rack, most nodes in a single mixed rack) for every rack class that
    holds at least one such node. Over the last, the nodes and the least other equipment every
    design has (:meth:`CostFloor.least_equipment`) exceed the rack's power or units."""
    node_w: float
    fabrics: FabricFloors
    networks: NetworksFloor
    switch_models: int
    """The fewest switch models any such design racks apart when there are several racks: the
    compute fabric's (management leaves may sit in compute racks)."""
    other_rack_price: int
    """The least price of any rack class: network and storage racks take a class of their own."""

    def floor(self, n: int) -> float:
        """Nodes, racks, fabric and the networks' share of ``n`` such nodes, at their cheapest."""
        fabric = self.fabrics.cost(n)
        if fabric == math.inf:
            return math.inf
        racks = min(price * nodes + self.other_rack_price * others
                    for price, per, mixed in self.racks for nodes, others in [self.racks_at_least(n, per, mixed)])
        return n * self.node_price + racks + fabric + self.networks.cost(n)

    def racks_at_least(self, n: int, per: int, mixed: int) -> tuple[int, int]:
        """(the nodes' racks, other racks): one single mixed rack when the ``n`` nodes and the
        least other equipment fit in it; mixed racks ``ceil(n / per)`` when that many may be mixed;
        else compute racks ``ceil(n / per)`` and, racks being homogeneous per device model, one
        for the storage units (at least one) and one per switch model."""
        if n <= mixed:
            return 1, 0
        compute = -(-n // per)
        return (compute, 0) if compute <= MIXED_RACKS_MAX else (compute, 1 + self.switch_models)


class CostFloor:
    """The bound's pieces for one problem (fitting parts cached per switch, speed and cage)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self._fitting: dict[tuple, tuple] = {}
        self._storage_networks: dict[tuple, tuple] = {}
        self._fabric_floors: dict[tuple, tuple[FabricFloors, tuple[float, int]]] = {}
        self._racking: dict[tuple, tuple[float, tuple]] = {}

    def ways(self, configs: list[NodeConfig], fabrics: list[FabricOption],
             nets: list[StorageNetOption] | None = None) -> list[Way]:
        """The distinct ways to buy a node of these configurations with these fabric options and
        storage network options (default: every option of the problem)."""
        o = self.problem.options
        ways: dict[tuple, Way] = {}
        storage = self.storage_networks(o.storage_nets if nets is None else nets)
        fabric_ids = tuple(map(id, fabrics))
        for c in configs:
            for attached in (False, True):
                usable, extra = self.fabric_floors(c, fabrics, fabric_ids, attached)
                if not usable.floors:
                    continue
                node_w, racks = self.racking(c, attached, extra)
                price = (c.unit_price if attached else c.server_price) or 0
                networks = NetworksFloor(storage, self.management, 1 + c.server.oob_ports)
                if racks:
                    ways.setdefault((price, racks, node_w, id(usable), networks),
                                    Way(price, racks, node_w, usable, networks, self.switch_models(usable),
                                        min(r.unit_price or 0 for r in o.racks)))
        return list(ways.values())

    def racking(self, config: NodeConfig, attached: bool, extra: tuple[float, int]) -> tuple[float, tuple]:
        """The node's power (with or without a fabric) and :attr:`Way.racks` with the least other
        equipment ``extra``; cached per configuration, fabric and equipment."""
        key = (id(config), attached, extra)
        if key not in self._racking:
            o = self.problem.options
            node_w, units = config.power_w(o.all_parts, fabric=attached), config.server.rack_units
            racks = tuple(sorted({(r.unit_price or 0, per, max(0, per_rack(r.rack, node_w, units, extra)))
                                  for r in o.racks if rack_cools(r.rack, config.server.cooling)
                                  and (per := per_rack(r.rack, node_w, units)) >= 1}))
            self._racking[key] = node_w, racks
        return self._racking[key]

    def fabric_floors(self, config: NodeConfig, fabrics: list[FabricOption], fabric_ids: tuple[int, ...],
                      attached: bool) -> tuple[FabricFloors, tuple[float, int]]:
        """The floors of the fabric options with (``attached``) or without a switch for this
        configuration's cage, rails and speed, and their least equipment; cached per cage, rails,
        speed and options (``fabric_ids``: their ids), so that the pairs that share them share the
        floors' cheapest cost at each ``n`` too."""
        key = (config.port_form_factor, config.ports_per_cage, config.interconnect.gbps, config.rails, attached,
               fabric_ids)
        if key not in self._fabric_floors:
            # 2-tier options differing only in spines × links per pair share one floor.
            shapes: dict[tuple, list[FabricOption]] = {}
            for f in fabrics:
                if (f.tiers > 0) == attached:
                    shapes.setdefault((f.index,) if f.tiers != 2 else (f.switch.id, f.protocol, f.gbps, f.ratio, f.up),
                                      []).append(f)
            usable = FabricFloors(tuple(
                dataclasses.replace(self.fabric_floor(same[0], config), spine_choices=tuple(sorted(
                    s for f in same for s in spine_counts(f)))) if same[0].tiers == 2
                else self.fabric_floor(same[0], config) for same in shapes.values()))
            self._fabric_floors[key] = usable, self.least_equipment(usable)
        return self._fabric_floors[key]

    def least_equipment(self, fabrics: FabricFloors) -> tuple[float, int]:
        """(W, rack units) of the least equipment every design has besides its nodes: a hot
        storage unit, a management leaf and, with a compute fabric, a leaf (each the lowest of its
        options)."""
        o = self.problem.options
        leaves = [(o.switch_power_w(f.option.switch), f.option.switch.rack_units) for f in fabrics.floors
                  if f.option.tiers > 0]
        groups = [group for group in (*self._always_there, leaves) if group]
        return sum(min(w for w, _ in group) for group in groups), sum(min(u for _, u in group) for group in groups)

    @cached_property
    def _always_there(self) -> tuple[list, list]:
        o = self.problem.options
        return ([(t.tier.power_w, t.tier.rack_units) for t in o.storage],
                [(o.switch_power_w(x.switch), x.switch.rack_units) for x in o.management])

    @staticmethod
    def switch_models(fabrics: FabricFloors) -> int:
        """Way.switch_models: the compute fabric's, when there is one (a management leaf may sit in
        a compute rack, so it may take no rack of its own)."""
        return int(any(f.option.tiers > 0 for f in fabrics.floors))

    def storage_networks(self, nets: list[StorageNetOption]) -> tuple[tuple[int, int, int, int], ...]:
        """NetworksFloor's terms of these storage network options (network_definitions.py
        ``_network_costs``: bought NICs per node, node–storage assemblies per port; a dedicated
        network's storage leaf), cached per list of options."""
        key = tuple(map(id, nets))
        if key not in self._storage_networks:
            self._storage_networks[key] = self._storage_terms(nets)
        return self._storage_networks[key]

    @staticmethod
    def _storage_terms(nets: list[StorageNetOption]) -> tuple[tuple[int, int, int, int], ...]:
        """The distinct terms, without those another term is at most at every ``n`` (NIC and
        switch prices no higher, and cables free or no dearer for at least as many links): the
        floor takes their minimum, which they cannot set (68 terms -> 5 on the built-in
        catalog)."""
        terms = set()
        for s in nets:
            switch = (s.switch_price or 0) if s.mode == "dedicated" else 0
            for level in RUN_LEVELS:  # the cables at every placement: the floor takes the least
                q, cable = s.node_storage_cost(level)
                terms.add((s.nic_cost_per_node, cable, max(q, 1) if cable else 1, switch))  # free: any q alike

        def below(u: tuple[int, int, int, int], t: tuple[int, int, int, int]) -> bool:
            return (u != t and u[0] <= t[0] and u[3] <= t[3]
                    and (u[1] == 0 or (u[1] <= t[1] and u[2] >= t[2])))

        return tuple(sorted(t for t in terms if not any(below(u, t) for u in terms)))

    @cached_property
    def management(self) -> tuple[tuple[int, int, int], ...]:
        """NetworksFloor's terms of the management options: a leaf, and the cords' part at each
        placement."""
        return tuple(sorted({(x.unit_price or 0, (part.unit_price or 0) if part else 0, part.part.links if part else 1)
                             for x in self.problem.options.management for part in x.part.values()}))

    def fabric_floor(self, f: FabricOption, config: NodeConfig) -> FabricFloor:
        """The option's cost floor for nodes of this configuration's cage and rails."""
        if f.tiers == 0:
            return FabricFloor(f, config.rails, (), (), ())
        cage = (config.port_form_factor, config.ports_per_cage, config.interconnect.gbps)
        return FabricFloor(f, config.rails, self.fitting(f, "node-leaf", config, cage),
                           self.fitting(f, "leaf-spine", config) if f.tiers >= 2 else (),
                           self.fitting(f, "spine-core", config) if f.tiers == 3 else ())

    def fitting(self, f: FabricOption, cls: str, config: NodeConfig, cage: tuple = ()) -> tuple:
        """(cheapest price, links per assembly) of the parts of ``cls`` that fit both ends
        (cached per switch, speed and node cage: fabric options share them)."""
        key = (f.switch.id, f.gbps, cls, cage)
        if key not in self._fitting:
            found: dict[int, int] = {}
            for p in self.problem.options.parts[cls]:
                lower = (part_fits_node_end(p.part, config) if cls == "node-leaf"
                         else part_fits_switch_end(p.part, f.switch, f.gbps, "b"))
                if lower and part_fits_switch_end(p.part, f.switch, f.gbps, "a"):
                    q = p.part.links
                    found[q] = min(found.get(q, p.unit_price or 0), p.unit_price or 0)
            self._fitting[key] = tuple(sorted((price, q) for q, price in found.items()))
        return self._fitting[key]

    def storage(self, tokens_per_s: float) -> float:
        """The cheapest storage tier at the fewest whole units that meet the needs at this rate."""
        needs = self.problem.storage_needs(tokens_per_s)
        best = math.inf
        for s in self.problem.options.storage:
            t = s.tier
            units = 1
            for need, supply in ((needs.read_gb_per_s, t.read_gb_per_s), (needs.write_gb_per_s, t.write_gb_per_s),
                                 (needs.capacity_tb, t.capacity_tb)):
                if supply > 0:
                    # Shaved by 1e-9 so float noise can only lower the bound.
                    units = max(units, math.ceil(need / supply * (1 - 1e-9)))
            best = min(best, (s.unit_price or 0) * units)
        return 0.0 if best == math.inf else best

    def cap(self, way: Way) -> int:
        """The most nodes bought this way that the racks, the budget at the node price alone and
        the site power allow: a cheap upper bound (:meth:`most_nodes` is the tight one)."""
        inst = self.problem.instance
        cap = min(MAX_NODES, inst.site.max_racks * max(per for _, per, _ in way.racks))
        if way.node_price > 0:
            cap = min(cap, int(inst.budget.max // way.node_price))
        if inst.site.power_cap_kw is not None:
            cap = min(cap, devices_by_power(inst.site.power_cap_kw, way.node_w))
        return cap

    def most_nodes(self, ways: list[Way]) -> int:
        """An upper bound on the nodes of any design bought one of these ways: each way's most
        under the budget (its floor, with the storage every design needs, grows with ``n``: found
        by bisection) within its :meth:`cap`; 0 when none fits the budget."""
        budget = self.problem.instance.budget.max
        fixed = self.storage(0.0)
        most = 0
        for way in ways:
            cap = self.cap(way)
            # Only a count above the best so far can raise it; the floor grows with n.
            if cap <= most or way.floor(most + 1) + fixed > budget:
                continue
            low, high = most + 1, cap
            while low < high:
                middle = (low + high + 1) // 2
                if way.floor(middle) + fixed <= budget:
                    low = middle
                else:
                    high = middle - 1
            most = max(most, low)
        return most

    def at(self, ways: list[Way], n: int, tokens_per_s: float) -> float:
        """The bound for ``n`` nodes bought any of these ways, storage at ``tokens_per_s``."""
        return min((way.floor(n) for way in ways), default=math.inf) + self.storage(tokens_per_s)
