"""Fabric rules: rail groups, leaf, spine and core counts and ports, uplinks and oversubscription.

The design's free fabric choices are its tiers, switch, rails per leaf ``g``, leaves per rail group
``x``, and the uplinks: uplinks per leaf ``u`` over ``S ≤ u`` spines (2 tiers, ``floor(u/S)`` or
``ceil(u/S)`` links per leaf-spine pair) or
the leaf split's ``u``, links per pair ``m`` and cores per plane ``C`` (3 tiers); with a converged
storage network, where its units attach. Everything else is recomputed (``derive.fabric_counts``)
and compared with the record, and every switch's ports in use are compared with its radix ``k``.
With growth (``site.provision_fabric_for_nodes: N`` beyond the nodes built) the spine and core
ports and the uplinks are checked again at ``N`` (``CheckContext.growth_counts``).
"""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import RAIL_CHOICES, THREE_TIER_LINKS_PER_PAIR, oversubscription_class, split_down_for_up
from topoopt.checking.switch_groups import switch_group_violations
from topoopt.checking.text import close, num
from topoopt.models.design import Violation

TIER_OF_FAMILY = {
    "leaf_ports_cover_endpoints": ("leaf", "node-leaf"),
    "spine_ports_cover_uplinks": ("spine", "leaf-spine"),
    "core_ports_cover_uplinks": ("core", "spine-core"),
}
PERF_CLASSES = (1, 2, 3)
"""Oversubscription classes ``ρ = ceil(d/u)`` the performance model knows."""


def _field(out: list[Violation], family: str, name: str, recorded, expected, why: str = "") -> None:
    """Compare one recorded fabric field with its recomputed value."""
    if recorded != expected:
        because = f" ({why})" if why else ""
        out.append(Violation(family=family, item=f"fabric.{name}",
                             detail=f"recorded {_show(recorded)}, the rules give {_show(expected)}{because}"))


def _show(value) -> str:
    return str(value) if isinstance(value, bool) else num(value)


def _groups(ctx: CheckContext, family: str, count: int, ports_used: int, links: int) -> list[Violation]:
    """The tier's switch group and link group agree with the recomputed counts (absent when zero)."""
    tier, link_class = TIER_OF_FAMILY[family]
    out = switch_group_violations(ctx, family, tier, count, ports_used, ctx.design.fabric.switch, "compute")
    link_groups = [g for g in ctx.design.links if g.between == link_class]
    if len(link_groups) > 1:
        out.append(Violation(family=family, item=f"{link_class} links", detail=f"{len(link_groups)} groups for one class"))
    if not link_groups:
        if links:
            out.append(Violation(family=family, item=f"{link_class} links", detail=f"missing; {num(links)} links needed"))
    elif link_groups[0].count != links:
        out.append(Violation(family=family, item=f"{link_class} links",
                             detail=f"{num(link_groups[0].count)} recorded, {num(links)} needed"))
    return out


def _rail_groups(ctx: CheckContext, family: str, out: list[Violation]) -> None:
    """``g ∈ {1, 2, 4, 8}`` divides the rails; several groups make 1 tier rail-only and 2 or 3
    tiers rail-optimized."""
    d, f, r = ctx.design, ctx.design.fabric, ctx.rails
    g = f.rails_per_leaf
    if f.tiers >= 1 and (g not in RAIL_CHOICES or r % g):
        out.append(Violation(family=family, item="fabric.rails_per_leaf",
                             detail=f"{g} rails per leaf: a leaf carries 1, 2, 4 or 8 rails dividing the node's {r}"))
    several = f.tiers >= 1 and g < r
    rail_optimized, rail_only = several and f.tiers >= 2, several and f.tiers == 1
    why = f"{r} rails per node in groups of {g}, {f.tiers} tier(s)"
    for where, recorded, expected in (("fabric.rail_optimized", f.rail_optimized, rail_optimized),
                                      ("design.rail_optimized", d.rail_optimized, rail_optimized),
                                      ("fabric.rail_only", f.rail_only, rail_only)):
        if recorded != expected:
            out.append(Violation(family=family, item=where, detail=f"recorded {recorded}, the rules give {expected} ({why})"))


