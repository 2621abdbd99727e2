"""Instance rules on the chosen items: in the catalog and allowed by the lists, pinned values
taken, every bought item priced in the book."""

from __future__ import annotations

from topoopt.checking.context import CheckContext
from topoopt.models.design import Violation

CATALOG_KIND = {"storage_nics": "nics"}
"""Allow/deny lists whose items live under another catalog kind."""


def chosen_items(ctx: CheckContext) -> dict[str, list[str]]:
    """Ids the design uses, per allow/deny list (``constraints.<kind>``): the compute, storage and
    management switches; hot and cold storage tiers; the storage NIC of a dedicated storage network."""
    d, net = ctx.design, ctx.storage_net
    # Without a fabric (tiers 0) the fabric's switch is a placeholder that nobody buys.
    switches = ([d.fabric.switch] if d.fabric.tiers > 0 else [])
    switches += [net.switch] if not ctx.converged and net.switch is not None else []
    switches += [d.management_network.switch] + [g.model for g in d.switches if g.count]
    cables = list(dict.fromkeys(g.part for g in d.links))
    storage = [d.storage.tier] + ([d.cold_storage.tier] if d.cold_storage is not None else [])
    return {
        "gpus": [d.gpu],
        "servers": [d.server],
        "interconnects": [d.interconnect],
        "switches": list(dict.fromkeys(switches)),
        "cables": cables,
        "storage": list(dict.fromkeys(storage)),
        "storage_nics": [net.nic] if not ctx.converged and net.nic is not None else [],
    }


def allowed_by_lists(ctx: CheckContext) -> list[Violation]:
    """Every chosen GPU, server, interconnect, switch (compute, storage, management), cable, storage
    tier (hot, cold) and storage NIC is in the catalog, on the instance's allow list (when given)
    and not on its deny list."""
    family = "allowed_by_lists"
    out: list[Violation] = []
    rules = ctx.instance.constraints
    for kind, ids in chosen_items(ctx).items():
        known = ctx.catalog.catalog.by_id(CATALOG_KIND.get(kind, kind))
        lists = getattr(rules, kind)
        for item_id in ids:
            item = f"{kind} {item_id}"
            if item_id not in known:
                out.append(Violation(family=family, item=item, detail="not in the catalog"))
            elif item_id in lists.deny:
                out.append(Violation(family=family, item=item, detail=f"on constraints.{kind}.deny"))
            elif lists.allow is not None and item_id not in lists.allow:
                out.append(Violation(family=family, item=item,
                                     detail=f"not on constraints.{kind}.allow ({', '.join(lists.allow)})"))
    return out


def pins_respected(ctx: CheckContext) -> list[Violation]:
    """Every pinned decision (server, GPU, nodes, interconnect, NIC, NICs per node, tiers, leaf
    switch, rack class, hot and cold storage tiers, storage network mode, storage NIC, storage ports
    cabled per node, management switch) and a pinned parallel layout take their pinned values. A pinned tier count or leaf
    switch asks for a compute fabric, so it rules out the fabric-less single node whatever switch
    id that design records; a pinned cold tier or storage NIC asks for one."""
    family = "pins_respected"
    out: list[Violation] = []
    d, pins, net = ctx.design, ctx.instance.constraints.pins, ctx.storage_net
    racks = sorted({g.rack_class for g in d.racks if g.role in ("compute", "mixed")})  # the nodes' racks
    recorded = {
        "server": d.server, "gpu": d.gpu, "nodes": d.nodes, "interconnect": d.interconnect, "nic": d.nic,
        "nics_per_node": d.nics_per_node, "tiers": d.tiers, "leaf_switch": d.fabric.switch,
        "rack_class": racks[0] if len(racks) == 1 else ", ".join(racks), "storage": d.storage.tier,
        "cold_storage": "no cold tier" if d.cold_storage is None else d.cold_storage.tier,
        "storage_network": net.mode,
        "storage_nic": "no storage NIC (converged)" if ctx.converged or net.nic is None else net.nic,
        "storage_ports_per_node": "no storage port (converged)" if ctx.converged else net.ports_per_node,
        "management_switch": d.management_network.switch,
    }
    if not ctx.has_fabric:
        # The recorded switch of a fabric-less design is a placeholder: compare with the rule instead.
        for name in ("tiers", "leaf_switch"):
            del recorded[name]
            want = getattr(pins, name)
            if want is not None:
                out.append(Violation(family=family, item=f"constraints.pins.{name}",
                                     detail=f"pinned {want}; the design is a single node without a compute fabric"))
    for name, value in recorded.items():
        want = getattr(pins, name)
        if want is not None and value != want:
            out.append(Violation(family=family, item=f"constraints.pins.{name}", detail=f"pinned {want}, design has {value}"))
    pinned = ctx.instance.workload.training.parallelism
    if pinned != "auto":
        p = d.parallelism
        for name in ("tp", "pp", "dp", "cp", "zero_stage", "microbatch", "virtual_stages"):
            if getattr(pinned, name) is not None and getattr(p, name) != getattr(pinned, name):
                out.append(Violation(family=family, item=f"workload.training.parallelism.{name}",
                                     detail=f"pinned {getattr(pinned, name)}, design has {getattr(p, name)}"))
    return out


def bought_items(ctx: CheckContext) -> list[str]:
    """Ids that cost money: server, NIC (unless built in, or the design is a single node without a
    compute fabric, which buys none), storage NIC (dedicated, unless built in), switches (compute,
    storage, management), cables, rack class, storage tiers (hot, cold)."""
    d = ctx.design
    items = [d.server]
    if (ctx.server is None or ctx.server.builtin_compute_nics is None) and ctx.has_fabric:
        items.append(d.nic)
    chosen = chosen_items(ctx)
    if ctx.server is None or ctx.server.builtin_storage_nics is None:
        items += chosen["storage_nics"]
    items += chosen["switches"] + chosen["cables"]
    items += sorted({g.rack_class for g in d.racks}) + chosen["storage"]
    return list(dict.fromkeys(items))


def priced_in_book(ctx: CheckContext) -> list[Violation]:
    """Every bought item has a price in the selected price book (or an instance override); an entry
    the book marks as not offered counts only with ``catalog.include_not_offered``."""
    book = ctx.catalog.price_book
    out = []
    for item_id in bought_items(ctx):
        if ctx.catalog.price(item_id) is not None:
            continue
        entry = book.prices.get(item_id)
        detail = (f"not offered by the market of {book.id} (its {entry.provenance} price is used only with "
                  f"catalog.include_not_offered)" if entry is not None else f"no price in {book.id} and no override")
        out.append(Violation(family="priced_in_book", item=item_id, detail=detail))
    return out


def rail_only_allowed(ctx: CheckContext) -> list[Violation]:
    """A rail-only fabric — one tier with fewer rails per switch than per node, so that no switch
    joins the rail groups — only when ``constraints.allow_rail_only``."""
    f = ctx.design.fabric
    rail_only = f.tiers == 1 and f.rails_per_leaf < ctx.design.nics_per_node
    if rail_only and not ctx.instance.constraints.allow_rail_only:
        return [Violation(family="rail_only_allowed", item="fabric",
                          detail=f"rail-only ({f.rails_per_leaf} of {ctx.design.nics_per_node} rails per switch) "
                                 "but constraints.allow_rail_only is false")]
    return []


RULES = {
    "rail_only_allowed": rail_only_allowed,
    "allowed_by_lists": allowed_by_lists,
    "pins_respected": pins_respected,
    "priced_in_book": priced_in_book,
}
