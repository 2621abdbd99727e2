"""Storage network rules: node storage bandwidth, and the ports of the storage (or compute)
switches that carry the storage units (``networks`` gives the arithmetic).

The storage traffic is ``need_gbps = 8 · max(read_gb_per_s, write_gb_per_s)`` of
``perf.storage_needs`` at the throughput target: reads run continuously and a checkpoint save
blocks training, so the two never overlap.
"""

from __future__ import annotations

from topoopt.checking import networks
from topoopt.checking.context import CheckContext
from topoopt.checking.switch_groups import switch_group_violations
from topoopt.checking.text import close, num
from topoopt.checking.units import BITS_PER_BYTE
from topoopt.models.design import Violation

TOLERANCE = 1e-9
"""Relative slack on supply ≥ need, so a need computed through another float path still matches."""

STORAGE_SWITCH_TIERS = {"storage-leaf": "leaves", "storage-spine": "spines", "storage-core": "cores"}


def need_gbps(ctx: CheckContext) -> float:
    """Storage traffic all nodes together carry, Gb/s."""
    need = ctx.storage_needs
    return BITS_PER_BYTE * max(need.read_gb_per_s, need.write_gb_per_s)


def _dedicated_bandwidth(ctx: CheckContext, family: str, needed: float) -> list[Violation]:
    """Dedicated: the node–storage bandwidth cabled is at most ``max(8 · need, n · 400)`` Gb/s, and
    2 or 3 tiers' leaf uplinks carry the need: ``leaves · u · g ≥ need``."""
    out: list[Violation] = []
    total = ctx.nodes * ctx.storage_ports_per_node * ctx.storage_gbps
    cap = networks.storage_cap_gbps(ctx.nodes, needed)
    if total > cap * (1 + TOLERANCE):
        out.append(Violation(family=family, item="storage network (dedicated)",
                             detail=f"{num(ctx.nodes)} nodes × {ctx.storage_ports_per_node}×{num(ctx.storage_gbps)}G = "
                                    f"{num(total)} Gb/s cabled > max({networks.STORAGE_CAP_NEED_FACTOR} × {num(needed)}, "
                                    f"{num(ctx.nodes)} × {networks.STORAGE_CAP_NODE_GBPS}) = {num(cap)} Gb/s"))
    c = ctx.storage_counts
    if ctx.storage_net.tiers >= 2 and c is not None:
        uplink = c.leaves * c.up * ctx.storage_gbps
        if uplink < needed * (1 - TOLERANCE):
            out.append(Violation(family=family, item="storage leaf uplinks",
                                 detail=f"{num(c.leaves)} leaves × {c.up} uplinks × {num(ctx.storage_gbps)}G = "
                                        f"{num(uplink)} Gb/s < {num(needed)} Gb/s needed"))
    return out


def storage_nic_bandwidth_met(ctx: CheckContext) -> list[Violation]:
    """``n · P · g ≥ 8 · max(read, write)`` GB/s of storage traffic, where a node has ``P``
    dedicated storage ports cabled at the storage speed ``g``, or, converged, its ``rails`` compute
    ports at the compute link speed; the record states ``P``, ``P · g`` and the need. Dedicated,
    also at most ``max(8 · need, n · 400 Gb/s)`` cabled, and 2 or 3 tiers' uplinks carry the need."""
    family = "storage_nic_bandwidth_met"
    out: list[Violation] = []
    net = ctx.storage_net
    ports, g = ctx.storage_ports_per_node, ctx.storage_gbps
    node_gbps = ports * g
    needed = need_gbps(ctx)
    item = f"storage network ({net.mode})"
    total = ctx.nodes * node_gbps
    if total < needed * (1 - TOLERANCE):
        what = "compute NICs" if ctx.converged else "storage NIC"
        out.append(Violation(family=family, item=item,
                             detail=f"{what} {ports}×{num(g)}G per node × {num(ctx.nodes)} nodes = {num(total)} Gb/s "
                                    f"< {num(needed)} Gb/s needed"))
    if net.ports_per_node != ports:
        why = f"{ctx.rails} compute rails" if ctx.converged else (
            f"{net.nics_per_node} × {ctx.storage_nic.ports} ports of {ctx.storage_nic.id}" if ctx.storage_nic else "")
        out.append(Violation(family=family, item=item,
                             detail=f"ports_per_node {net.ports_per_node} recorded, the rules give {ports} ({why})"))
    if not close(net.node_gbps, node_gbps, rel=1e-6, abs_=1e-6):
        out.append(Violation(family=family, item=item,
                             detail=f"node_gbps {num(net.node_gbps)} recorded; {ports} ports × {num(g)} Gb/s = {num(node_gbps)}"))
    if not close(net.need_gbps, needed, rel=1e-4, abs_=1e-2):
        out.append(Violation(family=family, item=item,
                             detail=f"need_gbps {num(net.need_gbps)} recorded; 8 × max(read {num(ctx.storage_needs.read_gb_per_s)}, "
                                    f"write {num(ctx.storage_needs.write_gb_per_s)} GB/s) = {num(needed)} Gb/s"))
    if not ctx.converged:
        out += _dedicated_bandwidth(ctx, family, needed)
    return out


