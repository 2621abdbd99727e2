"""Rack and power rules: provisioned power and rack units per rack, rack count, site power.

Power is provisioned power (docs/model.md): devices at their maximum with every cage holding the
hungriest module that fits it. Either compute racks hold nodes (and, when their group's ``holds``
names them, management leaves, one in a rack), network racks switches (compute, storage and the
other management switches) or head nodes, and storage racks storage units only (hot and cold),
every rack holding devices of one model, the compute racks of the nodes' rack class and the
network and storage racks of one class of their own; or a small design puts everything in
*mixed* racks of one class, each group recording the nodes and the devices by model one rack
holds. A role's racks are recorded as one group, or as one group per model in the
order compute, storage, management switch, head node (hot, cold tier); the head nodes may instead
sit in the last rack of one network or storage group, which names them in ``holds``.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import devices_per_rack, devices_per_rack_by_power, devices_per_rack_by_units, rack_cools
from topoopt.checking.text import ceil_div, close, kw, num
from topoopt.checking.units import W_PER_KW
from topoopt.models.catalog import RackClass
from topoopt.models.design import RackGroup, Violation


@dataclass(frozen=True)
class Device:
    """One device model sharing racks: how many there are, and each one's power and height."""

    device: str
    count: int
    power_w: float
    rack_units: int

    def per_rack(self, rack: RackClass) -> int:
        return devices_per_rack(rack, self.power_w, self.rack_units)

    def per_rack_by(self, rack: RackClass, by: str) -> int:
        """Devices a rack holds by its power alone (``by="power"``) or by its rack units alone."""
        if by == "power":
            return devices_per_rack_by_power(rack, self.power_w)
        return devices_per_rack_by_units(rack, self.rack_units)


@dataclass(frozen=True)
class RackRole:
    """The devices of one rack role (or of one model of it); each rack holds one model only."""

    role: str
    devices: tuple[Device, ...]
    one_model: bool = False

    @property
    def label(self) -> str:
        return f"{self.role} racks of {self.devices[0].device}" if self.one_model else f"{self.role} racks"

    @property
    def count(self) -> int:
        return sum(d.count for d in self.devices)

    def racks_needed(self, per_rack) -> int:
        """``Σ ceil(count / per_rack(device))`` over the models (a model that fits no rack adds none)."""
        return sum(ceil_div(d.count, per_rack(d)) for d in self.devices if per_rack(d) >= 1)


def _pooled(devices: list[Device]) -> tuple[Device, ...]:
    """One entry per model: the same model in two roles (say compute and storage switches)
    shares its racks."""
    pooled: dict[str, Device] = {}
    for d in devices:
        if d.device in pooled:
            d = Device(d.device, pooled[d.device].count + d.count, d.power_w, d.rack_units)
        pooled[d.device] = d
    return tuple(pooled.values())


def rack_roles(ctx: CheckContext) -> list[RackRole]:
    """The device models of the design whose catalog entries are known, by rack role: nodes in
    compute racks; compute, storage and management switches, then head nodes, in network racks;
    hot and cold storage units in storage racks."""
    roles: list[RackRole] = []
    if ctx.server is not None and ctx.node_power_w is not None:
        roles.append(RackRole("compute", (Device(ctx.server.id, ctx.nodes, ctx.node_power_w, ctx.server.rack_units),)))
    hosted = _hosted(ctx)
    switches = [Device(switch.id, count, ctx.power_of_switch_w(switch), switch.rack_units)
                for switch, count in ctx.switch_counts]
    if ctx.head is not None and ctx.head_host is None:  # else in another model's last rack
        head, count = ctx.head
        switches.append(Device(head.id, count, head.power_w, head.rack_units))
    if switches:
        racked = [Device(d.device, max(d.count - hosted.get(d.device, 0), 0), d.power_w, d.rack_units)
                  for d in _pooled(switches)]
        roles.append(RackRole("network", tuple(racked)))
    units = [Device(tier.id, count, tier.power_w, tier.rack_units) for _, tier, count in ctx.storage_tiers if tier]
    if units:
        roles.append(RackRole("storage", _pooled(units)))
    return roles