def _provisioned(ctx: CheckContext, family: str, out: list[Violation]) -> None:
    """The record's ``provisioned_nodes`` is the instance's growth target (0 without one); growth
    on 0 or 1 tier: the nodes' ports at ``N`` fit the fabric that has no spine layer to grow."""
    f, target = ctx.design.fabric, ctx.provisioned_nodes
    _field(out, family, "provisioned_nodes", f.provisioned_nodes, target or 0,
           "site.provision_fabric_for_nodes" if target else "no growth asked")
    if not ctx.growing:
        return
    n_big = ctx.provisioned_nodes
    if f.tiers == 0:
        out.append(Violation(family=family, item="fabric",
                             detail=f"growth to {num(n_big)} nodes: a single node without a compute fabric cannot grow"))
    elif f.tiers == 1 and ctx.radix >= 1:
        units = ctx.unit_slots if ctx.converged else 0
        if f.rails_per_leaf * n_big + units > ctx.radix:
            plus = f" + {num(units)} storage-unit ports" if units else ""
            out.append(Violation(family=family, item=f"leaf switch ({f.switch})",
                                 detail=f"growth to {num(n_big)} nodes × {f.rails_per_leaf} rails{plus} = "
                                        f"{num(f.rails_per_leaf * n_big + units)} ports > {ctx.radix} ports of one switch"))


def leaf_ports_cover_endpoints(ctx: CheckContext) -> list[Violation]:
    """The node ports are covered: ``g ∈ {1, 2, 4, 8}`` rails per leaf dividing the rails ``r``;
    1 tier: one switch per rail group (``r/g``; rail-only when several), each with ``g·n ≤ k``
    node ports; 2 and 3 tiers: ``x ≤ n`` leaves per rail group (no empty leaf), ``(r/g)·x``
    compute leaves (plus converged storage leaves, ``storage_fabric_ports_cover``), the fullest
    holding ``d = g·ceil(n/x)`` down-ports in use (the record's ``leaf_down_ports``) with ``d + u ≤
    k`` and, in 3 tiers, ``d`` within the split's ``D``; several rail groups make 2 or 3 tiers
    rail-optimized; only a single node goes without a compute fabric (tiers 0). With growth, 0 or 1
    tier must hold the ``N`` nodes too."""
    family = "leaf_ports_cover_endpoints"
    out: list[Violation] = []
    d, f = ctx.design, ctx.design.fabric
    _field(out, family, "tiers", d.tiers, f.tiers, "design.tiers")
    _rail_groups(ctx, family, out)
    _provisioned(ctx, family, out)
    c, k, n, g = ctx.counts, ctx.radix, ctx.nodes, f.rails_per_leaf
    if f.tiers >= 2 and f.leaves_per_rail < 1:
        out.append(Violation(family=family, item="fabric.leaves_per_rail", detail=f"{f.tiers} tiers with no leaf per rail group"))
    if c is None:
        return out  # no leaf per rail group, or the switch has no ports at this speed (nic_supports_interconnect)
    groups = f"{ctx.rails} rails / {g} per leaf = {c.rail_groups} rail group(s)"
    if f.tiers == 0:
        if n != 1:
            out.append(Violation(family=family, item="fabric",
                                 detail=f"{num(n)} nodes without a compute fabric; only a single node needs none"))
        for name in ("leaves", "leaves_per_rail", "leaf_down_ports"):
            _field(out, family, name, getattr(f, name), 0, "no compute fabric")
    elif f.tiers == 1:
        if c.down > k:
            out.append(Violation(family=family, item=f"leaf switch ({f.switch})",
                                 detail=f"{num(n)} nodes × {g} rails = {num(c.down)} ports > {k} ports of one switch"))
        _field(out, family, "leaves", f.leaves, c.leaves, f"one switch per rail group: {groups}")
        _field(out, family, "leaves_per_rail", f.leaves_per_rail, 1, "one switch per rail group")
        _field(out, family, "leaf_down_ports", f.leaf_down_ports, c.down, f"{g} rails × {num(n)} nodes")
    else:
        x = f.leaves_per_rail
        if x > n:
            out.append(Violation(family=family, item="fabric.leaves_per_rail",
                                 detail=f"{num(x)} leaves per rail group > {num(n)} nodes: a leaf would carry no node"))
        _field(out, family, "leaf_down_ports", f.leaf_down_ports, c.down,
               f"fullest leaf: {g} rails × ceil({num(n)} nodes / {num(x)} leaves per group)")
        storage = f" + {c.storage_leaves} leaves of storage units" if c.storage_leaves else ""
        _field(out, family, "leaves", f.leaves, c.leaves, f"{c.rail_groups} rail groups × {num(x)} leaves{storage}")
        if c.ports_per_leaf > k:
            out.append(Violation(family=family, item=f"leaf switches ({f.switch})",
                                 detail=f"{c.down} down-ports in use + {c.up} up = {c.ports_per_leaf} ports > {k}"))
        top = ctx.leaf_down_max
        if f.tiers == 3 and top is not None and c.down > top:
            out.append(Violation(family=family, item=f"leaf switches ({f.switch})",
                                 detail=f"{c.down} down-ports in use > the split's {top} down-ports ({c.up} up)"))
    out += _groups(ctx, family, c.leaves, c.leaf_ports_used, c.node_leaf_links)
    return out


