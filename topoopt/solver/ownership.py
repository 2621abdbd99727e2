"""The cost of owning a bought design over its depreciation period (solver side).

With ``site.operation`` a capex answer also reports::

    energy kWh   = Σ IT power kW × PUE(its racks' cooling) × average load × 730.5 h × months
    energy cost  = energy kWh × electricity price per kWh
    facility     = racks × facility per rack per month × months
    total        = purchase + energy cost + facility,   per month = total ÷ months

IT power is the design's provisioned site power (``site_power_within_limit``: nodes, switches and
storage units with their optics), each device under the PUE of its racks' cooling (the nodes'
class, and the network and storage racks' class); the reported PUE is their power-weighted mean.
730.5 h is the mean month (30.4375 days). The figure is reported, not optimised: a capex solve
minimises the purchase price.
"""

from __future__ import annotations

from topoopt.models.design import Ownership
from topoopt.models.instance import Operation
from topoopt.solver.billing import DAYS_PER_MONTH

HOURS_PER_MONTH = DAYS_PER_MONTH * 24
"""The mean Gregorian month, 30.4375 days × 24 h = 730.5 h."""


def ownership(purchase: float, it_power_w: dict[str, float], racks: int, operation: Operation) -> Ownership:
    """The ownership record of a design bought for ``purchase`` whose IT power by rack cooling is
    ``it_power_w`` (module docstring)."""
    it_power_kw = sum(it_power_w.values()) / 1000
    facility_kwh = sum(w / 1000 * operation.pue[cooling] for cooling, w in it_power_w.items())
    pue = facility_kwh / it_power_kw if it_power_kw else 1.0
    energy_kwh = facility_kwh * operation.average_load * HOURS_PER_MONTH * operation.months
    energy_cost = energy_kwh * operation.electricity_price_per_kwh
    facility_cost = racks * operation.facility_per_rack_per_month * operation.months
    total = purchase + energy_cost + facility_cost
    return Ownership(months=operation.months, it_power_kw=it_power_kw, pue=pue, energy_kwh=energy_kwh,
                     energy_cost=energy_cost, racks=racks, facility_cost=facility_cost, total=total,
                     per_month=total / operation.months)
