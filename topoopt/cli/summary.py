"""Human-readable summaries of a SolveResult for cluster planners."""

from __future__ import annotations

from topoopt.checking.units import BITS_PER_BYTE
from topoopt.cli.price_notes import price_lines
from topoopt.models.design import Design, SolveResult
from topoopt.models.performance import UNCALIBRATED_NOTE

CURRENCY_SIGN = {"CNY": "¥", "USD": "$", "EUR": "€"}



def links_per_pair(f) -> str:
    """A 2-tier leaf–spine pair's links: ``"2"``, or ``"1–2"`` when the uplinks are near-balanced
    (``u mod S`` pairs carry one link more)."""
    low = f.links_per_leaf_spine
    return f"{low}–{low + 1}" if f.spines and f.leaf_up_ports % f.spines else f"{low}"

def money(amount: float, currency: str, basis: str) -> str:
    sign = CURRENCY_SIGN.get(currency, currency + " ")
    return f"{sign}{amount:,.0f}" + ("/month" if basis == "monthly_rent" else "")


def rail_grouping(d) -> str:
    """How the node's rails meet the leaves: rail-optimized, several rails per leaf, rail-only."""
    f = d.fabric
    if f.rail_only:
        return f", rail-only ({f.rails_per_leaf} rails per switch)"
    if d.rail_optimized:
        return ", rail-optimized" + (f" ({f.rails_per_leaf} rails per leaf)" if f.rails_per_leaf > 1 else "")
    return ""


def solved_summary(result: SolveResult, name: str) -> str:
    d, cost, perf = result.design, result.cost, result.performance
    f = d.fabric
    lines = [f"topoopt · {name} · {result.status.upper()} ({result.objective.kind})", ""]
    if f.tiers == 0:
        network = "no compute NICs (one node)"
    else:
        rails = f"{d.nics_per_node} × {d.nic} per node" + rail_grouping(d)
        network = f"{d.interconnect} at {d.link_gbps}G · {rails}"
    lines.append(f"Design       {d.nodes:,} × {d.server} = {d.gpus:,} × {d.gpu} · {network}")
    if f.tiers == 0:
        fabric = "none: a single node, its GPUs joined by the scale-up link"
    elif f.tiers == 1:
        fabric = (f"{f.leaves} switches {f.switch}, one per rail group, no spine ({f.leaf_down_ports} ports each)"
                  if f.rail_only else f"1 switch {f.switch} ({f.leaf_down_ports} ports)")
    else:
        fabric = (f"{f.tiers} tiers of {f.switch}: {f.leaves:,} leaves ({f.leaf_down_ports} down in use / "
                  f"{f.leaf_up_ports} up, {d.oversubscription:g}:1), {f.spines:,} spines"
                  + (f" ({links_per_pair(f)} links per leaf–spine pair)" if f.tiers == 2 else "")
                  + (f", {f.cores:,} cores in {f.spines_per_pod} planes, {f.pods} pods" if f.tiers == 3 else "")
                  + (f"; spines sized for {f.provisioned_nodes:,} nodes (growth)" if f.provisioned_nodes
                     else "; sized for the nodes built"))
    lines.append(f"Fabric       {fabric}")
    lines += storage_network_lines(d)
    lines += management_lines(d)
    for i, link in enumerate(d.links):
        head = "Links        " if i == 0 else "             "
        bought = [f"{count:,} × {part} (chosen for {link.length_m:g} m runs)" if part == link.part
                  else f"{count:,} × {part} within one rack" for part, count in link.bought if count]
        lines.append(f"{head}{link.between:<18} {link.count:>8,} × {link.gbps}G via {' + '.join(bought)}")
    for i, rack in enumerate(d.racks):
        head = "Racks        " if i == 0 else "             "
        per_rack = f"{rack.nodes_per_rack} node{'s' if rack.nodes_per_rack != 1 else ''}"
        if rack.role == "mixed":
            held = "".join(f" + {count} × {model}" for model, count in rack.holds.items())
            lines.append(f"{head}{rack.count:,} × {rack.rack_class} mixed, each {per_rack}{held}: {rack.power_kw:g} kW")
            continue
        if rack.role == "compute":  # what compute racks hold beside their nodes: one in a rack
            extra = f", {per_rack} each" + "".join(f", {count:,} of them also a {model}" for model, count in rack.holds.items())
        else:
            extra = "".join(f", the last also {count} × {model}" for model, count in rack.holds.items())
        lines.append(f"{head}{rack.count:,} × {rack.rack_class} {rack.role}{extra}, fullest {rack.power_kw:g} kW")
    s = d.storage
    lines.append(f"Storage      hot: {s.units:,} × {s.tier}: {s.read_gbps / BITS_PER_BYTE:,.1f} GB/s read, {s.write_gbps / BITS_PER_BYTE:,.1f} GB/s write, "
                 f"{s.capacity_tb:,.0f} TB")
    cold = d.cold_storage
    if cold is None:
        lines.append("             cold: none (nothing is archived)")
    else:
        lines.append(f"             cold: {cold.units:,} × {cold.tier}: {cold.capacity_tb:,.0f} TB for archived checkpoints "
                     f"and data, {cold.write_gbps / BITS_PER_BYTE:,.1f} GB/s write")
    if cost:
        by_category: dict[str, float] = {}
        for line in cost.breakdown:
            by_category[line.category] = by_category.get(line.category, 0.0) + line.total
        parts = " · ".join(f"{category} {money(total, cost.currency, 'capex')}" for category, total in by_category.items())
        lines.append(f"Cost         {money(cost.total, cost.currency, cost.basis)}  ({parts})")
        lines += price_lines(cost)
    if perf:
        p = perf.parallelism
        lines.append(
            f"Performance  {perf.tokens_per_s:,.0f} tokens/s · {perf.tflops_per_gpu:,.0f} TFLOP/s per GPU · MFU {perf.mfu:.1%} · "
            f"{perf.time_to_train_days:,.1f} days to train"
        )
        lines.append(
            f"             TP{p.tp}{f' CP{p.cp}' if p.cp > 1 else ''} PP{p.pp}{f' VP{p.virtual_stages}' if p.virtual_stages > 1 else ''} DP{p.dp} "
            f"ZeRO-{p.zero_stage} micro-batch {p.microbatch}"
            f"{f', {p.activation_recompute} recomputation' if p.activation_recompute else ''} · "
            f"{perf.memory_per_gpu_gb:.1f} GB per GPU · bottleneck {perf.bottleneck}"
        )
        if not perf.calibrated:
            lines.append(f"Confidence   {UNCALIBRATED_NOTE}")
    if result.objective.gap:
        lines.append(f"Gap          {result.objective.gap:.2%} from the proven bound (time limit reached)")
    lines.append(f"Binding      {', '.join(result.binding) if result.binding else 'none (only the objective limits the design)'}")
    return "\n".join(lines)


def plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def storage_network_lines(d: Design) -> list[str]:
    """How the nodes reach storage, against what the workload needs ("storage: dedicated, 2 ×
    cx7-qsfp112-2p per node at 200G = 800 Gb/s per node; need 1,040 Gb/s for 4 nodes")."""
    sn = d.storage_network
    need = f"need {sn.need_gbps:,.0f} Gb/s for {plural(d.nodes, 'node', 'nodes')}"
    if sn.mode == "dedicated":
        lines = [f"dedicated, {sn.nics_per_node} × {sn.nic} per node, {sn.ports_per_node} port(s) cabled at "
                 f"{sn.link_gbps}G = {sn.node_gbps:,.0f} Gb/s per node; {need}"]
        if sn.tiers == 1:
            switches = f"1 switch {sn.switch}"
        else:
            down, up = sn.leaf_down_ports, sn.leaf_up_ports
            split = f"{down} down / {up} up, {down / up:g}:1" if down and up else "non-blocking"
            switches = (f"{sn.tiers} tiers of {sn.switch}: {plural(sn.leaves, 'leaf', 'leaves')} ({split}), "
                        f"{plural(sn.spines, 'spine', 'spines')}")
            if sn.tiers == 3 and sn.links_per_leaf_spine and up:
                planes = up // sn.links_per_leaf_spine
                switches += (f" ({plural(sn.spines // planes, 'pod', 'pods')} × {planes}), "
                             f"{plural(sn.cores, 'core', 'cores')} ({planes} planes × {sn.cores // planes})")
        other = [g for g in d.links if g.between == "storage-unit" and g.gbps != sn.link_gbps]
        speeds = "".join(f" ({g.count:,} at {g.gbps}G on {plural(g.assemblies, 'assembly', 'assemblies')} in cages of "
                         f"their own)" for g in other)
        lines.append(f"{switches} · {sn.ports_per_node * d.nodes:,} node ports + {sn.unit_ports:,} storage-unit "
                     f"ports{speeds}")
    else:
        lines = [f"converged on the compute fabric, {sn.ports_per_node} × {sn.link_gbps}G compute ports per "
                 f"node = {sn.node_gbps:,.0f} Gb/s per node, shared with training traffic; {need}"]
        top = "cores" if d.fabric.tiers == 3 else "spines"
        where = (plural(sn.compute_storage_leaves, "extra compute leaf", "extra compute leaves")
                 if sn.compute_storage_leaves else
                 f"free ports of the {top}" if sn.converged_attach == "top" and d.fabric.tiers >= 2
                 else "the compute switch")
        lines.append(f"{sn.unit_ports:,} storage-unit ports on {where}")
    return [("Storage net  " if i == 0 else "             ") + line for i, line in enumerate(lines)]


