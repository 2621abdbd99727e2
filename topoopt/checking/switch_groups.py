"""A network's recorded switch groups against the counts its rules give."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.checking.text import num
from topoopt.models.design import Violation


def switch_group_violations(ctx: CheckContext, family: str, tier: str, count: int, used: int, model: str | None,
                            network: str) -> list[Violation]:
    """One group for ``tier``, on ``network``, of ``model``, with ``count`` switches and ``used``
    ports in use; no group when ``count`` is 0."""
    # The compute network is the fabric: its switches are "the fabric switch".
    place, role = ("compute fabric", "fabric") if network == "compute" else (f"{network} network", network)
    groups = [g for g in ctx.design.switches if g.tier == tier]
    out: list[Violation] = []
    if len(groups) > 1:
        out.append(Violation(family=family, item=f"{tier} switches", detail=f"{len(groups)} groups for one tier"))
    if not groups:
        if count:
            out.append(Violation(family=family, item=f"{tier} switches", detail=f"missing; {num(count)} × {model} needed"))
        return out
    g = groups[0]
    item = f"{tier} switches ({g.model})"
    if g.network != network:
        out.append(Violation(family=family, item=item, detail=f"network {g.network}; it is on the {place}"))
    if count and g.model != model:
        out.append(Violation(family=family, item=item, detail=f"model {g.model} ≠ {role} switch {model}"))
    if g.count != count:
        out.append(Violation(family=family, item=item, detail=f"{num(g.count)} recorded, {num(count)} needed"))
    if g.ports_used != used:
        out.append(Violation(family=family, item=item,
                             detail=f"{num(g.ports_used)} ports in use recorded, {num(used)} by the rules"))
    return out
