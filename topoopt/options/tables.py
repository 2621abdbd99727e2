"""Option tables: the discrete choices the CP-SAT model picks from, enumerated in Python.

Nothing here knows CP-SAT. Physical incompatibilities (a NIC that cannot run an interconnect, a
cable whose ends fit no cage) are filtered out here so they never become variables; instance rules
(allow/deny lists, pins, prices, reach) are kept as options and enforced by their families in the
model, so that an explanation can name them. Options that another option makes useless (the same
specs at no higher price and power, no more violations) are dropped (options/dominance.py). See
docs/model.md for the rules.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from operator import attrgetter

from topoopt.catalog import ResolvedCatalog
from topoopt.catalog.power import CatalogParts, node_devices_power_w, node_power_w, part_fits_cage, switch_power_w
from topoopt.models.catalog import Gpu, Interconnect, LinkPart, Nic, RackClass, Server, StorageTier, Switch
from topoopt.models.instance import Distances, Instance
from topoopt.options.control import HeadRule, head_nodes
from topoopt.options.conventions import switch_protocol, whole_units
from topoopt.options.dominance import dominated_items, undominated
from topoopt.options.networks import (
    ChosenPart,
    ColdOption,
    ManagementOption,
    PartChooser,
    StorageNetOption,
    UnitLink,
    cold_options,
    management_options,
    storage_net_options,
    unit_links,
)
from topoopt.options.rules import (
    fabric_violations,
    node_config_violations,
    part_violations,
    rack_node_violations,
    rack_violations,
    storage_violations,
    too_long_in_rack,
)

RAIL_CHOICES = (1, 2, 4, 8)
RAILS_PER_LEAF = (1, 2, 4, 8)
"""Rails of a node one leaf (or one 1-tier switch) may carry (docs/model.md, "Rail groups")."""
OVERSUBSCRIPTION_RATIOS = (1, 2, 3)
MAX_NODES = 131_072
"""Largest node count the model considers (about a million GPUs at 8 per node)."""


@dataclass(frozen=True)
class NodeConfig:
    """A server with its compute NICs and the interconnect they run."""

    index: int
    server: Server
    gpu: Gpu
    nic: Nic
    rails: int
    interconnect: Interconnect
    builtin_nics: bool
    port_form_factor: str
    ports_per_cage: int
    server_price: int | None
    nic_price: int | None
    violations: frozenset[str] = frozenset()
    server_offered: bool = True
    """False: the book lists the server (``server_price``) but its market does not offer it, so
    ``priced_in_book`` rules it out; relaxed, it costs that price."""

    @property
    def unit_price(self) -> int | None:
        """Price of a fabric-attached node: the server and its bought NICs."""
        if self.server_price is None or self.nic_price is None:
            return None
        return self.server_price + self.rails * self.nic_price

    def power_w(self, parts: list[LinkPart], *, fabric: bool = True) -> float:
        """Provisioned node power (catalog/power.py)."""
        return node_power_w(self.server, None if self.builtin_nics else self.nic, self.rails,
                            self.port_form_factor, self.ports_per_cage, self.interconnect.gbps, parts, fabric=fabric)

    @property
    def devices_power_w(self) -> tuple[float, float]:
        """Provisioned node power with and without a fabric, less the modules in the node's cages
        (catalog/power.py): what differs between configurations of the same cage, speed and rails."""
        return node_devices_power_w(self.server, None if self.builtin_nics else self.nic, self.rails), self.server.power_w

    @property
    def speed_key(self) -> tuple[str, int]:
        return switch_protocol(self.interconnect.protocol), self.interconnect.gbps

    @property
    def label(self) -> str:
        return f"{self.server.id} with {self.rails} x {self.nic.id} on {self.interconnect.id}"


@dataclass(frozen=True)
class FabricOption:
    """One folded-Clos shape: tiers, switch model, leaf uplinks and spine/core structure.

    ``down`` is the most down-ports a leaf may use (2 tiers: ``radix − up``; 3 tiers: the split's);
    ``ratio`` is the oversubscription class ρ: the fullest leaf's down-ports in use ``d`` satisfy
    ``(ρ−1)·up < d ≤ ρ·up`` (docs/model.md, "Fabric"). The rails a leaf carries are a separate
    choice of the model (``RAILS_PER_LEAF``).
    """

    index: int
    tiers: int
    switch: Switch | None  # None without a fabric (tiers 0)
    gbps: int
    protocol: str
    radix: int
    down: int
    up: int
    ratio: int
    spines: int  # 2 tiers: total spines (NEAR_BALANCED: chosen by the model); 3 tiers: spines per pod
    links_per_leaf_spine: int  # 2 tiers: floor(up / spines), the fewest links of a leaf–spine pair
    leaves_per_pod: int  # 3 tiers: P; 2 tiers: most leaves the spines can take
    spine_up: int
    cores_per_plane: int
    links_per_spine_core: int
    max_pods: int
    unit_price: int | None
    violations: frozenset[str] = frozenset()

    @property
    def speed_key(self) -> tuple[str, int]:
        return self.protocol, self.gbps

    @property
    def perf_class(self) -> tuple[int, float]:
        """What the performance model sees of the fabric: tiers and the oversubscription class ρ.

        A single node without a fabric has no scale-out traffic, so it looks like one switch; so
        does a rail-only fabric (one switch per rail group: docs/performance-model.md).
        """
        return max(self.tiers, 1), self.oversubscription

    @property
    def oversubscription(self) -> float:
        return float(self.ratio) if self.tiers >= 2 else 1.0

    @property
    def label(self) -> str:
        if self.tiers == 0:
            return "no compute fabric (one node)"
        if self.tiers == 1:
            return f"1 tier of {self.switch.id} (one switch per rail group)"
        if self.tiers == 2 and self.spines == NEAR_BALANCED:
            return (f"2 tiers of {self.switch.id} ({self.up} uplinks per leaf: 1–2 to each of {self.up // 2 + 1}–"
                    f"{self.up - 1} spines, up to {self.ratio}:1)")
        if self.tiers == 2:
            return (f"2 tiers of {self.switch.id} ({self.up} uplinks per leaf: {self.links_per_leaf_spine} to "
                    f"each of {self.spines} spines, up to {self.ratio}:1)")
        return f"3 tiers of {self.switch.id} ({self.down} down / {self.up} up per leaf)"


@dataclass(frozen=True)
class PartOption:
    index: int
    link_class: str
    part: LinkPart
    unit_price: int | None
    violations: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RackOption:
    index: int
    rack: RackClass
    unit_price: int | None
    violations: frozenset[str] = frozenset()
    node_violations: frozenset[str] = frozenset()
    """What rules the class out for the nodes' racks only (a pinned rack class pins those)."""


@dataclass(frozen=True)
class StorageOption:
    index: int
    tier: StorageTier
    unit_price: int | None
    violations: frozenset[str] = frozenset()


@dataclass
class Options:
    node_configs: list[NodeConfig]
    fabrics: list[FabricOption]
    parts: dict[str, list[PartOption]]
    racks: list[RackOption]
    storage: list[StorageOption]
    runs_m: dict[str, dict[str, float]]
    """Compute link classes: the run at each placement (:func:`link_runs_m`)."""
    network_runs_m: dict[str, dict[str, float]]
    """Storage and management link classes: the run at each placement."""
    all_parts: CatalogParts = field(default_factory=lambda: CatalogParts(()))
    storage_nets: list[StorageNetOption] = field(default_factory=list)
    unit_links: dict[tuple, UnitLink] = field(default_factory=dict)
    cold: list[ColdOption] = field(default_factory=list)
    management: list[ManagementOption] = field(default_factory=list)
    management_offered: bool = False
    """Whether the catalog has a management option before prefiltering (``management`` may be
    empty because a prefiltered family dropped them all)."""
    in_rack_twins: dict[str, ChosenPart] = field(default_factory=dict)
    """Per one-piece part too long for a rack, the part its cables within one rack are bought as
    (networks.py ``PartChooser.in_rack_twin``; parts without one are left out)."""
    converged_speeds: frozenset[tuple[str, int]] = frozenset()
    """(switch protocol, Gb/s) some storage tier of the catalog runs: the compute speeds a
    converged storage network is offered at (storage units cannot attach to a fabric otherwise)."""
    head: HeadRule | None = None
    """The head nodes a design buys (control.py); None when no design has any."""
    _switch_w: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    def switch_power_w(self, switch: Switch) -> float:
        """Provisioned power of ``switch`` (catalog/power.py), cached: the model builder asks per
        rack class and per network, and restricted copies of the tables share the cache."""
        if switch.id not in self._switch_w:
            self._switch_w[switch.id] = switch_power_w(switch, self.all_parts)
        return self._switch_w[switch.id]


def divisors(value: int) -> list[int]:
    return [d for d in range(1, value + 1) if value % d == 0]


def leaf_splits(radix: int) -> list[tuple[int, int, int]]:
    """``(down, up, ratio)`` port splits of a 3-tier leaf, one per oversubscription ratio
    (docs/model.md)."""
    splits = []
    for ratio in OVERSUBSCRIPTION_RATIOS:
        down = radix * ratio // (1 + ratio)
        up = -(-down // ratio)
        if down >= 1 and up >= 1 and down + up <= radix:
            splits.append((down, up, ratio))
    return splits


def two_tier_uplinks(radix: int) -> list[tuple[int, int, int]]:
    """``(spines, uplinks per leaf, ratio)`` of the 2-tier options: uplinks ``u`` up to half the
    radix over ``S`` spines dividing ``u`` (every pair ``u/S`` links) or, with ``S = NEAR_BALANCED``,
    over a spine count ``u/2 < S < u`` the model chooses (every pair 1 or 2 links); for ratio
    ρ ≥ 2 only those leaving a leaf room for more than ``(ρ−1)·u`` down-ports (docs/model.md,
    "Uplinks sized to the ports in use")."""
    shapes = []
    for ratio in OVERSUBSCRIPTION_RATIOS:
        for up in range(1, radix // 2 + 1):
            if (ratio - 1) * up + 1 <= radix - up:
                near = [NEAR_BALANCED] if near_balanced_spines(up) else []
                shapes += [(spines, up, ratio) for spines in divisors(up) + near]
    return shapes


NEAR_BALANCED = 0
"""The ``spines`` of a near-balanced 2-tier shape: the spine count is a variable of the model."""


def near_balanced_spines(up: int) -> range:
    """Spine counts a leaf's ``u`` uplinks reach near-balanced, 1 or 2 links per pair: ``u/2 < S < u``."""
    return range(up // 2 + 1, up)


def node_configs(catalog: ResolvedCatalog) -> list[NodeConfig]:
    """Every (server, NIC, rails, interconnect) the hardware allows."""
    cat = catalog.catalog
    gpus, nics, interconnects = cat.by_id("gpus"), cat.by_id("nics"), cat.by_id("interconnects")
    configs: list[NodeConfig] = []
    for server in cat.servers:
        gpu = gpus.get(server.gpu)
        if gpu is None:
            continue
        if server.builtin_compute_nics is not None:
            choices = [(server.builtin_compute_nics.nic, server.builtin_compute_nics.count, True)]
        else:
            choices = [
                (nic_id, rails, False)
                for nic_id in server.nic_options
                for rails in RAIL_CHOICES
                if rails <= server.max_compute_nics
            ]
        for nic_id, rails, builtin in choices:
            nic = nics.get(nic_id)
            if nic is None:
                continue
            server_price = whole_units(catalog.listed_price(server.id))
            nic_price = 0 if builtin else whole_units(catalog.price(nic.id))
            for interconnect_id in nic.interconnects:
                interconnect = interconnects.get(interconnect_id)
                if interconnect is None:
                    continue
                configs.append(
                    NodeConfig(
                        index=len(configs),
                        server=server,
                        gpu=gpu,
                        nic=nic,
                        rails=rails,
                        interconnect=interconnect,
                        builtin_nics=builtin,
                        port_form_factor=server.compute_port_form_factor or nic.port_form_factor,
                        ports_per_cage=server.compute_ports_per_cage if server.compute_port_form_factor else 1,
                        server_price=server_price,
                        nic_price=nic_price,
                        server_offered=server.id not in catalog.withheld,
                    )
                )
    return configs


def switch_speeds(switch: Switch, speeds: set[tuple[str, int]]) -> list[tuple[str, int]]:
    """The (protocol, Gb/s) a switch is offered at: each speed some node configuration needs, in
    the node's protocol when the switch speaks it, else in the switch's own protocol.

    The second kind keeps a protocol mismatch in the model as options no node configuration can
    use, so that ``nic_supports_interconnect`` rules them out and an explanation can name it.
    """
    own = sorted(switch.protocols)[0]
    return sorted({(protocol if protocol in switch.protocols else own, gbps) for protocol, gbps in speeds})


def fabric_options(catalog: ResolvedCatalog, speeds: set[tuple[str, int]],
                   violations=lambda f: frozenset()) -> list[FabricOption]:
    """Every fabric shape of every compute switch at every speed some node configuration needs,
    plus one option without a fabric (a single node), each tagged with ``violations(option)``.

    An option's violations depend only on its tiers, switch, speed and ratio class (options/rules.py),
    so they are computed once per such group: a switch has hundreds of 2-tier shapes."""
    options: list[FabricOption] = []
    found: dict[tuple, frozenset[str]] = {}

    def add(**kwargs) -> None:
        switch = kwargs["switch"].id if kwargs["switch"] else None
        key = (kwargs["tiers"], switch, kwargs["protocol"], kwargs["gbps"], kwargs["ratio"])
        if key not in found:
            found[key] = violations(FabricOption(index=len(options), **kwargs))
        options.append(FabricOption(index=len(options), violations=found[key], **kwargs))

    # A single node needs no compute fabric: its GPUs talk over the scale-up link. This option
    # buys no switch, so it exists whatever switches the catalog has (or lacks).
    add(tiers=0, down=0, up=0, ratio=1, spines=0, links_per_leaf_spine=0, leaves_per_pod=0, spine_up=0,
        cores_per_plane=0, links_per_spine_core=0, max_pods=0, switch=None, gbps=0, protocol="none", radix=0,
        unit_price=0)
    for switch in catalog.catalog.switches:
        if switch.role != "compute":
            continue
        price = whole_units(catalog.price(switch.id))
        for protocol, gbps in switch_speeds(switch, speeds):
            radix = switch.radix(gbps)
            common = dict(switch=switch, gbps=gbps, protocol=protocol, radix=radix, unit_price=price)
            if radix < 2:
                continue
            add(tiers=1, down=radix, up=0, ratio=1, spines=0, links_per_leaf_spine=0, leaves_per_pod=1,
                spine_up=0, cores_per_plane=0, links_per_spine_core=0, max_pods=1, **common)
            for spines, up, ratio in two_tier_uplinks(radix):
                most = spines or near_balanced_spines(up)[-1]
                add(tiers=2, down=radix - up, up=up, ratio=ratio, spines=spines, links_per_leaf_spine=up // most,
                    leaves_per_pod=most * radix // up, spine_up=0, cores_per_plane=0, links_per_spine_core=0,
                    max_pods=1, **common)
            for down, up, split_ratio in leaf_splits(radix):
                # 3 tiers: spines split half down, half up. Each leaf reaches each spine of its
                # pod with 1 or 2 links (2 lets twin-port assemblies carry both of their links).
                # A split's leaves may run below its ratio (6 down / 2 up with one port in use is
                # class 1): an option per class up to the split's.
                spine_up = radix - radix // 2
                for ratio, links_ls in itertools.product(range(1, split_ratio + 1), (1, 2)):
                    pod_leaves = (radix // 2) // links_ls
                    if up % links_ls or pod_leaves < 1 or spine_up < 1:
                        continue
                    for cores in divisors(spine_up):
                        links_sc = spine_up // cores
                        add(tiers=3, down=down, up=up, ratio=ratio, spines=up // links_ls,
                            links_per_leaf_spine=links_ls, leaves_per_pod=pod_leaves, spine_up=spine_up,
                            cores_per_plane=cores, links_per_spine_core=links_sc, max_pods=radix // links_sc,
                            **common)
    return options


def link_lengths_m(instance: Instance, max_racks: int | None = None) -> dict[str, float]:
    """Cable run per link class: leaves (compute, storage and management) at the end of the row;
    spines, cores and management aggregation across rows; none longer than the floor of the
    site's ``max_racks`` (or of ``max_racks`` racks when given; :func:`floor_run_m`, with the
    site's row size)."""
    d = instance.site.distances
    in_row, across = d.in_row_m + d.slack_m, d.across_rows_m + d.slack_m
    runs = {
        "node-leaf": in_row, "leaf-spine": across, "spine-core": across,
        "node-storage": in_row, "storage-unit": in_row, "storage-leaf-spine": across, "storage-spine-core": across,
        "mgmt": in_row, "mgmt-uplink": across,
    }
    floor_m = floor_run_m(d, instance.site.max_racks if max_racks is None else max_racks)
    return runs if floor_m is None else {cls: min(run, floor_m) for cls, run in runs.items()}


PLACED_CLASSES = ("node-leaf", "leaf-spine", "spine-core")
"""The compute link classes, whose parts the model chooses by where their ends sit (docs/model.md,
"Cable runs")."""
NETWORK_CLASSES = ("node-storage", "storage-unit", "storage-leaf-spine", "storage-spine-core", "mgmt", "mgmt-uplink")
"""The storage and management link classes, whose parts the option tables choose per placement."""

RUN_LEVELS = ("rack", "row", "site")


def link_runs_m(instance: Instance, classes: tuple[str, ...] = PLACED_CLASSES) -> dict[str, dict[str, float]]:
    """Cable run per link class at each placement: ``rack`` when the class's ends share one rack
    (``in_rack_m``), ``row`` between racks of one row (``in_row_m``), ``site`` otherwise
    (:func:`link_lengths_m`); each plus ``slack_m``, and never longer than the site's run."""
    d = instance.site.distances
    site = link_lengths_m(instance)
    rack, row = d.in_rack_m, d.in_row_m + d.slack_m
    return {cls: {"rack": min(rack, site[cls]), "row": min(row, site[cls]), "site": site[cls]} for cls in classes}


def floor_run_m(d: Distances, racks: int) -> float | None:
    """The longest cable between two of ``racks`` racks on the floor plan (docs/model.md, "Cable
    runs"), given the site's ``racks_per_row`` ``P`` (None without it): the plan stands them in
    a central block of network rows between two blocks of node rows, each block ending in a short
    row at most, so on ``ceil(racks / P) + 2`` rows at most, and no two racks are farther apart
    than the floor's diagonal, ``ceil(in_rack_m + (P − 1) · rack_width_m + (rows − 1) ·
    row_pitch_m + slack_m)``."""
    if d.racks_per_row is None:
        return None
    return _diagonal_m(d, -(-racks // d.racks_per_row) + 2)


def floor_racks_within(d: Distances, reach_m: float) -> int:
    """The most racks whose floor (:func:`floor_run_m`) a part of ``reach_m`` spans corner to
    corner: ``racks_per_row × (rows − 2)`` for the most rows whose diagonal is within the reach
    (a whole-metre length ``ceil(x) ≤ reach`` exactly when ``x ≤ floor(reach)``); 0 when none."""
    rows = math.floor(round((math.floor(reach_m) - _diagonal_base_m(d)) / d.row_pitch_m, 9)) + 1
    return d.racks_per_row * (rows - 2) if rows > 2 else 0


def _diagonal_m(d: Distances, rows: int) -> float:
    return float(math.ceil(round(_diagonal_base_m(d) + (rows - 1) * d.row_pitch_m, 9)))


def _diagonal_base_m(d: Distances) -> float:
    """The floor's diagonal less its rows: up and down the racks, a whole row along, and slack."""
    return d.in_rack_m + (d.racks_per_row - 1) * d.rack_width_m + d.slack_m


def part_fits_switch_end(part: LinkPart, switch: Switch, gbps: int, end: str) -> bool:
    """The part's ``end`` ("a" or "b") plugs into ``switch``'s cage carrying all its logical ports."""
    return part_fits_cage(part, end, switch.cage_form_factor, switch.ports_per_cage.get(gbps, 0), gbps)


def part_fits_node_end(part: LinkPart, config: NodeConfig) -> bool:
    return part_fits_cage(part, "b", config.port_form_factor, config.ports_per_cage, config.interconnect.gbps)


def part_options(catalog: ResolvedCatalog, gbps: set[int] | None = None) -> dict[str, list[PartOption]]:
    """Cable parts per compute link class (a part usable between switches is offered for both
    classes), at the compute link speeds ``gbps`` (None: every part). A part at no compute speed
    (a 1G patch cord) can never be a compute link."""
    result: dict[str, list[PartOption]] = {"node-leaf": [], "leaf-spine": [], "spine-core": []}
    for part in catalog.catalog.cables:
        if gbps is not None and part.gbps not in gbps:
            continue
        price = whole_units(catalog.price(part.id))
        for link_class in result:
            result[link_class].append(
                PartOption(index=len(result[link_class]), link_class=link_class, part=part, unit_price=price)
            )
    return result


def _kept(options: list, prefilter: frozenset[str]) -> list:
    """Drop options that a prefiltered family rules out; renumber the rest in catalog order."""
    kept = [o for o in options if not (o.violations & prefilter)]
    return [o if o.index == i else replace(o, index=i) for i, o in enumerate(kept)]


class OptionUniverse:
    """All option tables of an instance, each option tagged with the families it violates on its
    own, less the options another one dominates (``dominance``, options/dominance.py) — which does not
    depend on the prefilter (a dominator violates nothing its dominated option does not): built
    once, then prefiltered for each set of families a problem enforces by its tables."""

    def __init__(self, instance: Instance, catalog: ResolvedCatalog, cold_capacity_tb: float = 0.0,
                 dominance: bool = True) -> None:
        self.instance, self.catalog = instance, catalog
        self.runs = link_runs_m(instance, NETWORK_CLASSES)
        self.chooser = PartChooser(catalog, instance)
        options = every_option(instance, catalog, self.runs, self.chooser, cold_capacity_tb)
        self.options = without_dominated(options, catalog) if dominance else options

    def prefiltered(self, prefilter: frozenset[str]) -> Options:
        """The tables without what ``prefilter``'s families rule out, with the storage-unit links
        of the storage networks and fabrics kept."""
        options = _prefiltered(self.options, prefilter)
        # Storage units plug into the storage switches, or into the compute leaves when converged.
        attach = {n.attach_key for n in options.storage_nets if n.mode == "dedicated"}
        attach |= {(f.switch.id, f.protocol, f.gbps) for f in options.fabrics
                   if f.tiers and f.speed_key in options.converged_speeds}
        links = unit_links(self.catalog, self.instance, attach, self.runs["storage-unit"], self.chooser)
        return replace(options, unit_links=links)


def every_option(instance: Instance, catalog: ResolvedCatalog, network_runs_m: dict[str, dict[str, float]],
                 chooser: PartChooser, cold_capacity_tb: float) -> Options:
    """Every option the catalog allows, each tagged with the families it violates on its own
    (storage-unit links left out: they follow the storage networks and fabrics kept), with the
    storage and management parts at each of ``network_runs_m``'s placements."""
    configs = [replace(c, violations=node_config_violations(c, instance)) for c in node_configs(catalog)]
    # Fabrics are offered at the speeds of every node configuration the hardware allows, before
    # prefiltering: whether a fabric's speed is usable then does not depend on which other families
    # were prefiltered (the model rules out a fabric no remaining configuration runs, under
    # nic_supports_interconnect), so explanations see the rule whatever is prefiltered.
    speeds = {c.speed_key for c in configs}

    def violations(f: FabricOption) -> frozenset[str]:
        return fabric_violations(f, instance) | (
            frozenset() if f.tiers == 0 or f.speed_key in speeds else {"nic_supports_interconnect"})

    fabrics = fabric_options(catalog, speeds, violations)
    runs = link_runs_m(instance)
    parts = {
        cls: [replace(p, violations=part_violations(p, min(runs[cls].values()), instance)) for p in ps]
        for cls, ps in part_options(catalog, {gbps for _, gbps in speeds}).items()
    }
    racks = []
    for rack in catalog.catalog.racks:
        price = whole_units(catalog.price(rack.id))
        racks.append(RackOption(len(racks), rack, price, rack_violations(rack, price, instance),
                                rack_node_violations(rack, instance)))
    storage = []
    for tier in catalog.catalog.storage:
        price = whole_units(catalog.price(tier.id))
        storage.append(StorageOption(len(storage), tier, price, storage_violations(tier, price, instance)))
    management = management_options(catalog, instance, network_runs_m, chooser)
    return Options(
        node_configs=configs,
        fabrics=fabrics,
        parts=parts,
        racks=racks,
        storage=storage,
        runs_m=runs,
        network_runs_m=network_runs_m,
        all_parts=CatalogParts(catalog.catalog.cables),
        storage_nets=storage_net_options(catalog, instance, network_runs_m, chooser),
        cold=cold_options(catalog, instance, cold_capacity_tb),
        management=management,
        management_offered=bool(management),
        in_rack_twins={p.id: twin for p in catalog.catalog.cables
                       if too_long_in_rack(p, instance) and (twin := chooser.in_rack_twin(p)) is not None},
        converged_speeds=frozenset((protocol, gbps) for tier in catalog.catalog.storage
                                   for protocol in tier.protocols for gbps in tier.port_speeds_gbps),
        head=head_nodes(catalog, instance),
    )


def without_dominated(o: Options, catalog: ResolvedCatalog) -> Options:
    """The tables without the options another one dominates (options/dominance.py): node
    configurations and compute cable parts within their table; switch models and storage tiers as
    catalog items, from every table that counts them at once."""
    def price(item) -> tuple:
        return (whole_units(catalog.price(item.id)),)

    shared: dict[str, list] = {}
    for kind, holder, tables, power_w in (
            ("switches", "switch", ("fabrics", "storage_nets", "management"), lambda s: (o.switch_power_w(s),)),
            ("storage", "tier", ("storage", "cold"), lambda tier: (tier.power_w,))):
        item_of = attrgetter(holder)
        dropped = dominated_items(getattr(catalog.catalog, kind), power_w, price,
                                  [(getattr(o, table), item_of) for table in tables])
        shared |= {table: [x for x in getattr(o, table) if item_of(x) is None or item_of(x).id not in dropped]
                   for table in tables}
    return replace(
        o,
        node_configs=undominated(o.node_configs, lambda c: c.devices_power_w, lambda c: (c.server_price, c.unit_price)),
        parts={cls: undominated(ps, lambda p: (p.part.power_w_per_a_end, p.part.power_w_per_b_end),
                                lambda p: (p.unit_price,)) for cls, ps in o.parts.items()},
        **shared,
    )


def _prefiltered(o: Options, prefilter: frozenset[str]) -> Options:
    """The tables without the options a family of ``prefilter`` rules out, renumbered."""
    return replace(
        o,
        node_configs=_kept(o.node_configs, prefilter),
        fabrics=_kept(o.fabrics, prefilter),
        parts={cls: _kept(ps, prefilter) for cls, ps in o.parts.items()},
        racks=_kept(o.racks, prefilter),
        storage=_kept(o.storage, prefilter),
        storage_nets=_kept(o.storage_nets, prefilter),
        cold=_kept(o.cold, prefilter),
        management=_kept(o.management, prefilter),
    )
