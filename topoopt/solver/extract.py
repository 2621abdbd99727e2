"""Read a CP-SAT solution back into a typed Design and Cost."""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.models.design import Cost, CostLine, Design, FabricShape, LinkGroup, RackGroup, StorageChoice, SwitchGroup
from topoopt.models.performance import Parallelism, Performance
from topoopt.perf import evaluate
from topoopt.solver.build import DesignModel
from topoopt.catalog.power import switch_power_w
from topoopt.solver.options import FabricOption, NodeConfig, PartOption, per_rack


@dataclass
class Choice:
    """The options a solution picked."""

    config: NodeConfig
    fabric: FabricOption
    parts: dict[str, PartOption]
    rack_index: int
    storage_index: int


def chosen(dm: DesignModel, value) -> Choice:
    o, v = dm.options, dm.v
    config = next(c for c in o.node_configs if value(v.use_nc[c.index]))
    fabric = next(f for f in o.fabrics if value(v.use_fo[f.index]))
    parts = {cls: p for cls, ps in o.parts.items() for p in ps if value(v.use_part[cls, p.index])}
    rack = next(r.index for r in o.racks if value(v.use_rack[r.index]))
    storage = next(s.index for s in o.storage if value(v.use_storage[s.index]))
    return Choice(config, fabric, parts, rack, storage)


def extract(dm: DesignModel, value) -> tuple[Design, Cost, Performance | None]:
    """Build the design record from variable values (``value`` maps a variable to its value)."""
    o, v, problem = dm.options, dm.v, dm.problem
    pick = chosen(dm, value)
    c, f = pick.config, pick.fabric
    nodes, leaves, spines, cores = value(v.nodes), value(v.leaves), value(v.spines), value(v.cores)
    links = {cls: value(v.links[cls]) for cls in o.parts}
    multi = f.tiers >= 2
    shape = FabricShape(
        tiers=f.tiers,
        switch=f.switch.id if f.tiers else "none",
        leaves=leaves,
        spines=spines,
        cores=cores,
        leaf_down_ports=f.down,
        leaf_up_ports=f.up,
        links_per_leaf_spine=f.links_per_leaf_spine,
        pods=value(v.pods),
        spines_per_pod=f.spines if multi else 0,
        leaves_per_pod=f.leaves_per_pod if f.tiers == 3 else leaves,
        cores_per_plane=f.cores_per_plane,
        spine_up_ports=f.spine_up,
        links_per_spine_core=f.links_per_spine_core,
        rail_optimized=multi and c.rails > 1,
        leaves_per_rail=value(v.leaves_per_rail),
    )
    switches = []
    if leaves:
        switches.append(SwitchGroup(tier="leaf", model=f.switch.id, count=leaves,
                                    ports_used=links["node-leaf"] + links["leaf-spine"]))
    if spines:
        switches.append(SwitchGroup(tier="spine", model=f.switch.id, count=spines,
                                    ports_used=links["leaf-spine"] + links["spine-core"]))
    if cores:
        switches.append(SwitchGroup(tier="core", model=f.switch.id, count=cores, ports_used=links["spine-core"]))
    link_groups = [
        LinkGroup(between=cls, count=links[cls], part=p.part.id, assemblies=value(v.assemblies[cls, p.index]),
                  length_m=o.lengths_m[cls], gbps=f.gbps)
        for cls, p in pick.parts.items()
        if links[cls] > 0
    ]
    rack = o.racks[pick.rack_index].rack
    storage = o.storage[pick.storage_index].tier
    units = value(v.storage_units)
    node_w = c.power_w(o.all_parts, fabric=f.tiers > 0)
    switch_w = switch_power_w(f.switch, o.all_parts) if f.switch else 0.0
    n_switches = leaves + spines + cores
    if value(v.single_rack):
        total_w = nodes * node_w + n_switches * switch_w + units * storage.power_w
        racks = [RackGroup(rack_class=rack.id, role="mixed", count=1, nodes_per_rack=nodes,
                           power_kw=round(total_w / 1000, 3))]
    else:
        racks = [_rack_group(rack, "compute", value(v.compute_racks), nodes, node_w, c.server.rack_units)]
        if n_switches:
            racks.append(_rack_group(rack, "network", value(v.switch_racks), n_switches, switch_w, f.switch.rack_units))
        racks.append(_rack_group(rack, "storage", value(v.storage_racks), units, storage.power_w, storage.rack_units))
    performance = evaluate(problem.job, problem.hardware(c, f.perf_class, nodes))
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
        oversubscription=round(f.oversubscription, 4) if multi else 1.0,
        rail_optimized=shape.rail_optimized,
        fabric=shape,
        switches=switches,
        links=link_groups,
        racks=[r for r in racks if r.count > 0],
        storage=StorageChoice(
            tier=storage.id,
            units=units,
            read_gbps=round(units * storage.read_gb_per_s * 8, 3),
            write_gbps=round(units * storage.write_gb_per_s * 8, 3),
            capacity_tb=round(units * storage.capacity_tb, 3),
        ),
        parallelism=parallelism,
    )
    cost = _cost(dm, pick, nodes, n_switches, units, value(v.racks), value)
    return design, cost, performance


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


def _cost(dm: DesignModel, pick: Choice, nodes: int, n_switches: int, units: int, racks: int, value) -> Cost:
    """Cost lines, one per part, at the whole-unit prices the model used."""
    catalog, o = dm.problem.catalog, dm.options
    c, f = pick.config, pick.fabric

    def line(category: str, item: str, quantity: int) -> CostLine:
        unit = int(round(catalog.price(item)))
        return CostLine(category=category, item=item, quantity=quantity, unit_price=unit,
                        total=unit * quantity, source=catalog.prices[item].source)

    lines = [line("server", c.server.id, nodes)]
    if not c.builtin_nics and f.tiers > 0:
        lines.append(line("nic", c.nic.id, nodes * c.rails))
    if n_switches:
        lines.append(line("switch", f.switch.id, n_switches))
    per_part: dict[str, int] = {}
    for cls, p in pick.parts.items():
        count = value(dm.v.assemblies[cls, p.index])
        if count:
            per_part[p.part.id] = per_part.get(p.part.id, 0) + count
    lines += [line("cable", part_id, count) for part_id, count in per_part.items()]
    lines.append(line("rack", o.racks[pick.rack_index].rack.id, racks))
    lines.append(line("storage", o.storage[pick.storage_index].tier.id, units))
    return Cost(basis=catalog.basis, currency=catalog.currency, total=sum(x.total for x in lines), breakdown=lines)
