"""What the user reads about a family in a conflict: the instance values behind its limit (where
the limit comes from in the instance is the family's record, topoopt/families.py)."""

from __future__ import annotations

from topoopt.families import FAMILIES
from topoopt.options.networks import server_takes
from topoopt.options.problem import Problem

def detail(problem: Problem, family: str, nodes: int | None = None) -> str:
    """The instance values behind a family's limit; ``nodes``: the node count of the cheapest
    design without the family (or the pinned count), for the storage path."""
    inst = problem.instance
    rules = inst.constraints
    if family == "budget_cap":
        return f"budget {inst.budget.max:,.0f} {inst.budget.currency} ({inst.budget.basis})"
    if family == "deadline_met" and inst.goal.deadline_days is not None:
        return f"train {inst.workload.training.tokens:.3g} tokens within {inst.goal.deadline_days:g} days"
    if family == "memory_fits":
        model = inst.workload.model
        return f"model {model if isinstance(model, str) else f'{model.params_b:g}B parameters'}"
    if family == "racks_available":
        classes = ", ".join(inst.site.rack_classes) if inst.site.rack_classes else "any class"
        return f"at most {inst.site.max_racks} racks ({classes})"
    if family == "site_power_within_limit":
        return f"site power cap {inst.site.power_cap_kw:g} kW"
    if family == "allowed_by_lists":
        lists = [f"{kind} allow={rule.allow} deny={rule.deny}" for kind in
                 ("gpus", "servers", "interconnects", "switches", "cables", "storage", "storage_nics")
                 if (rule := getattr(rules, kind)).allow is not None or rule.deny]
        return "; ".join(lists) or "allow/deny lists"
    if family == "pins_respected":
        pins = {k: v for k, v in rules.pins.model_dump().items() if v is not None}
        return ", ".join(f"{k}={v}" for k, v in pins.items())
    if family == "oversubscription_within_limit":
        return f"oversubscription at most {rules.max_oversubscription:g}:1"
    if family == "cable_reach":
        d = inst.site.distances
        return f"runs of {d.in_row_m + d.slack_m:g} m (in row) and {d.across_rows_m + d.slack_m:g} m (across rows)"
    if family == "storage_latency_ok":
        return "many small files need a low-latency storage tier"
    if family == "storage_nic_bandwidth_met":
        return storage_path_detail(problem, nodes)
    if family == "cold_storage_met":
        needs = problem.storage_needs(0.0)
        checkpoint = inst.workload.checkpoint
        return (f"archive {needs.cold_capacity_tb:,.1f} TB ({inst.workload.data.archive_tb:g} TB of data and "
                f"{checkpoint.archive_days:g} days of checkpoints) on an object-store tier")
    if family == "storage_fabric_ports_cover":
        tiers = problem.catalog.catalog.by_id("storage")
        allowed = [t for t in tiers.values() if rules.storage.admits(t.id)]
        ports = "; ".join(f"{t.id}: {t.network_ports} × {'/'.join(map(str, t.port_speeds_gbps))}G "
                          f"{'/'.join(t.protocols)}" for t in allowed)
        return f"storage-unit ports must run the storage network's speed and protocol ({ports or 'no tier allowed'})"
    if family == "management_ports_cover":
        return "1 in-band and the out-of-band management ports of every node, data switch and storage unit"
    return FAMILIES[family].description


def storage_path_detail(problem: Problem, nodes: int | None) -> str:
    """The fastest storage path the instance allows, against the traffic it must carry:
    "storage NIC 2 × eth-10g-2p (4 × 10G) per node × 4 nodes = 160 Gb/s < 579 Gb/s needed"."""
    need = problem.storage_needs(problem.throughput_target or 0.0).network_gbps
    everything = problem.unfiltered().options
    instance_rules = {"allowed_by_lists", "pins_respected", "priced_in_book"}
    configs = [c for c in everything.node_configs if not c.violations & instance_rules]
    servers = {c.server.id: c.server for c in configs}
    paths = []
    for s in everything.storage_nets:
        if s.violations & instance_rules:
            continue
        if s.mode == "dedicated" and any(server_takes(server, s.nic_choice) for server in servers.values()):
            paths.append((s.node_gbps, f"storage NIC {s.nics} × {s.nic.id} ({s.ports_per_node} × {s.gbps}G) per node"))
        elif s.mode == "converged":
            paths += [(c.rails * c.interconnect.gbps, f"compute NICs shared with storage ({c.rails} × "
                       f"{c.interconnect.gbps}G) per node") for c in configs
                      if c.speed_key in everything.converged_speeds]
    if not paths:
        return f"no storage path is allowed; {need:,.0f} Gb/s needed"
    gbps, path = max(paths)
    if nodes is None:
        return f"{path} = {gbps:,} Gb/s per node; {need:,.0f} Gb/s needed"
    total = gbps * nodes
    return f"{path} × {nodes:,} nodes = {total:,} Gb/s {'<' if total < need else '≥'} {need:,.0f} Gb/s needed"
