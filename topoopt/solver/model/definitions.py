"""The definitions of the model: they tie the variables together and are always on.

Exactly one option of each kind, the switch counts of each tier, links and whole cable assemblies,
provisioned power and rack units, and cost per kind. They define quantities; they are not rules
(the families are), so an explanation never relaxes them.
"""

from __future__ import annotations

import math

from topoopt.options.conventions import whole_units
from topoopt.options.racks import rack_cools
from topoopt.options.tables import MAX_NODES, NEAR_BALANCED
from topoopt.solver.model.core import COUNT_MAX, DesignModel
from topoopt.solver.model.in_rack import in_rack_costs
from topoopt.solver.model.integers import ceil_div, thousandths
from topoopt.solver.model.mixed_racks import define_mixed_racks


def choices(dm: DesignModel) -> None:
    """Exactly one option of each kind; derived Booleans for tiers, fabric classes, speeds."""
    m, o, v = dm.model, dm.options, dm.vars
    for literals in (v.use_config, v.use_fabric, v.use_rack, v.use_infra_rack, v.use_storage, list(v.use_speed.values()),
                     list(v.use_rails_per_leaf.values())):
        m.add_exactly_one(literals)
    # A leaf carries whole rail groups: g divides the rails (without a fabric there are no leaves: g = 1).
    for rails, rails_lit in dm.rails_groups():
        for g, g_lit in v.use_rails_per_leaf.items():
            if rails % g:
                m.add_bool_or([rails_lit.Not(), g_lit.Not()])
    m.add_implication(v.use_tier[0], v.use_rails_per_leaf[1])
    units = list(zip(dm.units.reps, v.use_fabric))
    for tier, lit in v.use_tier.items():
        m.add(sum(x for f, x in units if f.tiers == tier) == lit)
    m.add(v.multi_tier == v.use_tier[2] + v.use_tier[3])
    for cls, lit in v.use_class.items():
        m.add(sum(x for f, x in units if f.perf_class == cls) == lit)
    for sid, lit in v.use_switch.items():
        m.add(sum(x for f, x in units if f.tiers > 0 and f.switch.id == sid) == lit)
        m.add(v.switches_of[sid] == 0).only_enforce_if(lit.Not())
    # 2 tiers: one shape, with no more uplinks than the base allows (FabricUnits).
    m.add(sum(v.use_shape.values()) == v.use_tier[2])
    m.add(sum(f.up * x for f, x in ((dm.units.shapes[s], x) for s, x in v.use_shape.items()))
          <= sum(dm.units.most_uplinks[i] * x for i, x in enumerate(v.use_fabric) if i in dm.units.most_uplinks))
    for c in o.node_configs:
        lit = v.use_config[c.index]
        m.add_implication(lit, v.use_speed[c.speed_key])
        m.add(v.gpus == c.server.gpus_per_node * v.nodes).only_enforce_if(lit)
        m.add(v.endpoints == c.rails * v.nodes).only_enforce_if(lit)