def beside_nodes(ctx: CheckContext) -> list[Device]:
    """What the compute racks hold beside their nodes, by model (their ``holds``, one device in a
    rack): the management leaves, when the design puts them there. Models the design has only
    (:func:`_beside_record` reports the others)."""
    known = {switch.id: switch for switch, _ in ctx.switch_counts}
    return [Device(m, c, ctx.power_of_switch_w(known[m]), known[m].rack_units)
            for g in ctx.rack_groups("compute") for m, c in g.holds.items() if m in known and c]


def _hosted(ctx: CheckContext) -> dict[str, int]:
    """:func:`beside_nodes` by model: how many of it the compute racks hold."""
    return {d.device: d.count for d in beside_nodes(ctx)}


def _beside_record(ctx: CheckContext) -> list[Violation]:
    """Only management leaves sit in compute racks, one in a rack: no more than the design's
    leaves nor than its compute racks."""
    family, out = "racks_available", []
    leaf = ctx.mgmt_switch.id if ctx.mgmt_switch is not None else None
    racks = sum(g.count for g in ctx.rack_groups("compute"))
    for g in ctx.rack_groups("compute"):
        for model, count in g.holds.items():
            item = f"compute racks ({g.rack_class})"
            if model != leaf:
                out.append(Violation(family=family, item=item, detail=f"hold {count} × {model}; beside their nodes "
                                                                      "compute racks hold management leaves only"))
            elif count > min(ctx.n_mgmt_leaves, racks):
                out.append(Violation(family=family, item=item, detail=f"hold {num(count)} management leaves, one in a "
                                     f"rack: more than the {num(ctx.n_mgmt_leaves)} leaves or the {num(racks)} racks"))
    return out


def all_devices(ctx: CheckContext) -> list[Device]:
    """Every device of the design whose model is known: its racks' roles and what its compute racks
    hold beside their nodes."""
    return _devices(rack_roles(ctx)) + beside_nodes(ctx)


def recorded_racks(ctx: CheckContext, role: RackRole) -> list[tuple[RackRole, RackGroup | None]] | None:
    """The role's devices with the rack group recording them: one group for the whole role, or one
    group per model in the role's order (compute, storage, management switch; hot, cold tier).
    None when the groups fit neither form (racks_available reports it)."""
    groups = ctx.rack_groups(role.role)
    models = [d for d in role.devices if d.count]
    if len(groups) <= 1:
        return [(role, groups[0] if groups else None)]
    if len(groups) == len(models):
        return [(RackRole(role.role, (d,), one_model=True), g) for d, g in zip(models, groups)]
    return None


def _racks(ctx: CheckContext, roles: list[RackRole]) -> list[tuple[RackRole, RackGroup | None]]:
    return [pair for role in roles for pair in recorded_racks(ctx, role) or []]


def _mixed(ctx: CheckContext) -> list[RackGroup]:
    """The design's mixed rack groups (none when its racks hold one model each)."""
    return ctx.rack_groups("mixed")


def _mixed_load(group: RackGroup, devices: list[Device]) -> tuple[list[Device], list[str]]:
    """What one rack of a mixed group holds (nodes first), and the models it names that the design
    has none of."""
    known = {d.device: d for d in devices}
    nodes = [Device(devices[0].device, group.nodes_per_rack, devices[0].power_w, devices[0].rack_units)] \
        if devices and group.nodes_per_rack else []
    held = [Device(m, c, known[m].power_w, known[m].rack_units) for m, c in group.holds.items() if m in known]
    return nodes + held, [m for m in group.holds if m not in known]


def _mixed_limits(ctx: CheckContext, rack: RackClass, by: str) -> list[Violation]:
    """Each mixed rack within the class's power (``by="power"``, recording its power) or units."""
    family = "rack_power_within_limit" if by == "power" else "rack_units_within_limit"
    devices = _devices(rack_roles(ctx))
    out: list[Violation] = []
    for group in _mixed(ctx):
        load, _ = _mixed_load(group, devices)
        item = f"mixed racks ({rack.id}, {group.nodes_per_rack} nodes each)"
        if by == "power":
            total_w, limit_w = sum(d.count * d.power_w for d in load), rack.power_kw * W_PER_KW
            if total_w > limit_w * (1 + 1e-9):
                out.append(Violation(family=family, item=item, detail=f"{_listing(load, 'power')} = {kw(total_w)} > {kw(limit_w)}"))
            if not close(group.power_kw, total_w / W_PER_KW, rel=1e-4, abs_=1e-3):
                out.append(Violation(family=family, item=item,
                                     detail=f"{num(group.power_kw)} kW recorded; {_listing(load, 'power')} = {kw(total_w)}"))
        else:
            total_u = sum(d.count * d.rack_units for d in load)
            if total_u > rack.rack_units:
                out.append(Violation(family=family, item=item,
                                     detail=f"{_listing(load, 'units')} = {total_u} U > {rack.rack_units} U"))
    return out


