"""Read a CP-SAT solution back into a typed Design and Cost."""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.models.design import (
    Cost,
    CostLine,
    Design,
    FabricShape,
    HeadNodes,
    LinkGroup,
    ManagementNetwork,
    RackGroup,
    StorageChoice,
    StorageNetwork,
    SwitchGroup,
)
from topoopt.models.performance import Parallelism, Performance
from topoopt.options.networks import ColdOption, ManagementOption, StorageNetOption
from topoopt.options.problem import SECONDS_PER_DAY
from topoopt.options.racks import hosts_heads, last_rack, per_rack
from topoopt.options.tables import FabricOption, NodeConfig, PartOption, floor_run_m
from topoopt.perf import evaluate
from topoopt.solver.billing import Billing
from topoopt.solver.model.core import DesignModel
from topoopt.solver.model.integers import ceil_div
from topoopt.solver.model.storage_cables import leaf_spine_case, spine_core_case
from topoopt.solver.ownership import ownership


@dataclass
class Choice:
    """The options a solution picked."""

    config: NodeConfig
    fabric: FabricOption
    parts: dict[str, PartOption]
    rack_index: int
    """The nodes' rack class (compute or mixed racks)."""
    infra_rack_index: int
    """The network and storage racks' class (the nodes' with mixed racks)."""
    storage_index: int
    storage_net: StorageNetOption
    cold: ColdOption
    management: ManagementOption | None
    """None only in a model that relaxes management_ports_cover and whose catalog offers no
    management switch (an explanation's relaxation); a design always has one."""
    rails_per_leaf: int
    storage_on_top: bool

    @property
    def converged(self) -> bool:
        return self.storage_net.mode == "converged"


def chosen(dm: DesignModel, value) -> Choice:
    o, v, n = dm.options, dm.vars, dm.net
    config = next(c for c in o.node_configs if value(v.use_config[c.index]))
    unit = next(i for i, lit in enumerate(v.use_fabric) if value(lit))
    shape = next((s for s, lit in v.use_shape.items() if value(lit)), None)
    fabric = dm.units.option(unit, shape)
    parts = {cls: p for cls, ps in o.parts.items() for p in ps if value(v.use_part[cls, p.index])}
    rack = next(r.index for r in o.racks if value(v.use_rack[r.index]))
    infra_rack = next(r.index for r in o.racks if value(v.use_infra_rack[r.index]))
    storage = next(s.index for s in o.storage if value(v.use_storage[s.index]))
    net = next(s for s, lit in zip(o.storage_nets, n.use_storage_net) if value(lit))
    cold = next(c for c, lit in zip(o.cold, n.use_cold) if value(lit))
    management = next((x for x, lit in zip(o.management, n.use_mgmt) if value(lit)), None)
    rails_per_leaf = next(g for g, lit in v.use_rails_per_leaf.items() if value(lit))
    return Choice(config, fabric, parts, rack, infra_rack, storage, net, cold, management, rails_per_leaf,
                  bool(value(n.storage_on_top)))


def run_m(dm: DesignModel, link_class: str, value) -> float:
    """The run of a compute link class where the design puts its ends; across rows of the site's
    size, no longer than the floor of the design's racks spans (tables.floor_run_m)."""
    runs = dm.options.runs_m[link_class]
    level = next(level for level, lit in dm.vars.run_at[link_class].items() if value(lit))
    floor_m = floor_run_m(dm.problem.instance.site.distances, value(dm.vars.racks)) if level == "site" else None
    return runs[level] if floor_m is None else min(runs[level], floor_m)


def node_power_w(dm: DesignModel, pick: Choice) -> float:
    """Provisioned node power: its configuration's, plus what a dedicated storage network adds."""
    return pick.config.power_w(dm.options.all_parts, fabric=pick.fabric.tiers > 0) + pick.storage_net.node_w