def fabric_shape(dm: DesignModel) -> None:
    """Switch counts per tier for each fabric option (the rules on them are families); 1 tier has
    one switch per rail group (leaf_ports_cover_endpoints).

    A fabric has at least one leaf: implied by the families, and stated apart so that it
    holds when an explanation relaxes them (a fabric without switches is no way out).
    """
    m, v = dm.model, dm.vars
    m.add(v.leaves >= 1).only_enforce_if(v.use_tier[0].Not())
    for var in (v.leaves, v.leaves_per_rail, v.spines, v.cores, v.pods):
        m.add(var == 0).only_enforce_if(v.use_tier[0])
    for switch_id, lit in dm.fabric_groups(lambda f: f.switch.id if f.tiers else None, "switch_key"):
        m.add(v.switches_of[switch_id] == v.leaves + v.spines + v.cores).only_enforce_if(lit)
    for var, value in ((v.leaves_per_rail, 1), (v.spines, 0)):
        m.add(var == value).only_enforce_if(v.use_tier[1])
    for tier in (1, 2):
        m.add(v.cores == 0).only_enforce_if(v.use_tier[tier])
        m.add(v.pods == 1).only_enforce_if(v.use_tier[tier])
    # 2 tiers: the spines as a small variable, one literal per value, and the pair counts a
    # near-balanced shape needs (linear under the literal of each spine count).
    m.add(v.spines == v.spines_2_tier).only_enforce_if(v.use_tier[2])
    m.add(v.spines_2_tier == 1).only_enforce_if(v.use_tier[2].Not())
    m.add(sum(v.use_spines.values()) == v.use_tier[2])
    for pairs in (v.rail_spine_pairs, v.leaf_spine_pairs):  # meaningless outside 2 tiers: fixed
        m.add(pairs == 0).only_enforce_if(v.use_tier[2].Not())
    for spines, lit in v.use_spines.items():
        m.add(v.spines_2_tier == spines).only_enforce_if(lit)
        m.add(v.rail_spine_pairs == spines * v.leaves_per_rail).only_enforce_if(lit)
        m.add(v.leaf_spine_pairs == spines * v.leaves).only_enforce_if(lit)


def cables(dm: DesignModel) -> None:
    """Links per class, one part per class in use, and whole assemblies.

    Node–leaf: ``(r/h) × ceil(n·h / q)`` with ``h = gcd(q, g)``: an assembly of ``q`` links takes
    ``h`` rails of ``q/h`` nodes (a leaf carries ``g`` rails of whole nodes, split over the leaves
    in whole assemblies); ``rails × ceil(n / q)`` with one rail per leaf. Leaf–spine and spine–core: per device
    pair for a one-piece cable, by cages filled for a transceiver kit
    (:meth:`_switch_link_assemblies`).
    """
    m, o, v = dm.model, dm.options, dm.vars
    m.add(v.links["node-leaf"] == v.endpoints).only_enforce_if(v.use_tier[0].Not())
    m.add(v.links["node-leaf"] == 0).only_enforce_if(v.use_tier[0])
    m.add(v.links["leaf-spine"] == 0).only_enforce_if(v.multi_tier.Not())
    for up, lits in dm.leaf_groups(lambda f: f.up, None, lambda up, _: up, lambda f: f.up, "uplinks_key"):
        m.add(v.links["leaf-spine"] == v.leaves * up).only_enforce_if(lits)
    for up, lit in dm.fabric_groups(lambda f: f.spine_up if f.tiers == 3 else 0, "spine_uplinks_key"):
        m.add(v.links["spine-core"] == v.spines * up).only_enforce_if(lit)
    in_use = {"node-leaf": 1 - v.use_tier[0], "leaf-spine": v.multi_tier, "spine-core": v.use_tier[3]}
    total = {cls: dm.int_var(COUNT_MAX, f"assemblies_{cls}") for cls in o.parts}
    for cls, parts in o.parts.items():
        m.add(sum(v.use_part[cls, p.index] for p in parts) == in_use[cls])
        for p in parts:
            lit, assemblies = v.use_part[cls, p.index], v.assemblies[cls, p.index]
            m.add(assemblies == total[cls]).only_enforce_if(lit)
            m.add(assemblies == 0).only_enforce_if(lit.Not())
    node_leaf_assemblies(dm, total["node-leaf"])
    switch_link_assemblies(dm, total)


