"""Management network rule: leaves and aggregation switches cover every management port."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.switch_groups import switch_group_violations
from topoopt.checking.text import num
from topoopt.models.design import Violation

MANAGEMENT_SWITCH_TIERS = ("mgmt-leaf", "mgmt-aggregation")


def _field(out: list[Violation], family: str, name: str, recorded: int, expected: int, why: str) -> None:
    if recorded != expected:
        out.append(Violation(family=family, item=f"management_network.{name}",
                             detail=f"recorded {num(recorded)}, the rules give {num(expected)} ({why})"))


def _listing(ctx: CheckContext) -> str:
    """``"4 × dgx-h100 × (1 + 1) + 12 × qm9700 × 1"``: the management ports per device kind (in-band
    plus out-of-band; a switch's own)."""
    return " + ".join(f"{num(count)} × {what} × " + (f"({in_band} + {oob})" if in_band else f"{oob}")
                      for what, count, in_band, oob in ctx.mgmt_devices if count)


def management_ports_cover(ctx: CheckContext) -> list[Violation]:
    """``M = Σ devices · (1 + oob_ports)`` over nodes and hot and cold storage units, plus
    ``Σ switches · oob_ports`` over compute and storage switches (managed in band over their data
    ports), plus ``racks · pdus`` (one port per rack PDU); a management leaf (role management) has ``d`` device ports and 2 uplinks
    (``networks.management_leaf``); ``leaves = ceil(M / d)``; past one leaf,
    ``2 · ceil(leaves / (k_a − 2))`` aggregation switches (role management, ``k_a`` ports at the
    uplink speed, 2 kept for the site's management core), each taking one uplink from every leaf
    of its pair. Switch and link groups agree."""
    family = "management_ports_cover"
    out: list[Violation] = []
    m, switch, aggregation = ctx.design.management_network, ctx.mgmt_switch, ctx.mgmt_aggregation_switch
    if switch is None or aggregation is None:
        return out  # allowed_by_lists reports an unknown switch
    models = {switch.id: switch} | ({aggregation.id: aggregation} if m.aggregation else {})
    for model in models.values():
        if model.role != "management":
            out.append(Violation(family=family, item=f"management switch {model.id}",
                                 detail=f"role {model.role}; the management network uses management switches"))
    c, leaf = ctx.mgmt_counts, ctx.mgmt_leaf
    if c is None:
        out.append(Violation(family=family, item=f"management switch {switch.id}",
                             detail=f"{switch.radix(leaf.device_gbps)} ports at {num(leaf.device_gbps)} Gb/s: "
                                    "a leaf needs 2 uplinks and a device port"))
        return out
    _field(out, family, "ports", m.ports, c.ports, _listing(ctx))
    why = (f"{switch.radix(leaf.device_gbps)} ports, uplinks on their own cages" if leaf.own_uplink_cages
           else f"{switch.radix(leaf.device_gbps)} ports − 2 uplinks")
    _field(out, family, "leaf_down_ports", m.leaf_down_ports, c.leaf_down_ports, why)
    _field(out, family, "leaves", m.leaves, c.leaves, f"ceil({num(c.ports)} ports / {c.leaf_down_ports} per leaf)")
    k_a = ctx.mgmt_aggregation_radix
    if c.leaves > 1 and c.leaves_per_pair < 1:
        out.append(Violation(family=family, item=f"mgmt-aggregation switches ({aggregation.id})",
                             detail=f"{k_a} ports at the leaves' {num(leaf.uplink_gbps)} Gb/s uplink "
                                    "speed: none left for a leaf besides 2 to the site's management core"))
    why = "one leaf" if c.leaves == 1 else f"2 × ceil({num(c.leaves)} leaves / ({k_a} − 2 kept for the core) per pair)"
    _field(out, family, "aggregation", m.aggregation, c.aggregation, why)
    if not m.aggregation and m.aggregation_switch is not None:
        out.append(Violation(family=family, item="management_network.aggregation_switch",
                             detail=f"{m.aggregation_switch} recorded without aggregation switches"))
    expected = {"mgmt-leaf": (c.leaves, c.leaf_ports_used, switch.id),
                "mgmt-aggregation": (c.aggregation, c.aggregation_ports_used, aggregation.id)}
    for tier in MANAGEMENT_SWITCH_TIERS:
        count, used, model = expected[tier]
        out += switch_group_violations(ctx, family, tier, count, used, model, "management")
    for link_class, links in (("mgmt", c.device_links), ("mgmt-uplink", c.uplinks)):
        groups = [g for g in ctx.design.links if g.between == link_class]
        if len(groups) > 1:
            out.append(Violation(family=family, item=f"{link_class} links", detail=f"{len(groups)} groups for one class"))
        recorded = sum(g.count for g in groups)
        if not groups and links:
            out.append(Violation(family=family, item=f"{link_class} links", detail=f"missing; {num(links)} links needed"))
        elif recorded != links:
            out.append(Violation(family=family, item=f"{link_class} links", detail=f"{num(recorded)} recorded, {num(links)} needed"))
    return out


RULES = {"management_ports_cover": management_ports_cover}
