"""The management network: management leaves and aggregation switches and their links.

Rules (:class:`~topoopt.models.design.ManagementNetwork`), with the choices the counts leave open:

* **Ports.** Every node and storage unit (hot and cold) has one in-band port ``mgmt`` and its
  catalog ``oob_ports`` out-of-band ports (``oob``); every compute and storage switch its
  ``oob_ports`` management ports (``mgmt``: a switch's in-band management rides its data ports);
  management switches themselves are not managed over this network.
* **Leaves.** ``leaves`` management leaves (``mgmt-01`` …) of ``leaf_down_ports`` device ports at
  ``link_gbps`` and 2 uplinks at ``uplink_gbps``: on the leaf's first two uplink cages (``up1``,
  ``up2``) when it has cages of its own for them, else on its top two ports (then ``leaf_down_ports = k − 2``, ``k`` its radix at the
  device speed). Devices are dealt out in the order given (the build-out's: rack by rack along
  the floor), each device's ports together, filling a leaf before the next starts, so a rack's
  devices share a management leaf, except that the head nodes (an HA pair) never all take one
  leaf: the last moves to the neighbouring leaf (:func:`heads_apart`). Leaves in compute racks are
  then seated among the racks they serve (:func:`seat_leaves`).
* **Aggregation.** Past one leaf, ``aggregation`` switches of the ``aggregation_switch`` model in
  pairs (``mgmt-agg-01`` …), ``k_a`` its ports at the uplink speed, 2 of them kept for the site's
  management core (not cabled in the design); pair *p* takes leaves ``p·(k_a − 2)`` onwards, up to
  ``k_a − 2`` of them, and each leaf has one uplink to each switch of its pair.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

from topoopt.fabric.devices import Assembler, Device, LinkBundle, Run, fill
from topoopt.fabric.floor import FloorPlan, longest_from
from topoopt.fabric.hardware import FabricError, Hardware
from topoopt.fabric.names import numbered, port_names
from topoopt.fabric.racks import Rack, seat
from topoopt.fabric.wiring import group_index, new_bundle
from topoopt.models.design import Design


def make_management_switches(design: Design, hw: Hardware) -> tuple[list[Device], list[Device]]:
    """The management leaves and aggregation switches."""
    mn, mg = design.management_network, hw.management
    problems = []
    own_uplinks = bool(mg.switch.uplink_cages)
    device_cages = -(-mn.leaf_down_ports // mg.ports_per_cage)
    if not own_uplinks:
        device_cages += -(-2 // mg.uplink_ports_per_cage)
    if mn.leaf_down_ports + (0 if own_uplinks else 2) > mg.radix or device_cages > mg.switch.cages:
        problems.append(f"{mn.leaf_down_ports} device ports{'' if own_uplinks else ' + 2 uplinks'} exceed the "
                        f"{mg.radix} ports of {mg.switch.id} at {mn.link_gbps} Gb/s")
    k = mg.leaves_per_pair
    expected_aggregation = 2 * -(-mn.leaves // k) if mn.leaves > 1 and k else 0
    if mn.leaves > 1 and k < 1:
        problems.append(f"aggregation switch {mg.aggregation.id} has no port for a leaf at {mn.uplink_gbps} Gb/s")
    elif mn.aggregation != expected_aggregation:
        problems.append(f"{mn.leaves} management leaves need {expected_aggregation} aggregation switches "
                        f"(pairs of up to {k} leaves), the design has {mn.aggregation}")
    if problems:
        raise FabricError("inconsistent management network counts: " + "; ".join(problems))

    def switch(name: str, role: str, model, power_w: float, ports: int) -> Device:
        return Device(name=name, role=role, model=model.id, rack_units=model.rack_units, power_w=power_w,
                      ports=ports, network="management")

    leaf_ports = mg.radix + (mg.switch.uplink_cages * mg.uplink_ports_per_cage if own_uplinks else 0)
    leaves = [switch(numbered("mgmt-", j + 1, mn.leaves), "mgmt-leaf", mg.switch, mg.power_w, leaf_ports)
              for j in range(mn.leaves)]
    aggregation = [switch(numbered("mgmt-agg-", j + 1, mn.aggregation), "mgmt-aggregation", mg.aggregation,
                          mg.aggregation_power_w, mg.aggregation_radix) for j in range(mn.aggregation)]
    return leaves, aggregation


def managed_ports(devices: list[Device], port_names: dict[tuple[str, str], list[str]]) -> tuple[list[str], list[str]]:
    """``(device names, port names)`` of every management port, device by device; ``port_names``
    holds each device's management ports by ``(role, model)``."""
    names: list[str] = []
    ports: list[str] = []
    for device in devices:
        own = port_names[device.role, device.model]
        names.extend([device.name] * len(own))
        ports.extend(own)
    return names, ports


