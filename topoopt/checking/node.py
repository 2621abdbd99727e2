"""Node configuration rules: NIC model and count, interconnect protocol, link speed."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.derive import RAIL_CHOICES
from topoopt.checking.networks import switch_protocol
from topoopt.checking.text import num
from topoopt.models.design import Violation


def _storage_ports_fit(ctx: CheckContext) -> list[Violation]:
    """Dedicated: 1 ≤ the storage ports cabled per node ≤ the ports of its storage NICs, and ≤ the
    server's ``storage_ports_max`` (DGX: the others serve in-band management)."""
    net, server, nic = ctx.storage_net, ctx.server, ctx.storage_nic
    item, family = f"storage ports ({net.ports_per_node} cabled per node)", "nic_fits_server"
    out: list[Violation] = []
    if ctx.converged or nic is None:
        return out
    if not 1 <= net.ports_per_node <= net.nics_per_node * nic.ports:
        out.append(Violation(family=family, item=item,
                             detail=f"{net.nics_per_node} × {nic.id} have {net.nics_per_node * nic.ports} ports"))
    if server is not None and server.storage_ports_max is not None and net.ports_per_node > server.storage_ports_max:
        out.append(Violation(family=family, item=item,
                             detail=f"{server.id} gives storage at most {server.storage_ports_max} ports "
                                    "(its other storage-NIC ports serve in-band management)"))
    return out


def _storage_nics_fit(ctx: CheckContext) -> list[Violation]:
    """Dedicated: the server's built-in storage NICs as they come, or 1 … ``max_storage_nics`` of
    one of its ``storage_nic_options`` (a server with neither has no dedicated storage network);
    converged: no storage NIC. Then the ports cabled (``_storage_ports_fit``)."""
    out: list[Violation] = _storage_ports_fit(ctx)
    net, server, family = ctx.storage_net, ctx.server, "nic_fits_server"
    item = f"storage NICs ({net.nics_per_node} × {net.nic})"
    if ctx.converged:
        if net.nic is not None or net.nics_per_node:
            out.append(Violation(family=family, item=item, detail="a converged storage network uses no storage NIC"))
        return out
    if net.nic is None:
        return [Violation(family=family, item=item, detail="a dedicated storage network needs storage NICs")]
    if server is None:
        return out
    builtin = server.builtin_storage_nics
    if builtin is not None:
        if net.nic != builtin.nic:
            out.append(Violation(family=family, item=item, detail=f"{server.id} has built-in storage NIC {builtin.nic}, not {net.nic}"))
        if net.nics_per_node != builtin.count:
            out.append(Violation(family=family, item=item,
                                 detail=f"{server.id} has {builtin.count} built-in storage NICs, not {net.nics_per_node}"))
        return out
    if not server.storage_nic_options:
        return [Violation(family=family, item=item,
                          detail=f"{server.id} has no storage NIC, built in or optional: no dedicated storage network")]
    if net.nic not in server.storage_nic_options:
        out.append(Violation(family=family, item=item,
                             detail=f"{net.nic} is not among {server.id}'s storage NIC options "
                                    f"({', '.join(server.storage_nic_options)})"))
    if not 1 <= net.nics_per_node <= server.max_storage_nics:
        out.append(Violation(family=family, item=item,
                             detail=f"{net.nics_per_node} storage NICs; {server.id} takes 1 to {server.max_storage_nics}"))
    return out


def nic_fits_server(ctx: CheckContext) -> list[Violation]:
    """Built-in compute NICs are used as they come (one rail each); otherwise the NIC is one of the
    server's ``nic_options`` and the rails are 1, 2, 4 or 8, at most ``max_compute_nics``. Storage
    NICs likewise: built in as they come, or 1 … ``max_storage_nics`` of a ``storage_nic_options``
    NIC (dedicated storage network only)."""
    out: list[Violation] = _storage_nics_fit(ctx)
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


def _storage_nic_supports_switch(ctx: CheckContext) -> list[Violation]:
    """Dedicated: the storage NIC runs an interconnect at the storage speed whose protocol the
    storage switch speaks, and the switch has ports at that speed."""
    out: list[Violation] = []
    family, nic, switch, g = "nic_supports_interconnect", ctx.storage_nic, ctx.storage_switch, ctx.storage_gbps
    if ctx.converged:
        return out
    protocols = None
    if nic is not None:
        protocols = ctx.nic_protocols_at(nic, g)
        if not protocols:
            out.append(Violation(family=family, item=f"storage NIC {nic.id}",
                                 detail=f"runs {', '.join(nic.interconnects)}, none at {num(g)} Gb/s"))
    if switch is not None:
        if protocols and not protocols & set(switch.protocols):
            out.append(Violation(family=family, item=f"storage switch {switch.id}",
                                 detail=f"speaks {', '.join(switch.protocols)}; {nic.id} at {num(g)} Gb/s runs "
                                        f"{', '.join(sorted(protocols))}"))
        if switch.ports_per_cage.get(g, 0) <= 0:
            speeds = ", ".join(f"{s} Gb/s" for s in sorted(switch.ports_per_cage))
            out.append(Violation(family=family, item=f"storage switch {switch.id}",
                                 detail=f"has no ports at {num(g)} Gb/s ({speeds})"))
    return out


