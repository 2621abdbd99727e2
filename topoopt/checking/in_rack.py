"""Cables within one rack, as the checker reads them off the mixed racks' contents (docs/model.md,
"Cables within one rack"; family cable_reach).

In several mixed racks, a one-piece cable longer than ``in_rack_m + slack_m`` never runs between two
devices of one rack. The cables that do are bought as the link group's ``in_rack_part``: where the
class's switch is the only one of its model (its *hub*), as many as the devices in the hub's rack
times their assemblies each; a rack that may hold both ends of such a part's link anywhere else
rules the part out.
"""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import too_long_in_rack
from topoopt.checking.text import num
from topoopt.models.catalog import LinkPart
from topoopt.models.design import LinkGroup, Violation

FAMILY = "cable_reach"
SAME_ENDS = ("a_form_factor", "a_ends", "b_form_factor", "b_ends", "links", "gbps")
"""What an in-rack part shares with the group's part: it fits the same cages with as many links."""


def mixed_racks(ctx: CheckContext) -> list[tuple[int, dict[str, int]]]:
    """Each mixed rack's nodes and devices by model, when the design has several (else none)."""
    racks = [(g.nodes_per_rack, dict(g.holds)) for g in ctx.rack_groups("mixed") for _ in range(g.count)]
    return racks if len(racks) > 1 else []


def in_rack_violations(ctx: CheckContext) -> list[Violation]:
    racks = mixed_racks(ctx)
    out: list[Violation] = []
    for group in ctx.design.links:
        part = ctx.cable(group.part)
        if part is None:
            continue
        item = f"{group.between} links ({part.id})"
        ends = _ends(ctx, group, part) if racks else None
        if group.in_rack_part is not None:
            out += _in_rack_part(ctx, group, part, item, racks, ends)
        elif racks and _too_long(ctx, part) and ends is not None and _sharing(racks, *ends[:2]):
            out.append(coiled(ctx, item, part))
    return out


def _in_rack_part(ctx: CheckContext, group: LinkGroup, part: LinkPart, item: str, racks: list,
                  ends: tuple | None) -> list[Violation]:
    """The group's in-rack part fits its cages and the rack, and counts the hub's rack exactly."""
    twin = ctx.cable(group.in_rack_part)
    d = ctx.instance.site.distances
    if twin is None:
        return []  # unknown ids are reported by the catalog rules
    if any(getattr(twin, f) != getattr(part, f) for f in SAME_ENDS):
        return [Violation(family=FAMILY, item=item, detail=f"in-rack part {twin.id} does not fit the same cages with "
                                                             f"the same links as {part.id}")]
    if _too_long(ctx, twin) or twin.max_reach_m < d.in_rack_m:
        return [Violation(family=FAMILY, item=item, detail=f"in-rack part {twin.id} does not fit a {num(d.in_rack_m)} m "
                                                             "run within one rack")]
    expected = _hub_count(racks, ends) if ends is not None else None
    if expected != group.in_rack_assemblies:
        return [Violation(family=FAMILY, item=item,
                          detail=f"{num(group.in_rack_assemblies)} assemblies bought as {twin.id} within one rack; "
                                 f"the racks put {num(expected or 0)} there")]
    return []


def _ends(ctx: CheckContext, group: LinkGroup, part: LinkPart) -> tuple | None:
    """``(upper model, what a rack counts of the lower end, assemblies per lower device)`` of the
    group's class; the lower end is a node (``"node"``), a storage tier's model, or a second switch
    of the upper model (``"pair"``); assemblies per device None where an assembly spans devices."""
    d, q = ctx.design, part.links
    cls = group.between
    if cls == "node-leaf" and ctx.switch is not None:
        per_node = group.count // d.nodes if d.nodes else 0
        return ctx.switch.id, "node", per_node // q if d.fabric.rails_per_leaf % q == 0 else None
    if cls in ("leaf-spine", "spine-core") and ctx.switch is not None:
        return ctx.switch.id, "pair", None
    storage = ctx.storage_net.switch if not ctx.converged else (ctx.switch.id if ctx.switch else None)
    if cls == "node-storage" and storage:
        return storage, "node", ctx.storage_net.ports_per_node if q == 1 else None
    if cls in ("storage-leaf-spine", "storage-spine-core") and storage:
        return storage, "pair", None
    if cls == "storage-unit" and storage:
        carried = next((tiers for g, tiers in ctx.unit_link_groups if g is group), [])
        known = [tier for _, tier, _ in carried if tier is not None]
        if len(known) != 1 or (d.cold_storage is not None and d.cold_storage.tier == d.storage.tier):
            return storage, known[0].id if known else "", None
        return storage, known[0].id, -(-known[0].network_ports // q)
    if cls in ("mgmt", "mgmt-uplink"):
        return d.management_network.switch, "any", None
    return None


def _sharing(racks: list, upper: str, lower: str) -> bool:
    """Some rack holds an upper switch and a lower device (``any``: always, a management leaf's
    rack holds the PDUs it serves)."""
    if lower == "any":
        return True
    if lower == "pair":
        return any(holds.get(upper, 0) >= 2 for _, holds in racks)
    return any(holds.get(upper, 0) and (nodes if lower == "node" else holds.get(lower, 0)) for nodes, holds in racks)


def _hub_count(racks: list, ends: tuple) -> int | None:
    """Assemblies within the hub's rack: the only rack holding the upper model, which holds one
    switch of it; None when there is no such hub or an assembly may span devices."""
    upper, lower, per_device = ends
    holding = [(nodes, holds) for nodes, holds in racks if holds.get(upper, 0)]
    if per_device is None or len(holding) != 1 or holding[0][1][upper] != 1 or lower in ("pair", "any"):
        return None
    nodes, holds = holding[0]
    return per_device * (nodes if lower == "node" else holds.get(lower, 0))


def _too_long(ctx: CheckContext, part: LinkPart) -> bool:
    d = ctx.instance.site.distances
    return too_long_in_rack(part, d.in_rack_m, d.slack_m)


def coiled(ctx: CheckContext, item: str, part: LinkPart) -> Violation:
    """The finding of a one-piece ``part`` run within one rack, too long for it."""
    d = ctx.instance.site.distances
    return Violation(family=FAMILY, item=item,
                     detail=f"a {num(part.max_reach_m)} m cable within one rack, longer than "
                            f"{num(d.in_rack_m + d.slack_m)} m (in_rack_m + slack_m)")
