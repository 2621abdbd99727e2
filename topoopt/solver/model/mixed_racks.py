"""Mixed racks: a small design may put any mix of nodes, switches, storage units and head nodes in
each of at most ``MIXED_RACKS_MAX`` racks of its class (docs/model.md, "Racks and power").

Each rack is a *slot* with its own counts, so the model's size depends on the slot limit and the
device models, never on the node count. Slots are used in order and hold non-increasing node
counts, which removes the symmetry of swapping two racks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from topoopt.options.racks import MIXED_RACKS_MAX
from topoopt.solver.model.core import Bool, DesignModel, Int
from topoopt.solver.model.integers import thousandths


@dataclass
class Slot:
    """One mixed rack: whether it is used, its nodes, their power (mW), its switches and storage
    units by model id, and its head nodes."""

    used: Bool
    nodes: Int
    nodes_mw: Int
    switches: dict[str, Int]
    units: dict[str, Int]
    heads: Int


def define_mixed_racks(dm: DesignModel) -> list[Slot]:
    """The slots, and what ties them to the design: with ``mixed``, the slots hold every node,
    switch, storage unit and head node, the design's racks are the slots used (all counted as
    compute racks) and no rack is homogeneous; without it every slot is empty."""
    m, v, n = dm.model, dm.vars, dm.net
    # A rack never holds more devices than it has units (every device takes at least one): small
    # domains keep the search out of counts no rack can hold.
    count_max = max((r.rack.rack_units for r in dm.options.racks), default=1)
    slots = []
    for i in range(MIXED_RACKS_MAX):
        nodes = dm.int_var(count_max, f"slot{i}_nodes")
        nodes_mw = dm.int_var(10**16, f"slot{i}_nodes_mw")
        m.add_multiplication_equality(nodes_mw, [nodes, v.node_mw])
        slots.append(Slot(
            used=m.new_bool_var(f"slot{i}_used"), nodes=nodes, nodes_mw=nodes_mw,
            switches={sid: dm.int_var(count_max, f"slot{i}_{sid}") for sid in n.switches_of},
            units={t: dm.int_var(count_max, f"slot{i}_{t}") for t in n.units_of},
            heads=dm.int_var(count_max, f"slot{i}_heads")))
    for before, after in zip(slots, slots[1:]):
        m.add_implication(after.used, before.used)
        m.add(before.nodes >= after.nodes)
    m.add_implication(slots[0].used, v.mixed)
    m.add_implication(v.mixed, slots[0].used)
    for slot in slots:
        # An unused slot holds nothing (every device takes rack units, so the units rule says it
        # too; stated here it holds when an explanation relaxes that family).
        for var in (slot.nodes, *slot.switches.values(), *slot.units.values(), slot.heads):
            m.add(var == 0).only_enforce_if(slot.used.Not())
    m.add(sum(s.nodes for s in slots) == v.nodes).only_enforce_if(v.mixed)
    for sid, total in n.switches_of.items():
        m.add(sum(s.switches[sid] for s in slots) == total).only_enforce_if(v.mixed)
    for t, total in n.units_of.items():
        m.add(sum(s.units[t] for s in slots) == total).only_enforce_if(v.mixed)
    m.add(sum(s.heads for s in slots) == n.heads).only_enforce_if(v.mixed)
    m.add(v.compute_racks == sum(s.used for s in slots)).only_enforce_if(v.mixed)
    for nodes_class, infra_class in zip(v.use_rack, v.use_infra_rack):  # one class holds them all
        m.add(infra_class == nodes_class).only_enforce_if(v.mixed)
    for var in (*n.switch_racks_of.values(), *n.unit_racks_of.values(), n.head_racks):
        m.add(var == 0).only_enforce_if(v.mixed)
    # One rack is the single mixed rack of earlier schemas: the tie rule prefers it.
    m.add(v.single_rack == 1).only_enforce_if([v.mixed, slots[1].used.Not()])
    m.add_implication(v.single_rack, v.mixed)
    m.add_implication(v.single_rack, slots[1].used.Not())
    return slots


def slot_limits(dm: DesignModel, family: str) -> None:
    """Each used slot within its rack class's power (mW: nodes exact, switches and units at whole
    W) or rack units."""
    m, o, v = dm.model, dm.options, dm.vars
    catalog = dm.problem.catalog.catalog
    switches, tiers = catalog.by_id("switches"), catalog.by_id("storage")
    switch_mw = {sid: 1000 * math.ceil(o.switch_power_w(switches[sid])) for sid in dm.net.switches_of}
    unit_mw = {t: 1000 * math.ceil(tiers[t].power_w) for t in dm.net.units_of}
    switch_u = {sid: switches[sid].rack_units for sid in dm.net.switches_of}
    unit_u = {t: tiers[t].rack_units for t in dm.net.units_of}
    # Per slot, and summed over the slots used (implied, but it gives the search the total at once:
    # proving that one more node fits no packing took seconds slot by slot). The total's node
    # power is the nodes' own, one product that bounds the node count: over the slots' sum the
    # most nodes 8 racks hold took 84 s to prove on one worker.
    totals = Slot(used=None, nodes=v.nodes, nodes_mw=dm.net.nodes_mw,
                  switches=dm.net.switches_of, units=dm.net.units_of, heads=dm.net.heads)
    head = o.head.model if o.head else None
    head_u, head_mw = (head.rack_units, 1000 * math.ceil(head.power_w)) if head else (0, 0)
    for slot in (*dm.slots, totals):
        others_u = (sum(switch_u[sid] * var for sid, var in slot.switches.items())
                    + sum(unit_u[t] * var for t, var in slot.units.items()) + head_u * slot.heads)
        others_mw = (sum(switch_mw[sid] * var for sid, var in slot.switches.items())
                     + sum(unit_mw[t] * var for t, var in slot.units.items()) + head_mw * slot.heads)
        # A slot holds one rack; the totals as many as the slots used.
        racks, when = (1, slot.used) if slot is not totals else (v.compute_racks, v.mixed)
        for r in o.racks:
            rack_lit = v.use_rack[r.index]
            if family == "rack_power_within_limit":
                limit_mw = 1000 * thousandths(r.rack.power_kw)
                dm.add(family, m.add(slot.nodes_mw + others_mw <= limit_mw * racks), rack_lit, when)
                continue
            for lit, configs in dm.node_groups(lambda c: c.server.rack_units):
                units = configs[0].server.rack_units
                dm.add(family, m.add(units * slot.nodes + others_u <= r.rack.rack_units * racks), rack_lit, lit, when)