def _mixed_counts(ctx: CheckContext, rack: RackClass) -> list[Violation]:
    """Mixed racks and no others; over the groups, every node and every device of the design is
    held once."""
    family = "racks_available"
    out: list[Violation] = []
    others = [g for g in ctx.design.racks if g.role != "mixed" and g.count]
    if others:
        out.append(Violation(family=family, item=f"mixed racks ({rack.id})",
                             detail=f"{len(others)} groups of one-model racks beside mixed racks"))
    devices = _devices(rack_roles(ctx))
    held: dict[str, int] = {}
    for group in _mixed(ctx):
        _, unknown = _mixed_load(group, devices)
        if unknown:
            out.append(Violation(family=family, item=f"mixed racks ({rack.id})",
                                 detail=f"hold {', '.join(unknown)}, which the design has none of"))
        for model, count in group.holds.items():
            held[model] = held.get(model, 0) + group.count * count
        if devices:
            held[devices[0].device] = held.get(devices[0].device, 0) + group.count * group.nodes_per_rack
    for d in devices:
        if held.get(d.device, 0) != d.count:
            out.append(Violation(family=family, item=f"mixed racks ({rack.id})",
                                 detail=f"hold {num(held.get(d.device, 0))} × {d.device}; the design has {num(d.count)}"))
    return out


def _devices(roles: list[RackRole]) -> list[Device]:
    return [d for r in roles for d in r.devices]


def _listing(devices: list[Device], value: str) -> str:
    """``"4 × dgx-h100 at 10.3 kW + 12 × qm9700 at 1.55 kW"`` (or ``at 8 U``)."""
    if value == "power":
        return " + ".join(f"{num(d.count)} × {d.device} at {kw(d.power_w)}" for d in devices if d.count)
    return " + ".join(f"{num(d.count)} × {d.device} at {d.rack_units} U" for d in devices if d.count)


def _shortage(role: RackRole, group: RackGroup, rack: RackClass, by: str) -> str | None:
    """Why the recorded racks cannot hold the role's devices by power (``by="power"``) or by rack
    units, or None when they can. One model: the fullest rack holds at least ``ceil(devices /
    racks)``; several: racks of one model each need ``Σ ceil(count / per rack)``."""
    limit = kw(rack.power_kw * W_PER_KW) if by == "power" else f"{rack.rack_units} U"
    devices = [d for d in role.devices if d.count]
    if len(devices) == 1:
        d = devices[0]
        crowded = ceil_div(d.count, group.count) if group.count >= 1 else d.count
        if crowded <= d.per_rack_by(rack, by):
            return None
        each, total = (kw(d.power_w), kw(crowded * d.power_w)) if by == "power" else (
            f"{d.rack_units} U", f"{crowded * d.rack_units} U")
        return f"{num(d.count)} × {d.device} in {num(group.count)} racks: one holds {crowded} at {each} = {total} > {limit}"
    needed = sum(ceil_div(d.count, max(d.per_rack_by(rack, by), 1)) for d in devices)
    if needed <= group.count:
        return None
    terms = " + ".join(f"ceil({num(d.count)} × {d.device} / {d.per_rack_by(rack, by)})" for d in devices)
    return f"{num(group.count)} racks of one model each; within {limit} per rack they need {terms} = {num(needed)}"


def _compute_rack(ctx: CheckContext, role: RackRole, nodes: int) -> list[Device]:
    """A compute rack of ``nodes`` nodes and one of each device the compute racks hold beside them."""
    d = role.devices[0]
    return [Device(d.device, nodes, d.power_w, d.rack_units)] + [
        Device(b.device, 1, b.power_w, b.rack_units) for b in beside_nodes(ctx)]