def extract(dm: DesignModel, value) -> tuple[Design, Cost, Performance | None]:
    """Build the design record from variable values (``value`` maps a variable to its value)."""
    o, v, n, problem = dm.options, dm.vars, dm.net, dm.problem
    pick = chosen(dm, value)
    c, f = pick.config, pick.fabric
    nodes = value(v.nodes)
    shape = _fabric_shape(dm, pick, value)
    storage_net, storage_switches, storage_links = _storage_network(dm, pick, value)
    management, mgmt_switches, mgmt_links = _management_network(dm, pick, value)
    storage = o.storage[pick.storage_index].tier
    cold = pick.cold.tier
    performance = evaluate(problem.job, problem.hardware(c, f.perf_class, nodes, pick.converged))
    parallelism = performance.parallelism if performance else Parallelism(tp=1, pp=1, dp=1, zero_stage=0, microbatch=1)
    design = Design(
        server=c.server.id,
        gpu=c.gpu.id,
        nodes=nodes,
        gpus=value(v.gpus),
        interconnect=c.interconnect.id,
        nic=c.nic.id,
        nics_per_node=c.rails,
        link_gbps=c.interconnect.gbps,
        tiers=f.tiers,
        oversubscription=round(shape.leaf_down_ports / shape.leaf_up_ports, 4) if f.tiers >= 2 else 1.0,
        rail_optimized=shape.rail_optimized,
        fabric=shape,
        switches=_compute_switches(dm, pick, value) + storage_switches + mgmt_switches,
        links=_compute_links(dm, pick, value) + storage_links + mgmt_links,
        racks=[r for r in _racks(dm, pick, value) if r.count > 0],
        storage=_storage_choice(storage, value(v.storage_units)),
        cold_storage=_storage_choice(cold, value(n.cold_units)) if cold else None,
        storage_network=storage_net,
        management_network=management,
        head_nodes=HeadNodes(model=dm.options.head.model.id, count=value(n.heads)) if value(n.heads) else None,
        parallelism=parallelism,
    )
    cost = _cost(dm, pick, design, value)
    if cost.basis == "monthly_rent" and performance is not None:
        rental = Billing.of(problem.catalog.price_book).rental(cost.total, performance.time_to_train_days * SECONDS_PER_DAY)
        cost = cost.model_copy(update={"rental": rental})
    operation = problem.instance.site.operation
    if cost.basis == "capex" and operation is not None:
        racks = dm.options.racks
        node_racks_w = value(dm.vars.power_w["total"]) if value(v.mixed) else value(dm.vars.power_w["node"])
        power_w = {racks[pick.rack_index].rack.cooling: node_racks_w}
        infra_cooling = racks[pick.infra_rack_index].rack.cooling
        power_w[infra_cooling] = power_w.get(infra_cooling, 0) + value(dm.vars.power_w["total"]) - node_racks_w
        owned = ownership(cost.total, power_w, sum(r.count for r in design.racks), operation)
        cost = cost.model_copy(update={"ownership": owned})
    return design, cost, performance


def _fabric_shape(dm: DesignModel, pick: Choice, value) -> FabricShape:
    v, c, f, g = dm.vars, pick.config, pick.fabric, pick.rails_per_leaf
    leaves, multi, nodes = value(v.leaves), f.tiers >= 2, value(v.nodes)
    per_group = value(v.leaves_per_rail)
    spines_per_pod = value(v.spines) if f.tiers == 2 else f.spines if multi else 0
    return FabricShape(
        tiers=f.tiers,
        switch=f.switch.id if f.tiers else "none",
        leaves=leaves,
        spines=value(v.spines),
        cores=value(v.cores),
        leaf_down_ports=g * ceil_div(nodes, per_group) if f.tiers else 0,
        leaf_up_ports=f.up,
        links_per_leaf_spine=f.up // spines_per_pod if f.tiers == 2 else f.links_per_leaf_spine,
        pods=value(v.pods),
        spines_per_pod=spines_per_pod,
        leaves_per_pod=f.leaves_per_pod if f.tiers == 3 else leaves,
        cores_per_plane=f.cores_per_plane,
        spine_up_ports=f.spine_up,
        links_per_spine_core=f.links_per_spine_core,
        rail_optimized=multi and g < c.rails,
        leaves_per_rail=per_group,
        rails_per_leaf=g,
        rail_only=f.tiers == 1 and g < c.rails,
        provisioned_nodes=dm.problem.instance.site.provision_fabric_for_nodes or 0,
    )