EMBEDDED_SM_NODES = 2048
"""InfiniBand nodes a managed switch's embedded subnet manager serves ("supports up to 2048 nodes",
https://docs.nvidia.com/networking/display/qm97x0pub/software+management); beyond, UFM servers."""


def subnet_manager_line(d: Design) -> list[str]:
    """A line for an InfiniBand fabric (a built-in interconnect's protocol) larger than an embedded
    subnet manager serves (its nodes: node ports, compute switches, and storage-unit ports when
    storage is converged on it): the fabric manager it needs is not in the design (docs/model.md,
    "What the model does not do")."""
    from topoopt.catalog import load_builtin_catalog

    interconnect = load_builtin_catalog().by_id("interconnects").get(d.interconnect)
    if interconnect is None or interconnect.protocol != "ib" or d.tiers == 0:
        return []
    sn = d.storage_network
    ib_nodes = (d.nodes * d.nics_per_node + sum(g.count for g in d.switches if g.network == "compute")
                + (sn.unit_ports if sn.mode == "converged" else 0))
    if ib_nodes <= EMBEDDED_SM_NODES:
        return []
    return [f"             not bought: a fabric manager (UFM servers) for {ib_nodes:,} InfiniBand nodes, past the "
            f"{EMBEDDED_SM_NODES:,} a switch's embedded subnet manager serves"]


def management_lines(d: Design) -> list[str]:
    mn = d.management_network
    aggregation = (f" + {mn.aggregation:,} aggregation" + (f" of {mn.aggregation_switch}"
                                                            if mn.aggregation_switch not in (None, mn.switch) else "")
                   if mn.aggregation else "")
    leaves = plural(mn.leaves, "leaf", "leaves")
    heads = d.head_nodes
    return [f"Management   {mn.ports:,} ports (in-band + out-of-band) on {leaves} of {mn.switch}{aggregation}"
            f" · {mn.link_gbps}G to devices" + (f", {mn.uplink_gbps}G uplinks" if mn.aggregation else ""),
            "             " + (f"{heads.count} × {heads.model} head nodes (site.head_nodes)" if heads
                               else "no head nodes (a single node, site.head_nodes 0, or no head model in the catalog)"),
            *subnet_manager_line(d)]


def infeasible_summary(result: SolveResult, name: str) -> str:
    explanation = result.explanation
    if explanation is None:
        return (f"topoopt · {name} · INFEASIBLE\n\nNo design satisfies every rule of the instance (proven). "
                "Why was not worked out (--no-explain, or interrupted); solve again with the explanation on.")
    together = "all of these together:" if explanation.minimal else (
        "all of these together (each not shown necessary within the explanation's time limit):")
    lines = [f"topoopt · {name} · INFEASIBLE", "", f"No design satisfies {together}"]
    if explanation:
        for item in explanation.conflict:
            lines.append(f"  - {item.family}: {item.detail}  [{item.source}]")
            lines.append(f"      {item.description}")
        if explanation.precheck:
            lines += ["", f"Why: {explanation.precheck}."]
        if explanation.relaxations:
            lines += ["", "What it would take (each change alone):"]
            lines += [f"  - {r.message}" for r in explanation.relaxations]
    return "\n".join(lines)
