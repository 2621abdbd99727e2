"""Cables within one rack (docs/model.md, "Cables within one rack").

In several mixed racks, a one-piece cable longer than ``in_rack_m + slack_m`` (a 30 m AOC) never
runs between two devices of one rack. Where a link class's switch is the only switch of its model
in the design (its *hub*), the model counts what the hub's rack holds and buys those cables as the
part's in-rack twin (options ``in_rack_twins``), which changes the cost by the price difference:

* node–leaf: ``rails / q`` assemblies per node in the hub's rack, when an assembly of ``q`` links
  serves one node (``q`` divides the rails a leaf carries);
* node–storage: the storage ports cabled per node, when an assembly carries one link;
* storage-unit: ``ceil(ports / q)`` assemblies per unit of the tier in the hub's rack (not when
  the hot and the cold tier are one model: the rack's count would not tell them apart).

Anywhere else a rack may hold both ends of such a part's link, the part is ruled out (family
cable_reach, :func:`forbid_coiled`). The counts are per slot, so the model's size stays
independent of the node count.
"""

from __future__ import annotations

from topoopt.options.rules import too_long_in_rack
from topoopt.solver.model.core import COUNT_MAX, Bool, DesignModel, Int, dedicated_options
from topoopt.solver.model.integers import ceil_div


class Hubs:
    """What the rack holding a switch model holds, in several mixed racks, per compute and storage
    switch model: each quantity is defined on first use (most models and tiers need none)."""

    def __init__(self, dm: DesignModel) -> None:
        self.dm = dm
        self._made: dict[tuple, object] = {}

    def _once(self, key: tuple, make):
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]

    def holds(self, sid: str, i: int) -> Bool:
        """Slot ``i`` holds a switch of model ``sid``."""
        def make():
            m, count = self.dm.model, self.dm.slots[i].switches[sid]
            lit = m.new_bool_var(f"slot{i}_holds_{sid}")
            m.add(count >= 1).only_enforce_if(lit)
            m.add(count == 0).only_enforce_if(lit.Not())
            return lit
        return self._once(("holds", sid, i), make)

    def unique(self, sid: str) -> Bool:
        """The design has exactly one switch of the model."""
        def make():
            m, total = self.dm.model, self.dm.net.switches_of[sid]
            lit = m.new_bool_var(f"unique_{sid}")
            m.add(total == 1).only_enforce_if(lit)
            m.add(total != 1).only_enforce_if(lit.Not())
            return lit
        return self._once(("unique", sid), make)

    def held(self, sid: str, lower: str) -> Int:
        """Nodes (``lower="node"``) or units of tier ``lower`` in the model's rack: 0 unless the
        model is unique, in mixed racks."""
        def make():
            dm = self.dm
            count = dm.int_var(COUNT_MAX, f"hub_{lower}_{sid}")
            dm.model.add(count == 0).only_enforce_if(self.unique(sid).Not())
            dm.model.add(count == 0).only_enforce_if(dm.vars.mixed.Not())
            for i, slot in enumerate(dm.slots):
                there = slot.nodes if lower == "node" else slot.units[lower]
                dm.model.add(count == there).only_enforce_if([self.holds(sid, i), self.unique(sid)])
            return count
        return self._once(("held", sid, lower), make)

    def sharing(self, sid: str, lower: str) -> Bool:
        """Some rack holds a switch of the model and a node (``lower="node"``), a unit of tier
        ``lower``, or (``lower="pair"``) a second switch of the model."""
        def make():
            dm = self.dm
            lit = dm.model.new_bool_var(f"{lower}_with_{sid}")
            for i, slot in enumerate(dm.slots):
                if lower == "pair":
                    dm.model.add(slot.switches[sid] <= 1).only_enforce_if(lit.Not())
                    continue
                there = slot.nodes if lower == "node" else slot.units[lower]
                dm.model.add(there == 0).only_enforce_if([self.holds(sid, i), lit.Not()])
            return lit
        return self._once(("sharing", sid, lower), make)


def _counted(dm: DesignModel, name: str, cases: list[tuple[object, list]], zero_when: list[list]) -> Int:
    """A count equal to ``value`` under each case's conditions and 0 under each of ``zero_when``
    (together they cover every design)."""
    count = dm.int_var(COUNT_MAX, name)
    for value, conditions in cases:
        dm.model.add(count == value).only_enforce_if(conditions)
    for conditions in zero_when:
        dm.model.add(count == 0).only_enforce_if(conditions)
    return count