def wire_management(design: Design, hw: Hardware, managed: list[Device],
                    mgmt_ports: dict[tuple[str, str], list[str]], leaves: list[Device],
                    aggregation: list[Device]) -> list[LinkBundle]:
    """Every management link: device ports to the leaves, leaves to their aggregation pair."""
    mn, mg = design.management_network, hw.management
    bundle = new_bundle(design, hw, group_index(hw, "mgmt"))
    if bundle.part.links == 1:  # a cord per port: the order alone says which leaf each port takes
        managed = heads_apart(managed, lambda device: len(mgmt_ports[device.role, device.model]),
                              mn.leaf_down_ports)
    devices, device_ports = managed_ports(managed, mgmt_ports)
    down_ports = port_names(mg.switch.cages, mg.ports_per_cage)
    fill(leaves, down_ports, mn.leaf_down_ports, [Run(bundle, devices, device_ports)],
         what=f"management leaves ({mg.switch.id})")
    bundles = [bundle]
    if aggregation:
        bundles.append(_uplinks(design, hw, leaves, aggregation))
    return bundles


def heads_apart(devices: list[Device], ports: Callable[[Device], int], leaf_ports: int) -> list[Device]:
    """``devices`` in wiring order, with the head nodes (an HA pair or more) reached in band over
    two management leaves at least, each leaf taking ``leaf_ports`` ports in turn and a device's
    in-band port coming first: when every head node's in-band port falls on one leaf, the last
    head node moves to the latest place on the leaf before, or (on the first leaf) to the first
    place on a later one — beside the devices of the racks nearby, so its cords stay short. No
    move is possible when the other devices fill less than one leaf."""
    heads = [device for device in devices if device.role == "head"]
    if len(heads) < 2:
        return devices
    offsets = dict(zip((d.name for d in devices), accumulate((ports(d) for d in devices), initial=0)))
    leaves = {offsets[head.name] // leaf_ports for head in heads}
    if len(leaves) > 1:
        return devices
    (leaf,) = leaves
    moved = heads[-1]
    rest = [device for device in devices if device is not moved]
    starts = list(accumulate((ports(d) for d in rest), initial=0))  # the last: after every device
    if leaf > 0:  # the last place whose ports end before this leaf
        at = max((i for i, start in enumerate(starts) if start + ports(moved) <= leaf * leaf_ports), default=None)
    else:  # the first place starting on a later leaf
        at = next((i for i, start in enumerate(starts) if start >= leaf_ports), None)
    if at is None:
        return devices
    return [*rest[:at], moved, *rest[at:]]


def _uplinks(design: Design, hw: Hardware, leaves: list[Device], aggregation: list[Device]) -> LinkBundle:
    mg = hw.management
    bundle = new_bundle(design, hw, group_index(hw, "mgmt-uplink"))
    out = Assembler(bundle)
    k = mg.leaves_per_pair
    down_ports = port_names(mg.aggregation.cages, mg.aggregation_ports_per_cage)
    for p in range(len(aggregation) // 2):
        pair_leaves = leaves[p * k:(p + 1) * k]
        for side in (0, 1):
            switch = aggregation[2 * p + side]
            out.add_device(switch.name, down_ports[:len(pair_leaves)], [leaf.name for leaf in pair_leaves],
                           [mg.uplink_ports[side]] * len(pair_leaves))
    return bundle


def seat_leaves(bundle: LinkBundle, managed: list[Device], leaves: list[Device], racks: list[Rack],
                floor: FloorPlan) -> None:
    """Each management leaf a compute rack holds (one in a rack) moves to the compute rack whose
    spot makes its longest device cord shortest: among the racks it serves that hold no leaf yet,
    else among such racks in the rows nearest those it serves (a leaf serving a network row sits
    across the aisle); leaves in wiring order, a tie to the rack first in plan order."""
    by_name = {rack.name: rack for rack in racks}
    compute = {rack.name: i for i, rack in enumerate(racks) if rack.role == "compute"}
    by_row: dict[int, list[str]] = {}
    for name in compute:
        by_row.setdefault(floor.spots[name].row, []).append(name)
    rack_of = {device.name: device.rack for device in managed}
    served: dict[str, set[str]] = {}
    for a, b in zip(bundle.a_device, bundle.b_device):
        served.setdefault(a, set()).add(rack_of[b])
    taken: set[str] = set()
    for leaf in (leaf for leaf in leaves if leaf.rack in compute):
        mine = served.get(leaf.name) or {leaf.rack}  # a leaf without devices stays where it is
        longest = longest_from([floor.spots[name] for name in mine], floor)
        candidates = [name for name in mine if name in compute and name not in taken]
        rows = sorted({floor.spots[name].row for name in mine})
        reach = 0
        while not candidates:  # a free compute rack exists: no more hosted leaves than compute racks
            near = range(rows[0] - reach, rows[-1] + reach + 1)
            candidates = [name for row in near for name in by_row.get(row, []) if name not in taken]
            reach += 1
        best = min(candidates, key=lambda name: (round(longest(floor.spots[name]), 6), compute[name]))
        taken.add(best)
        if best != leaf.rack:
            seat(leaf, by_name[best], by_name[leaf.rack])
