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
    ports); a management switch (role management) of ``k_m`` ports at its device speed has
    ``k_m − 2`` device ports and 2 uplinks per leaf; ``leaves = ceil(M / (k_m − 2))``; past one
    leaf, ``2 · ceil(leaves / k_m)`` aggregation switches, each taking one uplink from every leaf of
    its pair within its ports at the uplink speed. Switch and link groups agree."""
    family = "management_ports_cover"
    out: list[Violation] = []
    m, switch = ctx.design.management_network, ctx.mgmt_switch
    if switch is None:
        return out  # allowed_by_lists reports an unknown switch
    if switch.role != "management":
        out.append(Violation(family=family, item=f"management switch {switch.id}",
                             detail=f"role {switch.role}; the management network uses management switches"))
    c, k = ctx.mgmt_counts, ctx.mgmt_radix
    if c is None:
        out.append(Violation(family=family, item=f"management switch {switch.id}",
                             detail=f"{k} ports at {num(ctx.mgmt_speeds_gbps[0])} Gb/s: a leaf needs 2 uplinks and a device port"))
        return out
    _field(out, family, "ports", m.ports, c.ports, _listing(ctx))
    _field(out, family, "leaf_down_ports", m.leaf_down_ports, c.leaf_down_ports, f"{k} ports − 2 uplinks")
    _field(out, family, "leaves", m.leaves, c.leaves, f"ceil({num(c.ports)} ports / {c.leaf_down_ports} per leaf)")
    why = "one leaf" if c.leaves == 1 else f"2 × ceil({num(c.leaves)} leaves / {k} per pair)"
    _field(out, family, "aggregation", m.aggregation, c.aggregation, why)
    uplink_radix = switch.radix(ctx.mgmt_speeds_gbps[1])
    if c.leaves_per_pair > uplink_radix:
        out.append(Violation(family=family, item=f"mgmt-aggregation switches ({switch.id})",
                             detail=f"{num(c.leaves_per_pair)} leaf uplinks per switch > {uplink_radix} ports at "
                                    f"{num(ctx.mgmt_speeds_gbps[1])} Gb/s"))
    expected = {"mgmt-leaf": (c.leaves, c.leaf_ports_used), "mgmt-aggregation": (c.aggregation, c.aggregation_ports_used)}
    for tier in MANAGEMENT_SWITCH_TIERS:
        count, used = expected[tier]
        out += switch_group_violations(ctx, family, tier, count, used, m.switch, "management")
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