def _show(value) -> str:
    return num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _field(out: list[Violation], family: str, name: str, recorded, expected, why: str = "") -> None:
    """Compare one recorded storage-network field with its recomputed value."""
    if recorded != expected:
        because = f" ({why})" if why else ""
        out.append(Violation(family=family, item=f"storage_network.{name}",
                             detail=f"recorded {_show(recorded)}, the rules give {_show(expected)}{because}"))


def _switch_groups(ctx: CheckContext, family: str, expected: dict[str, tuple[int, int]]) -> list[Violation]:
    """Storage switch groups: ``expected`` maps a tier to ``(count, ports in use)``; absent tiers
    must have no group (a zero count may be left out)."""
    out: list[Violation] = []
    model = ctx.storage_net.switch
    for tier in STORAGE_SWITCH_TIERS:
        count, used = expected.get(tier, (0, 0))
        out += switch_group_violations(ctx, family, tier, count, used, model, "storage")
    return out


def _link_counts(ctx: CheckContext, family: str, expected: dict[str, int]) -> list[Violation]:
    """Storage link groups carry the expected links (absent classes: none)."""
    out: list[Violation] = []
    for link_class in ("node-storage", "storage-unit", "storage-leaf-spine", "storage-spine-core"):
        groups = [g for g in ctx.design.links if g.between == link_class]
        links = expected.get(link_class, 0)
        if link_class != "storage-unit" and len(groups) > 1:
            out.append(Violation(family=family, item=f"{link_class} links", detail=f"{len(groups)} groups for one class"))
        recorded = sum(g.count for g in groups)
        if not groups and links:
            out.append(Violation(family=family, item=f"{link_class} links", detail=f"missing; {num(links)} links needed"))
        elif recorded != links:
            out.append(Violation(family=family, item=f"{link_class} links", detail=f"{num(recorded)} recorded, {num(links)} needed"))
    for group, carried in ctx.unit_link_groups:
        ports = sum(p for _, _, p in carried)
        if len(ctx.unit_link_groups) > 1 and group.count != ports:
            tiers = " + ".join(f"{role} {tier.id if tier else '?'}" for role, tier, _ in carried) or "no tier"
            out.append(Violation(family=family, item=f"storage-unit links ({group.part})",
                                 detail=f"{num(group.count)} recorded for {tiers}, whose units have {num(ports)} ports"))
    return out


def _unit_ports(ctx: CheckContext, family: str) -> list[Violation]:
    """Each tier records ``units · network_ports`` ports, runs a speed its switch's cages run (its
    storage-unit links' speed: the storage network's, or another in cages of their own) and
    speaks the storage network's protocol."""
    out: list[Violation] = []
    records = {"hot": ctx.design.storage, "cold": ctx.design.cold_storage}
    g, protocols = ctx.storage_gbps, ctx.storage_protocols
    switch = ctx.switch if ctx.converged else ctx.storage_switch
    for role, tier, units in ctx.storage_tiers:
        if tier is None:
            continue
        item = f"{role} storage ({units} × {tier.id})"
        if records[role].ports != units * tier.network_ports:
            out.append(Violation(family=family, item=item,
                                 detail=f"{num(records[role].ports)} ports recorded; {units} units × {tier.network_ports} = "
                                        f"{num(units * tier.network_ports)}"))
        group = ctx.unit_group(role)
        unit_g = group.gbps if group is not None else g
        if unit_g not in tier.port_speeds_gbps:
            out.append(Violation(family=family, item=item,
                                 detail=f"ports run {', '.join(map(str, tier.port_speeds_gbps))} Gb/s, not "
                                        + (f"the storage network's {num(g)}" if unit_g == g else num(unit_g))
                                        + " Gb/s"))
        elif ctx.converged and unit_g != g:
            out.append(Violation(family=family, item=item,
                                 detail=f"runs {num(unit_g)} Gb/s on the compute fabric, which runs {num(g)} Gb/s"))
        elif switch is not None and switch.ports_per_cage.get(unit_g, 0) < 1:
            out.append(Violation(family=family, item=item,
                                 detail=f"{switch.id} cages do not run {num(unit_g)} Gb/s"))
        # No protocol at all means the NIC and the switch disagree: nic_supports_interconnect says so.
        if protocols and not protocols & set(tier.protocols):
            network = f"{switch.id} at {num(g)} Gb/s" if switch is not None else f"{num(g)} Gb/s"
            out.append(Violation(family=family, item=item,
                                 detail=f"speaks {', '.join(tier.protocols)}; the storage network ({network}) runs "
                                        f"{', '.join(sorted(protocols)) or 'no common protocol'}"))
    _field(out, family, "unit_ports", ctx.storage_net.unit_ports, ctx.unit_ports, "hot and cold units' ports")
    return out