def spine_ports_cover_uplinks(ctx: CheckContext) -> list[Violation]:
    """Spines take every leaf uplink within their ``k`` ports: 2 tiers the busiest spine's
    ``ceil(leaves·u / S) ≤ k`` (with growth, also for the ``(r/g)·x_N`` leaves of ``N`` nodes); 3 tiers pods of ``P =
    floor(k/2)/m`` leaves and ``Q = u/m`` spines, ``pods = ceil(leaves/P)``, a spine using ``P·m``
    down-ports and ``u2 = k − floor(k/2)`` up-ports."""
    family = "spine_ports_cover_uplinks"
    out: list[Violation] = []
    f, c, k = ctx.design.fabric, ctx.counts, ctx.radix
    if c is None:
        return out
    _field(out, family, "spines", f.spines, c.spines,
           "design choice" if f.tiers == 2 else f"{c.pods} pods × {c.spines_per_pod} spines")
    pods_why = {0: "no compute fabric", 3: f"ceil({c.leaves} leaves / {c.leaves_per_pod} per pod)"}.get(f.tiers, "one pod")
    _field(out, family, "pods", f.pods, c.pods, pods_why)
    _field(out, family, "spines_per_pod", f.spines_per_pod, c.spines_per_pod)
    _field(out, family, "leaves_per_pod", f.leaves_per_pod, c.leaves_per_pod)
    if f.tiers == 2 and f.spines < 1:
        out.append(Violation(family=family, item=f"spine switches ({f.switch})", detail="2 tiers with no spine"))
    if f.tiers >= 2 and c.ports_per_spine > k:
        how = f"ceil({num(c.leaves)} leaves × {c.up} uplinks / {c.spines} spines) = " if f.tiers == 2 else ""
        out.append(Violation(family=family, item=f"spine switches ({f.switch})",
                             detail=f"{how}{num(c.ports_per_spine)} ports in use per spine > {k}"))
    grown = ctx.growth_counts
    if f.tiers == 2 and grown is not None and grown.ports_per_spine > k:
        out.append(Violation(family=family, item=f"spine switches ({f.switch})", detail=(
            f"growth to {num(ctx.provisioned_nodes)} nodes: {grown.rail_groups} rail groups × "
            f"{num(grown.leaves_per_rail)} leaves{_plus_storage(grown)} = {num(grown.leaves)} leaves: ceil("
            f"{num(grown.leaves)} × {grown.up} uplinks / {grown.spines} spines) = {num(grown.ports_per_spine)} "
            f"ports per spine > {k}")))
    out += _groups(ctx, family, c.spines, c.spine_ports_used, c.leaf_spine_links)
    return out


def _plus_storage(c) -> str:
    return f" + {c.storage_leaves} storage leaves" if c.storage_leaves else ""


def core_ports_cover_uplinks(ctx: CheckContext) -> list[Violation]:
    """3 tiers: ``Q`` planes of ``C`` cores; a core has ``pods · u2/C ≤ k`` ports in use (with
    growth, also for the pods of ``N`` nodes)."""
    family = "core_ports_cover_uplinks"
    out: list[Violation] = []
    f, c, k = ctx.design.fabric, ctx.counts, ctx.radix
    if c is None:
        return out
    if f.tiers < 3:
        _field(out, family, "cores_per_plane", f.cores_per_plane, 0, "no core tier")
    _field(out, family, "cores", f.cores, c.cores,
           f"{c.spines_per_pod} planes × {f.cores_per_plane} cores" if f.tiers == 3 else "no core tier")
    if f.tiers == 3:
        if f.cores_per_plane < 1:
            out.append(Violation(family=family, item=f"core switches ({f.switch})", detail="3 tiers with no core"))
        else:
            if c.ports_per_core > k:
                out.append(Violation(family=family, item=f"core switches ({f.switch})",
                                     detail=f"{c.pods} pods × {num(c.ports_per_core // c.pods)} links = "
                                            f"{num(c.ports_per_core)} ports > {k}"))
            grown = ctx.growth_counts
            if grown is not None and grown.ports_per_core > k:
                out.append(Violation(family=family, item=f"core switches ({f.switch})", detail=(
                    f"growth to {num(ctx.provisioned_nodes)} nodes: {num(grown.leaves)} leaves in {grown.pods} pods × "
                    f"{num(grown.ports_per_core // grown.pods)} links = {num(grown.ports_per_core)} ports > {k}")))
    out += _groups(ctx, family, c.cores, c.core_ports_used, c.spine_core_links)
    return out


