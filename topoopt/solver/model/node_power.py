"""Provisioned node power in the model, and the node power classes the rack power rule needs.

A node's power is its configuration's (with or without a compute fabric, catalog/power.py) plus
what its dedicated storage network adds (options/networks.py, ``storage_node_w``); see
docs/model.md, "Racks and power".
"""

from __future__ import annotations

from topoopt.options.racks import devices_per_rack_by_power
from topoopt.solver.model.core import DesignModel, by_value
from topoopt.solver.model.integers import thousandths_up


def node_power_classes(dm: DesignModel) -> None:
    """Provisioned node power, and one Boolean per distinct nodes-per-rack vector it gives.

    A node's power is its configuration's (with or without a compute fabric) plus what its
    dedicated storage network adds (storage NICs and modules in their ports), each in mW rounded
    up; the nodes' total is rounded up to whole W once. The rack rules need nodes per rack =
    floor(rack W / node W) in every rack class, which depends on the sum. Nodes per rack never
    grow with the node's power, so over the sorted sums a node can have (every configuration
    power, with or without a fabric, plus every storage network's) each vector holds for one run
    of consecutive sums: its Boolean bounds the node's power to that run's interval. Intervals
    propagate by bounds (a domain of the sums themselves, with holes, did not: the search needed
    ~1 s to find any node whose power matched a vector), and the model stays linear in the
    options (a clause per configuration and storage power pair grew to 126,000 constraints with a
    catalog ten times the built-in one).
    """

    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    parts = o.all_parts
    compute_mw, storage_mw = dm.int_var(10**10, "node_compute_mw"), dm.int_var(10**10, "node_storage_mw")
    total_compute_mw, total_storage_mw = dm.int_var(10**16, "nodes_compute_mw"), dm.int_var(10**16, "nodes_storage_mw")
    storage = by_value(dm, o.storage_nets, n.use_storage_net, lambda s: thousandths_up(s.node_w), "storage_node_mw")
    for value, lit in storage.items():
        m.add(storage_mw == value).only_enforce_if(lit)
        m.add(total_storage_mw == value * v.nodes).only_enforce_if(lit)

    def watts_of(c) -> tuple[int, int]:
        return thousandths_up(c.power_w(parts, fabric=True)), thousandths_up(c.power_w(parts, fabric=False))

    sums: set[int] = set()
    for group, configs in dm.node_groups(watts_of):
        for value, when in zip(watts_of(configs[0]), (v.use_tier[0].Not(), v.use_tier[0])):
            m.add(compute_mw == value).only_enforce_if([group, when])
            m.add(total_compute_mw == value * v.nodes).only_enforce_if([group, when])
            sums.update(value + w for w in storage)
    node_mw = v.node_mw
    m.add(node_mw == compute_mw + storage_mw)
    runs: list[list] = []  # [vector, first sum, last sum]
    for total_mw in sorted(sums):
        caps = tuple(devices_per_rack_by_power(r.rack, total_mw / 1000) for r in o.racks)
        if runs and runs[-1][0] == caps:
            runs[-1][2] = total_mw
        else:
            runs.append([caps, total_mw, total_mw])
    for i, (caps, first, last) in enumerate(runs):
        lit = m.new_bool_var(f"node_power_caps_{i}")
        m.add_linear_constraint(node_mw, first, last).only_enforce_if(lit)
        n.node_power_caps.append((lit, caps))
    m.add_exactly_one(lit for lit, _ in n.node_power_caps)
    m.add(n.nodes_mw == total_compute_mw + total_storage_mw)
    m.add(1000 * v.power_w["node"] >= n.nodes_mw)
    m.add(1000 * v.power_w["node"] <= n.nodes_mw + 999)
