"""Which limits a solved design sits on.

A family is reported as binding when the optimum is on its limit: one more unit of what it limits
would break it (one node fewer misses the deadline or no longer fits; one more node would exceed
the budget, the racks or the site power; the rack class's power, not its height, sets the nodes
per rack; storage bandwidth, not capacity, sets the number of storage units). This is read off the
solution, without further solves.
"""

from __future__ import annotations

from topoopt.models.design import Cost, Design
from topoopt.options.problem import Problem
from topoopt.options.racks import devices_per_rack_by_power, devices_per_rack_by_units
from topoopt.solver.extract import Choice


def binding_families(problem: Problem, pick: Choice, design: Design, cost: Cost, power_w: float) -> list[str]:
    inst, c, o = problem.instance, pick.config, problem.options
    perf_class = pick.fabric.perf_class
    n = design.nodes
    node_w = c.power_w(o.all_parts, fabric=design.tiers > 0) + pick.storage_net.node_w
    rack = o.racks[pick.rack_index].rack
    tier = o.storage[pick.storage_index].tier
    binding = []
    if (problem.time_limit_s is not None
            and problem.min_nodes_for_time(c, perf_class, problem.time_limit_s, pick.converged) == n):
        binding.append("deadline_met")
    if problem.min_nodes_to_fit(c) == n and n > 1:
        binding.append("memory_fits")
    if cost.total + (c.unit_price or 0) > inst.budget.max:
        binding.append("budget_cap")
    by_power = devices_per_rack_by_power(rack, node_w)
    by_units = devices_per_rack_by_units(rack, c.server.rack_units)
    if n > min(by_power, by_units):
        binding.append("rack_power_within_limit" if by_power < by_units else "rack_units_within_limit")
    if sum(r.count for r in design.racks) == inst.site.max_racks:
        binding.append("racks_available")
    if inst.site.power_cap_kw is not None and power_w + node_w > inst.site.power_cap_kw * 1000:
        binding.append("site_power_within_limit")
    needs = problem.storage_needs(problem.throughput_target or 0.0)
    units_for = {
        "storage_bandwidth_met": max(needs.read_gb_per_s / tier.read_gb_per_s, needs.write_gb_per_s / tier.write_gb_per_s),
        "storage_capacity_met": needs.capacity_tb / tier.capacity_tb,
    }
    deciding = max(units_for, key=units_for.get)
    if units_for[deciding] > 1 and -(-units_for[deciding] // 1) == design.storage.units:
        binding.append(deciding)
    # One node fewer could not carry the storage traffic over its storage path.
    path = design.storage_network
    if n > 1 and (n - 1) * path.node_gbps < path.need_gbps:
        binding.append("storage_nic_bandwidth_met")
    return binding
