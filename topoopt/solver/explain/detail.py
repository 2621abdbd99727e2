"""What the user reads about a family in a conflict: the instance values behind its limit.

One function per family that can appear in a conflict (every family but the structural ones),
named like the family and listed in :data:`DETAILS`. Each states the instance's figures and the
catalog's as the instance allows them: options ruled out by the instance's own lists, pins or
price book are left out, whether or not the problem prefiltered them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from topoopt.families import FAMILIES
from topoopt.models.catalog import RackClass, Server, StorageTier
from topoopt.options.networks import STORAGE_CAP_NEED_FACTOR, STORAGE_CAP_NODE_GBPS, server_takes
from topoopt.options.problem import Problem
from topoopt.options.racks import rack_cools
from topoopt.options.tables import FabricOption, NodeConfig, Options

INSTANCE_RULES = frozenset({"allowed_by_lists", "pins_respected", "priced_in_book"})
"""The families that rule out an option by the instance's lists, pins and price book alone."""


def _allowed(options: Iterable, also: frozenset[str] = frozenset()) -> list:
    """The options that neither the instance's lists, pins and prices nor ``also`` rule out."""
    return [o for o in options if not o.violations & (INSTANCE_RULES | also)]


def _everything(problem: Problem) -> Options:
    """Every option of the catalog, none prefiltered."""
    return problem.unfiltered().options


def _allowed_configs(problem: Problem) -> list[NodeConfig]:
    """The node configurations the instance allows."""
    return _allowed(_everything(problem).node_configs)


def _allowed_fabrics(problem: Problem) -> list[FabricOption]:
    """The compute fabrics (one switch or more) the instance allows."""
    return [f for f in _allowed(_everything(problem).fabrics) if f.tiers]


def _usable_fabrics(problem: Problem) -> list[FabricOption]:
    """The allowed compute fabrics within the oversubscription cap, at a speed and protocol some
    node configuration runs."""
    return [f for f in _allowed_fabrics(problem) if not f.violations]


def _listed(values: Iterable[str], most: int = 6, sep: str = ", ") -> str:
    """Distinct values, sorted, the first ``most`` of them named: "a, b and 3 more"; "none" when
    there are none."""
    distinct = sorted(set(values))
    more = f" and {len(distinct) - most} more" if len(distinct) > most else ""
    return sep.join(distinct[:most]) + more if distinct else "none"


def _counts(values: Iterable[int]) -> str:
    """Distinct numbers, ascending: "1/2/4/8"."""
    return "/".join(map(str, sorted(set(values))))


def _kw(watts: float) -> str:
    """Watts in kW, to the watt: "10.234 kW"."""
    return f"{round(watts) / 1000:g} kW"


# -- workload and cost ------------------------------------------------------------------------------

def memory_fits(problem: Problem, nodes: int | None) -> str:
    model = problem.instance.workload.model
    return f"model {model if isinstance(model, str) else f'{model.params_b:g}B parameters'}"


def deadline_met(problem: Problem, nodes: int | None) -> str:
    """The tokens and the deadline; the bare rule without a deadline."""
    inst = problem.instance
    if inst.goal.deadline_days is None:
        return FAMILIES["deadline_met"].description
    return f"train {inst.workload.training.tokens:.3g} tokens within {inst.goal.deadline_days:g} days"


def budget_cap(problem: Problem, nodes: int | None) -> str:
    budget = problem.instance.budget
    return f"budget {budget.max:,.0f} {budget.currency} ({budget.basis})"


# -- selection --------------------------------------------------------------------------------------

def allowed_by_lists(problem: Problem, nodes: int | None) -> str:
    rules = problem.instance.constraints
    lists = [f"{kind} allow={rule.allow} deny={rule.deny}" for kind in
             ("gpus", "servers", "interconnects", "switches", "cables", "storage", "storage_nics")
             if (rule := getattr(rules, kind)).allow is not None or rule.deny]
    return "; ".join(lists) or "allow/deny lists"


def priced_in_book(problem: Problem, nodes: int | None) -> str:
    """The price book, and how many of the catalog's options it leaves without a price."""
    o, book = _everything(problem), problem.catalog.price_book
    tables = [o.node_configs, o.fabrics, o.racks, o.storage, *o.parts.values(), o.storage_nets, o.cold,
              o.management]
    options = [option for table in tables for option in table]
    unpriced = sum("priced_in_book" in option.violations for option in options)
    withheld = sorted(item for item, entry in book.prices.items() if item not in problem.catalog.prices)
    offer = (f"; not offered by its market (used only with catalog.include_not_offered): {', '.join(withheld)}"
             if withheld else "")
    return (f"price book {book.id} ({book.currency}, {book.basis}): "
            f"{unpriced:,} of {len(options):,} options have no price{offer}")


