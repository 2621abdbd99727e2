"""The floor plan: where each rack stands, and each cable's length from the racks of its ends.

Rules (``docs/model.md``, "Floor plan and cable lengths"):

* Racks stand in rows of ``racks_per_row`` (the site's), else of the most racks whose farthest
  one reaches a switch at the row's end within the in-row run:
  ``floor((in_row_m − in_rack_m) / rack_width_m) + 1``.
* The racks holding nodes fill rows in the rack plan's order; a rack of leaves (a rack without
  nodes holding a switch some node plugs into) goes after the median rack of the nodes it
  serves, a rack plugged only into racks of leaves after the first of them. The other racks
  (spines, cores, aggregation, storage on the spines, head nodes) fill rows of their own in the
  middle of the hall, after half the rows of nodes (or up to a row either way, where the fewest
  racks of leaves serve racks on both sides), as TIA-942 centres the main distribution area. A
  short network row is centred along the row; rows of nodes run along a serpentine, odd rows
  from the first position and even rows from the last, so racks next in the plan stand
  together, across the aisle at a row's end (a short row of nodes stands at the end where the
  row before it ends).
* Each rack of leaves then trades places with the rack of nodes whose spot makes its longest
  cable shortest, so it stands in the middle of what it serves, along its row and across rows;
  a rack placed beside it then trades places with the rack of nodes nearest its new spot.
* A cable between two racks is ``in_rack_m`` (up and down the racks) + the distance between the
  racks along the floor (``rack_width_m`` per position in a row, ``row_pitch_m`` per row) +
  ``slack_m``, rounded up to a whole metre; the build-out warns where that passes the site's run
  of the cable's class (the run its part was chosen for).
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
    """Where each rack stands, and the distances that turn spots into cable lengths."""

    distances: Distances
    racks_per_row: int
    spots: dict[str, Spot] = field(default_factory=dict)
    """By rack name."""

    def apart_m(self, a: Spot, b: Spot) -> float:
        """Along the floor between two racks: ``rack_width_m`` per position, ``row_pitch_m`` per row."""
        return abs(a.position - b.position) * self.distances.rack_width_m + abs(a.row - b.row) * self.distances.row_pitch_m

    def run_m(self, racks: set[str], class_run_m: float) -> float:
        """The length of a cable whose ends sit in ``racks``: within one rack the site's in-rack
        run (or the class's, if shorter), else the farthest pair's placed length."""
        d = self.distances
        if len(racks) == 1:
            return min(d.in_rack_m, class_run_m)
        spots = [self.spots.get(name) for name in racks]
        if None in spots:  # an unplaced device (a warning of the rack plan): the class's run
            return class_run_m
        apart_m = (self.apart_m(*spots) if len(spots) == 2 else
                   max(self.apart_m(a, b) for i, a in enumerate(spots) for b in spots[i + 1:]))
        return float(math.ceil(d.in_rack_m + apart_m + d.slack_m))


def row_length(distances: Distances) -> int:
    """Racks per row: the site's, else the most within the in-row run of the row's end."""
    if distances.racks_per_row is not None:
        return distances.racks_per_row
    return max(1, math.floor((distances.in_row_m - distances.in_rack_m) / distances.rack_width_m) + 1)


def plan_floor(racks: list[Rack], links: list[LinkBundle], devices: list[Device], distances: Distances) -> FloorPlan:
    """Place ``racks`` (the rack plan's order) in rows by the rules above."""
    plan = FloorPlan(distances=distances, racks_per_row=row_length(distances))
    rack_of = {device.name: device.rack for device in devices}
    nodes = {device.name for device in devices if device.role == "node"}
    holds_nodes = {rack_of[name] for name in nodes}
    lower, upper, above_nodes = _linked_racks(links, rack_of, nodes)
    served = _served(racks, lower, holds_nodes, above_nodes)
    among_nodes, rest, beside = _order(racks, served, upper, holds_nodes)
    per_row = plan.racks_per_row
    middle = _middle(among_nodes, served, per_row)
    row = 0
    for block, centred in ((among_nodes[:middle], False), (rest, True), (among_nodes[middle:], False)):
        for start in range(0, len(block), per_row):
            in_row = block[start:start + per_row]
            row += 1
            # A short network row stands mid-row. Rows of nodes run along a serpentine, odd rows
            # from the first position and even rows from the last, so racks next in the plan
            # stand together across the aisle (a kit's two nodes in two racks, a leaf's nodes).
            for i, rack in enumerate(in_row):
                position = (per_row - len(in_row)) // 2 + i + 1 if centred else i + 1 if row % 2 else per_row - i
                plan.spots[rack.name] = Spot(row, position)
    _centre(plan, served, holds_nodes)
    _follow(plan, beside, holds_nodes)
    return plan


def _middle(among_nodes: list[Rack], served: dict[str, list[str]], per_row: int) -> int:
    """Where the network rows stand among the racks of nodes: after half their rows, or up to a
    row either way (racks of nodes on both sides) where the racks of leaves serving racks on both
    sides (their cables cross the network rows) have the fewest racks on their shorter side, the
    nearest such cut first. A rack of leaves that every such cut splits does not count."""
    half = math.ceil(len(among_nodes) / per_row) // 2 * per_row
    lo, hi = max(half - per_row, 1), min(half + per_row, len(among_nodes) - 1)
    if half == 0 or lo > hi:  # one row of nodes: the network racks before it
        return half
    at = {rack.name: i for i, rack in enumerate(among_nodes)}
    spans = [(min(ends), max(ends)) for name, others in served.items() if name in at
             for ends in [[at[name], *(at[o] for o in others if o in at)]]]
    avoidable = [(first, last) for first, last in spans if first >= lo or last < hi]

    def split(cut: int) -> tuple[int, int]:
        shorter = sum(min(cut - first, last + 1 - cut) for first, last in avoidable if first < cut <= last)
        return shorter, abs(cut - half)
    return min(range(lo, hi + 1), key=split)


def _linked_racks(links: list[LinkBundle], rack_of: dict[str, str],
                  nodes: set[str]) -> tuple[dict[str, set[str]], dict[str, set[str]], set[str]]:
    """In one pass over the links: per rack, the racks its devices' lower ends sit in (every
    network), and the racks its devices plug into (compute and storage links, management apart);
    and the racks some node plugs into."""
    lower: dict[str, set[str]] = {}
    upper: dict[str, set[str]] = {}
    above_nodes: set[str] = set()
    for bundle in links:
        data = bundle.network != "management"
        for a, b in zip(bundle.a_device, bundle.b_device):
            a_rack, b_rack = rack_of[a], rack_of[b]
            lower.setdefault(a_rack, set()).add(b_rack)
            if data:
                upper.setdefault(b_rack, set()).add(a_rack)
            if b in nodes:
                above_nodes.add(a_rack)
    return lower, upper, above_nodes


def _served(racks: list[Rack], lower: dict[str, set[str]], holds_nodes: set[str],
            above_nodes: set[str]) -> dict[str, list[str]]:
    """Per rack of leaves (a rack without nodes holding a switch some node plugs into), the other
    racks its switches' lower ends sit in, in plan order."""
    order = {rack.name: i for i, rack in enumerate(racks)}
    return {rack.name: sorted(lower[rack.name] - {rack.name}, key=order.get) for rack in racks
            if rack.name not in holds_nodes and rack.name in above_nodes}


def _order(racks: list[Rack], served: dict[str, list[str]], upper: dict[str, set[str]],
           holds_nodes: set[str]) -> tuple[list[Rack], list[Rack], dict[str, str]]:
    """The racks holding nodes in plan order, each rack of leaves after the median rack of the
    nodes it serves and each other rack plugged only into racks of leaves after the first of them;
    the other racks, in plan order; and the racks so placed beside a rack of leaves, with it."""
    after: dict[str, list[Rack]] = {}
    for rack in racks:
        among = [name for name in served.get(rack.name, []) if name in holds_nodes]
        if among:
            after.setdefault(among[(len(among) - 1) // 2], []).append(rack)
    beside = {rack.name: next(leaves for leaves in served if leaves in upper[rack.name]) for rack in racks
              if rack.name not in holds_nodes and rack.name not in served
              and upper.get(rack.name) and upper[rack.name] <= served.keys()}
    for rack in racks:
        if rack.name in beside:
            after.setdefault(beside[rack.name], []).append(rack)
    among_nodes: list[Rack] = []
    for rack in (rack for rack in racks if rack.name in holds_nodes):
        among_nodes.append(rack)
        for leaves in after.get(rack.name, []):
            among_nodes += [leaves, *after.get(leaves.name, [])]
    rest = [rack for rack in racks if rack.name not in holds_nodes and rack.name not in served and rack.name not in beside]
    return among_nodes, rest, beside


def _centre(plan: FloorPlan, served: dict[str, list[str]], holds_nodes: set[str]) -> None:
    """Each rack of leaves, in plan order, trades places with the rack of nodes it serves whose spot
    makes its longest cable shortest (staying put on a tie): it stands in the middle of what it
    serves, along the row and across the rows beside."""
    spots = plan.spots
    for name, among in served.items():
        longest = longest_from([spots[other] for other in among], plan)

        def after_trade(candidate: str, name: str = name, longest=longest) -> tuple:
            # the candidate rack moves to this rack's spot; the others stay
            spot = spots[candidate]
            return round(max(longest(spot), plan.apart_m(spot, spots[name])), 6), candidate != name
        best = min([name, *(other for other in among if other in holds_nodes)], key=after_trade)
        spots[name], spots[best] = spots[best], spots[name]


def _follow(plan: FloorPlan, beside: dict[str, str], holds_nodes: set[str]) -> None:
    """Each rack placed beside a rack of leaves trades places with the rack of nodes nearest where
    that rack now stands, when nearer than its own spot."""
    spots = plan.spots
    for name, leaves in beside.items():
        def apart(other: str, leaves: str = leaves) -> tuple:
            return round(plan.apart_m(spots[leaves], spots[other]), 6), other != name, other
        nearest = min([name, *holds_nodes], key=apart)
        spots[name], spots[nearest] = spots[nearest], spots[name]


def longest_from(spots: list[Spot], plan: FloorPlan):
    """The farthest of ``spots`` from a spot, in O(1) a call: ``|dx| + |dy| = max(±dx ± dy)``, so
    the farthest is the largest of four sums, each with the extreme of ``spots`` taken once."""
    w, p = plan.distances.rack_width_m, plan.distances.row_pitch_m
    signs = ((1, 1), (1, -1), (-1, 1), (-1, -1))
    extreme = [max(-a * s.position * w - b * s.row * p for s in spots) for a, b in signs]
    return lambda spot: max(a * spot.position * w + b * spot.row * p + e for (a, b), e in zip(signs, extreme))
