"""Fabric rules: leaf, spine and core counts and ports, the leaf port split, balanced uplinks.

The design's free fabric choices are its tiers, switch, leaf split ``(d, u)``, spines (2 tiers) and
cores per plane (3 tiers); everything else is recomputed (``derive.fabric_counts``) and compared
with the record, and every switch's ports in use are compared with its radix ``k``.
"""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import THREE_TIER_LINKS_PER_PAIR, split_ratio
from topoopt.checking.switch_groups import switch_group_violations
from topoopt.checking.text import close, num
from topoopt.models.design import Violation

TIER_OF_FAMILY = {
    "leaf_ports_cover_endpoints": ("leaf", "node-leaf"),
    "spine_ports_cover_uplinks": ("spine", "leaf-spine"),
    "core_ports_cover_uplinks": ("core", "spine-core"),
}


def _field(out: list[Violation], family: str, name: str, recorded: float, expected: float, why: str = "") -> None:
    """Compare one recorded fabric field with its recomputed value."""
    if recorded != expected:
        because = f" ({why})" if why else ""
        out.append(Violation(family=family, item=f"fabric.{name}",
                             detail=f"recorded {num(recorded)}, the rules give {num(expected)}{because}"))


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


def leaf_ports_cover_endpoints(ctx: CheckContext) -> list[Violation]:
    """One switch holds every node port (``E ≤ k``), or ``ceil(n/d)`` leaves per rail do (plus,
    with a converged storage network, the leaves of storage units: ``storage_fabric_ports_cover``),
    and no leaf uses more than ``k`` ports; rails > 1 make a multi-tier fabric rail-optimized; only
    a single node goes without a compute fabric (tiers 0)."""
    family = "leaf_ports_cover_endpoints"
    out: list[Violation] = []
    d, f = ctx.design, ctx.design.fabric
    _field(out, family, "tiers", d.tiers, f.tiers, "design.tiers")
    # Rail i of every node lands on leaf group i; a single switch has no leaf groups to spread over.
    rail_optimized = ctx.rails > 1 and f.tiers > 1
    why = f"{ctx.rails} rails per node, {f.tiers} tier(s)"
    for where, recorded in (("fabric.rail_optimized", f.rail_optimized), ("design.rail_optimized", d.rail_optimized)):
        if recorded != rail_optimized:
            out.append(Violation(family=family, item=where, detail=f"recorded {recorded}, the rules give {rail_optimized} ({why})"))
    c, k = ctx.counts, ctx.radix
    if f.tiers > 0 and f.leaf_down_ports < 1:
        out.append(Violation(family=family, item="fabric.leaf_down_ports", detail=f"{f.tiers} tier(s) with no leaf down-port"))
    if c is None:
        return out  # no leaf down-port, or the switch has no ports at this speed (nic_supports_interconnect)
    if f.tiers == 0:
        if ctx.nodes != 1:
            out.append(Violation(family=family, item="fabric",
                                 detail=f"{num(ctx.nodes)} nodes without a compute fabric; only a single node needs none"))
        for name in ("leaves", "leaves_per_rail", "leaf_down_ports"):
            _field(out, family, name, getattr(f, name), 0, "no compute fabric")
    elif f.tiers == 1 and c.endpoints > k:
        out.append(Violation(family=family, item=f"leaf switch ({f.switch})",
                             detail=f"{num(ctx.nodes)} nodes × {ctx.rails} rails = {num(c.endpoints)} ports > {k} ports of one switch"))
    if f.tiers > 1:
        why = f"ceil({num(ctx.nodes)} nodes / {f.leaf_down_ports} down-ports)"
        _field(out, family, "leaves_per_rail", f.leaves_per_rail, c.leaves_per_rail, why)
        storage = f" + {c.storage_leaves} leaves of storage units" if c.storage_leaves else ""
        _field(out, family, "leaves", f.leaves, c.leaves, f"{ctx.rails} rails × {why}{storage}")
        if c.ports_per_leaf > k:
            out.append(Violation(family=family, item=f"leaf switches ({f.switch})",
                                 detail=f"{f.leaf_down_ports} down + {f.leaf_up_ports} up = {c.ports_per_leaf} ports > {k}"))
    elif f.tiers == 1:
        _field(out, family, "leaves", f.leaves, 1, "one switch")
        _field(out, family, "leaves_per_rail", f.leaves_per_rail, 1, "one switch")
    out += _groups(ctx, family, c.leaves, c.leaf_ports_used, c.node_leaf_links)
    return out


def spine_ports_cover_uplinks(ctx: CheckContext) -> list[Violation]:
    """Spines take every leaf uplink within their ``k`` ports: 2 tiers ``leaves · u/S ≤ k``; 3 tiers
    pods of ``P = floor(k/2)/m`` leaves and ``Q = u/m`` spines, ``pods = ceil(leaves/P)``, a spine
    using ``P·m`` down-ports and ``u2 = k − floor(k/2)`` up-ports."""
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
        out.append(Violation(family=family, item=f"spine switches ({f.switch})",
                             detail=f"{num(c.ports_per_spine)} ports in use per spine > {k}"))
    out += _groups(ctx, family, c.spines, c.spine_ports_used, c.leaf_spine_links)
    return out


