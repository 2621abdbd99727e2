"""Cost: the design's bill priced from the price book, the budget cap, and the reported cost."""

from __future__ import annotations

from collections import defaultdict

from topoopt.checking.context import CheckContext
from topoopt.checking.ownership import ownership_mismatches
from topoopt.checking.rental import rental_mismatches
from topoopt.checking.text import close, money, num
from topoopt.models.design import Cost, CostLine, Violation


def whole_units(price: float) -> int:
    """Prices count in whole currency units (docs/model.md), rounded as Python's ``round`` does."""
    return int(round(price))


def bill(ctx: CheckContext) -> list[tuple[str, str, int]]:
    """``(category, item, quantity)`` of everything the design buys, from its own counts.

    A node is its server plus ``rails`` NICs unless the NICs are built in or the design has no
    compute fabric (a single node), plus its dedicated storage NICs unless those are built in;
    switches (compute, storage, management), cable assemblies and racks are summed over their
    groups; hot and cold storage units each make a line, and head nodes one beside the nodes.
    """
    d, net = ctx.design, ctx.storage_net
    lines: list[tuple[str, str, int]] = [("server", d.server, d.nodes)]
    if d.head_nodes is not None:
        lines.append(("server", d.head_nodes.model, d.head_nodes.count))
    if (ctx.server is None or ctx.server.builtin_compute_nics is None) and d.tiers > 0:
        lines.append(("nic", d.nic, d.nodes * d.nics_per_node))
    if not ctx.converged and net.nic is not None and (ctx.server is None or ctx.server.builtin_storage_nics is None):
        lines.append(("nic", net.nic, d.nodes * net.nics_per_node))
    for category, pairs in (
        ("switch", [(g.model, g.count) for g in d.switches]),
        ("cable", [bought for g in d.links for bought in g.bought]),
        ("rack", [(g.rack_class, g.count) for g in d.racks]),
    ):
        totals: dict[str, int] = defaultdict(int)
        for item_id, quantity in pairs:
            totals[item_id] += quantity
        lines += [(category, item_id, quantity) for item_id, quantity in totals.items() if quantity]
    lines.append(("storage", d.storage.tier, d.storage.units))
    if d.cold_storage is not None:
        lines.append(("storage", d.cold_storage.tier, d.cold_storage.units))
    return lines


def cost_of(ctx: CheckContext) -> Cost:
    """Price the bill; an item without a price counts 0 (``priced_in_book`` reports it)."""
    book = ctx.catalog
    breakdown = []
    for category, item_id, quantity in bill(ctx):
        entry = book.prices.get(item_id)
        unit = 0 if entry is None else whole_units(entry.price)
        breakdown.append(CostLine.priced(category, item_id, quantity, unit, entry, book.price_book.id))
    return Cost(basis=book.basis, currency=book.currency, total=sum(line.total for line in breakdown),
                breakdown=breakdown)


def _by_item(cost: Cost) -> dict[tuple[str, str], tuple[int, float, float]]:
    """Lines keyed by (category, item), summing quantities and totals of repeated lines."""
    merged: dict[tuple[str, str], list[float]] = {}
    for line in cost.breakdown:
        entry = merged.setdefault((line.category, line.item), [0, line.unit_price, 0.0])
        entry[0] += line.quantity
        entry[2] += line.total
    return {key: (int(q), unit, total) for key, (q, unit, total) in merged.items()}


def _reported_mismatches(mine: Cost, reported: Cost) -> list[str]:
    problems = []
    if (reported.basis, reported.currency) != (mine.basis, mine.currency):
        problems.append(f"{reported.basis} {reported.currency} reported, the price book is {mine.basis} {mine.currency}")
    if not close(reported.total, mine.total, rel=0, abs_=1e-6):
        problems.append(f"total {money(reported.total, reported.currency)} reported, "
                        f"{money(mine.total, mine.currency)} recomputed")
    ours, theirs = _by_item(mine), _by_item(reported)
    for key in list(ours) + [k for k in theirs if k not in ours]:
        category, item_id = key
        a, b = theirs.get(key), ours.get(key)
        if a == b:
            continue
        if a is None:
            problems.append(f"{category} {item_id}: missing; {num(b[0])} × {num(b[1])} = {num(b[2])}")
        elif b is None:
            problems.append(f"{category} {item_id}: {num(a[0])} × {num(a[1])} = {num(a[2])} reported, not bought")
        else:
            problems.append(f"{category} {item_id}: {num(a[0])} × {num(a[1])} = {num(a[2])} reported, "
                            f"{num(b[0])} × {num(b[1])} = {num(b[2])} recomputed")
    return problems


def budget_cap(ctx: CheckContext) -> list[Violation]:
    """The priced bill is within ``budget.max`` in the budget's basis and currency; a reported cost
    equals the recomputation line by line, a reported rental of the whole job the book's terms
    (rental.py), and a reported ownership figure its recomputation (ownership.py)."""
    family = "budget_cap"
    out: list[Violation] = []
    budget, book = ctx.instance.budget, ctx.catalog
    if (book.basis, book.currency) != (budget.basis, budget.currency):
        out.append(Violation(family=family, item="price book",
                             detail=f"{book.price_book.id} is {book.basis} {book.currency}; the budget is "
                                    f"{budget.basis} {budget.currency}"))
    mine = cost_of(ctx)
    if mine.total > budget.max:
        out.append(Violation(family=family, item="budget",
                             detail=f"cost {money(mine.total, mine.currency)} > budget {money(budget.max, budget.currency)}"))
    if ctx.cost is not None:
        out += [Violation(family=family, item="reported cost", detail=p) for p in _reported_mismatches(mine, ctx.cost)]
        if ctx.cost.rental is not None:
            out += [Violation(family=family, item="reported rental", detail=p)
                    for p in rental_mismatches(ctx, mine.total, ctx.cost.rental)]
        if ctx.cost.ownership is not None:
            out += [Violation(family=family, item="reported ownership", detail=p)
                    for p in ownership_mismatches(ctx, mine.total, ctx.cost.ownership)]
    return out


RULES = {"budget_cap": budget_cap}
