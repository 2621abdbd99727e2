"""What the summary says about the confidence of a design's prices.

Each cost line carries its price's provenance (quoted, estimate, derived) and whether the book's
market offers the item. The summary gives the share of the cost that rests on quoted list prices,
one line for a server whose price is not quoted, and one for items the market does not offer.
"""

from __future__ import annotations

from topoopt.models.design import Cost

PROVENANCE_ORDER = ("quoted", "estimate", "derived", "unpriced")


def quoted_share(cost: Cost) -> float | None:
    """Quoted lines' total ÷ the cost's total; None for a cost of 0."""
    if cost.total <= 0:
        return None
    return sum(line.total for line in cost.breakdown if line.provenance == "quoted") / cost.total


def price_lines(cost: Cost) -> list[str]:
    """Summary lines: the cost by provenance, the server's price when not quoted, items not offered."""
    by_provenance: dict[str, list[str]] = {}
    for line in cost.breakdown:
        by_provenance.setdefault(line.provenance, []).append(line.item)
    share = quoted_share(cost)
    counts = ", ".join(f"{kind} {len(by_provenance[kind])}" for kind in PROVENANCE_ORDER if kind in by_provenance)
    head = f"{share:.0%} of the cost at quoted list prices" if share is not None else "no cost"
    lines = [f"Prices       {head}; items by price provenance: {counts} (bom.csv column provenance)"]
    for line in cost.breakdown:
        if line.category == "server" and line.provenance != "quoted":
            lines.append(f"             the server price ({line.item}) is {_an(line.provenance)}, not a quoted list "
                         f"price: {line.source}")
    absent = [line.item for line in cost.breakdown if not line.offered]
    if absent:
        lines.append(f"             not offered by the price book's market (chosen with catalog.include_not_offered): "
                     f"{', '.join(absent)}")
    return lines


def _an(provenance: str) -> str:
    return {"estimate": "an estimate", "derived": "derived from another book", "unpriced": "missing"}.get(
        provenance, provenance)


def duration_text(days: float) -> str:
    """A duration in days, or in hours below a day ("5.0 hours", not "0.21 days")."""
    return f"{days * 24:,.1f} hours" if days < 1 else f"{days:,.2f} days"


def rental_line(cost: Cost, sign: str, head: str) -> str:
    """The rent of the whole job: the terms that cover its duration, or pro rata without terms."""
    rental = cost.rental
    if rental is None:
        return ""
    duration = duration_text(rental.duration_days)
    if not rental.terms:
        return (f"{head}{sign}{rental.total:,.0f} = {sign}{cost.total:,.0f}/month × {duration} ÷ 30.4375 days "
                f"per month (billed pro rata: no rental terms)")
    run = " + ".join(f"{use.count} × {use.months}-month term at {use.factor:.0%}" for use in rental.terms)
    months = f"{rental.billed_months:,.4g} month{'' if rental.billed_months == 1 else 's'}"
    return (f"{head}{sign}{rental.total:,.0f} = {sign}{cost.total:,.0f}/month × {months} billed ({run}) for "
            f"{duration} of training")


def ownership_line(cost: Cost, sign: str, operation) -> str:
    """A bought design's ownership (TCO) over the depreciation period: purchase, energy, facility."""
    owned = cost.ownership
    if owned is None:
        return ""
    energy = (f"{sign}{owned.energy_cost:,.0f} energy ({owned.it_power_kw:,.1f} kW × load {operation.average_load:g} "
              f"× PUE {owned.pue:g} × {owned.months} months at {sign}{operation.electricity_price_per_kwh:g}/kWh)")
    facility = (f"{sign}{owned.facility_cost:,.0f} facility ({owned.racks} racks × "
                f"{sign}{operation.facility_per_rack_per_month:,.0f}/month)")
    return (f"Ownership    {sign}{owned.total:,.0f} over {owned.months} months = {sign}{cost.total:,.0f} purchase + "
            f"{energy} + {facility}; {sign}{owned.per_month:,.0f}/month")