def oversubscription_within_limit(ctx: CheckContext) -> list[Violation]:
    """The fullest leaf's down-ports in use per uplink, ``d/u``, is at most ``max_oversubscription``
    and its class ``ρ = ceil(d/u)`` is 1, 2 or 3 (the performance model's classes); the design
    reports ``d/u`` to 4 decimals (1 without a spine layer). In 3 tiers ``u`` is the uplinks of a
    ratio-1, 2 or 3 split ``(D, u)``. With growth the fullest leaf of ``N`` nodes, ``d_N``, stays
    within ``ρ·u`` and the limit."""
    family = "oversubscription_within_limit"
    out: list[Violation] = []
    d, f, k, c = ctx.design, ctx.design.fabric, ctx.radix, ctx.counts
    limit = ctx.instance.constraints.max_oversubscription
    if f.tiers <= 1:
        _field(out, family, "leaf_up_ports", f.leaf_up_ports, 0, "no spine layer")
        if not close(d.oversubscription, 1.0):
            out.append(Violation(family=family, item="design",
                                 detail=f"oversubscription {num(d.oversubscription)} ≠ 1 without a spine layer"))
        return out
    if f.tiers == 3 and k >= 1 and split_down_for_up(k, f.leaf_up_ports) is None:
        out.append(Violation(family=family, item="leaf split",
                             detail=f"{f.leaf_up_ports} uplinks per leaf is no ratio-1, 2 or 3 split of {k} ports"))
    if (c.up if c is not None else f.leaf_up_ports) < 1:
        out.append(Violation(family=family, item="leaf split", detail=f"{f.tiers} tiers with no leaf uplink"))
    if c is None or c.up < 1:
        return out
    down, up = c.down, c.up
    ratio = down / up
    if not close(d.oversubscription, round(ratio, 4), rel=0, abs_=1e-4):  # records keep 4 decimals
        out.append(Violation(family=family, item="design",
                             detail=f"oversubscription {num(d.oversubscription)} ≠ {down} down-ports in use / {up} up "
                                    f"= {num(round(ratio, 4))}"))
    # The limit bounds the actual d/u (the family's rule); e.g. 53 down / 27 up = 1.96:1 is within 1.97.
    if down > limit * up * (1 + 1e-9):
        out.append(Violation(family=family, item="leaf split",
                             detail=f"{down} down-ports in use / {up} up = {num(ratio)}:1 > max {num(limit)}"))
    rho = oversubscription_class(down, up)
    if rho not in PERF_CLASSES:
        out.append(Violation(family=family, item="leaf split",
                             detail=f"{down} down-ports in use / {up} up: class ceil({num(ratio)}) = {rho}; the "
                                    f"performance model knows 1, 2 and 3"))
    grown = ctx.growth_counts
    if grown is not None:
        if grown.down > rho * up:
            out.append(Violation(family=family, item="leaf split", detail=(
                f"growth to {num(ctx.provisioned_nodes)} nodes: the fullest of {num(grown.leaves_per_rail)} leaves per "
                f"rail group has {grown.down} down-ports in use > ρ {rho} × {up} up")))
        elif grown.down > limit * up * (1 + 1e-9):
            out.append(Violation(family=family, item="leaf split", detail=(
                f"growth to {num(ctx.provisioned_nodes)} nodes: {grown.down} down-ports in use / {up} up = "
                f"{num(grown.down / up)}:1 > max {num(limit)}")))
    return out


