"""Option tables of the storage network, the cold tier and the management network.

Nothing here knows CP-SAT. Like the compute fabric's tables (tables.py), physical impossibilities
never become options, while instance rules (lists, pins, prices, reach) and the compatibility of
storage units with a network are kept and tagged with the family that rules them out, so that an
explanation can name it. docs/model.md ("Storage network", "Cold tier", "Management network")
states the rules.

Parts for the new link classes are not a decision of the model: per option (or per pair of a
storage switch speed and a storage tier) and per placement (the class's run when the design is one
rack, several racks in one row, or racks across the site: tables.py ``link_runs_m``) the part is
chosen here, among the physically fitting ones, as the one violating the fewest instance rules,
then the cheapest, then the least power hungry. Its violations at every placement become the
option's; those at some placements only, the option's at that placement (``level_violations``),
which the model rules out with the placement's literal. A pricier part that draws less power is
therefore never tried when rack power binds (a documented simplification).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from topoopt.catalog import ResolvedCatalog
from topoopt.catalog.power import part_fits_cage
from topoopt.models.catalog import LinkPart, Nic, StorageTier, Switch
from topoopt.models.instance import Instance
from topoopt.options.conventions import switch_protocol, whole_units
from topoopt.options.rules import (
    cold_violations,
    management_violations,
    part_violations,
    storage_net_violations,
)

STORAGE_LEAF_RATIOS = (1, 2, 3, 4, 6, 8)
"""Down:up port ratios a 2-tier storage leaf may have (estimate: the usual oversubscriptions of
storage and front-end leaves). A storage network's traffic is bounded by the storage need, so it
need not be non-blocking; its uplinks must carry that need (storage_nic_bandwidth_met)."""
STORAGE_CAP_NEED_FACTOR = 8
STORAGE_CAP_NODE_GBPS = 400
"""A dedicated storage network cables at most max(8 × the storage need, nodes × 400 Gb/s) between
the nodes and the storage switches (estimate: the audit's bound; 2 × 200G per node is the DGX
reference architecture's storage attach). It keeps ties and time objectives from cabling every
port for a need of a few Gb/s."""


def storage_leaf_split(radix: int, ratio: int) -> tuple[int, int]:
    """``(down, up)`` ports of a 2-tier storage leaf of ``radix`` ports at a down:up ratio of at
    most ``ratio``: ``down = floor(k·r / (r + 1))`` rounded down to a multiple of 4 from 4 on (a
    leaf holds whole cable assemblies of 1, 2 or 4 links: a part-filled cage at a leaf boundary
    would cost an assembly the count misses), ``up = k − down`` (so ``down ≤ r · up``)."""
    down = radix * ratio // (ratio + 1)
    down -= down % 4 if down >= 4 else 0
    return down, radix - down


def storage_leaf_splits(radix: int) -> list[tuple[int, int]]:
    """The distinct ``(down, up)`` splits of :data:`STORAGE_LEAF_RATIOS` with a port each way."""
    splits = []
    for ratio in STORAGE_LEAF_RATIOS:
        down, up = storage_leaf_split(radix, ratio)
        if down >= 1 and up >= 1 and (down, up) not in splits:
            splits.append((down, up))
    return splits
MGMT_DEVICE_FORM_FACTOR = "rj45"
"""Management ports of nodes, switches and storage units are RJ45 copper (BMC and in-band)."""
MGMT_UPLINKS = 2
"""A management leaf keeps two ports for its uplinks, one to each switch of its aggregation pair;
an aggregation switch keeps as many for the site's management core."""


@dataclass(frozen=True)
class ChosenPart:
    """The part a link class of an option uses, with the instance rules it breaks."""

    part: LinkPart
    unit_price: int | None
    violations: frozenset[str]


@dataclass(frozen=True)
class _PartRef:
    """What part_violations reads of a part option."""

    part: LinkPart
    unit_price: int | None


def choose_part(catalog: ResolvedCatalog, instance: Instance, fits, length_m: float, *,
                in_rack: bool = False) -> ChosenPart | None:
    """Among the parts ``fits`` accepts, the one breaking the fewest instance rules on a run of
    ``length_m`` (``in_rack``: within one rack), then the cheapest, then the least power hungry,
    then the first in catalog order; None when none fits."""
    best = None
    for order, part in enumerate(catalog.catalog.cables):
        if not fits(part):
            continue
        price = whole_units(catalog.price(part.id))
        violations = part_violations(_PartRef(part, price), length_m, instance, in_rack=in_rack)
        key = (len(violations), price is None, price or 0, part.power_w_per_a_end + part.power_w_per_b_end, order)
        if best is None or key < best[0]:
            best = (key, ChosenPart(part, price, violations))
    return None if best is None else best[1]


Placed = dict[str, ChosenPart | None]
"""A link class's part at each placement (``rack``, ``row``, ``site``); None where none fits."""


def placed_violations(placed: list[Placed]) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """What the parts of ``placed`` (one per link class) break: ``(at every placement, {placement:
    the further ones there})``; a class without a fitting part breaks port_form_factor_match."""
    at: dict[str, frozenset[str]] = {}
    for parts in placed:
        for level, chosen in parts.items():
            at[level] = at.get(level, frozenset()) | (chosen.violations if chosen else {"port_form_factor_match"})
    common = frozenset.intersection(*at.values()) if at else frozenset()
    return common, {level: found - common for level, found in at.items() if found - common}


def same_ends(a: LinkPart, b: LinkPart) -> bool:
    """The parts plug into the same cages with the same links at the same speed (one fits wherever
    the other does, as many assemblies)."""
    return all(getattr(a, f) == getattr(b, f) for f in SAME_ENDS_FIELDS)


SAME_ENDS_FIELDS = ("a_form_factor", "a_ends", "b_form_factor", "b_ends", "links", "gbps")


class PartChooser:
    """:func:`choose_part` for a link between two cages — end a in (form factor, ports per cage),
    end b in another, at one speed — cached per (cages, speed, length): many switches, NICs and
    storage tiers share their cages, and a catalog grown with vendor variants has hundreds of
    parts to scan for each."""

    def __init__(self, catalog: ResolvedCatalog, instance: Instance) -> None:
        self.catalog, self.instance = catalog, instance
        self._chosen: dict[tuple, ChosenPart | None] = {}

    def between(self, a: tuple[str, int], b: tuple[str, int], gbps: int, length_m: float, *,
                in_rack: bool = False) -> ChosenPart | None:
        key = (a, b, gbps, length_m, in_rack)
        if key not in self._chosen:
            self._chosen[key] = choose_part(
                self.catalog, self.instance,
                lambda p: part_fits_cage(p, "a", *a, gbps) and part_fits_cage(p, "b", *b, gbps), length_m,
                in_rack=in_rack)
        return self._chosen[key]

    def in_rack_twin(self, part: LinkPart) -> ChosenPart | None:
        """The part a cable of ``part``'s kind is bought as within one rack (docs/model.md, "Cables
        within one rack"): the cheapest with the same ends, links and speed that breaks no rule on
        the in-rack run; None when none does."""
        key = ("in-rack twin", part.id)
        if key not in self._chosen:
            chosen = choose_part(self.catalog, self.instance, lambda p: same_ends(p, part),
                                 self.instance.site.distances.in_rack_m, in_rack=True)
            self._chosen[key] = chosen if chosen is not None and not chosen.violations else None
        return self._chosen[key]

    def placed(self, a: tuple[str, int], b: tuple[str, int], gbps: int, runs_m: dict[str, float]) -> Placed:
        """:meth:`between` at each placement's run (``rack``: within one rack)."""
        return {level: self.between(a, b, gbps, run_m, in_rack=level == "rack") for level, run_m in runs_m.items()}


@dataclass(frozen=True)
class StorageNetOption:
    """One storage network: converged on the compute fabric, or dedicated (storage NIC model and
    count, the storage ports cabled per node, port speed, storage switch model, 1 tier, or 2 tiers
    with a leaf down:up split and, when the leaf–spine part carries several links per assembly,
    the spine count). A 2-tier option whose leaves reach each spine with ``m`` links, ``m``
    dividing a spine's ``floor(k/2)`` down-ports, may take a third tier instead, a choice of the
    model: pods of ``up / m`` spines (the option's spine count, so the leaf–spine cables are the
    same), and cores (``core_part``)."""

    @property
    def spine_counts(self) -> list[int]:
        """The spine counts a 2-tier option allows: divisors of the leaf uplinks (or its own)."""
        if self.tiers != 2:
            return [0]
        return [self.spines] if self.spines else [d for d in range(1, self.up + 1) if self.up % d == 0]

    @property
    def three_tier_links(self) -> int:
        """``m``, the links between a leaf and each spine of its pod should the option take 3
        tiers: 1 with a free spine count (one link per assembly), else the option's own links per
        pair, when it divides a spine's ``floor(k/2)`` down-ports and leaves a pod 2 spines at
        least (a leaf keeps two paths up); 0: no third tier."""
        if self.tiers != 2 or self.core_part is None:
            return 0
        m = self.links_per_leaf_spine if self.spines else 1
        fits = 1 <= m <= self.radix // 2 and (self.radix // 2) % m == 0 and self.up // m >= 2
        return m if fits else 0

    @property
    def pod(self) -> tuple[int, int, int]:
        """3 tiers: ``(P, Q, u2)``: a spine's ``floor(k/2)`` down-ports take ``P = floor(k/2) / m``
        leaves, a leaf's ``u`` uplinks reach ``Q = u / m`` spines, and a spine has ``u2 = k −
        floor(k/2)`` uplinks."""
        m, half = self.three_tier_links, self.radix // 2
        return half // m, self.up // m, self.radix - half

    index: int
    mode: str  # "dedicated" | "converged"
    nic: Nic | None = None
    nics: int = 0
    builtin: bool = False
    protocol: str = ""
    gbps: int = 0
    switch: Switch | None = None
    radix: int = 0
    tiers: int = 0
    ports: int = 0  # storage ports cabled per node (1 … the NICs' ports, the server's storage_ports_max)
    down: int = 0  # 2 or 3 tiers: endpoint ports of a leaf
    up: int = 0  # 2 or 3 tiers: uplinks of a leaf (down ≤ ratio × up, storage_leaf_split)
    spines: int = 0  # 2 tiers: the spine count, or 0 when the model picks it among the divisors of half
    links_per_leaf_spine: int = 0  # 2 tiers: up / spines (0: the model's)
    nic_price: int | None = 0
    switch_price: int | None = 0
    node_w: float = 0.0
    parts: dict = field(default_factory=dict)  # link class -> Placed
    violations: frozenset[str] = frozenset()
    level_violations: dict = field(default_factory=dict)  # placement -> further violations there
    core_part: Placed | None = None  # 3 tiers: the spine–core part at each placement
    core_violations: frozenset[str] = frozenset()  # what 3 tiers break: the spine–core part's
    core_level_violations: dict = field(default_factory=dict)

    @property
    def ports_per_node(self) -> int:
        """Storage ports cabled per node (the others stay empty: no switch port, cable or module)."""
        return self.ports if self.nic else 0

    @property
    def nic_ports(self) -> int:
        """Storage ports the node's storage NICs have."""
        return self.nics * self.nic.ports if self.nic else 0

    @property
    def node_gbps(self) -> int:
        return self.ports_per_node * self.gbps

    @property
    def nic_cost_per_node(self) -> int:
        """The storage NICs a node buys (none built in, none when converged)."""
        return 0 if self.builtin or self.mode == "converged" else self.nics * (self.nic_price or 0)

    def part(self, link_class: str, level: str) -> ChosenPart | None:
        """The part of ``link_class`` at a placement (None: no such class, or none fits)."""
        return self.parts.get(link_class, {}).get(level)

    def node_storage_cost(self, level: str) -> tuple[int, int]:
        """(links per assembly q, price of one assembly on every storage port of a node) at a
        placement: a node–storage class costs ``price × ceil(n / q)``, like a rail; (0, 0) when
        converged."""
        part = self.part("node-storage", level) if self.mode == "dedicated" else None
        return (part.part.links, self.ports_per_node * (part.unit_price or 0)) if part else (0, 0)

    @property
    def nic_choice(self) -> tuple:
        """What the server's slots must take: (NIC id, count, built in, ports cabled)."""
        return (self.nic.id, self.nics, self.builtin, self.ports) if self.nic else ()

    @property
    def attach_key(self) -> tuple:
        """Where storage units plug in: (switch id, protocol, Gb/s)."""
        return (self.switch.id, self.protocol, self.gbps) if self.switch else ()

    @property
    def label(self) -> str:
        return self.described(three_tiers=False)

    def described(self, three_tiers: bool) -> str:
        """The option in words, with its third tier when the design takes it."""
        if self.mode == "converged":
            return "storage converged on the compute fabric"
        split = f" ({self.down} down / {self.up} up per leaf)" if self.tiers == 2 else ""
        tiers = 3 if three_tiers else self.tiers
        return (f"{self.nics} x {self.nic.id} ({self.ports_per_node} x {self.gbps}G cabled) per node, "
                f"{tiers} tier{'s' if tiers > 1 else ''} of {self.switch.id}{split}")


@dataclass(frozen=True)
class UnitLink:
    """Storage units of one tier plugged into a switch: the speed they run (:func:`unit_speeds`),
    the part at each placement, the switch ports a unit takes there (:func:`unit_slots`), and what
    rules it out (everywhere, and at some placements only)."""

    gbps: int
    part: Placed
    slots: dict[str, int]
    violations: frozenset[str]
    level_violations: dict = field(default_factory=dict)


def unit_speeds(tier: StorageTier, switch: Switch, gbps: int) -> list[int]:
    """The speeds a unit of ``tier`` may run on ``switch``, whose link speed is ``gbps``, best
    first: ``gbps`` when the tier runs it (one speed for the whole network, the common case);
    otherwise every speed both the tier and the switch's cages run, fastest first (a cage runs one
    speed, so such units take cages of their own)."""
    if gbps in tier.port_speeds_gbps:
        return [gbps]
    return sorted((g for g in tier.port_speeds_gbps if switch.ports_per_cage.get(g, 0) > 0), reverse=True)


def unit_slots(ports: int, unit_gbps: int, part: LinkPart | None, switch: Switch, gbps: int) -> int:
    """Switch ports at the link speed ``gbps`` one storage unit of ``ports`` data ports takes:
    its ports when it runs ``gbps``; at another speed the whole cages its assemblies fill
    (``ceil(ports / links)`` assemblies of ``a_ends`` cages each), each cage worth the
    ``ports_per_cage[gbps]`` ports it would carry at the link speed."""
    if unit_gbps == gbps or part is None:
        return ports
    return -(-ports // part.links) * part.a_ends * switch.ports_per_cage.get(gbps, 0)


@dataclass(frozen=True)
class ColdOption:
    index: int
    tier: StorageTier | None  # None: no cold tier
    unit_price: int | None
    violations: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ManagementOption:
    """A management network of one leaf model and, past one leaf, aggregation pairs of one model:
    leaves with ``leaf_down_ports`` device ports at the lowest speed and two uplinks at
    ``uplink_gbps`` (:func:`management_leaf`), each aggregation switch taking one uplink from each
    of up to ``leaves_per_pair`` leaves (its ports at the uplink speed less the 2 it keeps for the
    site's management core)."""

    index: int
    switch: Switch
    aggregation: Switch
    leaf_down_ports: int
    leaves_per_pair: int
    device_gbps: int
    uplink_gbps: int
    unit_price: int | None
    part: Placed
    uplink_part: Placed
    violations: frozenset[str] = frozenset()
    uplink_violations: frozenset[str] = frozenset()
    level_violations: dict = field(default_factory=dict)
    uplink_level_violations: dict = field(default_factory=dict)


def management_leaf(switch: Switch) -> tuple[int, int, int, tuple[str, int]] | None:
    """``(device speed, device ports, uplink speed, uplink cage)`` of a management leaf: its device
    ports run the lowest speed of its device cages; its two uplinks the highest speed of its uplink
    cages when it has them, else of its device cages, taking two of them. None without a device
    port besides the uplinks."""
    low = min(switch.ports_per_cage)
    if switch.uplink_cages:
        high = max(switch.uplink_ports_per_cage)
        if switch.uplink_radix(high) < MGMT_UPLINKS:
            return None
        down, cage = switch.radix(low), (switch.uplink_cage_form_factor, switch.uplink_ports_per_cage[high])
    else:
        high = max(switch.ports_per_cage)
        down, cage = switch.radix(low) - MGMT_UPLINKS, (switch.cage_form_factor, switch.ports_per_cage[high])
    return (low, down, high, cage) if down >= 1 else None


def storage_node_w(catalog: ResolvedCatalog, nic: Nic, nics: int, builtin: bool, gbps: int, ports: int) -> float:
    """Power a dedicated storage network adds to a node: its bought storage NICs (built-in ones
    are in the server's power) and, in each cabled storage port, the hungriest module that fits it."""
    end_w = max((p.power_w_per_b_end for p in catalog.catalog.cables
                 if part_fits_cage(p, "b", nic.port_form_factor, 1, gbps)), default=0.0)
    return (0.0 if builtin else nics * nic.power_w) + ports * end_w


def cabled_ports(nic: Nic, count: int, builtin: bool) -> range:
    """Storage ports a node may cable with ``count`` NICs: 1 … all of built-in ones; with bought
    ones, more than ``count − 1`` NICs have (fewer would leave a bought NIC unused: one NIC less
    does it cheaper)."""
    return range(1 if builtin else (count - 1) * nic.ports + 1, count * nic.ports + 1)


def nic_choices(catalog: ResolvedCatalog) -> list[tuple[Nic, int, bool]]:
    """(NIC, count, built in) over every server: built-in storage NICs as they come, else each
    storage NIC option at 1 … max_storage_nics."""
    nics = catalog.catalog.by_id("nics")
    found: dict[tuple, tuple] = {}
    for server in catalog.catalog.servers:
        if server.builtin_storage_nics is not None:
            nic = nics.get(server.builtin_storage_nics.nic)
            if nic is not None:
                found.setdefault((nic.id, server.builtin_storage_nics.count, True),
                                 (nic, server.builtin_storage_nics.count, True))
            continue
        for nic_id in server.storage_nic_options:
            nic = nics.get(nic_id)
            if nic is None:
                continue
            for count in range(1, server.max_storage_nics + 1):
                found.setdefault((nic.id, count, False), (nic, count, False))
    return list(found.values())


def server_takes(server, choice: tuple) -> bool:
    """The server's slots take this (NIC id, count, built in) and it may cable that many ports
    (``storage_ports_max``)."""
    nic_id, count, builtin, ports = choice
    if server.storage_ports_max is not None and ports > server.storage_ports_max:
        return False
    if server.builtin_storage_nics is not None:
        return builtin and (server.builtin_storage_nics.nic, server.builtin_storage_nics.count) == (nic_id, count)
    return not builtin and nic_id in server.storage_nic_options and count <= server.max_storage_nics


def storage_net_options(catalog: ResolvedCatalog, instance: Instance, runs_m: dict[str, dict[str, float]],
                        parts: PartChooser) -> list[StorageNetOption]:
    """The converged option, then every dedicated network: NIC choice × ports cabled × speed the
    NIC runs × storage switch speaking that protocol at that speed × 1 tier, 2 tiers with each
    leaf split (storage_leaf_splits) and, with multi-link leaf–spine parts, each divisor of the
    leaf uplinks as the spine count (and the spine–core part should it take 3 tiers)."""
    cat = catalog.catalog
    interconnects = cat.by_id("interconnects")
    options: list[StorageNetOption] = []

    def add(**kwargs) -> None:
        option = StorageNetOption(index=len(options), **kwargs)
        common, at = placed_violations(list(option.parts.values()))
        core, core_at = placed_violations([option.core_part]) if option.core_part else (frozenset(), {})
        options.append(replace(option, violations=storage_net_violations(option, instance) | common,
                               level_violations=at, core_violations=core, core_level_violations=core_at))

    add(mode="converged")
    for nic, count, builtin in nic_choices(catalog):
        speeds = sorted({(switch_protocol(ic.protocol), ic.gbps) for ic_id in nic.interconnects
                         if (ic := interconnects.get(ic_id)) is not None})
        nic_price = 0 if builtin else whole_units(catalog.price(nic.id))
        for (protocol, gbps), ports in ((speed, p) for speed in speeds for p in cabled_ports(nic, count, builtin)):
            node_w = storage_node_w(catalog, nic, count, builtin, gbps, ports)
            for switch in cat.switches:
                radix = switch.radix(gbps)
                # A switch no storage tier can attach to (protocol, unit_speeds) is a physical
                # impossibility, never an option.
                if switch.role != "compute" or protocol not in switch.protocols or radix < 1 or not any(
                        protocol in tier.protocols and unit_speeds(tier, switch, gbps) for tier in cat.storage):
                    continue
                switch_cage = (switch.cage_form_factor, switch.ports_per_cage[gbps])
                node_part = parts.placed(switch_cage, (nic.port_form_factor, 1), gbps, runs_m["node-storage"])
                common = dict(mode="dedicated", nic=nic, nics=count, builtin=builtin, ports=ports, protocol=protocol,
                              gbps=gbps, switch=switch, radix=radix, nic_price=nic_price,
                              switch_price=whole_units(catalog.price(switch.id)), node_w=node_w)
                add(tiers=1, parts={"node-storage": node_part}, **common)
                spine_part = parts.placed(switch_cage, switch_cage, gbps, runs_m["storage-leaf-spine"])
                core_part = parts.placed(switch_cage, switch_cage, gbps, runs_m["storage-spine-core"])
                # One link per assembly at every placement: the spine count is the model's.
                spine_links = {chosen.part.links for chosen in spine_part.values() if chosen} or {1}
                for down, up in storage_leaf_splits(radix):
                    two = dict(tiers=2, down=down, up=up, core_part=core_part,
                               parts={"node-storage": node_part, "storage-leaf-spine": spine_part})
                    if spine_links == {1}:
                        # One link per assembly: the spine count (a divisor of the uplinks) is a count
                        # of the model, since neither the port rule nor the cables depend on it otherwise.
                        add(spines=0, links_per_leaf_spine=0, **two, **common)
                        continue
                    for spines in (d for d in range(1, up + 1) if up % d == 0):
                        add(spines=spines, links_per_leaf_spine=up // spines, **two, **common)
    return options


def unit_links(catalog: ResolvedCatalog, instance: Instance, keys: set[tuple], runs_m: dict[str, float],
               parts: PartChooser) -> dict:
    """``{(attach key, tier id): UnitLink}``: every storage tier on every (switch, protocol, speed)
    a storage network or a converged compute fabric offers. The units run the first speed of
    :func:`unit_speeds` whose part breaks no instance rule at some placement (else the first with
    a fitting part, else the first), and speak the protocol [storage_fabric_ports_cover]; a part
    must fit both ends [port_form_factor_match]."""
    switches = catalog.catalog.by_id("switches")
    links = {}
    for key in sorted(keys):
        switch_id, protocol, gbps = key
        switch = switches[switch_id]
        for tier in catalog.catalog.storage:
            # No speed in common: at the link speed, which the tier does not run.
            speeds = unit_speeds(tier, switch, gbps) or [gbps]
            placed = [(g, parts.placed((switch.cage_form_factor, switch.ports_per_cage[g]),
                                       (tier.port_form_factor, 1), g, runs_m)) for g in speeds]
            unit_gbps, part = min(placed, key=lambda speed_part: _part_rank(speed_part[1]))  # the first best
            violations, at = placed_violations([part])
            if unit_gbps not in tier.port_speeds_gbps or protocol not in tier.protocols:
                violations |= {"storage_fabric_ports_cover"}
            slots = {level: unit_slots(tier.network_ports, unit_gbps, chosen and chosen.part, switch, gbps)
                     for level, chosen in part.items()}
            links[key, tier.id] = UnitLink(unit_gbps, part, slots, violations, at)
    return links


def _part_rank(placed: Placed) -> int:
    """0: a part breaking no instance rule at some placement; 1: a fitting part; 2: none fits."""
    chosen = placed.values()
    return 0 if any(c and not c.violations for c in chosen) else 1 if any(chosen) else 2


def cold_options(catalog: ResolvedCatalog, instance: Instance, cold_capacity_tb: float) -> list[ColdOption]:
    """"No cold tier" and, when something is archived, every object-store tier; "no cold tier" is
    ruled out by cold_storage_met when the cold capacity is positive."""
    none = ColdOption(0, None, 0, cold_violations(None, 0, instance)
                      | ({"cold_storage_met"} if cold_capacity_tb > 0 else frozenset()))
    options = [none]
    if cold_capacity_tb > 0:
        for tier in catalog.catalog.storage:
            if tier.kind == "object":
                price = whole_units(catalog.price(tier.id))
                options.append(ColdOption(len(options), tier, price, cold_violations(tier, price, instance)))
    return options


def management_options(catalog: ResolvedCatalog, instance: Instance, runs_m: dict[str, dict[str, float]],
                       parts: PartChooser) -> list[ManagementOption]:
    """Every management leaf model (:func:`management_leaf`) with every management switch whose
    device cages run the leaf's uplink speed as its aggregation (a leaf without uplink cages may
    aggregate its own model), or, when none does, alone (one leaf at most). The aggregation
    model's rules apply past one leaf."""
    options: list[ManagementOption] = []
    switches = [s for s in catalog.catalog.switches if s.role == "management"]
    for switch in switches:
        leaf = management_leaf(switch)
        if leaf is None:
            continue
        low, down, high, uplink_cage = leaf
        part = parts.placed((switch.cage_form_factor, switch.ports_per_cage[low]), (MGMT_DEVICE_FORM_FACTOR, 1),
                            low, runs_m["mgmt"])
        price = whole_units(catalog.price(switch.id))
        common, at = placed_violations([part])
        aggregations = [a for a in switches if a.radix(high) > MGMT_UPLINKS] or [None]
        for aggregation in aggregations:
            if aggregation is None:  # nothing aggregates these leaves: one leaf at most
                k, uplink = 0, {level: None for level in runs_m["mgmt-uplink"]}
                agg_rules = frozenset({"management_ports_cover"})
            else:
                k = aggregation.radix(high) - MGMT_UPLINKS
                uplink = parts.placed((aggregation.cage_form_factor, aggregation.ports_per_cage[high]), uplink_cage,
                                      high, runs_m["mgmt-uplink"])
                agg_rules = management_violations(aggregation, whole_units(catalog.price(aggregation.id)), instance,
                                                  pinned=False)
            uplink_common, uplink_at = placed_violations([uplink])
            options.append(ManagementOption(
                index=len(options), switch=switch, aggregation=aggregation or switch, leaf_down_ports=down,
                leaves_per_pair=k,
                device_gbps=low, uplink_gbps=high, unit_price=price, part=part, uplink_part=uplink,
                violations=management_violations(switch, price, instance) | common,
                uplink_violations=uplink_common | agg_rules, level_violations=at, uplink_level_violations=uplink_at))
    return options
