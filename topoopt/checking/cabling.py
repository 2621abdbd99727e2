"""Cable and transceiver rules: form factors, ports per cage, speed, assemblies and reach."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import assemblies_needed
from topoopt.checking.text import close, num
from topoopt.models.design import Violation

COPPER_OR_AOC = ("dac", "acc", "aoc")
"""Media whose assembly is one piece end to end: its node end cannot be split over several leaves."""


def port_form_factor_match(ctx: CheckContext) -> list[Violation]:
    """End *a* fits the upper switch's cage and carries all of its logical ports (``links / a_ends =
    ports_per_cage[g]``); end *b* likewise fits the node cage (node–leaf) or the lower switch's
    cage; the part runs at the link speed; assemblies are whole, counted per pair of devices
    (``derive.assemblies_needed``). A DAC, ACC or AOC whose node end carries several links serves
    only 0 or 1 tier: with leaves per rail the links of one node cage go to different leaves."""
    family = "port_form_factor_match"
    out: list[Violation] = []
    switch, g = ctx.switch, ctx.gbps
    tiers = ctx.design.fabric.tiers
    for group in ctx.design.links:
        part = ctx.part(group.between)
        if part is None:
            continue  # allowed_by_lists reports an unknown part
        item = f"{group.between} links ({part.id})"
        if part.gbps != g:
            out.append(Violation(family=family, item=item, detail=f"part runs {part.gbps} Gb/s, links run {g} Gb/s"))
        if group.between == "node-leaf" and part.media in COPPER_OR_AOC and part.links > part.b_ends and tiers >= 2:
            out.append(Violation(family=family, item=item, detail=(
                f"a {part.media} node end carries {num(part.links / part.b_ends)} links, which cannot be split over "
                f"the leaves of a {tiers}-tier fabric; it serves 0 or 1 tier only")))
        c, f = ctx.counts, ctx.design.fabric
        if c is not None and part.links >= 1:
            # Links per pair as the rules give them; the record's own when its uplinks do not
            # divide evenly (uplinks_balanced reports that).
            per_leaf_spine = f.links_per_leaf_spine if c.links_per_leaf_spine is None else c.links_per_leaf_spine
            per_spine_core = f.links_per_spine_core if c.links_per_spine_core is None else c.links_per_spine_core
            needed, how = assemblies_needed(group.between, part.links, ctx.nodes, ctx.rails, c, per_leaf_spine,
                                            f.cores_per_plane, per_spine_core)
            if group.assemblies != needed:
                out.append(Violation(family=family, item=item,
                                     detail=f"{num(group.assemblies)} assemblies recorded; {how} = {num(needed)}"))
        if switch is None:
            continue
        switch_ports = switch.ports_per_cage.get(g, 0)
        if part.a_form_factor != switch.cage_form_factor:
            out.append(Violation(family=family, item=item,
                                 detail=f"end a is {part.a_form_factor}, {switch.id} cages are {switch.cage_form_factor}"))
        if part.links != part.a_ends * switch_ports:
            out.append(Violation(family=family, item=item,
                                 detail=f"{part.links} links over {part.a_ends} a-ends ≠ {switch_ports} ports per {switch.id} cage at {g} Gb/s"))
        if group.between == "node-leaf":
            lower_form, lower_ports, lower_name = ctx.node_form_factor, ctx.node_ports_per_cage, "node"
        else:
            lower_form, lower_ports, lower_name = switch.cage_form_factor, switch_ports, switch.id
        if lower_form is not None and part.b_form_factor != lower_form:
            out.append(Violation(family=family, item=item,
                                 detail=f"end b is {part.b_form_factor}, {lower_name} cages are {lower_form}"))
        if part.links != part.b_ends * lower_ports:
            out.append(Violation(family=family, item=item,
                                 detail=f"{part.links} links over {part.b_ends} b-ends ≠ {lower_ports} ports per {lower_name} cage"))
    return out


def cable_reach(ctx: CheckContext) -> list[Violation]:
    """Each part reaches its link class's run: node–leaf ``in_row_m + slack_m`` (leaves at the end
    of the row), leaf–spine and spine–core ``across_rows_m + slack_m``; the record states that run."""
    family = "cable_reach"
    out: list[Violation] = []
    for group in ctx.design.links:
        length_m = ctx.lengths_m[group.between]
        if not close(group.length_m, length_m):
            out.append(Violation(family=family, item=f"{group.between} links",
                                 detail=f"length {num(group.length_m)} m recorded, the site gives {num(length_m)} m"))
        part = ctx.part(group.between)
        if part is not None and part.max_reach_m < length_m:
            out.append(Violation(family=family, item=f"{group.between} links ({part.id})",
                                 detail=f"reach {num(part.max_reach_m)} m < {num(length_m)} m run"))
    return out


RULES = {
    "port_form_factor_match": port_form_factor_match,
    "cable_reach": cable_reach,
}
