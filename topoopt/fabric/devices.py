"""Devices and link bundles, the two record types every part of the build-out shares.

Links are stored column-wise (:class:`LinkBundle`) so the exports never pay per-edge object
costs; :class:`Assembler` appends the links of one upper device and groups them into cable
assemblies in port order; :func:`fill` deals endpoint ports out to switches in order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from topoopt.fabric.hardware import FabricError
from topoopt.fabric.names import cage_of, width
from topoopt.fabric.names import port_names as cage_port_names
from topoopt.models.catalog import LinkPart

NETWORKS = ("compute", "storage", "management")


@dataclass(slots=True)
class Device:
    """One box: a node, a switch or a storage unit."""

    name: str
    role: str
    """``node``; compute switches ``leaf``, ``spine``, ``core``; storage switches ``storage-leaf``,
    ``storage-spine``, ``storage-core``; management switches ``mgmt-leaf``, ``mgmt-aggregation``; storage units
    ``storage`` (hot tier) and ``cold-storage``; rack PDUs ``pdu``; cluster head nodes ``head``."""
    model: str
    rack_units: int
    power_w: float
    ports: int
    """Logical data ports at the device's network speed: a node's compute rails, a switch's radix,
    a storage unit's data ports."""
    network: str = "compute"
    """``compute``, ``storage`` or ``management``: the network the device belongs to (nodes belong
    to the compute fabric, storage units to the storage network)."""
    gpus: int = 0
    rail: int = 0
    su: int = 0
    pod: int = 0
    plane: int = 0
    carries_storage: bool = False
    """A compute-fabric leaf that carries the storage units (converged storage network)."""
    rack: str = ""
    u: int = 0