def _compute_switches(dm: DesignModel, pick: Choice, value) -> list[SwitchGroup]:
    """The compute fabric's leaves, spines and cores, with the ports each tier uses (a converged
    network's storage units on the leaves)."""
    v, f = dm.vars, pick.fabric
    links = {cls: value(v.links[cls]) for cls in dm.options.parts}
    units = value(dm.net.unit_slots) if pick.converged else 0
    where = ("core" if f.tiers == 3 else "spine") if pick.storage_on_top else "leaf"
    on = {tier: units if tier == where else 0 for tier in ("leaf", "spine", "core")}
    tiers = (("leaf", v.leaves, links["node-leaf"] + on["leaf"] + links["leaf-spine"]),
             ("spine", v.spines, links["leaf-spine"] + links["spine-core"] + on["spine"]),
             ("core", v.cores, links["spine-core"] + on["core"]))
    return [SwitchGroup(tier=tier, model=f.switch.id, count=value(count), ports_used=ports)
            for tier, count, ports in tiers if value(count)]


def _compute_links(dm: DesignModel, pick: Choice, value) -> list[LinkGroup]:
    o, v = dm.options, dm.vars
    links = {cls: value(v.links[cls]) for cls in o.parts}
    return [
        LinkGroup(between=cls, count=links[cls], part=p.part.id, assemblies=value(v.assemblies[cls, p.index]),
                  length_m=run_m(dm, cls, value), gbps=pick.fabric.gbps,
                  **_in_rack(dm, (cls, p.part.id), p.part.id, value))
        for cls, p in pick.parts.items()
        if links[cls] > 0
    ]


def _in_rack(dm: DesignModel, key: tuple, part_id: str, value) -> dict:
    """A link group's assemblies bought as the in-rack twin of ``part_id`` (solver/model/in_rack.py),
    as LinkGroup fields; none when there are none."""
    count = dm.in_rack.get(key)
    near = value(count) if count is not None else 0
    if not near:
        return {}
    return {"in_rack_part": dm.options.in_rack_twins[part_id].part.id, "in_rack_assemblies": near}


def _racks(dm: DesignModel, pick: Choice, value) -> list[RackGroup]:
    """One mixed rack, or compute racks, network racks per switch model (compute, storage,
    management) and storage racks per tier model — one entry per model (compute and storage
    switches, hot and cold units may share a model) — and the head nodes' network racks, unless
    they sit in another model's last rack (that group's ``holds``); network and storage racks in
    their own class."""
    o, v, n = dm.options, dm.vars, dm.net
    catalog = dm.problem.catalog.catalog
    switch_models, tier_models = catalog.by_id("switches"), catalog.by_id("storage")
    rack, infra = o.racks[pick.rack_index].rack, o.racks[pick.infra_rack_index].rack
    node_w = node_power_w(dm, pick)
    switch_counts = {sid: value(var) for sid, var in n.switches_of.items() if value(var)}
    unit_counts = {t: value(var) for t, var in n.units_of.items() if value(var)}
    f, net, cold = pick.fabric, pick.storage_net, pick.cold.tier
    switch_order = list(dict.fromkeys(x for x in (f.switch and f.switch.id, net.switch and net.switch.id,
                                                  pick.management.switch.id, pick.management.aggregation.id)
                                        if x in switch_counts))
    tier_order = list(dict.fromkeys(x for x in (o.storage[pick.storage_index].tier.id, cold and cold.id)
                                    if x in unit_counts))
    switch_w = {sid: o.switch_power_w(switch_models[sid]) for sid in switch_order}
    if value(v.mixed):
        return _mixed_racks(dm, rack, node_w, switch_w, switch_order, tier_order, value)
    racks = [_compute_racks(dm, pick, rack, switch_w, value)]
    models = [("network", n.switch_racks_of[sid], value(n.racked_of[sid]), switch_w[sid], switch_models[sid].rack_units)
              for sid in switch_order]
    models += [("storage", n.unit_racks_of[t], unit_counts[t], tier_models[t].power_w, tier_models[t].rack_units)
               for t in tier_order]
    heads, head = value(n.heads), o.head.model if o.head else None
    # Hosted head nodes go to the first model whose last rack holds them (the model found one;
    # which one does not change a count); a model with no rack of its own (its management leaves
    # all in compute racks) hosts none.
    host = next((x for x, (_, _, count, w, u) in enumerate(models)
                 if count and hosts_heads(infra, (w, u), count, (head.power_w, head.rack_units), heads)),
                None) if value(n.heads_hosted) else None
    for x, (role, model_racks, count, w, u) in enumerate(models):
        group = _rack_group(infra, role, value(model_racks), count, w, u)
        if x == host:
            last_w = last_rack(count, per_rack(infra, w, u)) * w + heads * head.power_w
            group = group.model_copy(update={"holds": {head.id: heads},
                                             "power_kw": max(group.power_kw, round(last_w / 1000, 3))})
        racks.append(group)
    if heads and host is None:
        racks.append(_rack_group(infra, "network", value(n.head_racks), heads, head.power_w, head.rack_units))
    return racks


