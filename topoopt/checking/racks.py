"""Rack and power rules: provisioned power and rack units per rack, rack count, site power.

Power is provisioned power (docs/model.md): devices at their maximum with every cage holding the
hungriest module that fits it. All racks are of the design's one rack class. Either compute racks
hold nodes only, network racks switches only and storage racks storage units only, or a small
design puts everything in one *mixed* rack.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import devices_per_rack
from topoopt.checking.text import ceil_div, close, kw, num
from topoopt.models.catalog import RackClass
from topoopt.models.design import RackGroup, Violation


@dataclass(frozen=True)
class RackRole:
    """One kind of device sharing racks: how many there are, and each one's power and height."""

    role: str
    device: str
    count: int
    power_w: float
    rack_units: int

    @property
    def label(self) -> str:
        return f"{self.role} racks"

    def per_rack(self, rack: RackClass) -> int:
        return devices_per_rack(rack, self.power_w, self.rack_units)


def rack_roles(ctx: CheckContext) -> list[RackRole]:
    """The device kinds of the design whose catalog entries are known."""
    roles: list[RackRole] = []
    if ctx.server is not None and ctx.node_power_w is not None:
        roles.append(RackRole("compute", ctx.server.id, ctx.nodes, ctx.node_power_w, ctx.server.rack_units))
    if ctx.switch is not None and ctx.switch_power_w is not None:
        roles.append(RackRole("network", ctx.switch.id, ctx.n_switches, ctx.switch_power_w, ctx.switch.rack_units))
    tier = ctx.storage_tier
    if tier is not None:
        roles.append(RackRole("storage", tier.id, ctx.design.storage.units, tier.power_w, tier.rack_units))
    return roles


def _recorded(ctx: CheckContext, role: str) -> RackGroup | None:
    groups = ctx.rack_groups(role)
    return groups[0] if groups else None


def _mixed(ctx: CheckContext) -> RackGroup | None:
    """The design's single mixed rack, if it has one."""
    return _recorded(ctx, "mixed")


def _listing(roles: list[RackRole], value: str) -> str:
    """``"4 × dgx-h100 at 10.3 kW + 12 × qm9700 at 1.55 kW"`` (or ``at 8 U``)."""
    if value == "power":
        return " + ".join(f"{num(r.count)} × {r.device} at {kw(r.power_w)}" for r in roles if r.count)
    return " + ".join(f"{num(r.count)} × {r.device} at {r.rack_units} U" for r in roles if r.count)


def crowded_rack(role: RackRole, group: RackGroup) -> int:
    """Devices the fullest of the recorded racks holds at least: ``ceil(devices / racks)``. Too few
    racks for the devices overfill one of them, whatever nodes per rack the record states."""
    return ceil_div(role.count, group.count) if group.count >= 1 else role.count


def fullest_rack(ctx: CheckContext, role: RackRole, group: RackGroup) -> int:
    """Devices in the fullest rack: compute racks record their nodes per rack; network and
    storage racks record none, so their fullest rack holds as many as fit."""
    if role.role == "compute":
        return min(group.nodes_per_rack, role.count)
    return min(role.per_rack(ctx.rack_class), role.count)


