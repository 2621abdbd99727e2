"""Provisioned power of devices (docs/model.md, "Racks and power").

Racks are planned for devices at their maximum power with every cage holding the most
power-hungry module that fits it, so the plan holds whatever optics are fitted. The solver and
the fabric builder use these functions; the checker recomputes the same rules independently.
"""

from __future__ import annotations

from collections.abc import Sequence

from topoopt.models.catalog import LinkPart, Nic, Server, Switch


class CatalogParts(tuple):
    """A catalog's cable parts, remembering per cage the hungriest module end that fits it
    (:func:`hungriest_end_w`): the option tables ask the same few cages for thousands of node
    configurations and hundreds of switch models, each a scan of every part."""

    def __new__(cls, parts: Sequence[LinkPart]) -> CatalogParts:
        return super().__new__(cls, parts)

    def __init__(self, parts: Sequence[LinkPart]) -> None:
        self.end_w: dict[tuple, float] = {}


def part_fits_cage(part: LinkPart, end: str, form_factor: str, ports_per_cage: int, gbps: int) -> bool:
    """The part's ``end`` ("a" or "b") plugs into a cage of ``form_factor`` carrying all its
    ``ports_per_cage`` logical ports at ``gbps``."""
    part_form_factor, ends = (part.a_form_factor, part.a_ends) if end == "a" else (part.b_form_factor, part.b_ends)
    return (
        part.gbps == gbps
        and part_form_factor == form_factor
        and part.links % ends == 0
        and part.links // ends == ports_per_cage
    )


def hungriest_end_w(parts: Sequence[LinkPart], end: str, form_factor: str, ports_per_cage: int, gbps: int) -> float:
    """The most power a module end ``end`` ("a" or "b") of the parts fitting the cage draws (0 when
    none fits), remembered when ``parts`` is a :class:`CatalogParts`."""
    key = (end, form_factor, ports_per_cage, gbps)
    known = parts.end_w if isinstance(parts, CatalogParts) else {}
    if key not in known:
        known[key] = max((p.power_w_per_a_end if end == "a" else p.power_w_per_b_end for p in parts
                          if part_fits_cage(p, end, form_factor, ports_per_cage, gbps)), default=0.0)
    return known[key]


def node_power_w(
    server: Server,
    nic: Nic | None,
    rails: int,
    form_factor: str,
    ports_per_cage: int,
    gbps: int,
    parts: list[LinkPart],
    *,
    fabric: bool = True,
) -> float:
    """Server maximum, plus — when the node is attached to a fabric — its bought compute NICs
    (``nic``; None when built in) and the hungriest fitting module in every node cage."""
    if not fabric:
        return server.power_w
    cages = -(-rails // ports_per_cage)
    return node_devices_power_w(server, nic, rails) + cages * hungriest_end_w(parts, "b", form_factor, ports_per_cage, gbps)


def node_devices_power_w(server: Server, nic: Nic | None, rails: int) -> float:
    """A fabric-attached node's server maximum and bought compute NICs (``nic``; None when built
    in): its provisioned power less the modules in its cages."""
    return server.power_w + (rails * nic.power_w if nic is not None else 0.0)


def storage_nic_power_w(server: Server, nic: Nic, nics: int, gbps: int, parts: list[LinkPart], ports: int) -> float:
    """Power a dedicated storage network adds to a node: the bought storage NICs (none when the
    server's ``builtin_storage_nics`` are used: the server maximum includes them) plus the
    hungriest module end fitting the NIC's cage at ``gbps`` in every cabled storage port (``ports``
    of them; an empty cage draws nothing)."""
    end_w = hungriest_end_w(parts, "b", nic.port_form_factor, 1, gbps)
    builtin = server.builtin_storage_nics is not None and server.builtin_storage_nics.nic == nic.id
    nic_w = 0.0 if builtin else nics * nic.power_w
    return nic_w + ports * end_w


def switch_power_w(switch: Switch, parts: list[LinkPart]) -> float:
    """Switch maximum plus, in every cage, the hungriest module end that fits the cage at a speed
    the switch runs."""
    end_w = max((hungriest_end_w(parts, end, switch.cage_form_factor, per_cage, gbps)
                 for end in ("a", "b") for gbps, per_cage in switch.ports_per_cage.items()), default=0.0)
    return switch.power_w + switch.cages * end_w