def fullest_rack_w(ctx: CheckContext, role: RackRole, group: RackGroup, rack: RackClass) -> tuple[float, str]:
    """Power of the fullest rack and how it is made up: compute racks record their nodes per rack
    (and the fullest holds what they hold beside them); network and storage racks record none, so
    their fullest rack holds as many of one model as fit."""
    if role.role == "compute":
        load = _compute_rack(ctx, role, min(group.nodes_per_rack, role.devices[0].count))
        return sum(d.count * d.power_w for d in load), _listing(load, "power")
    d = max(role.devices, key=lambda x: min(x.per_rack(rack), x.count) * x.power_w)
    n = min(d.per_rack(rack), d.count)
    return n * d.power_w, f"{n} × {d.device} at {kw(d.power_w)}"


def rack_power_within_limit(ctx: CheckContext) -> list[Violation]:
    """A rack's devices at provisioned power stay within the rack class's ``power_kw``: at least
    one device fits and so do the recorded nodes per rack and the devices the recorded racks must
    hold (racks hold one model each), or each mixed rack's recorded contents; the record states
    the fullest rack's power (a mixed group's: its racks' power)."""
    family = "rack_power_within_limit"
    out: list[Violation] = []
    if ctx.rack_class is None:
        return out
    out += _uncooled(ctx)
    roles = rack_roles(ctx)
    if _mixed(ctx):
        return out + _mixed_limits(ctx, ctx.rack_class, "power")
    for role, group in _racks(ctx, roles):
        rack = ctx.rack_class_of(role.role)
        if rack is None:
            continue
        rack_w = rack.power_kw * W_PER_KW
        item = f"{role.label} ({rack.id})"
        too_big = [d for d in role.devices if d.count and d.power_w > rack_w]
        out += [Violation(family=family, item=item, detail=f"one {d.device} at {kw(d.power_w)} > {kw(rack_w)}")
                for d in too_big]
        if too_big or group is None:
            continue
        if role.role == "compute":
            load = _compute_rack(ctx, role, group.nodes_per_rack)
            held_w = sum(d.count * d.power_w for d in load)
            if held_w > rack_w * (1 + 1e-9):
                out.append(Violation(family=family, item=item, detail=f"{_listing(load, 'power')} = {kw(held_w)} > {kw(rack_w)}"))
        short = _shortage(role, group, rack, "power")
        if short:
            out.append(Violation(family=family, item=item, detail=short))
        fullest_w, how = fullest_rack_w(ctx, role, group, rack)
        if group is ctx.head_host:
            last_w, last_u, last_how = _hosting_rack(ctx, role, group, rack)
            if last_w > rack_w * (1 + 1e-9):
                out.append(Violation(family=family, item=item, detail=f"its last rack: {last_how} = {kw(last_w)} > {kw(rack_w)}"))
            if last_w > fullest_w:
                fullest_w, how = last_w, f"its last rack: {last_how}"
        if not close(group.power_kw, fullest_w / W_PER_KW, rel=1e-4, abs_=1e-3):
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(group.power_kw)} kW recorded for the fullest rack; {how} = {kw(fullest_w)}"))
    return out


def _uncooled(ctx: CheckContext) -> list[Violation]:
    """The server, the switch models, the storage tiers and the head nodes in use that their racks'
    class does not cool: the nodes' class (with what compute racks hold beside the nodes), and the
    network and storage racks' (the nodes' with mixed racks)."""
    hosted = _hosted(ctx)
    devices = [(ctx.server, ctx.nodes, ctx.rack_class)] if ctx.server is not None else []
    devices += [(switch, count - hosted.get(switch.id, 0), ctx.infra_rack_class) for switch, count in ctx.switch_counts]
    devices += [(switch, hosted[switch.id], ctx.rack_class) for switch, _ in ctx.switch_counts if switch.id in hosted]
    devices += [(tier, units, ctx.infra_rack_class) for _, tier, units in ctx.storage_tiers if tier is not None]
    if ctx.head is not None:
        devices.append((*ctx.head, ctx.infra_rack_class))
    return [Violation(family="rack_power_within_limit", item=f"{device.id} in {rack.id}",
                      detail=f"{device.cooling}-cooled, the rack class is {rack.cooling}-cooled")
            for device, count, rack in devices if count and rack is not None and not rack_cools(rack, device.cooling)]


