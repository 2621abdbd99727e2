"""Provisioned node power in the model, and the node power classes the rack power rule needs.

A node's power is its configuration's (with or without a compute fabric, catalog/power.py) plus
what its dedicated storage network adds (solver/networks.py, ``storage_node_w``); see
docs/model.md, "Racks and power".
"""

from __future__ import annotations

import math

from ortools.sat.python import cp_model

from topoopt.solver.options import devices_per_rack_by_power


def node_power_classes(dm) -> None:
    """Provisioned node power, and one Boolean per distinct nodes-per-rack vector it gives.

    A node's power is its configuration's (with or without a compute fabric) plus what its
    dedicated storage network adds (storage NICs and modules in their ports), each in mW rounded
    up; the nodes' total is rounded up to whole W once. The rack rules need nodes per rack =
    floor(rack W / node W) in every rack class, which depends on the sum: the sums a node can have
    are grouped by that vector of nodes per rack, and a group's Boolean restricts the node's power
    to its sums (a domain constraint), so the model stays small however many sums there are.
    """
    from topoopt.solver.build_networks import by_value, converged_offered  # build_networks calls this function

    m, o, v, n = dm.m, dm.options, dm.v, dm.n
    parts = o.all_parts
    compute_mw, storage_mw = dm.int_var(10**10, "node_compute_mw"), dm.int_var(10**10, "node_storage_mw")
    total_compute_mw, total_storage_mw = dm.int_var(10**16, "nodes_compute_mw"), dm.int_var(10**16, "nodes_storage_mw")

    def watts_of(c) -> tuple[int, int]:
        return mw(c.power_w(parts, fabric=True)), mw(c.power_w(parts, fabric=False))

    for group, configs in dm.node_groups(watts_of):
        attached, single = watts_of(configs[0])
        for value, when in ((attached, v.use_tier[0].Not()), (single, v.use_tier[0])):
            m.add(compute_mw == value).only_enforce_if([group, when])
            m.add(total_compute_mw == value * v.nodes).only_enforce_if([group, when])
    for value, lit in by_value(dm, o.storage_nets, n.use_sn, lambda s: mw(s.node_w), "storage_node_mw").items():
        m.add(storage_mw == value).only_enforce_if(lit)
        m.add(total_storage_mw == value * v.nodes).only_enforce_if(lit)
    m.add(n.node_mw == compute_mw + storage_mw)
    total = total_compute_mw + total_storage_mw
    m.add(1000 * v.power_w["node"] >= total)
    m.add(1000 * v.power_w["node"] <= total + 999)
    # The sums a node can have: its configuration with each storage option (the storage NICs its
    # server takes, or any when nic_fits_server is relaxed), or converged at a converged speed.
    storage_w = {mw(s.node_w) for s in o.storage_nets if s.mode == "dedicated"}
    values: set[int] = set()
    for c in o.node_configs:
        attached, single = watts_of(c)
        converged = {0} if c.speed_key in o.converged_speeds or converged_offered(c) else set()
        values |= {attached + w for w in storage_w | converged}
        values |= {single + w for w in storage_w}
    by_caps: dict[tuple, list[int]] = {}
    for value in sorted(values):
        by_caps.setdefault(tuple(devices_per_rack_by_power(r.rack, value / 1000) for r in o.racks), []).append(value)
    for i, (caps, members) in enumerate(by_caps.items()):
        lit = m.new_bool_var(f"node_power_caps_{i}")
        m.add_linear_expression_in_domain(n.node_mw, cp_model.Domain.from_values(members)).only_enforce_if(lit)
        n.node_power_caps.append((lit, caps))
    m.add_exactly_one([lit for lit, _ in n.node_power_caps])


def mw(watts: float) -> int:
    """Power in whole mW, rounded up (decimal inputs stay exact)."""
    return math.ceil(watts * 1000 - 1e-6)
