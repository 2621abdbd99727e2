"""Cable and transceiver rules for every network's link classes: form factors, ports per cage,
speed, assemblies and reach."""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.checking import networks
from topoopt.checking.context import CheckContext
from topoopt.checking.derive import assemblies_needed, pair_links, too_long_in_rack
from topoopt.checking.in_rack import coiled, in_rack_violations
from topoopt.checking.node import class_gbps, group_gbps
from topoopt.checking.text import close, num
from topoopt.models.catalog import LinkPart, Switch
from topoopt.models.design import LinkGroup, Violation

MANAGEMENT_PORT_FORM_FACTOR = "rj45"
"""Management ports of nodes, switches and storage units (in-band and BMC) are RJ45 copper ports:
the catalog gives devices no management cage of their own."""

COPPER_OR_AOC = ("dac", "acc", "aoc")
"""Media whose assembly is one piece end to end: its node end cannot be split over several leaves."""


@dataclass(frozen=True)
class Ends:
    """What a link group's part plugs into: end *a* a cage of ``upper`` at ``gbps``; end *b* a
    ``lower_form`` cage with ``lower_ports`` logical ports (unknown pieces are None)."""

    gbps: int
    upper: Switch | None
    lower_form: str | None
    lower_ports: int
    lower_name: str


def link_ends(ctx: CheckContext, group: LinkGroup, carried: list | None = None) -> list[Ends]:
    """The ends of ``group``'s class (one per storage tier a ``storage-unit`` group carries)."""
    cls, g = group.between, group_gbps(ctx, group)
    if cls == "node-leaf":
        return [Ends(g, ctx.switch, ctx.node_form_factor, ctx.node_ports_per_cage, "node")]
    if cls in ("leaf-spine", "spine-core"):
        return [Ends(g, ctx.switch, *_switch_cage(ctx.switch, g))]
    if cls == "node-storage":
        nic = ctx.storage_nic
        return [Ends(g, ctx.storage_switch, nic.port_form_factor if nic else None, 1,
                     f"storage NIC {nic.id}" if nic else "storage NIC")]
    if cls == "storage-unit":
        upper = ctx.switch if ctx.converged else ctx.storage_switch
        return [Ends(g, upper, tier.port_form_factor if tier else None, 1, f"{role} storage {tier.id}" if tier else role)
                for role, tier, _ in (carried or [])]
    if cls in ("storage-leaf-spine", "storage-spine-core"):
        return [Ends(g, ctx.storage_switch, *_switch_cage(ctx.storage_switch, g))]
    if cls == "mgmt":
        return [Ends(g, ctx.mgmt_switch, MANAGEMENT_PORT_FORM_FACTOR, 1, "management port")]
    leaf = ctx.mgmt_leaf  # mgmt-uplink: from the aggregation switch down to the leaf's uplink cage
    lower = leaf.uplink_cage if leaf else (None, 1)
    return [Ends(g, ctx.mgmt_aggregation_switch, *lower, ctx.mgmt_switch.id if ctx.mgmt_switch else "switch")]


