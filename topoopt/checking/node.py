"""Node configuration rules: NIC model and count, interconnect protocol, link speed."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import RAIL_CHOICES
from topoopt.models.design import Violation


def nic_fits_server(ctx: CheckContext) -> list[Violation]:
    """Built-in compute NICs are used as they come (one rail each); otherwise the NIC is one of the
    server's ``nic_options`` and the rails are 1, 2, 4 or 8, at most ``max_compute_nics``."""
    out: list[Violation] = []
    d, server, family = ctx.design, ctx.server, "nic_fits_server"
    item = f"compute NICs ({d.nics_per_node} × {d.nic})"
    if ctx.nic is None:
        out.append(Violation(family=family, item=item, detail=f"NIC {d.nic!r} is not in the catalog"))
    if server is None:
        return out
    builtin = server.builtin_compute_nics
    if builtin is not None:
        if d.nic != builtin.nic:
            out.append(Violation(family=family, item=item,
                                 detail=f"{server.id} has built-in {builtin.nic}, not {d.nic}"))
        if d.nics_per_node != builtin.count:
            out.append(Violation(family=family, item=item,
                                 detail=f"{server.id} has {builtin.count} built-in NICs, not {d.nics_per_node}"))
        return out
    if d.nic not in server.nic_options:
        out.append(Violation(family=family, item=item,
                             detail=f"{d.nic} is not among {server.id}'s NIC options ({', '.join(server.nic_options) or 'none'})"))
    if d.nics_per_node not in RAIL_CHOICES:
        out.append(Violation(family=family, item=item,
                             detail=f"{d.nics_per_node} NICs per node is not one of {', '.join(map(str, RAIL_CHOICES))}"))
    if d.nics_per_node > server.max_compute_nics:
        out.append(Violation(family=family, item=item,
                             detail=f"{d.nics_per_node} NICs > {server.max_compute_nics} that {server.id} takes"))
    return out


def nic_supports_interconnect(ctx: CheckContext) -> list[Violation]:
    """The NIC runs the interconnect; the switch speaks its protocol (ib → InfiniBand switch,
    roce/tcp → Ethernet switch) and has logical ports at its speed."""
    out: list[Violation] = []
    family = "nic_supports_interconnect"
    ic = ctx.interconnect
    if ic is None:
        return out  # reported by allowed_by_lists as not in the catalog
    if ctx.nic is not None and ic.id not in ctx.nic.interconnects:
        out.append(Violation(family=family, item=f"NIC {ctx.nic.id}",
                             detail=f"runs {', '.join(ctx.nic.interconnects)}, not {ic.id}"))
    switch = ctx.switch
    if switch is not None:
        needed = "ib" if ic.protocol == "ib" else "ethernet"
        if needed not in switch.protocols:
            out.append(Violation(family=family, item=f"switch {switch.id}",
                                 detail=f"speaks {', '.join(switch.protocols)}; {ic.id} ({ic.protocol}) needs {needed}"))
        if switch.ports_per_cage.get(ic.gbps, 0) <= 0:
            speeds = ", ".join(f"{g} Gb/s" for g in sorted(switch.ports_per_cage))
            out.append(Violation(family=family, item=f"switch {switch.id}",
                                 detail=f"has no ports at {ic.gbps} Gb/s ({speeds})"))
    return out


def link_speed(ctx: CheckContext) -> list[Violation]:
    """The design's ``link_gbps`` is the interconnect's speed, and every link group runs at it."""
    out: list[Violation] = []
    d, family = ctx.design, "link_speed"
    if ctx.interconnect is not None and d.link_gbps != ctx.interconnect.gbps:
        out.append(Violation(family=family, item="design",
                             detail=f"link_gbps {d.link_gbps} Gb/s ≠ {ctx.interconnect.id} at {ctx.interconnect.gbps} Gb/s"))
    for group in d.links:
        if group.gbps != ctx.gbps:
            out.append(Violation(family=family, item=f"{group.between} links",
                                 detail=f"recorded at {group.gbps} Gb/s ≠ link speed {ctx.gbps} Gb/s"))
    return out


RULES = {
    "nic_fits_server": nic_fits_server,
    "nic_supports_interconnect": nic_supports_interconnect,
    "link_speed": link_speed,
}