def _converged(ctx: CheckContext, family: str) -> list[Violation]:
    """Converged: the units sit on the compute fabric, never a rail-only one (a unit would reach
    one rail group only): its one switch holds ``g·n + U ≤ k``; in 2 or 3 tiers either the top
    tier's free ports take them (``attach = top``: ``U + leaves·u ≤ S·k`` on the spines, ``U +
    spines·u2 ≤ cores·k`` on the cores, also at the growth target) or ``ceil(U / (k − u))``
    storage leaves do, whose ``u`` uplinks carry the storage traffic; no storage switch, tier or
    link of its own."""
    out: list[Violation] = []
    net, f, c, k = ctx.storage_net, ctx.design.fabric, ctx.counts, ctx.radix
    for name, value in (("switch", None), ("tiers", 0), ("leaves", 0), ("spines", 0), ("cores", 0)):
        _field(out, family, name, getattr(net, name), value, "converged")
    if not ctx.has_fabric:
        out.append(Violation(family=family, item="storage network (converged)",
                             detail="a single node without a compute fabric has no fabric to converge on"))
        return out + _switch_groups(ctx, family, {}) + _link_counts(ctx, family, {"storage-unit": ctx.unit_ports})
    if f.tiers == 1 and f.rails_per_leaf < ctx.rails:
        out.append(Violation(family=family, item="storage network (converged)", detail=(
            f"a rail-only fabric ({ctx.rails} rails in groups of {f.rails_per_leaf}, no switch joining the groups): "
            f"a storage unit would reach one rail group only")))
    if c is not None:
        unit_slots = ctx.unit_slots
        if f.tiers == 1:
            if c.ports_per_leaf > k:
                out.append(Violation(family=family, item=f"leaf switch ({f.switch})",
                                     detail=f"{num(c.down)} node ports + {num(unit_slots)} storage-unit ports = "
                                            f"{num(c.ports_per_leaf)} > {k} ports of one switch"))
            _field(out, family, "compute_storage_leaves", net.compute_storage_leaves, 0, "one switch")
        elif net.converged_attach == "top":
            _field(out, family, "compute_storage_leaves", net.compute_storage_leaves, 0, "units on the top tier")
            out += _top_ports(ctx, family, c, "")
            if ctx.growth_counts is not None:
                out += _top_ports(ctx, family, ctx.growth_counts, f"growth to {num(ctx.provisioned_nodes)} nodes: ")
        else:
            free = k - c.up
            _field(out, family, "compute_storage_leaves", net.compute_storage_leaves, c.storage_leaves,
                   f"ceil({num(unit_slots)} unit ports / ({k} − {c.up} up) free ports)")
            if free < 1:
                out.append(Violation(family=family, item=f"storage leaves ({f.switch})",
                                     detail=f"{c.up} uplinks leave none of {k} ports for storage units"))
            carried = c.storage_leaves * c.up * ctx.gbps
            needed = need_gbps(ctx)
            if carried < needed * (1 - TOLERANCE):
                out.append(Violation(family=family, item=f"storage leaves ({f.switch})", detail=(
                    f"{c.storage_leaves} storage leaves × {c.up} uplinks × {num(ctx.gbps)} Gb/s = {num(carried)} Gb/s "
                    f"< {num(needed)} Gb/s needed")))
    out += _switch_groups(ctx, family, {})
    out += _link_counts(ctx, family, {"storage-unit": ctx.unit_ports})
    return out