def rack_units_within_limit(ctx: CheckContext) -> list[Violation]:
    """A rack's devices fit in the rack class's rack units: at least one device, the recorded nodes
    per rack and the devices the recorded racks must hold (racks hold one model each), or each
    mixed rack's recorded contents."""
    family = "rack_units_within_limit"
    out: list[Violation] = []
    if ctx.rack_class is None:
        return out
    roles = rack_roles(ctx)
    if _mixed(ctx):
        return _mixed_limits(ctx, ctx.rack_class, "units")
    for role, group in _racks(ctx, roles):
        rack = ctx.rack_class_of(role.role)
        if rack is None:
            continue
        item = f"{role.label} ({rack.id})"
        too_big = [d for d in role.devices if d.count and d.rack_units > rack.rack_units]
        out += [Violation(family=family, item=item, detail=f"one {d.device} takes {d.rack_units} U > {rack.rack_units} U")
                for d in too_big]
        if group is None:
            continue
        if role.role == "compute":
            load = _compute_rack(ctx, role, group.nodes_per_rack)
            held_u = sum(d.count * d.rack_units for d in load)
            if held_u > rack.rack_units:
                out.append(Violation(family=family, item=item,
                                     detail=f"{_listing(load, 'units')} = {held_u} U > {rack.rack_units} U"))
        short = _shortage(role, group, rack, "units")
        if short:
            out.append(Violation(family=family, item=item, detail=short))
        if group is ctx.head_host:
            _, last_u, last_how = _hosting_rack(ctx, role, group, rack)
            if last_u > rack.rack_units:
                out.append(Violation(family=family, item=item,
                                     detail=f"its last rack: {last_how} = {last_u} U > {rack.rack_units} U"))
    return out


def _hosting_rack(ctx: CheckContext, role: RackRole, group: RackGroup, rack: RackClass) -> tuple[float, int, str]:
    """Power (W), rack units and make-up of the last rack of a group that also holds the head
    nodes: ``count − per · (racks − 1)`` devices of its model beside them."""
    d, (head, heads) = role.devices[0], ctx.head
    last = d.count - d.per_rack(rack) * (group.count - 1)
    how = f"{num(last)} × {d.device} at {kw(d.power_w)} + {num(heads)} × {head.id} at {kw(head.power_w)}"
    return last * d.power_w + heads * head.power_w, last * d.rack_units + heads * head.rack_units, how


def _head_host_record(ctx: CheckContext) -> list[Violation]:
    """A group of network or storage racks of one model holds nothing but the design's head nodes,
    all of them, in one group (they sit in the network and storage racks' class)."""
    family = "racks_available"
    hosts = [g for g in ctx.design.racks if g.role in ("network", "storage") and g.holds]
    out = [Violation(family=family, item="racks", detail=f"{len(hosts)} groups of racks of one model hold other "
                                                         "devices; only one may, the head nodes")] if len(hosts) > 1 else []
    host, head = ctx.head_host, ctx.head
    if host is None:
        return out
    want = {head[0].id: head[1]} if head is not None else {}
    if host.holds != want:
        out.append(Violation(family=family, item=f"{host.role} racks ({host.rack_class})",
                             detail=f"hold {host.holds} in their last rack; only the head nodes may ({want or 'none'})"))
    pairs = [role for role, group in _racks(ctx, rack_roles(ctx)) if group is host]
    if host.role not in ("network", "storage"):
        out.append(Violation(family=family, item=f"{host.role} racks ({host.rack_class})",
                             detail="hold the head nodes; they sit in network or storage racks"))
    elif not pairs or len([d for d in pairs[0].devices if d.count]) != 1:
        out.append(Violation(family=family, item=f"{host.role} racks ({host.rack_class})",
                             detail="the head nodes are recorded in a group that is not of one model"))
    return out


def _rack_counts(ctx: CheckContext) -> list[Violation]:
    """Per role ``Σ ceil(devices / devices_per_rack)`` racks over its models; or mixed racks only,
    holding every device once."""
    family = "racks_available"
    out: list[Violation] = []
    if _mixed(ctx):
        return _mixed_counts(ctx, ctx.rack_class)
    for whole in rack_roles(ctx):
        rack = ctx.rack_class_of(whole.role)
        pairs = recorded_racks(ctx, whole)
        if rack is None:
            continue
        if pairs is None:
            models = ", ".join(d.device for d in whole.devices if d.count)
            out.append(Violation(family=family, item=f"{whole.label} ({rack.id})",
                                 detail=f"{len(ctx.rack_groups(whole.role))} groups; one for the role or one per model ({models})"))
            continue
        out += _role_rack_count(rack, pairs)
    return out