def uplinks_balanced(ctx: CheckContext) -> list[Violation]:
    """Every leaf reaches every spine of its pod: 2 tiers ``u ≤ floor(k/2)`` uplinks over ``S``
    spines dividing them, or near-balanced over ``u/2 < S < u`` (1 or 2 links per pair; the
    record's ``links_per_leaf_spine`` is ``floor(u/S)``); 3 tiers ``m ∈ {1, 2}`` dividing ``u``; every spine reaches every
    core of its plane with ``m2 = u2/C`` links (``C`` divides ``u2 = k − floor(k/2)``). No more
    uplinks than the ports in use need, to a whole number of links per spine: ``x·(u − S + 1) ≤
    g·n`` over the compute leaves (``Q`` for ``S`` in 3 tiers), waived with growth. A 2-tier
    storage network likewise: ``S`` storage spines divide the ``floor(k/2)`` uplinks of a storage
    leaf."""
    family = "uplinks_balanced"
    out: list[Violation] = []
    f, c, k = ctx.design.fabric, ctx.counts, ctx.radix
    if f.tiers == 2:
        s, up = f.spines, f.leaf_up_ports
        if s < 1 and up:
            out.append(Violation(family=family, item="leaf-spine links",
                                 detail=f"{up} uplinks per leaf and no spine to spread them over"))
        if s > up:
            out.append(Violation(family=family, item="leaf-spine links",
                                 detail=f"{s} spines > {up} uplinks per leaf: a leaf would miss a spine"))
        elif s >= 1 and up % s and 2 * s <= up:
            out.append(Violation(family=family, item="leaf-spine links", detail=(
                f"{up} uplinks per leaf do not divide over {s} spines: uneven pairs only with 1 or 2 links each "
                f"({up}/2 < spines < {up})")))
        if s >= 1:
            _field(out, family, "links_per_leaf_spine", f.links_per_leaf_spine, up // s,
                   f"floor({up} uplinks / {s} spines), the fewest links of a pair")
        if k >= 2 and up > k // 2:
            out.append(Violation(family=family, item="leaf-spine links",
                                 detail=f"{up} uplinks per leaf > floor({k}/2) = {k // 2}"))
    m = f.links_per_leaf_spine
    if f.tiers == 3 and (m not in THREE_TIER_LINKS_PER_PAIR or f.leaf_up_ports % m):
        out.append(Violation(family=family, item="leaf-spine links",
                             detail=f"{m} links per leaf-spine pair: 3 tiers take 1 or 2 dividing the "
                                    f"{f.leaf_up_ports} uplinks per leaf"))
    if f.tiers == 3 and k and f.cores_per_plane >= 1 and (k - k // 2) % f.cores_per_plane:
        out.append(Violation(family=family, item="spine-core links",
                             detail=f"{k - k // 2} spine uplinks do not divide evenly over {f.cores_per_plane} cores per plane"))
    net = ctx.storage_net
    if not ctx.converged and net.tiers == 2 and ctx.storage_radix >= 2:
        up = ctx.storage_leaf_uplinks
        if net.spines >= 1 and up % net.spines:
            out.append(Violation(family=family, item="storage-leaf-spine links",
                                 detail=f"{up} uplinks per storage leaf do not divide evenly over {net.spines} storage spines"))
    if c is None:
        return out
    if f.tiers >= 2 and c.up >= 1 and c.spines_per_pod >= 1 and not ctx.growing:
        # R1: leaf-spine links ≤ node-leaf links + leaves·(S − 1) over the compute leaves.
        s, x, g, n = c.spines_per_pod, c.leaves_per_rail, f.rails_per_leaf, ctx.nodes
        if x * (c.up - s + 1) > g * n:
            name = "spines" if f.tiers == 2 else "spines per pod"
            out.append(Violation(family=family, item="leaf uplinks", detail=(
                f"{num(x)} leaves per rail group × ({c.up} uplinks − {s} {name} + 1) = {num(x * (c.up - s + 1))} > "
                f"{g} rails × {num(n)} nodes = {num(g * n)}: more uplinks than the ports in use need")))
    _field(out, family, "spine_up_ports", f.spine_up_ports, c.spine_up_ports,
           f"{k} − {k // 2} spine down-ports" if f.tiers == 3 else "no core tier")
    if c.links_per_spine_core is not None:
        _field(out, family, "links_per_spine_core", f.links_per_spine_core, c.links_per_spine_core)
    if f.tiers <= 1:
        _field(out, family, "links_per_leaf_spine", f.links_per_leaf_spine, 0, "no spine layer")
    return out


RULES = {
    "leaf_ports_cover_endpoints": leaf_ports_cover_endpoints,
    "spine_ports_cover_uplinks": spine_ports_cover_uplinks,
    "core_ports_cover_uplinks": core_ports_cover_uplinks,
    "oversubscription_within_limit": oversubscription_within_limit,
    "uplinks_balanced": uplinks_balanced,
}

