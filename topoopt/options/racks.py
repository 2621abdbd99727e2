"""Devices per rack, by power and by rack units: the one home of this rule on the solver's side
(the checker keeps its own, checking/derive.py).

A rack class holds ``floor(power / device power)`` identical devices by power and
``floor(rack units / device units)`` by space, beside what other equipment already takes. Power is
compared in W with a 1e-6 W allowance so that decimal kW stay exact: 64.448 kW is
64447.99999999999 W in binary.

>>> rack = RackClass(id="r", name="30 kW", source="estimate: example", power_kw=30.0, rack_units=42, cooling="air")
>>> devices_per_rack_by_power(rack, 10_000.0), devices_per_rack_by_units(rack, 8), per_rack(rack, 10_000.0, 8)
(3, 5, 3)
"""

from __future__ import annotations

import math

from topoopt.models.catalog import RackClass

MIXED_RACKS_MAX = 8
"""Most racks a design may fill with a mix of nodes, switches and storage units (docs/model.md,
"Racks and power"): small installations share racks; larger ones keep racks of one model each, as
the reference architectures do. It bounds the model's size, not a rule of the checker."""


def rack_cools(rack: RackClass, cooling: str) -> bool:
    """Whether a rack class cools a device of ``cooling``: air and rear-door racks air-cooled
    devices, liquid racks liquid-cooled ones (their rating is liquid heat removal)."""
    return (rack.cooling == "liquid") == (cooling == "liquid")


def devices_by_power(limit_kw: float, power_w: float, reserved_w: float = 0.0) -> int:
    """Identical devices of ``power_w`` each within ``limit_kw`` (a rack's, a site's) beside
    ``reserved_w`` of other equipment (negative when the reserve alone exceeds the limit)."""
    return int((limit_kw * 1000 + 1e-6 - reserved_w) // power_w)


def devices_per_rack_by_power(rack: RackClass, power_w: float, reserved_w: float = 0.0) -> int:
    """Identical devices one rack of this class can power beside ``reserved_w`` of other equipment."""
    return devices_by_power(rack.power_kw, power_w, reserved_w)


def devices_per_rack_by_units(rack: RackClass, rack_units: int, reserved_units: int = 0) -> int:
    """Identical devices of ``rack_units`` each that fit beside ``reserved_units`` of other equipment."""
    return (rack.rack_units - reserved_units) // rack_units


def per_rack(rack: RackClass, power_w: float, rack_units: int, reserved: tuple[float, int] = (0.0, 0)) -> int:
    """Identical devices one rack of this class holds under its power and rack units, beside
    ``reserved`` = (W, rack units) of other equipment."""
    reserved_w, reserved_units = reserved
    return min(devices_per_rack_by_power(rack, power_w, reserved_w),
               devices_per_rack_by_units(rack, rack_units, reserved_units))


def last_rack(count: int, per: int) -> int:
    """Devices in the last of ``ceil(count / per)`` racks filled ``per`` at a time."""
    return count - per * (math.ceil(count / per) - 1) if count else 0


def hosts_heads(rack: RackClass, device: tuple[float, int], count: int, head: tuple[float, int], heads: int) -> bool:
    """Whether the last rack of ``count`` devices of one model, (W, rack units) each, racked
    ``per_rack`` at a time, also holds ``heads`` head nodes: its load at whole watts (as the model
    counts it) and its rack units within the class."""
    (w, u), (head_w, head_u) = device, head
    last = last_rack(count, per_rack(rack, w, u))
    return (math.ceil(w) * last + math.ceil(head_w) * heads <= math.floor(rack.power_kw * 1000 + 1e-6)
            and u * last + head_u * heads <= rack.rack_units)