def _storage_switch_assemblies(ctx: CheckContext, cls: str, part: LinkPart) -> tuple[int, str] | None:
    """Storage leaf–spine (every leaf to every spine; 3 tiers: of its pod) and spine–core (every
    spine to the cores of its plane) assemblies: transceiver kits by the cages they fill, other
    parts per switch pair (None when not derivable)."""
    s, net, q = ctx.storage_counts, ctx.storage_net, part.links
    if s is None or (cls == "storage-spine-core" and net.tiers != 3):
        return None
    if not part.one_piece and q > 1:
        ppc = ctx.storage_switch.ports_per_cage.get(ctx.storage_gbps, 0) if ctx.storage_switch else 0
        return networks.storage_kits_by_cages(cls, s, ctx.storage_radix, ppc, part)
    if net.tiers == 3:
        planes = s.up // s.links_per_leaf_spine if s.links_per_leaf_spine else 0
        if cls == "storage-leaf-spine":
            return networks.assemblies_needed(cls, q, 0, 0, s.leaves * planes, s.links_per_leaf_spine)
        if planes < 1 or s.cores % planes or s.links_per_spine_core is None:
            return None
        return networks.assemblies_needed(cls, q, 0, 0, s.spines * (s.cores // planes), s.links_per_spine_core)
    if cls != "storage-leaf-spine" or net.spines < 1:
        return None
    per_pair = s.links_per_leaf_spine if s.links_per_leaf_spine is not None else -(-s.up // net.spines)
    return networks.assemblies_needed(cls, q, 0, 0, s.leaves * net.spines, per_pair)


def _switch_cage(switch: Switch | None, gbps: int) -> tuple[str | None, int, str]:
    if switch is None:
        return None, 1, "switch"
    return switch.cage_form_factor, switch.ports_per_cage.get(gbps, 0), switch.id


def _assemblies(ctx: CheckContext, group: LinkGroup, part: LinkPart, carried: list | None) -> tuple[int, str] | None:
    """Whole assemblies of ``part`` ``group`` needs (None when not derivable)."""
    cls, c, f, q = group.between, ctx.counts, ctx.design.fabric, part.links
    if cls in ("node-leaf", "leaf-spine", "spine-core"):
        if c is None:
            return None
        # Links per pair as the rules give them; the record's own when its uplinks do not divide
        # evenly (uplinks_balanced reports that).
        per_leaf_spine, per_spine_core = (_links_per_switch_pair(ctx, name) for name in ("leaf-spine", "spine-core"))
        ppc = _switch_cage(ctx.switch, class_gbps(ctx, cls))[1]
        # A single switch carries every rail of a node (records before rails per leaf say 1).
        g = ctx.rails if f.tiers == 1 and not f.rail_only else f.rails_per_leaf
        return assemblies_needed(cls, part, ppc, ctx.nodes, ctx.rails, c, per_leaf_spine, f.cores_per_plane,
                                 per_spine_core, g)
    if cls == "node-storage":
        return networks.assemblies_needed(cls, q, ctx.nodes, ctx.storage_ports_per_node)
    if cls == "storage-unit":
        tiers = [(tier, ports) for _, tier, ports in carried or []]
        if any(tier is None for tier, _ in tiers):
            return None
        counted = [networks.assemblies_needed(cls, q, ports // tier.network_ports, tier.network_ports)
                   for tier, ports in tiers]
        return sum(n for n, _ in counted), " + ".join(how for _, how in counted) or "no units"
    if cls in ("storage-leaf-spine", "storage-spine-core"):
        return _storage_switch_assemblies(ctx, cls, part)
    m = ctx.mgmt_counts
    if m is None:
        return None
    if cls == "mgmt":
        return networks.assemblies_needed(cls, q, m.device_links, 1)
    return networks.assemblies_needed(cls, q, 0, 0, m.uplinks, 1)  # one link per leaf-aggregation pair


def _links_per_switch_pair(ctx: CheckContext, link_class: str) -> int | None:
    """Links per leaf–spine or spine–core pair (the rules' count, else the record's); None otherwise."""
    c, f = ctx.counts, ctx.design.fabric
    if c is None or link_class not in ("leaf-spine", "spine-core"):
        return None
    if link_class == "leaf-spine":
        return f.links_per_leaf_spine if c.links_per_leaf_spine is None else c.links_per_leaf_spine
    return f.links_per_spine_core if c.links_per_spine_core is None else c.links_per_spine_core


def _links_per_pair(ctx: CheckContext, link_class: str) -> list[int]:
    """The link counts of the class's switch pairs: 2 tiers ``floor(u/S)`` and, when the uplinks
    do not divide evenly, ``ceil(u/S)`` (``derive.pair_links``); else the one per-pair count;
    storage leaf–spine and spine–core: theirs."""
    if link_class in ("storage-leaf-spine", "storage-spine-core"):
        s = ctx.storage_counts
        per_pair = None if s is None else (
            s.links_per_leaf_spine if link_class == "storage-leaf-spine" else s.links_per_spine_core)
        return [per_pair] if per_pair else []
    c = ctx.counts
    if link_class == "leaf-spine" and c is not None and c.tiers == 2 and c.spines >= 1:
        return [links for _, links in pair_links(c.up, c.spines)]
    per_pair = _links_per_switch_pair(ctx, link_class)
    return [per_pair] if per_pair else []


def port_form_factor_match(ctx: CheckContext) -> list[Violation]:
    """End *a* fits the upper switch's cage and carries all of its logical ports (``links / a_ends =
    ports_per_cage[g]``); end *b* likewise fits the node cage (node–leaf), the storage NIC's or
    storage unit's single-port cages (node–storage, storage-unit), an RJ45 management port (mgmt)
    or the lower switch's cage; the part runs at its network's speed; assemblies are whole, counted
    per pair of devices, except transceiver kits between compute or storage switches, which are
    counted by the cages they fill (``derive.assemblies_needed``, ``networks.assemblies_needed``,
    ``networks.storage_kits_by_cages``). Between compute or storage switches the links that reach
    one far switch together — all of a one-piece cable's,
    ``links_per_fibre`` (default 1) of a kit's — divide the links per pair. A DAC, ACC
    or AOC whose node end carries several links serves only 0 or 1 tier: with leaves per rail the
    links of one node cage go to different leaves; likewise a rail-only 1-tier fabric whose
    switches carry fewer rails than the node end's links."""
    family = "port_form_factor_match"
    out: list[Violation] = []
    tiers = ctx.design.fabric.tiers
    carried_by = {id(group): carried for group, carried in ctx.unit_link_groups}
    for group in ctx.design.links:
        part = ctx.cable(group.part)
        if part is None:
            continue  # allowed_by_lists reports an unknown part
        item = f"{group.between} links ({part.id})"
        carried = carried_by.get(id(group))
        g = group_gbps(ctx, group)
        if part.gbps != g:
            out.append(Violation(family=family, item=item, detail=f"part runs {part.gbps} Gb/s, links run {g} Gb/s"))
        per_end = part.links // max(part.b_ends, 1)
        if group.between == "node-leaf" and part.media in COPPER_OR_AOC and per_end > 1:
            if tiers >= 2:
                out.append(Violation(family=family, item=item, detail=(
                    f"a {part.media} node end carries {num(part.links / part.b_ends)} links, which cannot be split over "
                    f"the leaves of a {tiers}-tier fabric; it serves 0 or 1 tier only")))
            elif tiers == 1 and ctx.design.fabric.rails_per_leaf < per_end:
                out.append(Violation(family=family, item=item, detail=(
                    f"a {part.media} node end carries {per_end} links, which cannot be split over the switches of "
                    f"a rail-only fabric of {ctx.design.fabric.rails_per_leaf} rail(s) per switch")))
        together = part.links_together
        per_pair = _links_per_pair(ctx, group.between)
        if any(links % together for links in per_pair):
            carrier = f"a {part.media} cable" if part.one_piece else "a fibre"
            out.append(Violation(family=family, item=item, detail=(
                f"{carrier} carries {together} links to one far switch, the switches have "
                f"{' or '.join(map(str, per_pair))} links per "
                f"pair: its cages would be part-filled or shared")))
        needed = _assemblies(ctx, group, part, carried)
        if needed is not None and group.assemblies != needed[0]:
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(group.assemblies)} assemblies recorded; {needed[1]} = {num(needed[0])}"))
        for ends in link_ends(ctx, group, carried):
            out += _ends_fit(family, item, part, ends)
    return out


def _ends_fit(family: str, item: str, part: LinkPart, ends: Ends) -> list[Violation]:
    out: list[Violation] = []
    switch = ends.upper
    if switch is not None:
        switch_ports = switch.ports_per_cage.get(ends.gbps, 0)
        if part.a_form_factor != switch.cage_form_factor:
            out.append(Violation(family=family, item=item,
                                 detail=f"end a is {part.a_form_factor}, {switch.id} cages are {switch.cage_form_factor}"))
        if part.links != part.a_ends * switch_ports:
            out.append(Violation(family=family, item=item,
                                 detail=f"{part.links} links over {part.a_ends} a-ends ≠ {switch_ports} ports per {switch.id} "
                                        f"cage at {ends.gbps} Gb/s"))
    if ends.lower_form is not None and part.b_form_factor != ends.lower_form:
        out.append(Violation(family=family, item=item,
                             detail=f"end b is {part.b_form_factor}, {ends.lower_name} cages are {ends.lower_form}"))
    if ends.lower_form is not None and part.links != part.b_ends * ends.lower_ports:
        out.append(Violation(family=family, item=item,
                             detail=f"{part.links} links over {part.b_ends} b-ends ≠ {ends.lower_ports} ports per "
                                    f"{ends.lower_name} cage"))
    return out


def cable_reach(ctx: CheckContext) -> list[Violation]:
    """Each part reaches its link class's run: device to leaf ``in_row_m + slack_m`` (node–leaf,
    node–storage, storage-unit, mgmt: leaves at the end of the row), switch to switch
    ``across_rows_m + slack_m`` (leaf–spine, spine–core, storage leaf–spine, mgmt uplinks), each
    shorter where the racks put its ends together (``derive.placed_runs_m``) and, with the site's
    row size, no longer than the floor's diagonal: the site's ``max_racks``' for every class, the
    design's racks' for a compute class (``derive.floor_diagonal_m``); the record states that run. Within one rack a one-piece cable is no longer than ``in_rack_m + slack_m``."""
    family = "cable_reach"
    out: list[Violation] = []
    d = ctx.instance.site.distances
    for group in ctx.design.links:
        length_m = ctx.lengths_m[group.between]
        if not close(group.length_m, length_m):
            out.append(Violation(family=family, item=f"{group.between} links",
                                 detail=f"length {num(group.length_m)} m recorded, the site gives {num(length_m)} m"))
        part = ctx.cable(group.part)
        if part is not None and part.max_reach_m < length_m:
            out.append(Violation(family=family, item=f"{group.between} links ({part.id})",
                                 detail=f"reach {num(part.max_reach_m)} m < {num(length_m)} m run"))
        if (part is not None and group.between in ctx.in_rack_classes
                and too_long_in_rack(part, d.in_rack_m, d.slack_m)):
            out.append(coiled(ctx, f"{group.between} links ({part.id})", part))
    return out + in_rack_violations(ctx)


RULES = {
    "port_form_factor_match": port_form_factor_match,
    "cable_reach": cable_reach,
}
