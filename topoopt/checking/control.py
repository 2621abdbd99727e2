"""Control-plane rule: the design buys the head nodes the instance asks for."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.text import num
from topoopt.models.design import Violation

HEAD_PAIR = 2
"""Head nodes of a cluster when ``site.head_nodes`` is unset: the reference architectures' HA pair."""


def head_nodes_built(ctx: CheckContext) -> list[Violation]:
    """``site.head_nodes`` head nodes (unset: 2 for more than one node when the catalog prices a head
    model, else none) of the least-priced head model in the book (ties: least power, fewest rack
    units, id)."""
    book = ctx.catalog
    priced = [c for c in book.catalog.control if c.role == "head" and c.id in book.prices]
    asked = ctx.instance.site.head_nodes
    count = (HEAD_PAIR if ctx.design.nodes > 1 else 0) if asked is None else asked
    count = count if priced else 0
    model = min(priced, key=lambda c: (book.prices[c.id].price, c.power_w, c.rack_units, c.id)).id if priced else None
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