def _role_rack_count(rack: RackClass, pairs: list[tuple[RackRole, RackGroup | None]]) -> list[Violation]:
    family = "racks_available"
    out: list[Violation] = []
    for role, recorded in pairs:
        item = f"{role.label} ({rack.id})"
        needed = role.racks_needed(lambda d: d.per_rack(rack))
        if recorded is None:
            if needed:
                out.append(Violation(family=family, item=item, detail=f"missing; {needed} racks needed"))
            continue
        if recorded.count != needed:
            how = " + ".join(f"ceil({num(d.count)} × {d.device} / {d.per_rack(rack)} per rack)" for d in role.devices if d.count)
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(recorded.count)} recorded; {how or 'no devices'} = {num(needed)}"))
        # Compute racks record their capacity (more than fits is the power/units families'
        # finding; fewer would buy racks the rules do not need); other racks record no nodes.
        per_rack = role.devices[0].per_rack(rack)
        if role.role == "compute" and recorded.nodes_per_rack < per_rack:
            out.append(Violation(family=family, item=item,
                                 detail=f"{recorded.nodes_per_rack} nodes per rack recorded; a rack holds "
                                        f"{per_rack} × {role.devices[0].device}"))
        elif role.role != "compute" and recorded.nodes_per_rack != 0:
            out.append(Violation(family=family, item=item,
                                 detail=f"{recorded.nodes_per_rack} nodes per rack recorded in a rack without nodes"))
    return out


def racks_available(ctx: CheckContext) -> list[Violation]:
    """One rack class for the nodes' racks (compute or mixed) and one for the network and storage
    racks, each allowed by the site; per role ``Σ ceil(devices / devices_per_rack)`` racks over its
    models (racks hold one model each) with ``devices_per_rack = min(floor(rack W / device W),
    floor(rack U / device U))`` (or mixed racks holding every device); the total is within
    ``site.max_racks``."""
    family = "racks_available"
    out: list[Violation] = []
    site = ctx.instance.site
    for what, roles in (("the nodes' racks", ("compute", "mixed")), ("the network and storage racks", ("network", "storage"))):
        held = sorted({g.rack_class for g in ctx.design.racks if g.role in roles})
        if len(held) > 1:
            out.append(Violation(family=family, item="racks",
                                 detail=f"{len(held)} rack classes for {what} ({', '.join(held)}); they share one"))
    classes = sorted({g.rack_class for g in ctx.design.racks})
    for rack_id in classes:
        if ctx.catalog.catalog.by_id("racks").get(rack_id) is None:
            out.append(Violation(family=family, item=f"rack class {rack_id}", detail="not in the catalog"))
        elif site.rack_classes is not None and rack_id not in site.rack_classes:
            out.append(Violation(family=family, item=f"rack class {rack_id}",
                                 detail=f"not among the site's rack classes ({', '.join(site.rack_classes)})"))
    if ctx.rack_class is not None:
        out += _rack_counts(ctx) + _head_host_record(ctx) + _beside_record(ctx)
    total = sum(g.count for g in ctx.design.racks)
    if total > site.max_racks:
        out.append(Violation(family=family, item="racks", detail=f"{num(total)} racks > {num(site.max_racks)} the site has"))
    return out


def site_power_w(ctx: CheckContext) -> float:
    """Provisioned site power, W: every node, switch, storage unit and head node at its provisioned
    power."""
    return sum(d.count * d.power_w for d in all_devices(ctx))


def site_power_within_limit(ctx: CheckContext) -> list[Violation]:
    """``nodes · node W + Σ switches · switch W + Σ storage units · unit W + heads · head W ≤
    power_cap_kw`` over the compute, storage and management switches, the hot and cold storage
    units and the head nodes."""
    family = "site_power_within_limit"
    cap_kw = ctx.instance.site.power_cap_kw
    if cap_kw is None:
        return []
    devices = all_devices(ctx)
    total_w = sum(d.count * d.power_w for d in devices)
    if total_w > cap_kw * W_PER_KW * (1 + 1e-9):
        return [Violation(family=family, item="site",
                          detail=f"{_listing(devices, 'power')} = {kw(total_w)} > cap {kw(cap_kw * W_PER_KW)}")]
    return []


RULES = {
    "rack_power_within_limit": rack_power_within_limit,
    "rack_units_within_limit": rack_units_within_limit,
    "racks_available": racks_available,
    "site_power_within_limit": site_power_within_limit,
}