def pins_respected(problem: Problem, nodes: int | None) -> str:
    pins = {k: v for k, v in problem.instance.constraints.pins.model_dump().items() if v is not None}
    return ", ".join(f"{k}={v}" for k, v in pins.items())


# -- node -------------------------------------------------------------------------------------------

def nic_fits_server(problem: Problem, nodes: int | None) -> str:
    """Per allowed server, the counts and models of compute and storage NICs its slots take:
    "s80 1/2/4/8 compute NICs (nic400) and 1/2 storage NICs (snic100)"."""
    servers: dict[str, tuple[Server, set[int], set[str]]] = {}
    for c in _allowed_configs(problem):
        server, rails, nics = servers.setdefault(c.server.id, (c.server, set(), set()))
        rails.add(c.rails)
        nics.add(c.nic.id)
    nets = [s for s in _allowed(_everything(problem).storage_nets) if s.mode == "dedicated"]
    takes = []
    for server, rails, nics in servers.values():
        storage = [s for s in nets if server_takes(server, s.nic_choice)]
        storage_nics = (f"{_counts(s.nics for s in storage)} storage NICs ({_listed(s.nic.id for s in storage)})"
                        if storage else "no storage NICs")
        takes.append(f"{server.id} {_counts(rails)} compute NICs ({_listed(nics)}) and {storage_nics}")
    return _listed(takes, most=4, sep="; ") if takes else "no server is allowed"


def _speeds(links: Iterable[tuple[str, int]]) -> str:
    """(protocol, Gb/s) pairs by protocol: "ethernet at 100/400G, ib at 400G"."""
    by_protocol: dict[str, set[int]] = {}
    for protocol, gbps in links:
        by_protocol.setdefault(protocol, set()).add(gbps)
    found = [f"{protocol} at {_counts(gbps)}G" for protocol, gbps in sorted(by_protocol.items())]
    return ", ".join(found) or "nothing"


def nic_supports_interconnect(problem: Problem, nodes: int | None) -> str:
    """The protocols and speeds the allowed compute NICs run, against the compute switches'."""
    configs, fabrics = _allowed_configs(problem), _allowed_fabrics(problem)
    return (f"compute NICs ({_listed(c.nic.id for c in configs)}) run {_speeds(c.speed_key for c in configs)}; "
            f"compute switches ({_listed(f.switch.id for f in fabrics)}) speak "
            f"{_speeds(f.speed_key for f in fabrics)}")


# -- fabric -----------------------------------------------------------------------------------------

def _most_node_ports(problem: Problem, tiers: int) -> str:
    """Per link speed, the most node ports an allowed fabric of ``tiers`` tiers reaches, and its
    switch: "2,048 at 400G (sw64)"."""
    by_gbps: dict[int, tuple[int, str]] = {}
    for f in _usable_fabrics(problem):
        if f.tiers == tiers:
            ports = f.down * f.leaves_per_pod * max(f.max_pods, 1)
            by_gbps[f.gbps] = max(by_gbps.get(f.gbps, (0, "")), (ports, f.switch.id))
    found = [f"{ports:,} at {gbps}G ({switch})" for gbps, (ports, switch) in sorted(by_gbps.items())]
    return ", ".join(found) or "none allowed"


def leaf_ports_cover_endpoints(problem: Problem, nodes: int | None) -> str:
    rails = _counts(c.rails for c in _allowed_configs(problem))
    return (f"leaf ports per node (one per rail): {rails or 'none allowed'}; "
            f"most node ports on one switch: {_most_node_ports(problem, 1)}")


def spine_ports_cover_uplinks(problem: Problem, nodes: int | None) -> str:
    return (f"most node ports in two tiers: {_most_node_ports(problem, 2)}; "
            f"in three tiers: {_most_node_ports(problem, 3)}")


def core_ports_cover_uplinks(problem: Problem, nodes: int | None) -> str:
    return f"most node ports in three tiers: {_most_node_ports(problem, 3)}"


def oversubscription_within_limit(problem: Problem, nodes: int | None) -> str:
    return f"oversubscription at most {problem.instance.constraints.max_oversubscription:g}:1"


