"""Human-readable summaries of a SolveResult for cluster planners."""

from __future__ import annotations

from topoopt.models.design import SolveResult

CURRENCY_SIGN = {"CNY": "¥", "USD": "$", "EUR": "€"}


def money(amount: float, currency: str, basis: str) -> str:
    sign = CURRENCY_SIGN.get(currency, currency + " ")
    return f"{sign}{amount:,.0f}" + ("/month" if basis == "monthly_rent" else "")


def solved_summary(result: SolveResult, name: str) -> str:
    d, cost, perf = result.design, result.cost, result.performance
    f = d.fabric
    lines = [f"topoopt · {name} · {result.status.upper()} ({result.objective.kind})", ""]
    if f.tiers == 0:
        network = "no compute NICs (one node)"
    else:
        rails = f"{d.nics_per_node} × {d.nic} per node" + (", rail-optimized" if d.rail_optimized else "")
        network = f"{d.interconnect} at {d.link_gbps}G · {rails}"
    lines.append(f"Design       {d.nodes:,} × {d.server} = {d.gpus:,} × {d.gpu} · {network}")
    if f.tiers == 0:
        fabric = "none: a single node, its GPUs joined by the scale-up link"
    elif f.tiers == 1:
        fabric = f"1 switch {f.switch} ({f.leaf_down_ports} ports)"
    else:
        fabric = (f"{f.tiers} tiers of {f.switch}: {f.leaves:,} leaves ({f.leaf_down_ports} down / {f.leaf_up_ports} up, "
                  f"{d.oversubscription:g}:1), {f.spines:,} spines" + (f", {f.cores:,} cores in {f.spines_per_pod} planes, {f.pods} pods" if f.tiers == 3 else ""))
    lines.append(f"Fabric       {fabric}")
    for i, link in enumerate(d.links):
        head = "Links        " if i == 0 else "             "
        lines.append(f"{head}{link.between:<10} {link.count:>8,} × {link.gbps}G via {link.assemblies:,} × {link.part} ({link.length_m:g} m runs)")
    for i, rack in enumerate(d.racks):
        head = "Racks        " if i == 0 else "             "
        extra = f", {rack.nodes_per_rack} nodes each" if rack.role == "compute" else ""
        lines.append(f"{head}{rack.count:,} × {rack.rack_class} {rack.role}{extra}, fullest {rack.power_kw:g} kW")
    s = d.storage
    lines.append(f"Storage      {s.units} × {s.tier}: {s.read_gbps / 8:,.1f} GB/s read, {s.write_gbps / 8:,.1f} GB/s write, {s.capacity_tb:,.0f} TB")
    if cost:
        by_category: dict[str, float] = {}
        for line in cost.breakdown:
            by_category[line.category] = by_category.get(line.category, 0.0) + line.total
        parts = " · ".join(f"{category} {money(total, cost.currency, 'capex')}" for category, total in by_category.items())
        lines.append(f"Cost         {money(cost.total, cost.currency, cost.basis)}  ({parts})")
    if perf:
        p = perf.parallelism
        lines.append(
            f"Performance  {perf.tokens_per_s:,.0f} tokens/s · {perf.tflops_per_gpu:,.0f} TFLOP/s per GPU · MFU {perf.mfu:.1%} · "
            f"{perf.time_to_train_days:,.1f} days to train"
        )
        lines.append(
            f"             TP{p.tp} PP{p.pp} DP{p.dp} ZeRO-{p.zero_stage} micro-batch {p.microbatch} · "
            f"{perf.memory_per_gpu_gb:.1f} GB per GPU · bottleneck {perf.bottleneck}"
        )
    if result.objective.gap:
        lines.append(f"Gap          {result.objective.gap:.2%} from the proven bound (time limit reached)")
    lines.append(f"Binding      {', '.join(result.binding) if result.binding else 'none (only the objective limits the design)'}")
    return "\n".join(lines)


def infeasible_summary(result: SolveResult, name: str) -> str:
    lines = [f"topoopt · {name} · INFEASIBLE", "", "No design satisfies all of these together:"]
    explanation = result.explanation
    if explanation:
        for item in explanation.conflict:
            lines.append(f"  - {item.family}: {item.detail}  [{item.source}]")
            lines.append(f"      {item.description}")
        if explanation.relaxations:
            lines += ["", "What it would take (each change alone):"]
            lines += [f"  - {r.message}" for r in explanation.relaxations]
    return "\n".join(lines)
