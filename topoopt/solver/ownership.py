"""The cost of owning a bought design over its depreciation period (solver side).

With ``site.operation`` a capex answer also reports::

    energy kWh   = IT power kW × average load × PUE(rack cooling) × 730.5 h × months
    energy cost  = energy kWh × electricity price per kWh
    facility     = racks × facility per rack per month × months
    total        = purchase + energy cost + facility,   per month = total ÷ months

IT power is the design's provisioned site power (``site_power_within_limit``: nodes, switches and
storage units with their optics); 730.5 h is the mean month (30.4375 days). The figure is reported,
not optimised: a capex solve minimises the purchase price.
"""

from __future__ import annotations

from topoopt.models.design import Ownership
from topoopt.models.instance import Operation
from topoopt.solver.billing import DAYS_PER_MONTH

HOURS_PER_MONTH = DAYS_PER_MONTH * 24
"""The mean Gregorian month, 30.4375 days × 24 h = 730.5 h."""


def ownership(purchase: float, it_power_w: float, racks: int, cooling: str, operation: Operation) -> Ownership:
    """The ownership record of a design bought for ``purchase`` (module docstring)."""
    pue = operation.pue[cooling]
    it_power_kw = it_power_w / 1000
    energy_kwh = it_power_kw * operation.average_load * pue * HOURS_PER_MONTH * operation.months
    energy_cost = energy_kwh * operation.electricity_price_per_kwh
    facility_cost = racks * operation.facility_per_rack_per_month * operation.months
    total = purchase + energy_cost + facility_cost
    return Ownership(months=operation.months, it_power_kw=it_power_kw, pue=pue, energy_kwh=energy_kwh,
                     energy_cost=energy_cost, racks=racks, facility_cost=facility_cost, total=total,
                     per_month=total / operation.months)