def uplinks_balanced(problem: Problem, nodes: int | None) -> str:
    """The leaf uplinks of the allowed 2- and 3-tier fabrics, the same number of links to every
    spine, and (unless provisioned for growth) no more than the down-ports in use need."""
    uplinks: dict[str, set[int]] = {}
    for f in _usable_fabrics(problem):
        if f.tiers > 1:
            uplinks.setdefault(f.switch.id, set()).add(f.up)
    if not uplinks:
        return "no fabric of two or more tiers is allowed"
    counts = _listed(f"{switch} {min(ups)}–{max(ups)}" for switch, ups in uplinks.items())
    growth = problem.instance.site.provision_fabric_for_nodes
    sized = (f"sized for {growth:,} nodes (site.provision_fabric_for_nodes)" if growth
             else "no more than the down-ports in use, rounded up to whole links per spine")
    return (f"uplinks per leaf ({counts}) split evenly over the spines of a pod (2 tiers: or 1–2 links to each "
            f"of more than half as many spines as uplinks), {sized}")


def rail_only_allowed(problem: Problem, nodes: int | None) -> str:
    return "rail-only fabrics not allowed (allow rail only: false)"


# -- cabling ----------------------------------------------------------------------------------------

def port_form_factor_match(problem: Problem, nodes: int | None) -> str:
    """The cages of the devices the instance allows, and the cage pairs its allowed cables join."""
    o = _everything(problem)
    nets = [s for s in _allowed(o.storage_nets) if s.mode == "dedicated"]
    cages = {
        "node": (c.port_form_factor for c in _allowed_configs(problem)),
        "compute switch": (f.switch.cage_form_factor for f in _allowed_fabrics(problem)),
        "storage NIC": (s.nic.port_form_factor for s in nets),
        "storage switch": (s.switch.cage_form_factor for s in nets),
        "storage unit": (s.tier.port_form_factor for s in _allowed(o.storage)),
    }
    devices = "; ".join(f"{device} {_listed(found)}" for device, found in cages.items())
    cables = (f"{p.a_form_factor}–{p.b_form_factor}" for p in problem.catalog.catalog.cables
              if problem.instance.constraints.cables.admits(p.id))
    return f"cages: {devices}; allowed cables join {_listed(cables, most=8)}"


def cable_reach(problem: Problem, nodes: int | None) -> str:
    d = problem.instance.site.distances
    floor = "" if d.racks_per_row is None else ", less on a floor a shorter part spans corner to corner"
    return (f"runs of {d.in_row_m + d.slack_m:g} m (in row) and {d.across_rows_m + d.slack_m:g} m (across rows{floor}); "
            f"within one rack {d.in_rack_m:g} m, by a one-piece cable of at most {d.in_rack_m + d.slack_m:g} m")


# -- racks and site ---------------------------------------------------------------------------------

def _racks(problem: Problem, nodes: bool) -> list[RackClass]:
    """The rack classes the instance allows: for the nodes' racks (``nodes``: the pin too), or
    for the network and storage racks."""
    allowed = _allowed(_everything(problem).racks, frozenset({"racks_available"}))
    return [r.rack for r in allowed if not (nodes and r.node_violations & INSTANCE_RULES)]


def _rack_classes(problem: Problem, figure: Callable[[RackClass], str]) -> str:
    """The rack classes the instance allows for the nodes, each with ``figure(rack class)``."""
    return ", ".join(f"{rack.id} {figure(rack)}" for rack in _racks(problem, nodes=True)) or "no rack class"


def rack_power_within_limit(problem: Problem, nodes: int | None) -> str:
    """The rack classes allowed for the nodes: power, height and cooling; the least power a node
    draws (its storage NICs aside); and, when no allowed class cools an allowed server or none
    cools a management switch, that mismatch."""
    configs, parts = _allowed_configs(problem), _everything(problem).all_parts
    classes = _rack_classes(problem, lambda rack: f"{rack.power_kw:g} kW/{rack.rack_units}U {rack.cooling}")
    if not configs:
        return f"rack classes {classes}; no node configuration is allowed"
    alone = min(c.power_w(parts, fabric=False) for c in configs)
    attached = min(c.power_w(parts) for c in configs)
    return (f"rack classes {classes}; the lightest node draws at least {_kw(alone)} "
            f"({_kw(attached)} on a compute fabric){_cooling_mismatch(problem, configs)}")


