"""A reported ownership (TCO) figure of a bought design, recomputed.

Over ``site.operation.months``: energy = Σ IT power × PUE of its racks' cooling (the nodes' in
their class, switches, storage units and head nodes in the network and storage racks' class; all in one class
with mixed racks) × average load × 730.5 h a month × months, at the electricity price; facility = racks × the per-rack monthly cost
× months; total = purchase + energy + facility. IT power is the provisioned site power the checker
sums for ``site_power_within_limit`` (racks.py); the solver rounds each device's power up to a whole
watt, so figures agree within 0.1 %.
"""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.racks import site_power_w
from topoopt.checking.rental import DAYS_PER_MONTH
from topoopt.checking.text import close, num
from topoopt.checking.units import HOURS_PER_DAY, W_PER_KW
from topoopt.models.design import Ownership

HOURS_PER_MONTH = float(DAYS_PER_MONTH) * HOURS_PER_DAY
"""The mean Gregorian month in hours (730.5)."""
REL = 1e-3
"""Tolerance: the solver's device powers are whole watts rounded up."""


def ownership_mismatches(ctx: CheckContext, purchase: float, reported: Ownership) -> list[str]:
    """What in a reported ownership figure disagrees with the instance's operation and the design."""
    operation = ctx.instance.site.operation
    if operation is None or ctx.rack_class is None or ctx.infra_rack_class is None:
        return ["an ownership figure is reported without site.operation or racks"]
    it_power_kw = site_power_w(ctx) / W_PER_KW
    nodes_kw = it_power_kw if ctx.rack_groups("mixed") else ctx.nodes * (ctx.node_power_w or 0.0) / W_PER_KW
    facility_kw = (nodes_kw * operation.pue[ctx.rack_class.cooling]
                   + (it_power_kw - nodes_kw) * operation.pue[ctx.infra_rack_class.cooling])
    racks = sum(group.count for group in ctx.design.racks)
    pue = facility_kw / it_power_kw if it_power_kw else 1.0
    energy_kwh = facility_kw * operation.average_load * HOURS_PER_MONTH * operation.months
    energy_cost = energy_kwh * operation.electricity_price_per_kwh
    facility_cost = racks * operation.facility_per_rack_per_month * operation.months
    total = purchase + energy_cost + facility_cost
    mine = {"months": operation.months, "it_power_kw": it_power_kw, "pue": pue, "energy_kwh": energy_kwh,
            "energy_cost": energy_cost, "racks": racks, "facility_cost": facility_cost, "total": total,
            "per_month": total / operation.months}
    return [f"ownership {name} {num(getattr(reported, name))} reported, {num(value)} recomputed"
            for name, value in mine.items() if not close(getattr(reported, name), value, rel=REL, abs_=1e-6)]
