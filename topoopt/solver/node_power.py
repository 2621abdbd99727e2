"""Provisioned node power in the model, and the node power classes the rack power rule needs.

A node's power is its configuration's (with or without a compute fabric, catalog/power.py) plus
what its dedicated storage network adds (solver/networks.py, ``storage_node_w``); see
docs/model.md, "Racks and power".
"""

from __future__ import annotations

import math

from topoopt.solver.options import devices_per_rack_by_power


def node_power_classes(dm) -> None:
    """Provisioned node power, and one Boolean per distinct nodes-per-rack vector it gives.

    A node's power is its configuration's (with or without a compute fabric) plus what its
    dedicated storage network adds (storage NICs and modules in their ports), each in mW rounded
    up; the nodes' total is rounded up to whole W once. The rack rules need nodes per rack =
    floor(rack W / node W) in every rack class, which depends on the sum. Each (configuration
    power group, with or without a fabric, storage network power) fixes the sum, so it implies the
    Boolean of its vector directly: one clause each, which unit propagation settles at once. (A
    domain constraint on the sum per vector said the same, but its holes propagate poorly: the
    search needed ~1 s to find any node whose power matched a vector.)
    """
    from topoopt.solver.build_networks import by_value  # build_networks calls this function

    m, o, v, n = dm.m, dm.options, dm.v, dm.n
    parts = o.all_parts
    total_compute_mw, total_storage_mw = dm.int_var(10**16, "nodes_compute_mw"), dm.int_var(10**16, "nodes_storage_mw")
    storage = by_value(dm, o.storage_nets, n.use_sn, lambda s: mw(s.node_w), "storage_node_mw")
    for value, lit in storage.items():
        m.add(total_storage_mw == value * v.nodes).only_enforce_if(lit)
    caps_lit: dict[tuple, object] = {}

    def vector_of(node_mw: int):
        """The Boolean of the nodes-per-rack vector of a node drawing ``node_mw``."""
        caps = tuple(devices_per_rack_by_power(r.rack, node_mw / 1000) for r in o.racks)
        if caps not in caps_lit:
            caps_lit[caps] = m.new_bool_var(f"node_power_caps_{len(caps_lit)}")
        return caps_lit[caps]

    def watts_of(c) -> tuple[int, int]:
        return mw(c.power_w(parts, fabric=True)), mw(c.power_w(parts, fabric=False))

    for group, configs in dm.node_groups(watts_of):
        for compute_mw, when in zip(watts_of(configs[0]), (v.use_tier[0].Not(), v.use_tier[0])):
            m.add(total_compute_mw == compute_mw * v.nodes).only_enforce_if([group, when])
            for storage_mw, lit in storage.items():
                m.add_bool_or([group.Not(), when.Not(), lit.Not(), vector_of(compute_mw + storage_mw)])
    total = total_compute_mw + total_storage_mw
    m.add(1000 * v.power_w["node"] >= total)
    m.add(1000 * v.power_w["node"] <= total + 999)
    n.node_power_caps.extend((lit, caps) for caps, lit in caps_lit.items())
    m.add_exactly_one(lit for lit, _ in n.node_power_caps)


def mw(watts: float) -> int:
    """Power in whole mW, rounded up (decimal inputs stay exact)."""
    return math.ceil(watts * 1000 - 1e-6)