def _top_ports(ctx: CheckContext, family: str, c, prefix: str) -> list[Violation]:
    """Storage units on the top tier's free ports: its ports in use, units included, within its ports."""
    f, k = ctx.design.fabric, ctx.radix
    if c.top_ports_used <= c.top_ports:
        return []
    if f.tiers == 2:
        tier, how = "spine", f"{num(c.leaves)} leaves × {c.up} uplinks"
        room = f"{c.spines} spines × {k}"
    else:
        tier, how = "core", f"{num(c.spines)} spines × {c.spine_up_ports} uplinks"
        room = f"{c.cores} cores × {k}"
    return [Violation(family=family, item=f"{tier} switches ({f.switch})", detail=(
        f"{prefix}{num(c.top_unit_ports)} storage-unit ports + {how} = {num(c.top_ports_used)} > {room} = "
        f"{num(c.top_ports)} ports"))]


def _dedicated(ctx: CheckContext, family: str) -> list[Violation]:
    """Dedicated: 1 tier ``E ≤ k``; 2 or 3 tiers a leaf split ``(d, u)`` of ``storage_leaf_splits``
    and ``ceil(E / d)`` leaves; 2 tiers spines using ``leaves · u/S ≤ k`` ports; 3 tiers pods and
    cores (:func:`_three_tiers`); the storage switch is a data-fabric switch (role compute)."""
    out: list[Violation] = []
    net, c, k = ctx.storage_net, ctx.storage_counts, ctx.storage_radix
    switch = ctx.storage_switch
    _field(out, family, "compute_storage_leaves", net.compute_storage_leaves, 0, "dedicated")
    if net.switch is None:
        out.append(Violation(family=family, item="storage network (dedicated)", detail="no storage switch recorded"))
    if switch is not None and switch.role != "compute":
        out.append(Violation(family=family, item=f"storage switch {switch.id}",
                             detail=f"role {switch.role}; storage networks use data-fabric (compute) switches"))
    if net.tiers not in (1, 2, 3):
        out.append(Violation(family=family, item="storage network (dedicated)",
                             detail=f"{net.tiers} storage switch tiers; a dedicated network has 1, 2 or 3"))
        return out
    if c is None:
        return out  # the switch is unknown or runs no port at the storage speed (nic_supports_interconnect)
    where = f"{num(c.node_ports)} node ports + {num(c.unit_slots)} unit ports"
    if net.tiers < 3:
        _field(out, family, "cores", net.cores, 0, f"{net.tiers} tier(s)")
        _field(out, family, "links_per_leaf_spine", net.links_per_leaf_spine, 0, f"{net.tiers} tier(s)")
    if net.tiers == 1:
        if c.endpoints > k:
            out.append(Violation(family=family, item=f"storage switch ({switch.id})",
                                 detail=f"{where} = {num(c.endpoints)} > {k} ports of one switch"))
        _field(out, family, "leaves", net.leaves, 1, "one switch")
        _field(out, family, "spines", net.spines, 0, "one switch")
        _field(out, family, "leaf_down_ports", net.leaf_down_ports, 0, "one switch")
        _field(out, family, "leaf_up_ports", net.leaf_up_ports, 0, "one switch")
        expected = {"storage-leaf": (1, c.leaf_ports_used)}
    elif net.tiers == 3:
        out += _leaf_split(ctx, family, switch, k)
        _field(out, family, "leaves", net.leaves, c.leaves, f"ceil(({where}) / {c.down} down-ports)")
        out += _three_tiers(ctx, family, c, k)
        expected = {"storage-leaf": (c.leaves, c.leaf_ports_used), "storage-spine": (c.spines, c.spine_ports_used),
                    "storage-core": (net.cores, c.core_ports_used)}
    else:
        out += _leaf_split(ctx, family, switch, k)
        _field(out, family, "leaves", net.leaves, c.leaves, f"ceil(({where}) / {c.down} down-ports)")
        if net.spines < 1:
            out.append(Violation(family=family, item=f"storage spine switches ({switch.id})", detail="2 tiers with no spine"))
        elif c.ports_per_spine > k:
            out.append(Violation(family=family, item=f"storage spine switches ({switch.id})",
                                 detail=f"{num(c.leaves)} leaves × {num(c.ports_per_spine // max(c.leaves, 1))} links = "
                                        f"{num(c.ports_per_spine)} ports in use per spine > {k}"))
        expected = {"storage-leaf": (c.leaves, c.leaf_ports_used), "storage-spine": (net.spines, c.spine_ports_used)}
    out += _switch_groups(ctx, family, expected)
    out += _link_counts(ctx, family, {"node-storage": c.node_ports, "storage-unit": c.unit_ports,
                                      "storage-leaf-spine": c.leaf_spine_links,
                                      "storage-spine-core": c.spine_core_links})
    return out