@dataclass
class LinkBundle:
    """Every link of one link group of the design, column-wise; index ``i`` is one logical link.

    End *a* is the upper device (the switch a node, unit or lower switch plugs into), end *b* the
    lower one. ``cable[i]`` is the index of the assembly carrying link ``i`` (into ``cable_ids``).
    """

    between: str
    part: LinkPart
    gbps: int
    length_m: float
    network: str = "compute"
    prefix: str = "XX"
    """Cable id prefix, unique per bundle (``NL-0001`` …)."""
    group: int = -1
    """Index of the design's link group the bundle wires (into ``design.links``)."""
    a_device: list[str] = field(default_factory=list)
    a_port: list[str] = field(default_factory=list)
    b_device: list[str] = field(default_factory=list)
    b_port: list[str] = field(default_factory=list)
    rail: list[int] = field(default_factory=list)
    cable: list[int] = field(default_factory=list)
    cable_ids: list[str] = field(default_factory=list)
    in_rack_part: LinkPart | None = None
    """The part of the assemblies whose ends share a rack, where it is not ``part`` (docs/model.md,
    "Cables within one rack")."""
    kits_by_cage: bool = False
    """A transceiver kit between switches: its module ports are cabled one by one, so one module's
    links may reach several switches, and the kits bought are ``max(ceil(upper cages / a_ends),
    ceil(lower cages / b_ends))`` over the cages the links fill. :meth:`name_cables` then numbers
    the kits by the cages of the end needing more of them (``ends`` cages per kit, in wiring order)."""

    def __len__(self) -> int:
        return len(self.a_device)

    @property
    def assemblies(self) -> int:
        return len(self.cable_ids)

    def assembly_ends(self) -> dict[int, list[str]]:
        """Per assembly (index into ``cable_ids``): its upper device, then the lower device of
        each of its links."""
        ends: dict[int, list[str]] = {}
        for a_device, b_device, cable in zip(self.a_device, self.b_device, self.cable):
            ends.setdefault(cable, [a_device]).append(b_device)
        return ends

    def name_cables(self) -> None:
        """Give assemblies stable ids ``NL-0001`` … in wiring order."""
        if self.kits_by_cage:
            self._kits_by_cage()
        count = (max(self.cable) + 1) if self.cable else 0
        digits = width(count)
        self.cable_ids = [f"{self.prefix}-{i:0{digits}d}" for i in range(1, count + 1)]

    def _kits_by_cage(self) -> None:
        ends = []
        for devices, ports, per_kit in ((self.a_device, self.a_port, self.part.a_ends),
                                        (self.b_device, self.b_port, self.part.b_ends)):
            order: dict[tuple[str, str], int] = {}
            cages = [order.setdefault((device, cage_of(port)), len(order)) for device, port in zip(devices, ports)]
            ends.append((math.ceil(len(order) / per_kit), [cage // per_kit for cage in cages]))
        # The upper end on a tie, so a kit's links then leave one upper cage (the Assembler's grouping).
        self.cable = max(ends, key=lambda end: end[0])[1]


class Assembler:
    """Appends links of one upper device and groups them into assemblies in port order."""

    def __init__(self, bundle: LinkBundle) -> None:
        self.bundle = bundle
        self.next_cable = 0

    def add_device(self, a_device: str, a_ports: list[str], b_devices: list[str], b_ports: list[str],
                   rails: list[int] | None = None, *, per_pair: bool = False) -> None:
        """Append the links of ``a_device``, ``part.links`` to an assembly in port order; with
        ``per_pair`` an assembly also never joins two lower devices (a one-piece cable between
        switches), so a new one starts wherever the lower device changes."""
        b = self.bundle
        count = len(a_ports)
        if count == 0:
            return
        per = b.part.links
        b.a_device.extend([a_device] * count)
        b.a_port.extend(a_ports)
        b.b_device.extend(b_devices)
        b.b_port.extend(b_ports)
        b.rail.extend(rails if rails is not None else [0] * count)
        if not per_pair:
            first = self.next_cable
            b.cable.extend(first + t // per for t in range(count))
            self.next_cable = first + math.ceil(count / per)
            return
        cable, filled, previous = self.next_cable - 1, per, None
        for device in b_devices:
            if filled == per or device != previous:
                cable, filled = cable + 1, 0
            b.cable.append(cable)
            filled, previous = filled + 1, device
        self.next_cable = cable + 1


def deal(total: int, bins: int, cap: int, grain: int, *, what: str = "ports", bins_what: str = "leaves") -> list[int]:
    """Split ``total`` items over ``bins`` bins of at most ``cap``, in the fewest whole grains.

    Evenly when whole grains respect ``cap``: shares differ by at most one grain and only the last
    non-empty bin holds a part grain (``ceil(total / grain)`` grains). Else, ``ρ = cap mod grain``,
    the first ``t = ceil((total − bins·(cap − ρ)) / ρ)`` bins are filled to ``cap`` (one part grain
    each), the rest to ``cap − ρ`` and the surplus taken off the end: ``bins·floor(cap/grain) + t``
    grains, the fewest ``cap`` allows (the solver's count, ``node_leaf_assemblies``).

    >>> deal(33, 3, 32, 2)
    [12, 12, 9]
    >>> deal(9, 2, 5, 2)
    [5, 4]
    >>> deal(9, 3, 3, 2)
    [3, 3, 3]
    >>> deal(10, 3, 4, 3)
    [4, 3, 3]
    """
    if bins < 1:
        raise FabricError(f"no {bins_what} to wire {what} to")
    if total > bins * cap:
        raise FabricError(f"{total} {what} do not fit {bins} {bins_what} of {cap}")
    grains = math.ceil(total / grain)
    base, extra = divmod(grains, bins)
    sizes = _off_the_end([(base + (1 if j < extra else 0)) * grain for j in range(bins)], total)
    if max(sizes, default=0) > cap:  # then cap is no multiple of the grain: ρ > 0, and t ≤ bins
        rest = cap % grain
        topped = math.ceil((total - bins * (cap - rest)) / rest)
        sizes = _off_the_end([cap if j < topped else cap - rest for j in range(bins)], total)
    return sizes


def _off_the_end(sizes: list[int], total: int) -> list[int]:
    """``sizes`` with the items beyond ``total`` taken off the last non-empty bins."""
    surplus = sum(sizes) - total
    for j in range(len(sizes) - 1, -1, -1):
        cut = min(surplus, sizes[j])
        sizes[j] -= cut
        surplus -= cut
    return sizes


def uplink_base(radix: int, ports_per_cage: int, down: int, up: int) -> int:
    """First port index of the uplinks: the top ``ceil(up / ppc)`` cages, else right after ``down``."""
    top = radix - math.ceil(up / ports_per_cage) * ports_per_cage
    if top >= math.ceil(down / ports_per_cage) * ports_per_cage:
        return top
    return down


@dataclass
class Run:
    """Endpoint ports of one link bundle, in the order they are dealt to switches."""

    bundle: LinkBundle
    b_devices: list[str]
    b_ports: list[str]
    keys: list | None = None
    """Assembly key per endpoint: an assembly joins ports of one key only (one storage unit; one
    NIC port index across nodes, as a rail does), the way the model counts assemblies. None: any
    consecutive ports share assemblies."""
    by_key: bool = False
    """On each switch, take the ports key by key (every node's ``snic1/1``, then every ``snic1/2`` …)."""
    cage_ports: int = 0
    """Storage units at another speed than the switch's link speed: the logical ports a cage has at
    their speed. Their assemblies then take whole cages, lanes named at that speed (0: the link
    speed's ports)."""


def _key_groups(run: Run, start: int, stop: int) -> list[list[int]]:
    """Endpoint indices ``start … stop − 1`` in wiring order, split where the key changes."""
    indices = list(range(start, stop))
    if run.keys is None:
        return [indices]
    keys = run.keys
    if run.by_key:
        indices.sort(key=lambda i: keys[i])
    groups = [[indices[0]]]
    for i in indices[1:]:
        if keys[i] == keys[groups[-1][-1]]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def fill(switches: list[Device], port_names: list[str], capacity: int, runs: list[Run], *, taken: int = 0,
         what: str = "switches") -> None:
    """Deal the runs' endpoint ports to ``switches`` in order, ports ``0 … capacity − 1`` of each.

    A switch is filled before the next one starts (so a rack's devices share switches); the first
    ``taken`` ports of the first switch are already in use. Each run, and on a switch each key of a
    run, starts on a fresh assembly boundary (a multiple of the part's links), so two link classes
    never share a cage and an assembly serves one key — unless the ports skipped that way would
    not fit the switch, when the switch's share of the run is taken in order (fewer, fuller
    assemblies, which the build reports against the design's count).
    Raises :class:`FabricError` when the switches run out of ports.
    """
    index, used = 0, taken
    for run in runs:
        if run.cage_ports:
            index, used = _fill_cages(switches, port_names, capacity, run, index, used, what)
            continue
        grain = max(1, run.bundle.part.links)
        out = Assembler(run.bundle)
        out.next_cable = max(run.bundle.cable, default=-1) + 1
        start, total = 0, len(run.b_devices)
        while start < total:
            if used:
                used = math.ceil(used / grain) * grain
            if used >= capacity:
                index, used = index + 1, 0
            if index >= len(switches):
                raise FabricError(f"{total - start} {run.bundle.between} ports left over: {len(switches)} {what} "
                                  f"of {capacity} ports are full")
            take = min(total - start, capacity - used)
            groups = _key_groups(run, start, start + take)
            needed = sum(math.ceil(len(g) / grain) * grain for g in groups[:-1]) + len(groups[-1])
            if used + needed > capacity:
                groups = [list(range(start, start + take))]
            switch = switches[index]
            for group in groups:
                used = math.ceil(used / grain) * grain
                out.add_device(switch.name, port_names[used:used + len(group)],
                               [run.b_devices[i] for i in group], [run.b_ports[i] for i in group])
                used += len(group)
            start += take


def _fill_cages(switches: list[Device], port_names: list[str], capacity: int, run: Run, index: int, used: int,
                what: str) -> tuple[int, int]:
    """Deal a run at another speed (``run.cage_ports`` ports per cage): each assembly serves one key
    and takes ``a_ends`` whole cages of a switch (the link speed's ports of those cages), its lanes
    named at the run's speed (``p3/1`` …). Returns the switch index and the ports used after it."""
    part = run.bundle.part
    slots = sum(1 for name in port_names if cage_of(name) == cage_of(port_names[0]))
    lanes = cage_port_names(len(port_names) // slots, run.cage_ports)
    out = Assembler(run.bundle)
    out.next_cable = max(run.bundle.cable, default=-1) + 1
    for group in _key_groups(run, 0, len(run.b_devices)):
        for first in range(0, len(group), part.links):
            members = group[first:first + part.links]
            used = math.ceil(used / slots) * slots
            if used + part.a_ends * slots > capacity:
                index, used = index + 1, 0
            if index >= len(switches):
                raise FabricError(f"{run.bundle.between} ports left over: {len(switches)} {what} of {capacity} ports "
                                  f"are full")
            cage = used // slots
            taken = lanes[cage * run.cage_ports:(cage + part.a_ends) * run.cage_ports]
            out.add_device(switches[index].name, taken[:len(members)], [run.b_devices[i] for i in members],
                           [run.b_ports[i] for i in members])
            used += part.a_ends * slots
    return index, used
