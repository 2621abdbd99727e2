"""The compute fabric's families: leaf, spine and core ports cover what they connect, within the
allowed oversubscription, every switch reaching every switch above it alike, uplinks sized to the
ports in use (docs/model.md, "Fabric")."""

from __future__ import annotations

import math

from topoopt.options.tables import NEAR_BALANCED, near_balanced_spines
from topoopt.solver.model.core import DesignModel
from topoopt.solver.model.integers import ceil_div

FAMILY_LEAVES = "leaf_ports_cover_endpoints"


def leaf_room(up: int, radix: int) -> int:
    """The most down-ports a leaf with ``up`` uplinks may use (3-tier options fix theirs: ``f.down``)."""
    return radix - up


def leaf_ports_cover_endpoints(dm: DesignModel) -> None:
    """0 tiers: one node. 1 tier: ``g·n ≤ k`` on each of the ``r/g`` switches. 2 and 3 tiers:
    ``x·floor(D/g) ≥ n`` leaves per rail group, none empty (``x ≤ n``); leaves ``= (r/g)·x`` plus
    the leaves of converged storage units."""
    v, m = dm.vars, dm.model
    dm.add(FAMILY_LEAVES, m.add(v.nodes == 1), v.use_tier[0])
    for radix, lit in dm.fabric_groups(lambda f: f.radix if f.tiers == 1 else None, "single_switch_radix"):
        for g, g_lit in v.use_rails_per_leaf.items():
            dm.add(FAMILY_LEAVES, m.add(g * v.nodes <= radix), lit, g_lit)
    for down, lits in dm.leaf_groups(lambda f: f.up, lambda f: f.radix, leaf_room, lambda f: f.down,
                                     "leaf_down_ports"):
        for g, g_lit in v.use_rails_per_leaf.items():
            per_leaf = down // g
            if per_leaf < 1:
                dm.forbid(FAMILY_LEAVES, *lits, g_lit)
            else:
                dm.add(FAMILY_LEAVES, m.add(per_leaf * v.leaves_per_rail >= v.nodes), *lits, g_lit)
    dm.add(FAMILY_LEAVES, m.add(v.leaves_per_rail <= v.nodes), v.multi_tier)
    # Converged storage adds compute_storage_leaves for the storage units (storage_fabric_ports_cover).
    for rails, rails_lit in dm.rails_groups():
        for g, g_lit in v.use_rails_per_leaf.items():
            if rails % g == 0:
                groups = rails // g
                dm.add(FAMILY_LEAVES, m.add(v.leaves == groups * v.leaves_per_rail + dm.net.compute_storage_leaves),
                       rails_lit, g_lit, v.use_tier[0].Not())


def spine_ports_cover_uplinks(dm: DesignModel) -> None:
    """2 tiers: the leaves' uplinks fit the spines' ports, ``leaves·u ≤ S·k`` (a spine carries
    ``floor`` or ``ceil`` of ``leaves·u / S``; for the provisioned nodes' leaves too).
    3 tiers: pods = ceil(leaves / P)."""
    v, m = dm.vars, dm.model
    for (up, radix), lits in dm.two_tier_groups(lambda f: f.up, lambda f: f.radix, "leaf_spine_ports"):
        dm.add("spine_ports_cover_uplinks", m.add(v.leaves * up <= v.spines_2_tier * radix), *lits)
    for p, lit in dm.fabric_groups(lambda f: f.leaves_per_pod if f.tiers == 3 else None, "pod_leaves"):
        dm.add("spine_ports_cover_uplinks", m.add(p * v.pods >= v.leaves), lit)
        dm.add("spine_ports_cover_uplinks", m.add(p * v.pods <= v.leaves + p - 1), lit)
    if dm.problem.instance.site.provision_fabric_for_nodes is None:
        return
    groups = dm.two_tier_groups(lambda f: f.up, lambda f: f.radix, "growth_spines")
    for (up, radix), lits, grown, conditions in growth_leaves(
            dm, [(((u, b), leaf_room(u, b)), lits) for (u, b), lits in groups]):
        # The storage leaves built now and the node leaves of the provisioned nodes share the spines.
        dm.add("spine_ports_cover_uplinks",
               m.add(up * dm.net.compute_storage_leaves <= v.spines_2_tier * radix - up * grown), *lits, *conditions)


