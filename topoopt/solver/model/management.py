"""The management network's family: leaves cover every management port, pairs cover the leaves."""

from __future__ import annotations

from topoopt.solver.model.core import DesignModel


def management_ports_cover(dm: DesignModel) -> None:
    """Management leaves = ceil(ports / d) exactly (``d`` device ports per leaf); past one leaf,
    aggregation pairs = ceil(leaves / k) exactly, ``k`` the aggregation model's ports at the uplink
    speed less the 2 it keeps for the site's management core (one uplink from each leaf to each
    switch of its pair)."""
    m, n, o = dm.model, dm.net, dm.options
    family = "management_ports_cover"
    for x, lit in zip(o.management, n.use_mgmt):
        d, k = x.leaf_down_ports, x.leaves_per_pair
        dm.add(family, m.add(d * n.mgmt_leaves >= n.mgmt_ports), lit)
        dm.add(family, m.add(d * n.mgmt_leaves <= n.mgmt_ports + d - 1), lit)
        dm.add(family, m.add(k * n.mgmt_pairs >= n.mgmt_leaves), lit, n.mgmt_multi)
        dm.add(family, m.add(k * n.mgmt_pairs <= n.mgmt_leaves + k - 1), lit, n.mgmt_multi)


def head_nodes_built(dm: DesignModel) -> None:
    """Structural: the option tables fix the head-node model and rule (options/control.py), which
    the model's definitions count (network_definitions._head_count); nothing here to relax."""