def _leaf_split(ctx: CheckContext, family: str, switch, k: int) -> list[Violation]:
    """A 2- or 3-tier storage leaf's ``(d, u)`` is one of ``storage_leaf_splits(k)``."""
    split = ctx.storage_leaf_split
    if split is None or split in networks.storage_leaf_splits(k):
        return []
    ratios = ", ".join(f"{r}:1" for r in networks.STORAGE_LEAF_RATIOS)
    return [Violation(family=family, item=f"storage leaf ({switch.id})",
                      detail=f"{split[0]} down / {split[1]} up ports is not a split of its {k} ports "
                             f"at a down:up ratio of {ratios} (down = floor(k·r/(r+1)), up = k − down)")]


def _three_tiers(ctx: CheckContext, family: str, c, k: int) -> list[Violation]:
    """3 tiers: ``m`` links per leaf–spine pair (dividing the uplinks and a spine's ``floor(k/2)``
    down-ports), ``pods = ceil(leaves / P)``, ``spines = pods · Q``, cores in ``Q``
    planes of ``C`` dividing the spine uplinks ``u2``, a core using ``pods · u2 / C ≤ k`` ports."""
    out: list[Violation] = []
    net, m, switch = ctx.storage_net, c.links_per_leaf_spine, ctx.storage_switch
    if m < 1 or c.up % m or (k // 2) % m or c.up // m < 2:
        out.append(Violation(family=family, item=f"storage leaf–spine links ({switch.id})",
                             detail=f"{m} links per leaf–spine pair: 3 tiers take a count dividing the {c.up} "
                                    f"uplinks per leaf (into 2 spines at least) and a spine's {k // 2} down-ports"))
        return out
    per_pod, planes, spine_up = networks.storage_pod(k, c.up, m)
    _field(out, family, "spines", net.spines, c.spines,
           f"ceil({num(c.leaves)} leaves / {per_pod} per pod) = {num(c.pods)} pods × {planes} spines")
    if c.links_per_spine_core is None:
        out.append(Violation(family=family, item=f"storage core switches ({switch.id})",
                             detail=f"{num(net.cores)} cores are not {planes} planes of a count dividing the "
                                    f"{spine_up} spine uplinks"))
    elif c.ports_per_core > k:
        out.append(Violation(family=family, item=f"storage core switches ({switch.id})",
                             detail=f"{num(c.pods)} pods × {c.links_per_spine_core} links = {num(c.ports_per_core)} "
                                    f"ports in use per core > {k}"))
    return out


def storage_fabric_ports_cover(ctx: CheckContext) -> list[Violation]:
    """The storage ports are covered and compatible: every storage unit runs a speed its switch's
    cages run (converged: the compute speed) in a protocol the network speaks and records ``units ·
    network_ports`` ports; dedicated: storage switches (1 tier ``E ≤ k``; 2 or 3 tiers a leaf split
    ``(d, u)`` at a ratio of at most 8:1, ``ceil(E / d)`` leaves; 2 tiers spines within ``k``; 3
    tiers pods, spines and cores, :func:`_three_tiers`) with ``E = n·P
    + the units' switch ports`` (``networks.unit_slots``: whole cages at another speed); converged (never on a rail-only
    fabric): the compute fabric's one switch (``g·n + U ≤ k``), the top tier's free ports
    (``attach = top``) or ``ceil(U / (k − u))`` storage leaves whose uplinks carry the storage
    traffic (``attach = leaves``). Switch and link groups agree."""
    family = "storage_fabric_ports_cover"
    out = _unit_ports(ctx, family)
    out += _converged(ctx, family) if ctx.converged else _dedicated(ctx, family)
    return out


RULES = {
    "storage_nic_bandwidth_met": storage_nic_bandwidth_met,
    "storage_fabric_ports_cover": storage_fabric_ports_cover,
}
