"""Rack slots (docs/model.md, "Racks and power"): racks holding any mix of devices, at most
``MIXED_RACKS_MAX`` of them.

* **Mixed racks**: a small design may put all its nodes, switches, storage units and head nodes in
  slots of the nodes' class.
* **Shared racks**: otherwise the slots hold no nodes; each switch model, storage tier and the
  head nodes take racks of their own (racks.py) and may put a share, less than a rack of it, in
  one of the slots, in the network and storage racks' class.

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
    compute racks) and no rack is homogeneous; without it the slots hold no nodes and are the
    shared racks (racks.py ties each model's own racks and its share of the slots to its count)."""
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
    m.add_implication(v.mixed, slots[0].used)
    for slot in slots:
        # An unused slot holds nothing (every device takes rack units, so the units rule says it
        # too; stated here it holds when an explanation relaxes that family).
        for var in (slot.nodes, *slot.switches.values(), *slot.units.values(), slot.heads):
            m.add(var == 0).only_enforce_if(slot.used.Not())
        m.add(slot.nodes == 0).only_enforce_if(v.mixed.Not())
    m.add(sum(s.nodes for s in slots) == v.nodes).only_enforce_if(v.mixed)
    shares = [(n.switches_of[sid], [s.switches[sid] for s in slots]) for sid in n.switches_of]
    shares += [(n.units_of[t], [s.units[t] for s in slots]) for t in n.units_of]
    shares.append((n.heads, [s.heads for s in slots]))
    for total, held in shares:  # each model's share, beside its own racks (racks.py)
        m.add(sum(held) == total).only_enforce_if(v.mixed)
        m.add(sum(held) <= total)

    _one_slot_each(dm, slots, [held for _, held in shares])
    m.add(v.compute_racks == sum(s.used for s in slots)).only_enforce_if(v.mixed)
    m.add(n.shared_racks == sum(s.used for s in slots)).only_enforce_if(v.mixed.Not())
    m.add(n.shared_racks == 0).only_enforce_if(v.mixed)
    for nodes_class, infra_class in zip(v.use_rack, v.use_infra_rack):  # one class holds them all
        m.add(infra_class == nodes_class).only_enforce_if(v.mixed)
    for var in (*n.switch_racks_of.values(), *n.unit_racks_of.values(), n.head_racks):
        m.add(var == 0).only_enforce_if(v.mixed)
    # One rack is the single mixed rack of earlier schemas: the tie rule prefers it.
    m.add(v.single_rack == 1).only_enforce_if([v.mixed, slots[1].used.Not()])
    m.add_implication(v.single_rack, v.mixed)
    m.add_implication(v.single_rack, slots[1].used.Not())
    return slots


def _one_slot_each(dm: DesignModel, slots: list[Slot], shares: list[list]) -> None:
    """Shared racks: each model's share sits in one of them, the ``i``-th model's in one of the
    first ``i + 1`` (which removes the symmetry of swapping two racks). A share is less than a
    rack of its model (racks.py), so it fits one; the model then chooses which models share a
    rack."""
    m, v = dm.model, dm.vars
    for i, held in enumerate(shares):
        within = held[:i + 1]
        where = [m.new_bool_var(f"shared_{i}_in_slot{j}") for j in range(len(within))]
        m.add_exactly_one(where).only_enforce_if(v.mixed.Not())
        for var, here in zip(within, where):
            m.add(var == 0).only_enforce_if([here.Not(), v.mixed.Not()])
        for var in held[i + 1:]:
            m.add(var == 0).only_enforce_if(v.mixed.Not())


def _rack_units(dm: DesignModel, slot: Slot):
    """The rack units a slot's switches, storage units and head nodes fill (not its nodes)."""
    catalog = dm.problem.catalog.catalog
    switches, tiers = catalog.by_id("switches"), catalog.by_id("storage")
    head_u = dm.options.head.model.rack_units if dm.options.head else 0
    return (sum(switches[sid].rack_units * var for sid, var in slot.switches.items())
            + sum(tiers[t].rack_units * var for t, var in slot.units.items()) + head_u * slot.heads)


def slot_limits(dm: DesignModel, family: str) -> None:
    """Each used slot within its rack class's power (mW: nodes exact, switches and units at whole
    W) or rack units: the network and storage racks' class, which is the nodes' with mixed racks."""
    m, o, v = dm.model, dm.options, dm.vars
    catalog = dm.problem.catalog.catalog
    switches, tiers = catalog.by_id("switches"), catalog.by_id("storage")
    switch_mw = {sid: 1000 * math.ceil(o.switch_power_w(switches[sid])) for sid in dm.net.switches_of}
    unit_mw = {t: 1000 * math.ceil(tiers[t].power_w) for t in dm.net.units_of}
    # Per slot, and summed over the slots used (implied, but it gives the search the total at once:
    # proving that one more node fits no packing took seconds slot by slot). The total's node
    # power is the nodes' own, one product that bounds the node count: over the slots' sum the
    # most nodes 8 racks hold took 84 s to prove on one worker.
    totals = Slot(used=None, nodes=v.nodes, nodes_mw=dm.net.nodes_mw,
                  switches=dm.net.switches_of, units=dm.net.units_of, heads=dm.net.heads)
    # Likewise the shared racks' contents over the shared racks.
    shared = Slot(used=None, nodes=0, nodes_mw=0,
                  switches={sid: sum(s.switches[sid] for s in dm.slots) for sid in dm.net.switches_of},
                  units={t: sum(s.units[t] for s in dm.slots) for t in dm.net.units_of},
                  heads=sum(s.heads for s in dm.slots))
    head = o.head.model if o.head else None
    head_mw = 1000 * math.ceil(head.power_w) if head else 0
    # And every switch, storage unit and head node over the network, storage and shared racks.
    infra = Slot(used=None, nodes=0, nodes_mw=0, switches=dm.net.switches_of, units=dm.net.units_of,
                 heads=dm.net.heads)
    for slot in (*dm.slots, totals, shared, infra):
        others_u = _rack_units(dm, slot)
        others_mw = (sum(switch_mw[sid] * var for sid, var in slot.switches.items())
                     + sum(unit_mw[t] * var for t, var in slot.units.items()) + head_mw * slot.heads)
        # A slot holds one rack; the totals as many as the slots used.
        racks, when = {id(totals): (v.compute_racks, [v.mixed]), id(shared): (dm.net.shared_racks, [v.mixed.Not()]),
                       id(infra): (v.switch_racks + v.storage_racks, [v.mixed.Not()])}.get(id(slot), (1, [slot.used]))
        # A slot is a mixed rack of the nodes' class or a shared rack of the network and storage
        # racks' class: one class with mixed racks, but stated on the nodes' literal, which the
        # search decides first (the tiny instance's proof: 126 conflicts, 804 on the other).
        classes = [(v.use_infra_rack, [])] if slot is infra or slot is shared else [(v.use_rack, [])] \
            if slot is totals else [(v.use_rack, [v.mixed]), (v.use_infra_rack, [v.mixed.Not()])]
        for literals, mode in classes:
            for r in o.racks:
                conditions = [literals[r.index], *when, *mode]
                if family == "rack_power_within_limit":
                    limit_mw = 1000 * thousandths(r.rack.power_kw)
                    dm.add(family, m.add(slot.nodes_mw + others_mw <= limit_mw * racks), *conditions)
                    continue
                for lit, configs in dm.node_groups(lambda c: c.server.rack_units):
                    units = configs[0].server.rack_units
                    dm.add(family, m.add(units * slot.nodes + others_u <= r.rack.rack_units * racks), lit, *conditions)