def _compute_racks(dm: DesignModel, pick: Choice, rack, switch_w: dict, value) -> RackGroup:
    """The compute racks, with the management leaves they hold (``holds``, one in a rack) when
    the design puts some there; the fullest rack is then a full one with a leaf."""
    nodes, node_w = value(dm.vars.nodes), node_power_w(dm, pick)
    group = _rack_group(rack, "compute", value(dm.vars.compute_racks), nodes, node_w, pick.config.server.rack_units)
    hosted = value(dm.net.mgmt_hosted_leaves)
    if not hosted:
        return group
    leaf = pick.management.switch.id
    fullest_w = min(group.nodes_per_rack, nodes) * node_w + switch_w[leaf]
    return group.model_copy(update={"holds": {leaf: hosted}, "power_kw": round(fullest_w / 1000, 3)})


def _storage_choice(tier, units: int) -> StorageChoice:
    return StorageChoice(
        tier=tier.id,
        units=units,
        ports=units * tier.network_ports,
        read_gbps=round(units * tier.read_gb_per_s * 8, 3),
        write_gbps=round(units * tier.write_gb_per_s * 8, 3),
        capacity_tb=round(units * tier.capacity_tb, 3),
    )


def attach_key(pick: Choice) -> tuple:
    """Where the storage units plug in: the storage switch, or the compute fabric's when converged."""
    if pick.converged:
        f = pick.fabric
        return (f.switch.id, f.protocol, f.gbps) if f.switch else ()
    return pick.storage_net.attach_key


def placed_runs(dm: DesignModel, value) -> tuple[str, dict[str, float]]:
    """Where the design's racks put the storage and management links' ends (DesignModel.placement),
    and each of those link classes' run there."""
    level = next(level for level, lit in dm.placement.items() if value(lit))
    return level, {cls: runs[level] for cls, runs in dm.options.network_runs_m.items()}


def _storage_switches(net, three: bool, leaves: int, spines: int, cores: int, endpoints: int) -> list[SwitchGroup]:
    """The dedicated storage network's switch groups: leaves (endpoints and uplinks), spines (the
    leaves' uplinks, and in 3 tiers their own) and cores."""
    uplinks = leaves * net.up if net.tiers == 2 else 0
    spine_up = spines * net.pod[2] if three else 0
    groups = [("storage-leaf", leaves, endpoints + uplinks), ("storage-spine", spines, uplinks + spine_up),
              ("storage-core", cores, spine_up)]
    return [SwitchGroup(network="storage", tier=tier, model=net.switch.id, count=count, ports_used=used)
            for tier, count, used in groups if count]