def core_ports_cover_uplinks(ctx: CheckContext) -> list[Violation]:
    """3 tiers: ``Q`` planes of ``C`` cores; a core has ``pods · u2/C ≤ k`` ports in use."""
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
        elif c.ports_per_core > k:
            out.append(Violation(family=family, item=f"core switches ({f.switch})",
                                 detail=f"{c.pods} pods × {num(c.ports_per_core // c.pods)} links = {num(c.ports_per_core)} ports > {k}"))
    out += _groups(ctx, family, c.cores, c.core_ports_used, c.spine_core_links)
    return out


def oversubscription_within_limit(ctx: CheckContext) -> list[Violation]:
    """The leaf split is the split ``d = floor(k·ρ/(1+ρ))``, ``u = ceil(d/ρ)`` of a ratio ρ ∈ {1, 2, 3},
    and ``d/u ≤ max_oversubscription``; the design reports ``d/u`` (1 for a single switch)."""
    family = "oversubscription_within_limit"
    out: list[Violation] = []
    d, f, k = ctx.design, ctx.design.fabric, ctx.radix
    limit = ctx.instance.constraints.max_oversubscription
    if f.tiers <= 1:
        _field(out, family, "leaf_up_ports", f.leaf_up_ports, 0, "no spine layer")
        if not close(d.oversubscription, 1.0):
            out.append(Violation(family=family, item="design",
                                 detail=f"oversubscription {num(d.oversubscription)} ≠ 1 without a spine layer"))
        return out
    if f.leaf_up_ports < 1:
        out.append(Violation(family=family, item="leaf split", detail=f"{f.tiers} tiers with no leaf uplink"))
        return out
    ratio_now = f.leaf_down_ports / f.leaf_up_ports
    if not close(d.oversubscription, ratio_now, rel=0, abs_=1e-4):  # records keep 4 decimals
        out.append(Violation(family=family, item="design",
                             detail=f"oversubscription {num(d.oversubscription)} ≠ {f.leaf_down_ports}/{f.leaf_up_ports} = {num(ratio_now)}"))
    # The limit bounds the split's actual d/u (the family's rule); e.g. the ratio-2 split of 80
    # ports, 53/27 = 1.96:1, is within a limit of 1.97.
    if f.leaf_down_ports > limit * f.leaf_up_ports * (1 + 1e-9):
        out.append(Violation(family=family, item="leaf split",
                             detail=f"{f.leaf_down_ports} down / {f.leaf_up_ports} up = {num(ratio_now)}:1 > max {num(limit)}"))
    if k >= 1 and split_ratio(k, f.leaf_down_ports, f.leaf_up_ports) is None:
        out.append(Violation(family=family, item="leaf split",
                             detail=f"{f.leaf_down_ports} down / {f.leaf_up_ports} up is no ratio-1, 2 or 3 split of {k} ports"))
    return out


def uplinks_balanced(ctx: CheckContext) -> list[Violation]:
    """Every leaf reaches every spine of its pod with the same ``m`` links: 2 tiers ``m = u/S`` (``S``
    divides ``u``); 3 tiers ``m ∈ {1, 2}`` dividing ``u``; every spine reaches every core of its
    plane with ``m2 = u2/C`` links (``C`` divides ``u2 = k − floor(k/2)``). A 2-tier storage
    network likewise: ``S`` storage spines divide the ``floor(k/2)`` uplinks of a storage leaf."""
    family = "uplinks_balanced"
    out: list[Violation] = []
    f, c, k = ctx.design.fabric, ctx.counts, ctx.radix
    if f.tiers == 2 and f.spines >= 1 and f.leaf_up_ports % f.spines:
        out.append(Violation(family=family, item="leaf-spine links",
                             detail=f"{f.leaf_up_ports} uplinks per leaf do not divide evenly over {f.spines} spines"))
    if f.tiers == 2 and f.spines < 1 and f.leaf_up_ports:
        out.append(Violation(family=family, item="leaf-spine links",
                             detail=f"{f.leaf_up_ports} uplinks per leaf and no spine to spread them over"))
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
    if f.tiers != 3 and c.links_per_leaf_spine is not None:
        _field(out, family, "links_per_leaf_spine", f.links_per_leaf_spine, c.links_per_leaf_spine)
    _field(out, family, "spine_up_ports", f.spine_up_ports, c.spine_up_ports,
           f"{k} − {k // 2} spine down-ports" if f.tiers == 3 else "no core tier")
    if c.links_per_spine_core is not None:
        _field(out, family, "links_per_spine_core", f.links_per_spine_core, c.links_per_spine_core)
    return out


RULES = {
    "leaf_ports_cover_endpoints": leaf_ports_cover_endpoints,
    "spine_ports_cover_uplinks": spine_ports_cover_uplinks,
    "core_ports_cover_uplinks": core_ports_cover_uplinks,
    "oversubscription_within_limit": oversubscription_within_limit,
    "uplinks_balanced": uplinks_balanced,
}
