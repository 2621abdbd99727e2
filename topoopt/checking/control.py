"""Control-plane rule: the design buys the head nodes the instance asks for."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.cost import whole_units
from topoopt.checking.derive import devices_per_rack, rack_cools
from topoopt.checking.text import num
from topoopt.models.design import Violation

HEAD_PAIR = 2
"""Head nodes of a cluster when ``site.head_nodes`` is unset: the reference architectures' HA pair."""


def head_nodes_built(ctx: CheckContext) -> list[Violation]:
    """``site.head_nodes`` head nodes (unset: 2 for more than one node, else none) of the
    least-priced head model in the book at whole-unit prices (ties: least power, fewest rack units,
    id) among those a rack class the site allows cools and holds; none without such a model."""
    book, site = ctx.catalog, ctx.instance.site
    racks = [r for r in book.catalog.racks if site.rack_classes is None or r.id in site.rack_classes]
    usable = [c for c in book.catalog.control if c.role == "head" and c.id in book.prices
              and any(rack_cools(r, c.cooling) and devices_per_rack(r, c.power_w, c.rack_units) >= 1 for r in racks)]
    asked = site.head_nodes
    count = (HEAD_PAIR if ctx.design.nodes > 1 else 0) if asked is None else asked
    count = count if usable else 0
    model = min(usable, key=lambda c: (whole_units(book.prices[c.id].price), c.power_w, c.rack_units, c.id)).id \
        if usable else None
    recorded = ctx.design.head_nodes
    got = (None, 0) if recorded is None else (recorded.model, recorded.count)
    want = (model, count) if count else (None, 0)
    if got == want:
        return []
    how = f"{num(want[1])} × {want[0]}" if want[1] else "none"
    has = f"{num(got[1])} × {got[0]}" if got[1] else "none"
    return [Violation(family="head_nodes_built", item="head_nodes",
                      detail=f"{has} recorded; the instance asks for {how}")]


RULES = {"head_nodes_built": head_nodes_built}