def _storage_switch_links(net, three: bool, leaves: int, spines: int, cores: int, level: str, lengths: dict,
                          kits: dict) -> list[LinkGroup]:
    """Storage leaf–spine links (every leaf to every spine, 3 tiers: of its pod) and, in 3 tiers,
    spine–core links (every spine to the cores of its plane): a one-piece cable per switch pair,
    transceiver kits by the cages they fill (``kits``, the model's count; storage_cables.py)."""
    out = []
    if three:
        _, planes, spine_up = net.pod
        per_plane = cores // planes
        classes = (("storage-leaf-spine", leaves * net.up, leaves * planes, net.three_tier_links),
                   ("storage-spine-core", spines * spine_up, spines * per_plane, spine_up // per_plane))
    else:
        classes = (("storage-leaf-spine", leaves * net.up, leaves * spines, net.up // spines if spines else 0),)
    cases = {"storage-leaf-spine": leaf_spine_case(net, level), "storage-spine-core": spine_core_case(net, level)}
    for cls, count, pairs, per_pair in classes:
        part = net.core_part[level] if cls == "storage-spine-core" else net.part(cls, level)
        if count and part:
            by_cage = cases[cls] is not None and cases[cls][0] == "kits"
            assemblies = kits[cls] if by_cage else pairs * ceil_div(per_pair, part.part.links)
            out.append(LinkGroup(network="storage", between=cls, count=count, part=part.part.id,
                                 assemblies=assemblies, length_m=lengths[cls], gbps=net.gbps))
    return out


def _storage_network(dm: DesignModel, pick: Choice, value) -> tuple[StorageNetwork, list, list]:
    """The storage network record, its switch groups and its link groups (hot units, then cold)."""
    o, v, n = dm.options, dm.vars, dm.net
    net, c = pick.storage_net, pick.config
    nodes = value(v.nodes)
    leaves, spines, endpoints = value(n.leaves), value(n.spines), value(n.endpoints)
    level, lengths = placed_runs(dm, value)
    links, switches = [], []
    key = attach_key(pick)
    if net.mode == "dedicated":
        ports = net.ports_per_node
        three = bool(value(n.three_tiers))
        record = dict(mode="dedicated", nic=net.nic.id, nics_per_node=net.nics, ports_per_node=ports,
                      link_gbps=net.gbps, node_gbps=float(net.node_gbps), switch=net.switch.id,
                      tiers=3 if three else net.tiers, leaf_down_ports=net.down, leaf_up_ports=net.up)
        if three:
            record.update(cores=value(n.cores), links_per_leaf_spine=net.three_tier_links)
        switches += _storage_switches(net, three, leaves, spines, value(n.cores), endpoints)
        part = net.part("node-storage", level)
        if part:
            links.append(LinkGroup(network="storage", between="node-storage", count=nodes * ports, part=part.part.id,
                                   assemblies=ports * ceil_div(nodes, part.part.links), length_m=lengths["node-storage"],
                                   gbps=net.gbps, **_in_rack(dm, ("node-storage", net.index), part.part.id, value)))
        kits = {cls: value(k.kits) for cls, k in n.storage_kits.items()}
        links += _storage_switch_links(net, three, leaves, spines, value(n.cores), level, lengths, kits)
    else:
        record = dict(mode="converged", nic=None, nics_per_node=0, ports_per_node=c.rails,
                      link_gbps=c.interconnect.gbps, node_gbps=float(c.rails * c.interconnect.gbps), switch=None,
                      tiers=0)
    units = (("hot", o.storage[pick.storage_index].tier, value(v.storage_units)),
             ("cold", pick.cold.tier, value(n.cold_units)))
    for kind, tier, count in units:
        link = o.unit_links.get((key, tier.id)) if tier and key else None
        part = link.part[level] if link else None
        if count and part:
            links.append(LinkGroup(network="storage", between="storage-unit", count=count * tier.network_ports,
                                   part=part.part.id, assemblies=count * ceil_div(tier.network_ports, part.part.links),
                                   length_m=lengths["storage-unit"], gbps=link.gbps,
                                   **_in_rack(dm, ("storage-unit", kind, key, pick.converged, tier.id), part.part.id,
                                              value)))
    needs = dm.problem.storage_needs(dm.target or 0.0)
    storage_net = StorageNetwork(**record, need_gbps=round(needs.network_gbps, 3), leaves=leaves, spines=spines,
                                 compute_storage_leaves=value(n.compute_storage_leaves), unit_ports=value(n.unit_ports),
                                 converged_attach="top" if pick.storage_on_top else "leaves")
    return storage_net, switches, links


def _management_network(dm: DesignModel, pick: Choice, value) -> tuple[ManagementNetwork, list, list]:
    n = dm.net
    level, lengths = placed_runs(dm, value)
    x = pick.management
    part, uplink_part = x.part[level], x.uplink_part[level]
    ports, leaves, aggregation = value(n.mgmt_ports), value(n.mgmt_leaves), value(n.mgmt_aggregation)
    uplinks = 2 * leaves if aggregation else 0
    switches = [SwitchGroup(network="management", tier="mgmt-leaf", model=x.switch.id, count=leaves,
                            ports_used=ports + uplinks)]
    if aggregation:
        switches.append(SwitchGroup(network="management", tier="mgmt-aggregation", model=x.aggregation.id,
                                    count=aggregation, ports_used=uplinks))
    links = []
    if part and ports:
        links.append(LinkGroup(network="management", between="mgmt", count=ports, part=part.part.id,
                               assemblies=ceil_div(ports, part.part.links), length_m=lengths["mgmt"],
                               gbps=x.device_gbps))
    if uplinks and uplink_part:
        links.append(LinkGroup(network="management", between="mgmt-uplink", count=uplinks, part=uplink_part.part.id,
                               assemblies=uplinks, length_m=lengths["mgmt-uplink"], gbps=x.uplink_gbps))
    record = ManagementNetwork(switch=x.switch.id, aggregation_switch=x.aggregation.id if aggregation else None,
                               ports=ports, leaves=leaves, aggregation=aggregation,
                               leaf_down_ports=x.leaf_down_ports, link_gbps=x.device_gbps, uplink_gbps=x.uplink_gbps)
    return record, switches, links


def _mixed_racks(dm: DesignModel, rack, node_w: float, switch_w: dict, switch_order: list, tier_order: list,
                 value) -> list[RackGroup]:
    """One ``mixed`` group per distinct rack content, in slot order (most nodes first)."""
    tiers = dm.problem.catalog.catalog.by_id("storage")
    head = dm.options.head.model if dm.options.head else None
    groups: dict[tuple, int] = {}
    for slot in dm.slots:
        if value(slot.used):
            holds = tuple((sid, value(slot.switches[sid])) for sid in switch_order)
            holds += tuple((t, value(slot.units[t])) for t in tier_order)
            holds += ((head.id, value(slot.heads)),) if head else ()
            key = (value(slot.nodes), tuple((k, c) for k, c in holds if c))
            groups[key] = groups.get(key, 0) + 1
    out = []
    for (nodes, holds), count in groups.items():
        watts = {**switch_w, **{t: tiers[t].power_w for t in tier_order}, **({head.id: head.power_w} if head else {})}
        total_w = nodes * node_w + sum(c * watts[k] for k, c in holds)
        out.append(RackGroup(rack_class=rack.id, role="mixed", count=count, nodes_per_rack=nodes, holds=dict(holds),
                             power_kw=round(total_w / 1000, 3)))
    return out


def _rack_group(rack, role: str, count: int, devices: int, device_w: float, device_u: int) -> RackGroup:
    per = per_rack(rack, device_w, device_u)
    fullest = min(per, devices)
    return RackGroup(
        rack_class=rack.id,
        role=role,
        count=count,
        nodes_per_rack=per if role == "compute" else 0,
        power_kw=round(fullest * device_w / 1000, 3),
    )


def _cost(dm: DesignModel, pick: Choice, design: Design, value) -> Cost:
    """Cost lines, one per (category, item) (hot and cold storage apart), at the whole-unit prices
    the model used."""
    catalog = dm.problem.catalog
    c, f, net = pick.config, pick.fabric, pick.storage_net
    nodes = design.nodes
    quantities: dict[tuple[str, str], int] = {}

    def add(category: str, item: str, quantity: int) -> None:
        if quantity:
            quantities[category, item] = quantities.get((category, item), 0) + quantity

    add("server", c.server.id, nodes)
    if design.head_nodes is not None:
        add("server", design.head_nodes.model, design.head_nodes.count)
    if not c.builtin_nics and f.tiers > 0:
        add("nic", c.nic.id, nodes * c.rails)
    if net.mode == "dedicated" and not net.builtin:
        add("nic", net.nic.id, nodes * net.nics)
    for group in design.switches:
        add("switch", group.model, group.count)
    for link in design.links:
        for part, assemblies in link.bought:
            add("cable", part, assemblies)
    for group in design.racks:
        add("rack", group.rack_class, group.count)
    # The hot and the cold tier each make a line, even when they are the same model.
    storage = [(design.storage.tier, design.storage.units)]
    if design.cold_storage:
        storage.append((design.cold_storage.tier, design.cold_storage.units))
    lines = []
    for (category, item), quantity in [*quantities.items(), *((("storage", t), units) for t, units in storage)]:
        unit = int(round(catalog.price(item)))
        lines.append(CostLine.priced(category, item, quantity, unit, catalog.prices[item], catalog.price_book.id))
    return Cost(basis=catalog.basis, currency=catalog.currency, total=sum(x.total for x in lines), breakdown=lines)
