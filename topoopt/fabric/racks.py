"""The rack plan: which rack and U position every device takes, and each rack's power.

Rules (``docs/model.md``, "Racks and power"): the nodes' rack class for compute (or mixed)
racks, the network and storage racks' class for the others; compute racks hold nodes,
``nodes_per_rack`` each (from the design), and the management leaves their group's ``holds``
names, one at the top of each of that many racks (spread evenly here; the management wiring
seats them among the racks they serve). Network racks hold switches of one model only —
compute, storage and management switches alike, so a storage network on the compute fabric's
switch model shares its racks — or head nodes, and storage racks units of one storage tier only, as many
as the class's power and rack units allow (``min(floor(rack_w / device_w), floor(rack_u /
device_u))``, counted by the checker's :func:`~topoopt.checking.derive.devices_per_rack` so that
the plan and the check agree); models take racks in order of appearance (compute fabric, storage
network, management network, head nodes; hot tier, cold tier), a model's leaves first by the nodes
they serve (a scalable unit's leaves share racks), then its other switches (:func:`leaves_first`);
management aggregation pairs stand in two racks where their model has two (:func:`pairs_apart`).
Devices stack from U1 upwards. A small design may instead use ``mixed`` racks, each holding
the nodes and the devices by model its group records: nodes from U1 up, then storage, and the
switches at the top of the rack. Power is
provisioned power (see :mod:`topoopt.fabric.hardware`); each rack's total is checked against the
class's ``power_kw`` and rack units, and every excess is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topoopt.checking.derive import devices_per_rack
from topoopt.checking.units import W_PER_KW
from topoopt.fabric.devices import Device
from topoopt.fabric.hardware import FabricError, Hardware
from topoopt.fabric.names import numbered
from topoopt.models.catalog import RackClass
from topoopt.models.design import Design

RACK_PREFIX = {"compute": "rack", "network": "net", "storage": "stor", "mixed": "rack"}


@dataclass
class Rack:
    name: str
    role: str
    """``compute``, ``network`` (switches), ``storage`` or ``mixed`` (everything, small designs)."""
    rack_class: str
    units: int
    power_limit_w: float
    devices: list[Device] = field(default_factory=list)
    """The rack-mounted devices, in U order."""
    zero_u: list[Device] = field(default_factory=list)
    """Devices beside the rack units (its PDUs)."""

    @property
    def power_w(self) -> float:
        return sum(device.power_w for device in self.devices)

    @property
    def units_used(self) -> int:
        return sum(device.rack_units for device in self.devices)

    def problems(self) -> list[str]:
        """Ways this rack breaks its class's limits (empty when it fits)."""
        found = []
        if self.power_w > self.power_limit_w + 1e-6:
            found.append(
                f"{self.name}: {self.power_w / W_PER_KW:.1f} kW provisioned exceeds the "
                f"{self.power_limit_w / W_PER_KW:.1f} kW of rack class {self.rack_class} [rack_power_within_limit]"
            )
        if self.units_used > self.units:
            found.append(
                f"{self.name}: {self.units_used} U of devices exceed the {self.units} U of rack class "
                f"{self.rack_class} [rack_units_within_limit]"
            )
        return found


@dataclass
class RackPlan:
    racks: list[Rack]
    warnings: list[str] = field(default_factory=list)

    def by_role(self, role: str) -> list[Rack]:
        return [rack for rack in self.racks if rack.role == role]


def nodes_per_rack(design: Design, hw: Hardware) -> int:
    """Nodes per compute rack (the fullest mixed rack's): the design's number, else the rule's."""
    if mixed_racks(design):
        return max(max(g.nodes_per_rack for g in design.racks), 1)
    groups = [g for g in design.racks if g.role == "compute" and g.nodes_per_rack > 0]
    if groups:
        return groups[0].nodes_per_rack
    count = devices_per_rack(hw.rack_class, hw.node_power_w, hw.server.rack_units)
    if count < 1:
        raise FabricError(f"a {hw.server.id} node does not fit one {hw.rack_class.id} rack")
    return count


def nodes_by_rack(design: Design, hw: Hardware) -> list[int]:
    """The nodes each rack holding nodes takes, in rack order."""
    if mixed_racks(design):
        return [g.nodes_per_rack for g in design.racks if g.role == "mixed" for _ in range(g.count) if g.nodes_per_rack]
    per = nodes_per_rack(design, hw)
    full, rest = divmod(design.nodes, per)
    return [per] * full + ([rest] if rest else [])


def mixed_racks(design: Design) -> bool:
    """Everything in mixed racks (the design's choice for small installations)."""
    return any(g.role == "mixed" for g in design.racks)


def _fill(role: str, chunks: list[list[Device]], rack_class: RackClass) -> list[Rack]:
    """A rack of ``rack_class`` for each chunk of devices, stacked from U1 in order."""
    racks = []
    for chunk in chunks:
        rack = Rack(name=numbered(RACK_PREFIX[role], len(racks) + 1, len(chunks)), role=role,
                    rack_class=rack_class.id, units=rack_class.rack_units,
                    power_limit_w=rack_class.power_kw * W_PER_KW)
        u = 1
        for device in chunk:
            device.rack, device.u = rack.name, u
            u += device.rack_units
            rack.devices.append(device)
        racks.append(rack)
    return racks


