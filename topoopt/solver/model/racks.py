"""The rack and site families: power and rack units per rack, racks available, site power."""

from __future__ import annotations

from topoopt.options.racks import devices_per_rack_by_power, devices_per_rack_by_units, rack_cools
from topoopt.solver.model.core import DesignModel
from topoopt.solver.model.integers import thousandths
from topoopt.solver.model.mixed_racks import slot_limits


def _rack_capacity(dm: DesignModel, family: str) -> None:
    """Homogeneous racks, each family owning its bound: compute racks = ceil(nodes / nodes per
    rack), per distinct node power or rack units, in the nodes' class; per switch model (over all
    networks), storage tier and the head nodes, a share ``shared < per`` in the shared racks and
    ``ceil((count − shared) / per)`` racks of its own (``per`` the fewer a rack holds by power or
    by units), in the network and storage racks' class.

    A small design may instead use mixed racks, each within its class; shared and mixed racks are
    the slots of mixed_racks.py.
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
    # Switches, storage units and head nodes, per model: its own racks, and a share in shared racks.
    groups = [(switches[sid], o.switch_power_w(switches[sid]), count, n.switch_racks_of[sid],
               sum(slot.switches[sid] for slot in dm.slots)) for sid, count in n.switches_of.items()]
    groups += [(tiers[t], tiers[t].power_w, count, n.unit_racks_of[t], sum(slot.units[t] for slot in dm.slots))
               for t, count in n.units_of.items()]
    if o.head is not None:
        groups.append((o.head.model, o.head.model.power_w, n.heads, n.head_racks, sum(slot.heads for slot in dm.slots)))
    for device, watts, count, racks, shared in groups:
        for r, (power_cap, units_cap) in zip(o.racks, caps(watts, device.rack_units)):
            rack_lit = v.use_infra_rack[r.index]
            cap = power_cap if by_power else units_cap
            if cap < 1:
                dm.add(family, m.add(count == 0), rack_lit)
                continue
            dm.add(family, m.add(cap * racks + shared >= count), rack_lit)
            if cap == min(power_cap, units_cap):  # the binding bound also fixes the ceiling exactly
                dm.add(family, m.add(cap * racks + shared <= count + cap - 1), rack_lit)
                dm.add(family, m.add(shared <= cap - 1), rack_lit, several)  # less than a rack of it
    slot_limits(dm, family)


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
    held = [(switches[sid].cooling, count) for sid, count in dm.net.switches_of.items()]
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
