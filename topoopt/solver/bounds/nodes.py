"""Upper bounds on a design's node count from the instance's limits, and the fabric cost per node
they charge: the first, cheap prune of the smallest-deadline search (objectives/min_time.py)."""

from __future__ import annotations

import math

from topoopt.options.problem import Problem
from topoopt.options.racks import devices_by_power, devices_per_rack_by_power, devices_per_rack_by_units, rack_cools
from topoopt.options.tables import MAX_NODES, part_fits_node_end, part_fits_switch_end


def fabric_cost_per_node(problem: Problem, config, fabrics) -> float:
    """A lower bound on the fabric cost one node adds with these fabric options: its share of
    leaf ports (or the single switch's), of node cables, and of leaf uplink cables."""
    parts = problem.options.parts
    best = math.inf
    for f in fabrics:
        if f.speed_key != config.speed_key:
            continue
        if f.tiers == 0:
            return 0.0
        node_links = [p.unit_price / p.part.links for p in parts["node-leaf"] if p.unit_price is not None
                      and part_fits_switch_end(p.part, f.switch, f.gbps, "a") and part_fits_node_end(p.part, config)]
        if not node_links or f.unit_price is None:
            continue
        # A leaf of ratio class ρ uses at most min(D, ρk/(1+ρ)) down-ports, each with ≥ 1/ρ uplink.
        down = min(f.down, f.radix * f.ratio // (1 + f.ratio)) if f.tiers >= 2 else f.down
        per_port = f.unit_price / down + min(node_links)
        if f.tiers >= 2:
            uplinks = [p.unit_price / p.part.links for p in parts["leaf-spine"] if p.unit_price is not None
                       and part_fits_switch_end(p.part, f.switch, f.gbps, "a")]
            per_port += min(uplinks, default=0.0) / f.ratio
        best = min(best, config.rails * per_port)
    return best


def nodes_per_rack(problem: Problem, config, node_w: float, relaxed: frozenset[str]) -> int | None:
    """The most nodes of this configuration one rack of any class holds under the rack rules not
    relaxed: its power, and a class that cools the server's kind, under rack_power_within_limit;
    its rack units under rack_units_within_limit. None when both are relaxed."""
    by_power = "rack_power_within_limit" not in relaxed
    by_units = "rack_units_within_limit" not in relaxed
    if not (by_power or by_units):
        return None

    def held(rack) -> int:
        if by_power and not rack_cools(rack, config.server.cooling):
            return 0
        return min([devices_per_rack_by_power(rack, node_w)] * by_power
                   + [devices_per_rack_by_units(rack, config.server.rack_units)] * by_units)

    return max((held(r.rack) for r in problem.options.racks), default=0)


def optimistic_nodes(problem: Problem, config, fabrics, relaxed: frozenset[str]) -> int:
    """An upper bound on the nodes of any design with this configuration and these fabric
    options (None: any, the fabric then left out of the budget): pins, budget (nodes, racks and
    fabric at their cheapest), racks and site power, each unless relaxed. None of them can be
    exceeded, so the bound is safe for pruning."""
    inst, o = problem.instance, problem.options
    node_w = config.power_w(o.all_parts)
    bounds = [MAX_NODES]
    if inst.constraints.pins.nodes is not None and "pins_respected" not in relaxed:
        bounds.append(inst.constraints.pins.nodes)
    per = nodes_per_rack(problem, config, node_w, relaxed)
    # Beyond one node a fabric is needed (under leaf_ports_cover_endpoints): each node costs at
    # least its server, its NICs, its share of the cheapest rack and of the cheapest fabric.
    fabric_needed = "leaf_ports_cover_endpoints" not in relaxed
    price = config.unit_price if fabric_needed else min(config.unit_price or 0, config.server_price or 0)
    if price and "budget_cap" not in relaxed:
        rack_share = min((r.unit_price or 0 for r in o.racks), default=0) / max(per or MAX_NODES, 1)
        fabric = 0.0 if fabrics is None or not fabric_needed else fabric_cost_per_node(problem, config, fabrics)
        per_node = price + rack_share + fabric
        bounds.append(int(inst.budget.max // per_node) if per_node < math.inf else 1)
    if "racks_available" not in relaxed and per is not None:
        bounds.append(inst.site.max_racks * per)
    if inst.site.power_cap_kw is not None and "site_power_within_limit" not in relaxed:
        bounds.append(devices_by_power(inst.site.power_cap_kw, node_w))
    return max(1, min(bounds))