def by_model(devices: list[Device]) -> list[list[Device]]:
    """Devices grouped by model, models in order of first appearance, devices in their order."""
    groups: dict[str, list[Device]] = {}
    for device in devices:
        groups.setdefault(device.model, []).append(device)
    return list(groups.values())


def _homogeneous(role: str, devices: list[Device], rack_class: RackClass,
                 above: dict[str, float] | None = None) -> list[Rack]:
    """Racks of one model each, numbered on from one model to the next; a model's switches that
    nodes plug into (``above``) first, in the order of the nodes they serve (:func:`leaves_first`)."""
    chunks: list[list[Device]] = []
    for group in by_model(devices):
        per = devices_per_rack(rack_class, group[0].power_w, group[0].rack_units)
        if per < 1:
            raise FabricError(f"a {group[0].model} ({group[0].role}) does not fit one {rack_class.id} rack")
        racked = leaves_first(group, per, above or {})
        chunks += pairs_apart(group, len(racked)) if {d.role for d in group} == {"mgmt-aggregation"} else racked
    return _fill(role, chunks, rack_class)


def leaves_first(devices: list[Device], per: int, above: dict[str, float]) -> list[list[Device]]:
    """One model's switches rack by rack (``per`` to a rack): the leaves — those nodes plug into,
    ``above`` giving the middle position of the nodes each serves — by that position, so a rack of
    leaves serves nodes that stand together whatever network its leaves are in; then the other
    switches (spines, cores, aggregation) in wiring order.

    Leaves and the others fill racks of their own unless that takes a rack more than packing them
    on (the leaves left over from full racks fit the others' last rack). Then one rack holds both,
    and it takes the leftover leaves serving the middle nodes: the network rows stand in the
    middle of the hall, so that rack stands beside the network rows, not at the floor's far end."""
    leaves = sorted((d for d in devices if d.name in above), key=lambda d: above[d.name])
    others = [d for d in devices if d.name not in above]
    left = len(leaves) % per
    if left and others and left <= -len(others) % per:
        middle = sum(above[d.name] < (above[leaves[0].name] + above[leaves[-1].name]) / 2 for d in leaves)
        start = min(max(middle - left // 2, 0), len(leaves) - left)
        leaves, others = leaves[:start] + leaves[start + left:], leaves[start:start + left] + others
    return [part[i:i + per] for part in (leaves, others) for i in range(0, len(part), per)]


def pairs_apart(aggregation: list[Device], racks: int) -> list[list[Device]]:
    """Management aggregation switches (pair ``p`` is the ``2p``-th and ``2p+1``-th) in ``racks``
    racks, the two of a pair in different racks when there are two racks or more: first sides
    then second sides, in racks as even as the count allows (``ceil(2·pairs / racks) ≤ pairs``
    places per rack, so no rack reaches from a pair's first side to its second), as architects
    rack the A and B switches of a pair apart."""
    order = aggregation[0::2] + aggregation[1::2]
    size, bigger = divmod(len(order), racks)
    bounds = [i * size + min(i, bigger) for i in range(racks + 1)]
    return [order[bounds[i]:bounds[i + 1]] for i in range(racks)]


PDU_MODEL = "rack-pdu"
"""Model name of a rack PDU (no catalog item: its price is in the rack class's)."""


def rack_pdus(plan: RackPlan, per_rack: dict[str, int]) -> list[Device]:
    """Every rack's PDUs (``per_rack`` by rack class), ``{rack}-pdu1`` …: zero-U (``u`` 0, in the
    rack's ``zero_u``), on the management network (one management port each); their power is the
    devices' they feed."""
    pdus = []
    for rack in plan.racks:
        for i in range(per_rack[rack.rack_class]):
            pdu = Device(name=f"{rack.name}-pdu{i + 1}", role="pdu", model=PDU_MODEL, rack_units=0, power_w=0.0,
                         ports=0, network="management", rack=rack.name, u=0)
            rack.zero_u.append(pdu)
            pdus.append(pdu)
    return pdus


def plan_racks(design: Design, hw: Hardware, nodes: list[Device], switches: list[Device],
               units: list[Device], above: dict[str, float] | None = None) -> RackPlan:
    """Place every device (sets ``rack`` and ``u``) and check every rack against its class.

    ``switches`` are every network's switches and the head nodes, ``units`` the hot and cold
    storage units, ``above`` the switches nodes plug into with the middle position (index into
    ``nodes``) of the nodes each serves (:func:`leaves_first`)."""
    unplaced: list[Device] = []
    if mixed_racks(design):
        racks, unplaced = _mixed(design, nodes, switches, units, hw)
    else:
        per_node = nodes_per_rack(design, hw)
        racks = _fill("compute", [nodes[i:i + per_node] for i in range(0, len(nodes), per_node)], hw.rack_class)
        hosted = _beside_nodes(design, switches)
        if len(hosted) > len(racks):
            raise FabricError(f"{len(hosted)} management leaves in {len(racks)} compute racks: one in a rack")
        for j, device in enumerate(hosted):  # spread evenly until the management wiring seats them
            seat(device, racks[(2 * j + 1) * len(racks) // (2 * len(hosted))])
        host = next((g for g in design.racks if g.role in ("network", "storage") and g.holds), None)
        heads = [d for d in switches if d.role == "head"] if host is not None else []
        elsewhere = {d.name for d in heads + hosted}
        network = _homogeneous("network", [d for d in switches if d.name not in elsewhere], hw.infra_rack_class,
                               above)
        storage = _homogeneous("storage", units, hw.infra_rack_class)
        racks += network + storage
        if heads:
            unplaced = _host_heads(design, host, network if host.role == "network" else storage, heads)
    plan = RackPlan(racks=racks)
    if unplaced:
        plan.warnings.append(f"no rack holds {', '.join(d.name for d in unplaced)}")
    for rack in racks:
        plan.warnings.extend(rack.problems())
    plan.warnings.extend(_compare_with_design(design, plan))
    return plan


def _beside_nodes(design: Design, switches: list[Device]) -> list[Device]:
    """The management leaves the compute racks hold (their group's ``holds``, one in a rack): the
    first of their model."""
    held = {model: count for g in design.racks if g.role == "compute" for model, count in g.holds.items()}
    return [d for model, count in held.items() for d in [s for s in switches if s.model == model][:count]]


def seat(device: Device, rack: Rack, previous: Rack | None = None) -> None:
    """Put ``device`` at the top of ``rack``, out of ``previous`` (the rack it was in, if any)."""
    if previous is not None:
        previous.devices.remove(device)
    device.rack, device.u = rack.name, rack.units + 1 - device.rack_units
    rack.devices.append(device)


def _host_heads(design: Design, host, racks: list[Rack], heads: list[Device]) -> list[Device]:
    """The head nodes at the top of the last rack of the model whose group records them (the
    groups of a role follow its models' order); those left unplaced."""
    groups = [g for g in design.racks if g.role == host.role and g.role != "mixed"]
    models = list(dict.fromkeys(d.model for rack in racks for d in rack.devices))
    model = models[groups.index(host)] if groups.index(host) < len(models) else None
    last = next((rack for rack in reversed(racks) if any(d.model == model for d in rack.devices)), None)
    if last is None:
        return heads
    ceiling = last.units + 1
    for head in heads:
        ceiling -= head.rack_units
        head.rack, head.u = last.name, ceiling
        last.devices.append(head)
    return []


def _mixed(design: Design, nodes: list[Device], switches: list[Device], storage: list[Device],
           hw: Hardware) -> tuple[list[Rack], list[Device]]:
    """Mixed racks as the design's groups record them, and the devices none holds: each rack takes
    its nodes and, by model, its switches and storage units in wiring order; nodes and storage
    stack from U1, switches from the top down."""
    groups = [g for g in design.racks if g.role == "mixed"]
    total = sum(g.count for g in groups)
    waiting = {"node": list(nodes)}
    for device in switches + storage:
        waiting.setdefault(device.model, []).append(device)
    racks: list[Rack] = []
    for group in groups:
        for _ in range(group.count):
            rack = Rack(name=numbered("rack", len(racks) + 1, total), role="mixed", rack_class=hw.rack_class.id,
                        units=hw.rack_class.rack_units, power_limit_w=hw.rack_class.power_kw * W_PER_KW)
            take = [("node", group.nodes_per_rack), *group.holds.items()]
            held = [d for model, count in take for d in _take(waiting.get(model, []), count)]
            bottom = [d for d in held if d.role == "node" or d in storage]
            top = [d for d in held if d not in bottom]
            u = 1
            for device in bottom:
                device.rack, device.u = rack.name, u
                u += device.rack_units
            ceiling = rack.units + 1
            for device in top:
                ceiling -= device.rack_units
                device.rack, device.u = rack.name, ceiling
            rack.devices = bottom + top
            racks.append(rack)
    return racks, [d for left in waiting.values() for d in left]


def _take(devices: list[Device], count: int) -> list[Device]:
    """The first ``count`` devices, removed from ``devices``."""
    taken = devices[:count]
    del devices[:count]
    return taken


def _compare_with_design(design: Design, plan: RackPlan) -> list[str]:
    """Differences between the planned rack counts and the design's rack groups."""
    notes = []
    planned = {role: len(plan.by_role(role)) for role in RACK_PREFIX}
    declared = {role: 0 for role in RACK_PREFIX}
    for group in design.racks:
        declared[group.role] = declared.get(group.role, 0) + group.count
    # Designs that count storage racks with the network racks (one "network" group) still agree.
    if declared["storage"] == 0 and declared["network"] == planned["network"] + planned["storage"]:
        declared["network"], declared["storage"] = planned["network"], planned["storage"]
    for role in RACK_PREFIX:
        if planned[role] != declared[role]:
            notes.append(f"rack plan has {planned[role]} {role} racks, the design counts {declared[role]}")
    return notes