def _cooling_mismatch(problem: Problem, configs: list[NodeConfig]) -> str:
    """'; …' naming the cooling kinds when no allowed rack class cools an allowed server, or none
    cools an allowed management switch (every design has both: nodes' racks, and network racks of
    a class of their own)."""
    kinds = {"servers": ({c.server.cooling for c in configs}, _racks(problem, nodes=True)),
             "management switches": ({x.switch.cooling for x in _allowed(_everything(problem).management)},
                                     _racks(problem, nodes=False))}
    uncooled = [f"the {what} allowed are {' or '.join(sorted(cooling))}-cooled, their allowed rack classes "
                f"{' or '.join(sorted({r.cooling for r in racks})) or 'none'}-cooled"
                for what, (cooling, racks) in kinds.items()
                if cooling and not any(rack_cools(r, c) for r in racks for c in cooling)]
    return "".join(f"; {text}" for text in uncooled)


def rack_units_within_limit(problem: Problem, nodes: int | None) -> str:
    """The allowed rack classes' height, and the fewest rack units a node takes."""
    classes = _rack_classes(problem, lambda rack: f"{rack.rack_units}U")
    units = [c.server.rack_units for c in _allowed_configs(problem)]
    node = f"the smallest node takes {min(units)}U" if units else "no node configuration is allowed"
    return f"rack classes {classes}; {node}"


def _heads(problem: Problem, nodes: int | None) -> str:
    """'; …' naming the head nodes a design of ``nodes`` nodes buys beside them (site.head_nodes),
    which take rack space, power and budget that no relaxation gives back."""
    rule = problem.options.head
    if rule is None or (rule.clusters_only and nodes is not None and nodes <= 1):
        return ""
    head = rule.model
    return (f"; beside the nodes, {rule.count} × {head.id} head nodes (site.head_nodes) at {head.power_w:,.0f} W and "
            f"{head.rack_units}U each")


def racks_available(problem: Problem, nodes: int | None) -> str:
    site = problem.instance.site
    classes = ", ".join(site.rack_classes) if site.rack_classes else "any class"
    return f"at most {site.max_racks} racks ({classes})" + _heads(problem, nodes)


def site_power_within_limit(problem: Problem, nodes: int | None) -> str:
    cap_kw = problem.instance.site.power_cap_kw
    return ("no site power cap" if cap_kw is None else f"site power cap {cap_kw:g} kW") + _heads(problem, nodes)


# -- storage ----------------------------------------------------------------------------------------

def _storage_tiers(problem: Problem, figure: Callable[[StorageTier], str]) -> str:
    """The hot storage tiers the instance allows, each with ``figure(tier)`` per unit."""
    tiers = _allowed(_everything(problem).storage)
    return ", ".join(f"{s.tier.id} {figure(s.tier)}" for s in tiers) or "no tier"


def storage_bandwidth_met(problem: Problem, nodes: int | None) -> str:
    """The read rate and the checkpoint write rate needed, against each allowed tier's per unit."""
    needs = problem.storage_needs(problem.throughput_target or 0.0)
    save_s = problem.instance.workload.checkpoint.max_save_time_s
    tiers = _storage_tiers(problem, lambda t: f"{t.read_gb_per_s:g}/{t.write_gb_per_s:g} GB/s")
    return (f"reads {needs.read_gb_per_s:,.1f} GB/s and writes {needs.write_gb_per_s:,.1f} GB/s "
            f"(a {needs.checkpoint_gb:,.0f} GB checkpoint in {save_s:g} s) needed; "
            f"read/write per unit: {tiers}")


def storage_capacity_met(problem: Problem, nodes: int | None) -> str:
    """The capacity needed (dataset and retained checkpoints), against each allowed tier's per unit."""
    needs = problem.storage_needs(0.0)
    inst = problem.instance.workload
    tiers = _storage_tiers(problem, lambda t: f"{t.capacity_tb:,g} TB")
    return (f"{needs.capacity_tb:,.1f} TB needed ({inst.data.dataset_tb:g} TB of data and {inst.checkpoint.keep} "
            f"checkpoints of {needs.checkpoint_gb:,.0f} GB); per unit: {tiers}")


def storage_latency_ok(problem: Problem, nodes: int | None) -> str:
    return "many small files need a low-latency storage tier"


def cold_storage_met(problem: Problem, nodes: int | None) -> str:
    inst = problem.instance.workload
    needs = problem.storage_needs(0.0)
    return (f"archive {needs.cold_capacity_tb:,.1f} TB ({inst.data.archive_tb:g} TB of data and "
            f"{inst.checkpoint.archive_days:g} days of checkpoints) on an object-store tier")


# -- storage and management networks ----------------------------------------------------------------