def nic_supports_interconnect(ctx: CheckContext) -> list[Violation]:
    """The NIC runs the interconnect; the switch (a data-fabric switch, role compute) speaks its
    protocol (ib → InfiniBand switch, roce/tcp → Ethernet switch) and has logical ports at its
    speed. Likewise a dedicated storage network's NIC and switch at the storage speed."""
    out: list[Violation] = _storage_nic_supports_switch(ctx)
    family = "nic_supports_interconnect"
    ic = ctx.interconnect
    if ic is None:
        return out  # reported by allowed_by_lists as not in the catalog
    if ctx.nic is not None and ic.id not in ctx.nic.interconnects:
        out.append(Violation(family=family, item=f"NIC {ctx.nic.id}",
                             detail=f"runs {', '.join(ctx.nic.interconnects)}, not {ic.id}"))
    switch = ctx.switch
    if switch is not None and switch.role != "compute":
        out.append(Violation(family=family, item=f"switch {switch.id}",
                             detail=f"role {switch.role}; the compute fabric uses data-fabric (compute) switches"))
    if switch is not None:
        needed = switch_protocol(ic.protocol)
        if needed not in switch.protocols:
            out.append(Violation(family=family, item=f"switch {switch.id}",
                                 detail=f"speaks {', '.join(switch.protocols)}; {ic.id} ({ic.protocol}) needs {needed}"))
        if switch.ports_per_cage.get(ic.gbps, 0) <= 0:
            speeds = ", ".join(f"{g} Gb/s" for g in sorted(switch.ports_per_cage))
            out.append(Violation(family=family, item=f"switch {switch.id}",
                                 detail=f"has no ports at {ic.gbps} Gb/s ({speeds})"))
    return out


def link_speed(ctx: CheckContext) -> list[Violation]:
    """The design's ``link_gbps`` is the interconnect's speed; a converged storage network runs at
    it too; the management network's device and uplink speeds are its leaf switch's lowest and
    highest (the highest of its uplink cages when it has them);
    every link group runs at its network's speed (``class_gbps``) and names its network."""
    out: list[Violation] = []
    d, family = ctx.design, "link_speed"
    if ctx.interconnect is not None and d.link_gbps != ctx.interconnect.gbps:
        out.append(Violation(family=family, item="design",
                             detail=f"link_gbps {d.link_gbps} Gb/s ≠ {ctx.interconnect.id} at {ctx.interconnect.gbps} Gb/s"))
    if ctx.converged and d.storage_network.link_gbps != ctx.gbps:
        out.append(Violation(family=family, item="storage network (converged)",
                             detail=f"link_gbps {d.storage_network.link_gbps} Gb/s ≠ compute link speed {ctx.gbps} Gb/s"))
    m, leaf = d.management_network, ctx.mgmt_leaf
    if leaf is not None:
        for name, recorded, expected, which in (
                ("link_gbps", m.link_gbps, leaf.device_gbps, "lowest"),
                ("uplink_gbps", m.uplink_gbps, leaf.uplink_gbps,
                 "uplink cages' highest" if leaf.own_uplink_cages else "highest")):
            if recorded != expected:
                out.append(Violation(family=family, item="management network",
                                     detail=f"{name} {recorded} Gb/s ≠ {m.switch}'s {which} speed {expected} Gb/s"))
    for group in d.links:
        expected = class_gbps(ctx, group.between)
        # Storage units may run another speed in cages of their own (storage_fabric_ports_cover).
        if group.gbps != expected and group.between != "storage-unit":
            out.append(Violation(family=family, item=f"{group.between} links",
                                 detail=f"recorded at {group.gbps} Gb/s ≠ link speed {expected} Gb/s"))
        if group.network != NETWORK_OF_CLASS[group.between]:
            out.append(Violation(family=family, item=f"{group.between} links",
                                 detail=f"network {group.network}; the class belongs to the {NETWORK_OF_CLASS[group.between]} network"))
    return out


NETWORK_OF_CLASS = {
    "node-leaf": "compute", "leaf-spine": "compute", "spine-core": "compute",
    "node-storage": "storage", "storage-unit": "storage", "storage-leaf-spine": "storage", "storage-spine-core": "storage",
    "mgmt": "management", "mgmt-uplink": "management",
}
"""The network each link class belongs to (storage-unit links carry storage traffic even when
the units sit on the compute fabric)."""


def group_gbps(ctx: CheckContext, group) -> int:
    """The speed a link group runs: its class's (``class_gbps``), or for storage units the
    speed recorded on their group (checked by storage_fabric_ports_cover)."""
    return group.gbps if group.between == "storage-unit" else class_gbps(ctx, group.between)


def class_gbps(ctx: CheckContext, link_class: str) -> int:
    """The speed a link class runs: the compute link speed, the storage speed, or the management
    network's device or uplink speed (its record's when the switch is unknown)."""
    network = NETWORK_OF_CLASS[link_class]
    if network == "compute":
        return ctx.gbps
    if network == "storage":
        return ctx.storage_gbps
    leaf = ctx.mgmt_leaf
    m = ctx.design.management_network
    if link_class == "mgmt":
        return leaf.device_gbps if leaf else m.link_gbps
    return leaf.uplink_gbps if leaf else m.uplink_gbps


RULES = {
    "nic_fits_server": nic_fits_server,
    "nic_supports_interconnect": nic_supports_interconnect,
    "link_speed": link_speed,
}