def in_rack_costs(dm: DesignModel) -> None:
    """``cost["in_rack"]``: the twins' price difference over the cables within the hub's rack
    (``dm.in_rack``: the assemblies bought as twins, per link class and part option)."""
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    dm.hubs = hubs = Hubs(dm)
    row = dm.mixed_row
    terms = []
    for p in o.parts["node-leaf"]:
        twin = o.in_rack_twins.get(p.part.id)
        if twin is None:
            continue
        lit, q = v.use_part["node-leaf", p.index], p.part.links
        cases = [(rails // q * hubs.held(sid, "node"), [lit, used, hubs.unique(sid), rails_lit, g_lit, row])
                 for sid, used in v.use_switch.items() for rails, rails_lit in dm.rails_groups()
                 for g, g_lit in v.use_rails_per_leaf.items() if g % q == 0]
        zero = [[lit.Not()], [row.Not()], *([used, hubs.unique(sid).Not()] for sid, used in v.use_switch.items()),
                *([g_lit] for g, g_lit in v.use_rails_per_leaf.items() if g % q)]
        near = _counted(dm, f"in_rack_node_leaf_{p.index}", cases, zero)
        dm.in_rack["node-leaf", p.part.id] = near
        terms.append(((twin.unit_price or 0) - (p.unit_price or 0)) * near)
    terms += _node_storage(dm, row) + _unit_links(dm, row)
    m.add(n.cost["in_rack"] == sum(terms))


def _node_storage(dm: DesignModel, row) -> list:
    """Node–storage twins: the hub's nodes × the storage ports cabled per node."""
    o = dm.options
    terms = []
    for s, lit in zip(*dedicated_options(dm)):
        part = s.part("node-storage", "row")
        twin = o.in_rack_twins.get(part.part.id) if part and part.part.links == 1 else None
        if twin is None:
            continue
        sid = s.switch.id
        unique = dm.hubs.unique(sid)
        near = _counted(dm, f"in_rack_node_storage_{s.index}",
                        [(s.ports_per_node * dm.hubs.held(sid, "node"), [lit, unique, row])],
                        [[lit.Not()], [unique.Not()], [row.Not()]])
        dm.in_rack["node-storage", s.index] = near
        terms.append(((twin.unit_price or 0) - (part.unit_price or 0)) * near)
    return terms


def _unit_links(dm: DesignModel, row) -> list:
    """Storage-unit twins: the hub's units of the tier × assemblies per unit."""
    o = dm.options
    terms = []
    for key, attach, converged in dm.attachments:
        for kind, options, literals in _tier_tables(dm):
            for option, lit in zip(options, literals):
                link = o.unit_links[key, option.tier.id]
                part = link.part["row"]
                twin = o.in_rack_twins.get(part.part.id) if part else None
                if twin is None:
                    continue
                t, per_unit = option.tier.id, ceil_div(option.tier.network_ports, part.part.links)
                shared = _shared_tier(dm, kind, t)
                conditions = [attach, lit, dm.hubs.unique(key[0]), row, *(x.Not() for x in shared)]
                near = _counted(dm, f"in_rack_{kind}_{option.tier.id}_{len(dm.in_rack)}",
                                [(per_unit * dm.hubs.held(key[0], t), conditions)], [[c.Not()] for c in conditions])
                dm.in_rack["storage-unit", kind, key, converged, t] = near
                terms.append(((twin.unit_price or 0) - (part.unit_price or 0)) * near)
    return terms


def _tier_tables(dm: DesignModel) -> list[tuple[str, list, list]]:
    """(kind, tier options, literals) of the hot and the cold tier."""
    o, v, n = dm.options, dm.vars, dm.net
    cold = [(c, lit) for c, lit in zip(o.cold, n.use_cold) if c.tier]
    return [("hot", o.storage, v.use_storage), ("cold", [c for c, _ in cold], [lit for _, lit in cold])]


def _shared_tier(dm: DesignModel, kind: str, tier: str) -> list:
    """Literals of the other kind's options of the same tier model (hot and cold of one model)."""
    other = "cold" if kind == "hot" else "hot"
    options, literals = next((opts, lits) for k, opts, lits in _tier_tables(dm) if k == other)
    return [lit for option, lit in zip(options, literals) if option.tier.id == tier]


def forbid_coiled(dm: DesignModel) -> None:
    """Family cable_reach in several mixed racks: a part too long for a rack is ruled out wherever a
    rack may hold both ends of its link and the hub's twin does not cover them."""
    o, v, n, hubs = dm.options, dm.vars, dm.net, dm.hubs
    instance, row, family = dm.problem.instance, dm.mixed_row, "cable_reach"

    def long(part) -> bool:
        return part is not None and too_long_in_rack(part.part, instance)

    for cls, parts in o.parts.items():
        for p in (p for p in parts if long(p)):
            lit, twin = v.use_part[cls, p.index], o.in_rack_twins.get(p.part.id)
            for sid, used in v.use_switch.items():
                if cls != "node-leaf":
                    dm.forbid(family, lit, used, hubs.sharing(sid, "pair"), row)
                    continue
                for g, g_lit in v.use_rails_per_leaf.items():
                    covered = [hubs.unique(sid).Not()] if twin is not None and g % p.part.links == 0 else []
                    dm.forbid(family, lit, used, hubs.sharing(sid, "node"), row, g_lit, *covered)
    for s, lit in zip(*dedicated_options(dm)):
        sid, node_part = s.switch.id, s.part("node-storage", "row")
        if long(node_part):
            covered = node_part.part.links == 1 and node_part.part.id in o.in_rack_twins
            dm.forbid(family, lit, hubs.sharing(sid, "node"), row, *([hubs.unique(sid).Not()] if covered else []))
        if long(s.part("storage-leaf-spine", "row")):
            dm.forbid(family, lit, hubs.sharing(sid, "pair"), row)
        if s.three_tier_links and long(s.core_part["row"]):
            dm.forbid(family, lit, n.three_tiers, hubs.sharing(sid, "pair"), row)
    for key, attach, _ in dm.attachments:
        for kind, options, literals in _tier_tables(dm):
            for option, lit in zip(options, literals):
                part = o.unit_links[key, option.tier.id].part["row"]
                if not long(part):
                    continue
                with_units = hubs.sharing(key[0], option.tier.id)
                if part.part.id not in o.in_rack_twins:
                    dm.forbid(family, attach, lit, with_units, row)
                    continue
                dm.forbid(family, attach, lit, with_units, row, hubs.unique(key[0]).Not())
                for shared in _shared_tier(dm, kind, option.tier.id):
                    dm.forbid(family, attach, lit, with_units, row, shared)
    # A management leaf's rack holds devices it serves (its PDUs at least).
    for x, lit in zip(o.management, n.use_mgmt):
        if long(x.part["row"]):
            dm.forbid(family, lit, row)
        if long(x.uplink_part["row"]):
            dm.forbid(family, lit, n.mgmt_multi, row)
