"""The floor plan: where each rack stands, and each cable's length from the racks of its ends.

Rules (``docs/model.md``, "Floor plan and cable lengths"):

* Racks stand in rows of ``racks_per_row`` (the site's), else of the most racks whose farthest
  one reaches a switch at the row's end within the in-row run:
  ``floor((in_row_m − in_rack_m) / rack_width_m) + 1``.
* The racks holding nodes fill rows in the rack plan's order, row after row; a rack holding
  switches that nodes plug into (a leaf of any network) stands after the middle (median) rack of
  the nodes it serves, so its cables reach both ways along the row and into the rows beside. The
  other racks (spines, cores, aggregation, storage units, head nodes) fill rows of their own in
  the middle of the hall, in the rack plan's order: half the rows of nodes (rounded down) before
  them, as TIA-942 puts the main distribution area centrally to keep runs short.
* A cable between two racks is ``in_rack_m`` (up and down the racks) + the distance between the
  racks along the floor (``rack_width_m`` per position in a row, ``row_pitch_m`` per row) +
  ``slack_m``, rounded up to a whole metre. The link class's run bounds it (the site's longest
  run of the class, which the part is chosen to reach): where the plan puts two ends farther
  apart, the cable is listed at the class's run, as the site states its cables are routed within it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from topoopt.fabric.devices import Device, LinkBundle
from topoopt.fabric.racks import Rack
from topoopt.models.instance import Distances


@dataclass(frozen=True)
class Spot:
    """A rack's place on the floor: its row and its position in the row, from 1."""

    row: int
    position: int


@dataclass
class FloorPlan:
    distances: Distances
    racks_per_row: int
    spots: dict[str, Spot] = field(default_factory=dict)
    """By rack name."""

    def run_m(self, racks: set[str], class_run_m: float) -> float:
        """The length of a cable whose ends sit in ``racks``: within one rack the site's in-rack
        run, else the farthest pair's placed length; never longer than ``class_run_m``."""
        d = self.distances
        if len(racks) == 1:
            return min(d.in_rack_m, class_run_m)
        spots = [self.spots.get(name) for name in racks]
        if None in spots:  # an unplaced device (a warning of the rack plan): the class's run
            return class_run_m
        apart_m = max(abs(a.position - b.position) * d.rack_width_m + abs(a.row - b.row) * d.row_pitch_m
                      for a in spots for b in spots)
        return min(float(math.ceil(d.in_rack_m + apart_m + d.slack_m)), class_run_m)


def row_length(distances: Distances) -> int:
    """Racks per row: the site's, else the most within the in-row run of the row's end."""
    if distances.racks_per_row is not None:
        return distances.racks_per_row
    return max(1, math.floor((distances.in_row_m - distances.in_rack_m) / distances.rack_width_m) + 1)


def plan_floor(racks: list[Rack], links: list[LinkBundle], devices: list[Device], distances: Distances) -> FloorPlan:
    """Place ``racks`` (the rack plan's order) in rows by the rules above."""
    plan = FloorPlan(distances=distances, racks_per_row=row_length(distances))
    among_nodes, rest = _order(racks, links, devices)
    per_row = plan.racks_per_row
    middle = math.ceil(len(among_nodes) / per_row) // 2 * per_row  # the racks of the rows before the middle
    row = 0
    for block in (among_nodes[:middle], rest, among_nodes[middle:]):
        for i, rack in enumerate(block):
            plan.spots[rack.name] = Spot(row + i // per_row + 1, i % per_row + 1)
        row += math.ceil(len(block) / per_row)
    return plan


def _order(racks: list[Rack], links: list[LinkBundle], devices: list[Device]) -> tuple[list[Rack], list[Rack]]:
    """The racks holding nodes in plan order, each leaf rack after the median rack of the nodes it
    serves; and the other racks, in plan order."""
    rack_of = {device.name: device.rack for device in devices}
    index = {rack.name: i for i, rack in enumerate(racks)}
    nodes = {device.name for device in devices if device.role == "node"}
    holds_nodes = {rack_of[name] for name in nodes}
    served: dict[str, set[int]] = {}
    for bundle in links:
        for a, b in zip(bundle.a_device, bundle.b_device):
            if b in nodes and rack_of[a] not in holds_nodes:
                served.setdefault(rack_of[a], set()).add(index[rack_of[b]])
    after: dict[int, list[Rack]] = {}
    for rack in racks:
        if rack.name in served:
            median = sorted(served[rack.name])[(len(served[rack.name]) - 1) // 2]
            after.setdefault(median, []).append(rack)
    among_nodes = [r for i, rack in enumerate(racks) if rack.name in holds_nodes for r in (rack, *after.get(i, []))]
    rest = [rack for rack in racks if rack.name not in holds_nodes and rack.name not in served]
    return among_nodes, rest
