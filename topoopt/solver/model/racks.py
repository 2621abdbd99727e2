"""The rack and site families: power and rack units per rack, racks available, site power."""

from __future__ import annotations

import math

from topoopt.options.racks import devices_per_rack_by_power, devices_per_rack_by_units, rack_cools
from topoopt.solver.model.core import DesignModel
from topoopt.solver.model.integers import thousandths
from topoopt.solver.model.mixed_racks import slot_limits


def _rack_capacity(dm: DesignModel, family: str) -> None:
    """Homogeneous racks: per device model, count = ceil(devices / devices per rack), each family
    owning its bound (nodes: per distinct node power or rack units, in the nodes' class; switches
    and storage units: per model, over all networks, in the network and storage racks' class; head
    nodes likewise, in network racks of their own).

    A small design may instead use mixed racks, each within its class (mixed_racks.py).
    """
    o, v, m, n = dm.options, dm.vars, dm.model, dm.net
    by_power = family == "rack_power_within_limit"
    several = v.mixed.Not()
    catalog = dm.problem.catalog.catalog
    switches, tiers = catalog.by_id("switches"), catalog.by_id("storage")

    def caps(watts: float, units: int) -> tuple:
        """(by power, by units) devices per rack, for every rack class."""
        return tuple((devices_per_rack_by_power(r.rack, watts), devices_per_rack_by_units(r.rack, units)) for r in o.racks)

    # Nodes: one bound per family, compute racks are the larger (network_definitions.py).
    if by_power:
        node_groups = list(n.node_power_caps)  # (literal, nodes per rack in each rack class)
        racks = n.node_racks_by_power
    else:
        node_groups = [(lit, tuple(devices_per_rack_by_units(r.rack, configs[0].server.rack_units) for r in o.racks))
                       for lit, configs in dm.node_groups(lambda c: c.server.rack_units)]
        racks = n.node_racks_by_units
    for lit, per_class in node_groups:
        for r, cap in zip(o.racks, per_class):
            rack_lit = v.use_rack[r.index]
            if cap < 1:
                dm.forbid(family, lit, rack_lit)
                continue
            dm.add(family, m.add(cap * racks >= v.nodes), lit, rack_lit, several)
            dm.add(family, m.add(cap * racks <= v.nodes + cap - 1), lit, rack_lit, several)
    dm.add(family, m.add(v.compute_racks >= racks), several)
    # Switches and storage units, per model.
    groups = [(switches[sid], o.switch_power_w(switches[sid]), count, n.switch_racks_of[sid])
              for sid, count in n.racked_of.items()]
    groups += [(tiers[t], tiers[t].power_w, count, n.unit_racks_of[t]) for t, count in n.units_of.items()]
    hosts = [n.heads_with[device.id] for device, *_ in groups]
    if o.head is not None:
        groups.append((o.head.model, o.head.model.power_w, n.heads, n.head_racks))
    for device, watts, count, racks in groups:
        alone = [n.heads_hosted.Not()] if device is getattr(o.head, "model", None) else []
        for r, (power_cap, units_cap) in zip(o.racks, caps(watts, device.rack_units)):
            rack_lit = v.use_infra_rack[r.index]
            cap = power_cap if by_power else units_cap
            if cap < 1:
                dm.add(family, m.add(count == 0), rack_lit, *alone)
                continue
            dm.add(family, m.add(cap * racks >= count), rack_lit, several, *alone)
            if cap == min(power_cap, units_cap):  # the binding bound also fixes the ceiling exactly
                dm.add(family, m.add(cap * racks <= count + cap - 1), rack_lit, several, *alone)
    if o.head is not None:
        _heads_in_a_last_rack(dm, family, groups[:len(hosts)], hosts, caps)
    _leaves_beside_nodes(dm, family)
    slot_limits(dm, family)


def _full_racks(dm: DesignModel, at: int) -> list[tuple[list, int, int]]:
    """``(literals, nodes, node U)`` per node power class and height: the nodes a full compute
    rack of the ``at``-th rack class holds (``min(by power, by units)``) when the literals hold."""
    r = dm.options.racks[at]
    heights = [(lit, configs[0].server.rack_units) for lit, configs in dm.node_groups(lambda c: c.server.rack_units)]
    return [([power_lit, units_lit], min(caps[at], devices_per_rack_by_units(r.rack, node_u)), node_u)
            for power_lit, caps in dm.net.node_power_caps for units_lit, node_u in heights]