def rack_power_within_limit(ctx: CheckContext) -> list[Violation]:
    """A rack's devices at provisioned power stay within the rack class's ``power_kw``: at least
    one device fits and so do the recorded nodes per rack and the ``ceil(devices / racks)`` the
    recorded racks must hold, or a mixed rack holds everything within it; the record states the
    fullest rack's power."""
    family = "rack_power_within_limit"
    out: list[Violation] = []
    rack = ctx.rack_class
    if rack is None:
        return out
    rack_w = rack.power_kw * 1000
    roles = rack_roles(ctx)
    mixed = _mixed(ctx)
    if mixed is not None:
        item = f"mixed rack ({rack.id})"
        total_w = sum(r.count * r.power_w for r in roles)
        if total_w > rack_w * (1 + 1e-9):
            out.append(Violation(family=family, item=item, detail=f"{_listing(roles, 'power')} = {kw(total_w)} > {kw(rack_w)}"))
        if not close(mixed.power_kw, total_w / 1000, rel=1e-4, abs_=1e-3):
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(mixed.power_kw)} kW recorded; {_listing(roles, 'power')} = {kw(total_w)}"))
        return out
    for role in roles:
        item = f"{role.label} ({rack.id})"
        if role.count and role.power_w > rack_w:
            out.append(Violation(family=family, item=item,
                                 detail=f"one {role.device} at {kw(role.power_w)} > {kw(rack_w)}"))
            continue
        group = _recorded(ctx, role.role)
        if group is None:
            continue
        held_w = group.nodes_per_rack * role.power_w
        if held_w > rack_w * (1 + 1e-9):
            out.append(Violation(family=family, item=item,
                                 detail=f"{group.nodes_per_rack} × {role.device} at {kw(role.power_w)} = {kw(held_w)} > {kw(rack_w)}"))
        crowded = crowded_rack(role, group)
        if crowded * role.power_w > rack_w * (1 + 1e-9):
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(role.count)} × {role.device} in {num(group.count)} racks: one holds {crowded} "
                                        f"at {kw(role.power_w)} = {kw(crowded * role.power_w)} > {kw(rack_w)}"))
        fullest = fullest_rack(ctx, role, group)
        fullest_w = fullest * role.power_w
        if not close(group.power_kw, fullest_w / 1000, rel=1e-4, abs_=1e-3):
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(group.power_kw)} kW recorded for the fullest rack; "
                                        f"{fullest} × {role.device} at {kw(role.power_w)} = {kw(fullest_w)}"))
    return out


def rack_units_within_limit(ctx: CheckContext) -> list[Violation]:
    """A rack's devices fit in the rack class's rack units: at least one device, the recorded nodes
    per rack and the ``ceil(devices / racks)`` the recorded racks must hold, or everything in a
    mixed rack."""
    family = "rack_units_within_limit"
    out: list[Violation] = []
    rack = ctx.rack_class
    if rack is None:
        return out
    roles = rack_roles(ctx)
    if _mixed(ctx) is not None:
        total_u = sum(r.count * r.rack_units for r in roles)
        if total_u > rack.rack_units:
            out.append(Violation(family=family, item=f"mixed rack ({rack.id})",
                                 detail=f"{_listing(roles, 'units')} = {total_u} U > {rack.rack_units} U"))
        return out
    for role in roles:
        item = f"{role.label} ({rack.id})"
        if role.count and role.rack_units > rack.rack_units:
            out.append(Violation(family=family, item=item,
                                 detail=f"one {role.device} takes {role.rack_units} U > {rack.rack_units} U"))
        group = _recorded(ctx, role.role)
        if group is None:
            continue
        if group.nodes_per_rack * role.rack_units > rack.rack_units:
            out.append(Violation(family=family, item=item,
                                 detail=f"{group.nodes_per_rack} × {role.device} at {role.rack_units} U = "
                                        f"{group.nodes_per_rack * role.rack_units} U > {rack.rack_units} U"))
        crowded = crowded_rack(role, group)
        if crowded * role.rack_units > rack.rack_units:
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(role.count)} × {role.device} in {num(group.count)} racks: one holds {crowded} "
                                        f"at {role.rack_units} U = {crowded * role.rack_units} U > {rack.rack_units} U"))
    return out