def storage_nic_bandwidth_met(problem: Problem, nodes: int | None) -> str:
    """The fastest storage path the instance allows, against the traffic it must carry:
    "storage NIC 2 × eth-10g-2p (4 × 10G) per node × 4 nodes = 160 Gb/s < 579 Gb/s needed";
    ``nodes``: the pinned count, or that of the cheapest design without the family."""
    need = problem.storage_needs(problem.throughput_target or 0.0).network_gbps
    everything, configs = _everything(problem), _allowed_configs(problem)
    servers = {c.server.id: c.server for c in configs}
    paths = []
    for s in _allowed(everything.storage_nets):
        if s.mode == "dedicated" and any(server_takes(server, s.nic_choice) for server in servers.values()):
            paths.append((s.node_gbps, f"storage NIC {s.nics} × {s.nic.id} ({s.ports_per_node} × {s.gbps}G cabled) "
                                       "per node"))
        elif s.mode == "converged":
            paths += [(c.rails * c.interconnect.gbps, f"compute NICs shared with storage ({c.rails} × "
                       f"{c.interconnect.gbps}G) per node") for c in configs
                      if c.speed_key in everything.converged_speeds]
    if not paths:
        return f"no storage path is allowed; {need:,.0f} Gb/s needed"
    gbps, path = max(paths)
    # A dedicated network also caps what it cables and needs leaf uplinks for the traffic.
    rules = (f"; dedicated: at most max({STORAGE_CAP_NEED_FACTOR} × need, nodes × {STORAGE_CAP_NODE_GBPS}G) "
             "cabled, 2-tier leaf uplinks ≥ need")
    if nodes is None:
        return f"{path} = {gbps:,} Gb/s per node; {need:,.0f} Gb/s needed{rules}"
    total = gbps * nodes
    return (f"{path} × {nodes:,} nodes = {total:,} Gb/s {'<' if total < need else '≥'} {need:,.0f} Gb/s "
            f"needed{rules}")


def storage_fabric_ports_cover(problem: Problem, nodes: int | None) -> str:
    tiers = problem.catalog.catalog.by_id("storage")
    allowed = [t for t in tiers.values() if problem.instance.constraints.storage.admits(t.id)]
    ports = "; ".join(f"{t.id}: {t.network_ports} × {'/'.join(map(str, t.port_speeds_gbps))}G "
                      f"{'/'.join(t.protocols)}" for t in allowed)
    return (f"storage-unit ports must run the storage network's protocol and its speed, or on a dedicated "
            f"network another speed its switch's cages run ({ports or 'no tier allowed'})")


def management_ports_cover(problem: Problem, nodes: int | None) -> str:
    return ("1 in-band and the out-of-band management ports of every node, data switch, storage unit and head node, "
            "and every rack's PDUs")


Detail = Callable[[Problem, int | None], str]

DETAILS: dict[str, Detail] = {
    "memory_fits": memory_fits,
    "deadline_met": deadline_met,
    "budget_cap": budget_cap,
    "allowed_by_lists": allowed_by_lists,
    "priced_in_book": priced_in_book,
    "pins_respected": pins_respected,
    "nic_fits_server": nic_fits_server,
    "nic_supports_interconnect": nic_supports_interconnect,
    "leaf_ports_cover_endpoints": leaf_ports_cover_endpoints,
    "spine_ports_cover_uplinks": spine_ports_cover_uplinks,
    "core_ports_cover_uplinks": core_ports_cover_uplinks,
    "oversubscription_within_limit": oversubscription_within_limit,
    "uplinks_balanced": uplinks_balanced,
    "rail_only_allowed": rail_only_allowed,
    "port_form_factor_match": port_form_factor_match,
    "cable_reach": cable_reach,
    "rack_power_within_limit": rack_power_within_limit,
    "rack_units_within_limit": rack_units_within_limit,
    "racks_available": racks_available,
    "site_power_within_limit": site_power_within_limit,
    "storage_bandwidth_met": storage_bandwidth_met,
    "storage_capacity_met": storage_capacity_met,
    "storage_latency_ok": storage_latency_ok,
    "storage_nic_bandwidth_met": storage_nic_bandwidth_met,
    "storage_fabric_ports_cover": storage_fabric_ports_cover,
    "cold_storage_met": cold_storage_met,
    "management_ports_cover": management_ports_cover,
}
"""The detail of every family that can appear in a conflict (all but the structural ones)."""


def detail(problem: Problem, family: str, nodes: int | None = None) -> str:
    """The instance values behind a family's limit; ``nodes``: the node count of the cheapest
    design without the family (or the pinned count), for the storage path."""
    return DETAILS[family](problem, nodes)