def _leaves_beside_nodes(dm: DesignModel, family: str) -> None:
    """Hosted management leaves (``mgmt_hosted``): a full compute rack's nodes and one leaf within
    the nodes' rack class's power (mW: nodes exact, the leaf at whole W) or rack units, in a class
    that cools the leaf (network_definitions.py ``_management_hosting``)."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    by_power = family == "rack_power_within_limit"
    for x, x_lit in zip(o.management, n.use_mgmt):
        leaf_mw, leaf_u = 1000 * math.ceil(o.switch_power_w(x.switch)), x.switch.rack_units
        for at, r in enumerate(o.racks):
            when = [n.mgmt_hosted, x_lit, v.use_rack[r.index]]
            if by_power and not rack_cools(r.rack, x.switch.cooling):
                dm.forbid(family, *when)
                continue
            for lits, nodes, node_u in _full_racks(dm, at):
                if nodes < 1:
                    continue  # no node fits: the nodes' own rule
                if by_power:
                    limit_mw = 1000 * thousandths(r.rack.power_kw)
                    dm.add(family, m.add(nodes * v.node_mw + leaf_mw <= limit_mw), *when, *lits)
                elif nodes * node_u + leaf_u > r.rack.rack_units:
                    dm.forbid(family, *when, *lits)


def _heads_in_a_last_rack(dm: DesignModel, family: str, groups: list, hosts: list, caps) -> None:
    """Head nodes in the last rack of a switch model or storage tier (``heads_with``): that rack's
    ``count − per · (racks − 1)`` devices and the head nodes within the class's power (whole
    watts) or rack units (options/racks.py ``hosts_heads``)."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    head = o.head.model
    by_power = family == "rack_power_within_limit"
    for (device, watts, count, racks), host in zip(groups, hosts):
        for r, (power_cap, units_cap) in zip(o.racks, caps(watts, device.rack_units)):
            per = min(power_cap, units_cap)
            rack_lit = v.use_infra_rack[r.index]
            if per < 1:
                dm.forbid(family, host, rack_lit)
                continue
            each, head_each, limit = ((math.ceil(watts), math.ceil(head.power_w), thousandths(r.rack.power_kw))
                                      if by_power else (device.rack_units, head.rack_units, r.rack.rack_units))
            dm.add(family, m.add(each * (count - per * racks + per) + head_each * n.heads <= limit), host, rack_lit)


def rack_power_within_limit(dm: DesignModel) -> None:
    """Power per rack (``_rack_capacity``), and the rack class cools what it holds: a server of
    another cooling than the nodes' class, or a switch model, storage tier or head node of another
    cooling than the network and storage racks' class (the nodes' with mixed racks), is not racked
    in it."""
    _rack_capacity(dm, "rack_power_within_limit")
    o, v = dm.options, dm.vars
    switches = dm.problem.catalog.catalog.by_id("switches")
    for lit, configs in dm.node_groups(lambda c: c.server.cooling):
        for r in o.racks:
            if not rack_cools(r.rack, configs[0].server.cooling):
                dm.forbid("rack_power_within_limit", lit, v.use_rack[r.index])
    tiers = dm.problem.catalog.catalog.by_id("storage")
    held = [(switches[sid].cooling, count) for sid, count in dm.net.racked_of.items()]
    held += [(tiers[t].cooling, count) for t, count in dm.net.units_of.items()]
    if o.head is not None:
        held.append((o.head.model.cooling, dm.net.heads))
    for cooling, count in held:
        for r in o.racks:
            if not rack_cools(r.rack, cooling):
                dm.add("rack_power_within_limit", dm.model.add(count == 0), v.use_infra_rack[r.index])


def rack_units_within_limit(dm: DesignModel) -> None:
    _rack_capacity(dm, "rack_units_within_limit")


def racks_available(dm: DesignModel) -> None:
    v, m = dm.vars, dm.model
    dm.add("racks_available", m.add(v.racks <= dm.problem.instance.site.max_racks))
    dm.forbid_violations("racks_available")


def site_power_within_limit(dm: DesignModel) -> None:
    cap = dm.problem.instance.site.power_cap_kw
    if cap is not None:
        dm.add("site_power_within_limit", dm.model.add(dm.vars.power_w["total"] <= thousandths(cap)))
