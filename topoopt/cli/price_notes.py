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