def _rack_counts(ctx: CheckContext, rack: RackClass) -> list[Violation]:
    """Per role ``ceil(devices / devices_per_rack)`` racks; or one mixed rack and nothing else."""
    family = "racks_available"
    out: list[Violation] = []
    mixed = _mixed(ctx)
    if mixed is not None:
        item = f"mixed rack ({rack.id})"
        others = [g for g in ctx.design.racks if g.role != "mixed" and g.count]
        if others or len(ctx.rack_groups("mixed")) > 1 or mixed.count != 1:
            out.append(Violation(family=family, item=item, detail="a mixed rack is the design's one rack; "
                                 f"{num(sum(g.count for g in ctx.design.racks))} racks recorded"))
        if mixed.nodes_per_rack != ctx.nodes:
            out.append(Violation(family=family, item=item,
                                 detail=f"{mixed.nodes_per_rack} nodes per rack recorded; it holds all {num(ctx.nodes)}"))
        return out
    for role in rack_roles(ctx):
        item = f"{role.label} ({rack.id})"
        per_rack = role.per_rack(rack)
        needed = ceil_div(role.count, per_rack) if per_rack >= 1 else 0
        groups = ctx.rack_groups(role.role)
        if len(groups) > 1:
            out.append(Violation(family=family, item=item, detail=f"{len(groups)} groups for one role"))
        recorded = groups[0] if groups else None
        if recorded is None:
            if needed:
                out.append(Violation(family=family, item=item, detail=f"missing; {needed} racks needed"))
            continue
        if recorded.count != needed:
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(recorded.count)} recorded; ceil({num(role.count)} × {role.device} / "
                                        f"{per_rack} per rack) = {num(needed)}"))
        # Compute racks record their capacity (more than fits is the power/units families'
        # finding; fewer would buy racks the rules do not need); other racks record no nodes.
        if role.role == "compute" and recorded.nodes_per_rack < per_rack:
            out.append(Violation(family=family, item=item,
                                 detail=f"{recorded.nodes_per_rack} nodes per rack recorded; a rack holds {per_rack} × {role.device}"))
        elif role.role != "compute" and recorded.nodes_per_rack != 0:
            out.append(Violation(family=family, item=item,
                                 detail=f"{recorded.nodes_per_rack} nodes per rack recorded in a rack without nodes"))
    if not ctx.has_fabric:
        out += [Violation(family=family, item=f"network racks ({g.rack_class})",
                          detail=f"{num(g.count)} recorded for a design without switches")
                for g in ctx.rack_groups("network") if g.count]
    return out


def racks_available(ctx: CheckContext) -> list[Violation]:
    """One rack class, allowed by the site; per role ``ceil(devices / devices_per_rack)`` racks with
    ``devices_per_rack = min(floor(rack W / device W), floor(rack U / device U))`` (or one mixed
    rack); the total is within ``site.max_racks``."""
    family = "racks_available"
    out: list[Violation] = []
    site = ctx.instance.site
    classes = sorted({g.rack_class for g in ctx.design.racks})
    if len(classes) > 1:
        out.append(Violation(family=family, item="racks", detail=f"{len(classes)} rack classes ({', '.join(classes)}); the design uses one"))
    for rack_id in classes:
        if ctx.catalog.catalog.by_id("racks").get(rack_id) is None:
            out.append(Violation(family=family, item=f"rack class {rack_id}", detail="not in the catalog"))
        elif site.rack_classes is not None and rack_id not in site.rack_classes:
            out.append(Violation(family=family, item=f"rack class {rack_id}",
                                 detail=f"not among the site's rack classes ({', '.join(site.rack_classes)})"))
    if ctx.rack_class is not None:
        out += _rack_counts(ctx, ctx.rack_class)
    total = sum(g.count for g in ctx.design.racks)
    if total > site.max_racks:
        out.append(Violation(family=family, item="racks", detail=f"{num(total)} racks > {num(site.max_racks)} the site has"))
    return out


def site_power_within_limit(ctx: CheckContext) -> list[Violation]:
    """``nodes · node W + switches · switch W + storage units · unit W ≤ power_cap_kw``."""
    family = "site_power_within_limit"
    cap_kw = ctx.instance.site.power_cap_kw
    if cap_kw is None:
        return []
    roles = rack_roles(ctx)
    total_w = sum(r.count * r.power_w for r in roles)
    if total_w > cap_kw * 1000 * (1 + 1e-9):
        return [Violation(family=family, item="site",
                          detail=f"{_listing(roles, 'power')} = {kw(total_w)} > cap {kw(cap_kw * 1000)}")]
    return []


RULES = {
    "rack_power_within_limit": rack_power_within_limit,
    "rack_units_within_limit": rack_units_within_limit,
    "racks_available": racks_available,
    "site_power_within_limit": site_power_within_limit,
}