def core_ports_cover_uplinks(dm: DesignModel) -> None:
    """3 tiers: pods × links per spine-core pair ≤ k (for the provisioned nodes' pods too)."""
    for (links, radix), lit in dm.fabric_groups(
            lambda f: (f.links_per_spine_core, f.radix) if f.tiers == 3 else None, "spine_core_ports"):
        dm.add("core_ports_cover_uplinks", dm.model.add(dm.vars.pods * links <= radix), lit)
    groups = dm.fabric_groups(lambda f: ((f.links_per_spine_core, f.radix, f.leaves_per_pod), f.down)
                              if f.tiers == 3 else None, "growth_cores")
    for (links, radix, pod), lits, grown, conditions in growth_leaves(dm, [(k, [x]) for k, x in groups]):
        dm.add("core_ports_cover_uplinks",
               dm.model.add(dm.net.compute_storage_leaves <= pod * (radix // links) - grown), *lits, *conditions)


def growth_leaves(dm: DesignModel, groups: list[tuple[object, list]]) -> list[tuple]:
    """With ``site.provision_fabric_for_nodes = N``: for each ``((value, D), literals)`` of
    ``groups`` (``D`` the most down-ports a leaf may use), rails per node and rails per leaf,
    ``(value, literals, node leaves at N nodes, conditions)``: ``(r/g)·ceil(N / floor(D/g))``
    leaves (docs/model.md, "Growth")."""
    provisioned = dm.problem.instance.site.provision_fabric_for_nodes
    if provisioned is None:
        return []
    out = []
    for (value, down), lits in groups:
        for rails, rails_lit in dm.rails_groups():
            for g, g_lit in dm.vars.use_rails_per_leaf.items():
                if rails % g == 0 and down // g >= 1:
                    grown = rails // g * ceil_div(provisioned, down // g)
                    out.append((value, lits, grown, (rails_lit, g_lit)))
    return out


def oversubscription_within_limit(dm: DesignModel) -> None:
    """The fullest leaf's down-ports in use ``d = g·ceil(n/x)`` are in the option's class ρ,
    ``(ρ−1)·u < d ≤ ρ·u``, and within the cap: ``x·floor(min(ρ, cap)·u/g) ≥ n`` and
    ``n > x·floor((ρ−1)·u/g)`` (options whose whole class is above the cap: options/rules.py)."""
    dm.forbid_violations("oversubscription_within_limit")
    v, m = dm.vars, dm.model
    cap = dm.problem.instance.constraints.max_oversubscription
    provisioned = dm.problem.instance.site.provision_fabric_for_nodes
    for (ratio, up, down), lits in dm.leaf_groups(
            lambda f: f.up, lambda f: (f.ratio, f.radix), lambda up, base: (base[0], up, leaf_room(up, base[1])),
            lambda f: (f.ratio, f.up, f.down), "leaf_class"):
        for g, g_lit in v.use_rails_per_leaf.items():
            most = math.floor(min(ratio, cap) * up / g + 1e-9)
            below = (ratio - 1) * up // g
            if most < 1:
                dm.forbid("oversubscription_within_limit", *lits, g_lit)
                continue
            dm.add("oversubscription_within_limit", m.add(most * v.leaves_per_rail >= v.nodes), *lits, g_lit)
            if provisioned is None:
                if below:
                    dm.add("oversubscription_within_limit", m.add(below * v.leaves_per_rail <= v.nodes - 1),
                           *lits, g_lit)
            elif down // g >= 1:
                # Provisioned for growth: the class is the fullest leaf's at N nodes.
                per_leaf = ceil_div(provisioned, ceil_div(provisioned, down // g))
                if not below < per_leaf <= most:
                    dm.forbid("oversubscription_within_limit", *lits, g_lit)


def uplink_excess(f) -> int | None:
    """A leaf's uplinks beyond one per spine, plus one: R1 allows ``x·(u − S + 1) ≤ g·n`` (None for
    a near-balanced shape, whose ``S`` is a variable: :func:`uplinks_balanced`)."""
    return None if f.tiers == 2 and f.spines == NEAR_BALANCED else f.up - f.spines + 1


def uplinks_balanced(dm: DesignModel) -> None:
    """Every leaf reaches every spine: 2 tiers ``S`` dividing ``u`` (``u/S`` links per pair) or,
    near-balanced, ``u/2 < S < u`` chosen by the model (1 or 2 links per pair); 3 tiers Q per pod,
    cores = Q × C;
    and no more uplinks than the ports in use need: ``x·(u − S + 1) ≤ g·n`` (Q for S in 3 tiers),
    waived when the fabric is provisioned for growth."""
    v, m = dm.vars, dm.model
    for (shape, _), lits in dm.two_tier_groups(lambda f: (f.spines, f.up), None, "spines_2_tiers"):
        spines, up = shape
        if spines != NEAR_BALANCED:
            dm.add("uplinks_balanced", m.add(v.spines_2_tier == spines), *lits)
            continue
        near = near_balanced_spines(up)
        dm.add("uplinks_balanced", m.add(v.spines_2_tier >= near[0]), *lits)
        dm.add("uplinks_balanced", m.add(v.spines_2_tier <= near[-1]), *lits)
        if dm.problem.instance.site.provision_fabric_for_nodes is None:
            for g, g_lit in v.use_rails_per_leaf.items():  # R1 with the spines a variable
                dm.add("uplinks_balanced", m.add((up + 1) * v.leaves_per_rail - v.rail_spine_pairs <= g * v.nodes),
                       *lits, g_lit)
    for spines, lit in dm.fabric_groups(lambda f: f.spines if f.tiers == 3 else None, "spines_per_pod"):
        dm.add("uplinks_balanced", m.add(v.spines == spines * v.pods), lit)
    for cores, lit in dm.fabric_groups(lambda f: f.spines * f.cores_per_plane if f.tiers == 3 else None, "cores"):
        dm.add("uplinks_balanced", m.add(v.cores == cores), lit)
    if dm.problem.instance.site.provision_fabric_for_nodes is not None:
        return
    for value, lits in dm.leaf_groups(uplink_excess, None, lambda s, _: s, uplink_excess, "uplink_excess"):
        if value is None:
            continue
        for g, g_lit in v.use_rails_per_leaf.items():
            dm.add("uplinks_balanced", m.add(value * v.leaves_per_rail <= g * v.nodes), *lits, g_lit)


def rail_only_allowed(dm: DesignModel) -> None:
    """1 tier with fewer rails per switch than per node (rail-only) only when the instance allows it."""
    if dm.problem.instance.constraints.allow_rail_only:
        return
    v = dm.vars
    for rails, rails_lit in dm.rails_groups():
        for g, g_lit in v.use_rails_per_leaf.items():
            if g < rails:
                dm.forbid("rail_only_allowed", v.use_tier[1], rails_lit, g_lit)