def node_leaf_assemblies(dm: DesignModel, total) -> None:
    """Node–leaf assemblies: one of ``q`` links takes ``h = gcd(q, g)`` rails of ``a = q/h`` nodes (a
    leaf carries ``g`` rails of whole nodes), so ``r/h`` shares of the rails each need ``A ≥
    ceil(n/a)`` — exactly ``n`` at ``a = 1``; at ``a > 1`` family ``port_form_factor_match`` counts
    the whole assemblies each leaf takes (node_leaf.py)."""
    o, v, m = dm.problem.options, dm.vars, dm.model
    per_share = dm.int_var(MAX_NODES * 8, "node_leaf_assemblies_per_share")
    dm.node_leaf_per_share = per_share
    parts: dict[int, list] = {}
    for p in o.parts["node-leaf"]:
        parts.setdefault(p.part.links, []).append(v.use_part["node-leaf", p.index])
    for q, lits in parts.items():
        q_lit = dm.any_of(lits, f"node_leaf_q{q}")
        for g, g_lit in v.use_rails_per_leaf.items():
            h = math.gcd(q, g)
            a = q // h
            if a == 1:
                m.add(per_share == v.nodes).only_enforce_if([q_lit, g_lit])
            else:
                m.add(a * per_share >= v.nodes).only_enforce_if([q_lit, g_lit])
                dm.node_leaf_grains.append((a, [q_lit, g_lit]))
            for rails, rails_lit in dm.rails_groups():
                if rails % g == 0:
                    m.add(total == rails // h * per_share).only_enforce_if([q_lit, g_lit, rails_lit])


def switch_link_assemblies(dm: DesignModel, total: dict) -> None:
    """Assemblies of the leaf–spine and spine–core classes, by the kind of part in use.

    A one-piece cable (DAC, ACC, AOC) joins one pair of devices: ``upper-lower pairs ×
    ceil(links per pair / q)`` (a near-balanced pair has 1 or 2 links: ``leaves·u`` cables of one
    link, else ``leaves·S``). Every part serves a fabric option only when the links that
    must reach one far switch (``links_together``: all ``q`` of a one-piece cable, those of one
    fibre of a kit) divide the links per pair (family ``port_form_factor_match``). A
    transceiver kit's module ports are cabled one by one, so kits are counted by the cages
    their modules fill: ``max(ceil(A / a_ends), ceil(B / b_ends))``
    with ``A`` (``B``) the cages the class fills on the upper (lower) switches, each switch
    filling ``ceil(its links of the class / ports per cage)``. Per switch tier every switch
    carries the same links, except the spines of a part-filled last pod (leaf–spine). The
    ceilings of variable link counts are auxiliary variables shared by the fabric options and
    the kinds of part, so the model's size does not depend on the node count.
    """
    last_pod_cages, core_cages, spine_cages = _upper_cages_per_switch(dm)
    for cls, shape in _class_shapes(dm, last_pod_cages, core_cages, spine_cages).items():
        _class_assemblies(dm, cls, shape, total)


def _ports_per_cage(f) -> int:
    return f.switch.ports_per_cage.get(f.gbps, 1)



def _upper_cages_per_switch(dm: DesignModel) -> tuple:
    """Cages per switch of the upper tier's variable link counts: a spine of the last (possibly
    part-filled) pod (3 tiers), the 2-tier spines (:func:`_two_tier_spine_cages`) and a core."""
    m, v = dm.model, dm.vars
    last_pod_cages = dm.int_var(COUNT_MAX, "leaf_spine_last_pod_spine_cages")
    core_cages = dm.int_var(COUNT_MAX, "spine_core_core_cages")
    for (per_pod, per_pair, ppc), lit in dm.fabric_groups(
            lambda f: (f.leaves_per_pod, f.links_per_leaf_spine, _ports_per_cage(f)) if f.tiers == 3 else None,
            "last_pod_key"):
        links = per_pair * (v.leaves - per_pod * (v.pods - 1))
        m.add(ppc * last_pod_cages >= links).only_enforce_if(lit)
        m.add(ppc * last_pod_cages <= links + ppc - 1).only_enforce_if(lit)
    for (per_pair, ppc), lit in dm.fabric_groups(
            lambda f: (f.links_per_spine_core, _ports_per_cage(f)) if f.tiers == 3 else None, "core_key"):
        m.add(ppc * core_cages >= per_pair * v.pods).only_enforce_if(lit)
        m.add(ppc * core_cages <= per_pair * v.pods + ppc - 1).only_enforce_if(lit)
    return last_pod_cages, core_cages, _two_tier_spine_cages(dm)


def _two_tier_spine_cages(dm: DesignModel):
    """2 tiers: the ``T = leaves·u`` leaf uplinks are dealt round-robin, so ``T mod S`` spines
    carry ``F + 1`` links and the rest ``F = floor(T/S)``; with ``c`` ports per cage the spines
    fill ``S·ceil(F/c) + (T mod S)·[c divides F]`` cages (a busier spine needs one cage more
    exactly when its ``F`` links fill whole cages). Returns that count."""
    m, v = dm.model, dm.vars
    floor_links = dm.int_var(COUNT_MAX, "spine_floor_links")
    extra_links = dm.int_var(COUNT_MAX, "spine_extra_links")
    floor_cages = dm.int_var(COUNT_MAX, "spine_floor_cages")
    spine_cages = dm.int_var(COUNT_MAX * 1024, "spines_floor_cages")
    extra_cages = dm.int_var(COUNT_MAX, "spine_extra_cages")
    whole = m.new_bool_var("spine_floor_fills_cages")
    # Outside 2 tiers these counts mean nothing: fixed, so the search never wanders in them.
    not_two = v.use_tier[2].Not()
    for count in (floor_links, extra_links, floor_cages, spine_cages, extra_cages):
        m.add(count == 0).only_enforce_if(not_two)
    for spines, lit in v.use_spines.items():
        links = v.links["leaf-spine"]
        m.add(spines * floor_links <= links).only_enforce_if(lit)
        m.add(spines * floor_links >= links - spines + 1).only_enforce_if(lit)
        m.add(extra_links == links - spines * floor_links).only_enforce_if(lit)
        m.add(spine_cages == spines * floor_cages).only_enforce_if(lit)
    for (_, ppc), lits in dm.two_tier_groups(lambda f: 0, _ports_per_cage, "spine_cage"):
        m.add(ppc * floor_cages >= floor_links).only_enforce_if(lits)
        m.add(ppc * floor_cages <= floor_links + ppc - 1).only_enforce_if(lits)
        m.add(ppc * floor_cages == floor_links).only_enforce_if([*lits, whole])
        m.add(ppc * floor_cages >= floor_links + 1).only_enforce_if([*lits, whole.Not()])
        m.add(extra_cages == extra_links).only_enforce_if([*lits, whole])
        m.add(extra_cages == 0).only_enforce_if([*lits, whole.Not()])
    return spine_cages + extra_cages


def _class_shapes(dm: DesignModel, last_pod_cages, core_cages, spine_cages) -> dict[str, dict]:
    """Per class: (pairs per lower switch, links of a lower switch), and the cages filled on the
    upper and on the lower switches, as functions of the fabric option. Below a class's tiers no
    part of the class is used, so its counts stay free there."""
    v = dm.vars

    def leaf_spine_upper(spines, full_pod):
        if full_pod is None:  # 2 tiers: floor or ceil of leaves·u / S links per spine
            return spine_cages
        return spines * (full_pod * (v.pods - 1) + last_pod_cages)

    return {
        "leaf-spine": dict(
            lower=v.leaves, tiers=2,
            pairs=lambda f: (f.spines, f.up),
            upper_cages=lambda f: (f.spines, ceil_div(f.leaves_per_pod * f.links_per_leaf_spine, _ports_per_cage(f))
                                   if f.tiers == 3 else None),
            upper_expr=leaf_spine_upper,
            lower_cages=lambda f: ceil_div(f.up, _ports_per_cage(f)),
            # The same keys of a 2-tier option, as (shape key, switch key, combine): dm.leaf_groups.
            two_tier=dict(
                pairs=(lambda f: (f.spines, f.up), None, lambda s, _: s),
                upper_cages=(lambda f: f.spines, None, lambda spines, _: (spines, None)),
                lower_cages=(lambda f: f.up, _ports_per_cage, ceil_div))),
        "spine-core": dict(
            lower=v.spines, tiers=3,
            pairs=lambda f: (f.cores_per_plane, f.cores_per_plane * f.links_per_spine_core),
            upper_cages=lambda f: (f.spines * f.cores_per_plane,),
            upper_expr=lambda cores: cores * core_cages,
            lower_cages=lambda f: ceil_div(f.spine_up, _ports_per_cage(f))),
    }


def _class_assemblies(dm: DesignModel, cls: str, shape: dict, total: dict) -> None:
    """One class's assemblies: per device pair for one-piece cables, by cages for kits."""
    m, o, v = dm.model, dm.options, dm.vars
    # Part literals grouped by what the counting needs: a one-piece cable's links, a kit's ends,
    # the links that must reach one far switch together.
    one_piece: dict[int, list] = {}
    kit_ends: dict[tuple[int, int], list] = {}
    together: dict[int, list] = {}
    for p in o.parts[cls]:
        part, lit = p.part, v.use_part[cls, p.index]
        if part.one_piece:
            one_piece.setdefault(part.links, []).append(lit)
        else:
            kit_ends.setdefault((part.a_ends, part.b_ends), []).append(lit)
        together.setdefault(part.links_together, []).append(lit)
    cables = {q: dm.any_of(lits, f"{cls}_cable_q{q}") for q, lits in one_piece.items()}
    together_lits = {k: dm.any_of(lits, f"{cls}_together{k}") for k, lits in together.items()}
    for (fanout, per_switch), shape_lits in _class_groups(dm, cls, shape, "pairs"):
        near = fanout == NEAR_BALANCED
        # A near-balanced pair has 1 or 2 links: one cable of q ≥ 2 links per pair, q = 1 per link.
        per_pair = (1, 2) if near else (per_switch // fanout,)
        for q, cable in cables.items():
            if near:
                assemblies = v.leaf_spine_pairs if q >= 2 else per_switch * shape["lower"]
            else:
                assemblies = ceil_div(per_pair[0], q) * fanout * shape["lower"]
            m.add(total[cls] == assemblies).only_enforce_if([*shape_lits, cable])
        for links, lit in together_lits.items():
            if any(count % links for count in per_pair):
                # A cable or fibre would be part-filled (ports the port counts do not hold)
                # or shared with links to another switch: ruled out.
                dm.forbid("port_form_factor_match", *shape_lits, lit)
    if kit_ends:
        _kit_assemblies(dm, cls, shape, total, kit_ends)


def _class_groups(dm: DesignModel, cls: str, shape: dict, key: str) -> list[tuple[object, list]]:
    """``(value, literals)`` of the fabric-option key ``shape[key]`` over the options with the
    class's tiers (2-tier options through dm.leaf_groups)."""
    if "two_tier" in shape:
        return dm.leaf_groups(*shape["two_tier"][key], shape[key], f"{cls}_{key}")
    return [(value, [lit]) for value, lit in dm.fabric_groups(
        lambda f: shape[key](f) if f.tiers >= shape["tiers"] else None, f"{cls}_{key}")]


def _kit_assemblies(dm: DesignModel, cls: str, shape: dict, total: dict, kit_ends: dict) -> None:
    """Kits: ceil(cages / ends per kit) at each end, the larger of the two, with the cages the
    class fills on the upper and on the lower switches."""
    m = dm.model
    cages = [dm.int_var(COUNT_MAX, f"{cls}_cages_{end}") for end in ("upper", "lower")]
    for value, lits in _class_groups(dm, cls, shape, "upper_cages"):
        m.add(cages[0] == shape["upper_expr"](*value)).only_enforce_if(lits)
    for per_switch, lits in _class_groups(dm, cls, shape, "lower_cages"):
        m.add(cages[1] == per_switch * shape["lower"]).only_enforce_if(lits)
    by_end = [dm.int_var(COUNT_MAX, f"{cls}_kits_{end}") for end in ("upper", "lower")]
    kits = dm.int_var(COUNT_MAX, f"{cls}_kits")
    m.add_max_equality(kits, by_end)
    for (a_ends, b_ends), lits in kit_ends.items():
        kit = dm.any_of(lits, f"{cls}_kit_{a_ends}_{b_ends}")
        for var, filled, ends in zip(by_end, cages, (a_ends, b_ends)):
            m.add(ends * var >= filled).only_enforce_if(kit)
            m.add(ends * var <= filled + ends - 1).only_enforce_if(kit)
        m.add(total[cls] == kits).only_enforce_if(kit)


def power_and_units(dm: DesignModel) -> None:
    """Provisioned power (W, rounded up) and rack units of nodes, switches, storage units and head
    nodes.

    A node without a fabric draws only its server's power (no compute NICs, no optics); its
    dedicated storage network adds storage NICs and modules (node power classes,
    network_definitions.py). Switches and storage units are counted per model over all networks.
    """
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    for c in o.node_configs:
        m.add(v.rack_units["node"] == c.server.rack_units * v.nodes).only_enforce_if(v.use_config[c.index])
    catalog = dm.problem.catalog.catalog
    switches, tiers = catalog.by_id("switches"), catalog.by_id("storage")
    m.add(v.power_w["switch"] == sum(math.ceil(o.switch_power_w(switches[sid])) * var
                                     for sid, var in n.switches_of.items()))
    m.add(v.rack_units["switch"] == sum(switches[sid].rack_units * var for sid, var in n.switches_of.items()))
    m.add(v.power_w["storage"] == sum(math.ceil(tiers[t].power_w) * var for t, var in n.units_of.items()))
    m.add(v.rack_units["storage"] == sum(tiers[t].rack_units * var for t, var in n.units_of.items()))
    head = o.head.model if o.head else None
    head_w, head_u = (math.ceil(head.power_w), head.rack_units) if head else (0, 0)
    for quantity, each in ((v.power_w, head_w), (v.rack_units, head_u)):
        m.add(quantity["total"] == quantity["node"] + quantity["switch"] + quantity["storage"] + each * n.heads)
    m.add(v.racks == v.compute_racks + v.switch_racks + v.storage_racks)
    dm.slots = define_mixed_racks(dm)
    one_rack_when_everything_fits(dm)
    cable_runs(dm)
    in_rack_costs(dm)


def cable_runs(dm: DesignModel) -> None:
    """Where each compute link class's ends sit (docs/model.md, "Cable runs"): node–leaf in one
    rack when everything is; between switches in one rack when every compute switch is (one rack
    of one model each, or one mixed rack, holds every switch of the compute model), in one row
    when the racks stand in one row (mixed racks, or as many as ``racks_per_row``), across the
    site otherwise."""
    m, v, n = dm.model, dm.vars, dm.net
    together = m.new_bool_var("compute_switches_one_rack")
    m.add(sum(v.use_switch.values()) >= 1).only_enforce_if(together)
    for sid, used in v.use_switch.items():
        # One rack holds them all: the model's own racks are one, or some slot holds every switch.
        holders = [m.new_bool_var(f"switch_racks_one_{sid}")]
        m.add(n.switch_racks_of[sid] <= 1).only_enforce_if([holders[0], v.mixed.Not()])
        m.add(n.switch_racks_of[sid] >= 2).only_enforce_if([holders[0].Not(), v.mixed.Not()])
        m.add(holders[0] == 0).only_enforce_if(v.mixed)
        for i, slot in enumerate(dm.slots):
            holds = m.new_bool_var(f"slot{i}_holds_every_{sid}")
            m.add(slot.switches[sid] >= n.switches_of[sid]).only_enforce_if([holds, v.mixed])
            m.add(slot.switches[sid] <= n.switches_of[sid] - 1).only_enforce_if([holds.Not(), v.mixed])
            m.add(holds == 0).only_enforce_if(v.mixed.Not())
            holders.append(holds)
        m.add_bool_or([together.Not(), used.Not(), *holders])
        for holder in holders:
            m.add_bool_or([together, used.Not(), holder.Not()])
    for cls, at in v.run_at.items():
        m.add_exactly_one(at.values())
        if cls == "node-leaf":
            m.add(at["rack"] == v.single_rack)
            m.add(at["row"] == 0)
            continue
        m.add_bool_or([v.single_rack, together]).only_enforce_if(at["rack"])
        m.add_implication(v.single_rack, at["rack"])
        m.add_implication(together, at["rack"])
        m.add_bool_or([at["rack"], at["row"]]).only_enforce_if(dm.in_one_row)
        m.add_implication(at["row"], dm.in_one_row)


def one_rack_when_everything_fits(dm: DesignModel) -> None:
    """A design whose devices all fit in one rack of the nodes' class, and which that class cools
    (its switches and storage units too), uses that single mixed rack.

    One rack never costs more than several nor draws more power, so this only makes the
    answer unique (free racks would otherwise leave the layout open).
    """
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    switches = dm.problem.catalog.catalog.by_id("switches")

    def using(sid: str) -> list:
        """The option literals that bring a switch of model ``sid`` into the design (compute fabric,
        storage network, management leaves or their aggregation): no new variable, so the search
        keeps its pace (a count literal per model doubled the 405B example's time)."""
        storage = [lit for x, lit in zip(o.storage_nets, n.use_storage_net) if x.switch is not None and x.switch.id == sid]
        management = [lit for x, lit in zip(o.management, n.use_mgmt) if sid in (x.switch.id, x.aggregation.id)]
        return ([v.use_switch[sid]] if sid in v.use_switch else []) + storage + management

    for r in dm.options.racks:
        power_fits, units_fits = m.new_bool_var(f"power_fits_{r.index}"), m.new_bool_var(f"units_fit_{r.index}")
        limit_w = thousandths(r.rack.power_kw)
        m.add(v.power_w["total"] <= limit_w).only_enforce_if(power_fits)
        m.add(v.power_w["total"] >= limit_w + 1).only_enforce_if(power_fits.Not())
        m.add(v.rack_units["total"] <= r.rack.rack_units).only_enforce_if(units_fits)
        m.add(v.rack_units["total"] >= r.rack.rack_units + 1).only_enforce_if(units_fits.Not())
        uncooled = [lit for sid in n.switches_of if not rack_cools(r.rack, switches[sid].cooling) for lit in using(sid)]
        uncooled += [lit for options, literals in ((o.storage, v.use_storage), (o.cold, n.use_cold))
                     for x, lit in zip(options, literals) if x.tier is not None and not rack_cools(r.rack, x.tier.cooling)]
        if o.head is not None and not rack_cools(r.rack, o.head.model.cooling):
            uncooled.append(n.has_heads)
        m.add_bool_or([v.use_rack[r.index].Not(), power_fits.Not(), units_fits.Not(), v.single_rack, *uncooled])


def costs(dm: DesignModel) -> None:
    """Cost per kind at whole-unit prices (unpriced options are ruled out by priced_in_book).

    Compute NICs are bought only for nodes attached to a fabric (kind "server"); storage NICs
    are kind "nic". Switches and storage units are priced per model over all networks; head nodes
    are kind "head".
    """
    m, o, v, n = dm.model, dm.options, dm.vars, dm.net
    for c in o.node_configs:
        lit = v.use_config[c.index]
        m.add(v.cost["server"] == (c.unit_price or 0) * v.nodes).only_enforce_if([lit, v.use_tier[0].Not()])
        m.add(v.cost["server"] == (c.server_price or 0) * v.nodes).only_enforce_if([lit, v.use_tier[0]])
    m.add(v.cost["nic"] == n.cost["storage_nic"])
    price = dm.problem.catalog.price
    m.add(v.cost["switch"] == sum((whole_units(price(sid)) or 0) * var for sid, var in n.switches_of.items()))
    m.add(v.cost["cable"] == sum((p.unit_price or 0) * v.assemblies[cls, p.index]
                                 for cls, ps in o.parts.items() for p in ps)
          + sum(var for kind, var in n.cost.items() if kind != "storage_nic"))
    m.add(v.cost["rack"] == dm.over_racks(lambda r: r.unit_price or 0, "cost_rack"))
    m.add(v.cost["storage"] == sum((whole_units(price(t)) or 0) * var for t, var in n.units_of.items()))
    m.add(v.cost["head"] == (whole_units(price(o.head.model.id)) if o.head else 0) * n.heads)
    m.add(v.total_cost == sum(v.cost.values()))
