"""Arithmetic the rules recompute from first principles (docs/model.md), as pure functions.

Nothing here reads a design record: inputs are the free choices (node count, rails, radix, tiers,
leaf port split, spines / cores per plane) and catalog items; outputs are what those choices imply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from topoopt.checking.text import ceil_div
from topoopt.checking.units import W_PER_KW
from topoopt.models.catalog import LinkPart, Nic, RackClass, Switch
from topoopt.models.instance import Distances

OVERSUBSCRIPTION_RATIOS = (1, 2, 3)
RAIL_CHOICES = (1, 2, 4, 8)
LINK_CLASSES = ("node-leaf", "leaf-spine", "spine-core")


def leaf_split(radix: int, ratio: int) -> tuple[int, int]:
    """3-tier leaf ``(D, u)`` ports for oversubscription ratio ρ: ``D = floor(k·ρ/(1+ρ))``, ``u = ceil(D/ρ)``."""
    down = radix * ratio // (1 + ratio)
    return down, ceil_div(down, ratio)


def split_down_for_up(radix: int, up: int) -> int | None:
    """The largest 3-tier split ``D`` whose uplinks are ``up`` (two ratios of a tiny radix may share
    ``u``; the design may fill the larger), or None when no ratio-1, 2 or 3 split has ``up`` uplinks."""
    downs = [d for d, u in (leaf_split(radix, ratio) for ratio in OVERSUBSCRIPTION_RATIOS)
             if u == up and d >= 1 and d + u <= radix]
    return max(downs, default=None)


def oversubscription_class(down: int, up: int) -> int:
    """The whole ratio the performance model sees: ``ρ = ceil(d/u)``, at least 1 (docs/model.md)."""
    return max(1, ceil_div(down, up)) if up >= 1 else 1


def growth_leaves_per_group(provisioned: int, group_rails: int, leaf_down_max: int) -> int | None:
    """Leaves per rail group for ``N`` provisioned nodes: ``x_N = ceil(N / floor(D/g))`` (None when a
    leaf of ``D`` down-ports cannot take one node's ``g`` ports)."""
    per_leaf = leaf_down_max // group_rails if group_rails >= 1 else 0
    return ceil_div(provisioned, per_leaf) if per_leaf >= 1 else None


def growth_pods(leaves: int, radix: int, links_per_leaf_spine: int) -> int:
    """3 tiers: pods of ``P = floor(k/2)/m`` leaves holding ``leaves`` leaves."""
    return ceil_div(leaves, max((radix // 2) // max(links_per_leaf_spine, 1), 1))


@dataclass(frozen=True)
class FabricCounts:
    """Counts implied by a fabric choice; per-switch loads are for the busiest switch of a tier."""

    endpoints: int
    leaves: int
    leaves_per_rail: int
    pods: int
    leaves_per_pod: int
    spines: int
    spines_per_pod: int
    spine_up_ports: int
    cores: int
    links_per_leaf_spine: int | None
    """2 tiers: ``floor(u/S)``, the fewest links of a leaf–spine pair; 3 tiers: ``m``."""
    links_per_spine_core: int | None
    node_leaf_links: int
    leaf_spine_links: int
    spine_core_links: int
    leaf_ports_used: int
    spine_ports_used: int
    core_ports_used: int
    ports_per_leaf: int
    ports_per_spine: int
    ports_per_core: int
    storage_leaves: int
    """Leaves carrying storage units only (converged storage network attached to leaves, 2 or 3 tiers)."""
    rail_groups: int = 1
    """``r/g`` groups of ``g`` rails; one 1-tier switch or ``x`` leaves per group."""
    compute_leaves: int = 0
    """``(r/g)·x`` leaves carrying nodes (1 tier: the ``r/g`` switches)."""
    down: int = 0
    """``d``: down-ports in use on the fullest compute leaf, ``g·ceil(n/x)`` (1 tier: ``g·n``)."""
    up: int = 0
    """``u``: uplinks per leaf (a choice in 2 tiers, the split's in 3 tiers)."""
    top_unit_ports: int = 0
    """Storage-unit ports on the top tier (converged, ``top``): spines in 2 tiers, cores in 3."""
    top_ports: int = 0
    """Ports of the whole top tier: ``S·k`` (2 tiers) or ``cores·k`` (3 tiers)."""
    top_ports_used: int = 0
    """Ports in use on the whole top tier, storage units included."""
    tiers: int = 0


THREE_TIER_LINKS_PER_PAIR = (1, 2)
"""Links between a leaf and each spine of its pod in 3 tiers (2 lets a twin-port kit carry both)."""


def fabric_counts(
    nodes: int, rails: int, radix: int, tiers: int, rails_per_leaf: int = 1, leaves_per_rail: int = 1, up: int = 0,
    spines_2tier: int = 0, links_per_leaf_spine: int = 1, cores_per_plane: int = 0, storage_ports: int = 0,
    attach: str = "leaves",
) -> FabricCounts:
    """Leaves, spines, cores, links and ports in use for one fabric choice (docs/model.md, Fabric).

    The free choices: ``rails_per_leaf`` ``g`` (rail groups ``r/g``; rounded-up groups when ``g``
    does not divide ``r``, which ``leaf_ports_cover_endpoints`` reports), ``leaves_per_rail`` ``x``
    (leaves per rail group, 2 and 3 tiers), ``up`` ``u`` (3 tiers: the split's), ``spines_2tier``
    ``S`` (2 tiers: a leaf–spine pair has ``floor(u/S)`` or ``ceil(u/S)`` links, :func:`pair_links`),
    ``links_per_leaf_spine`` (``m``, 3 tiers),
    ``cores_per_plane`` ``C`` (3 tiers). When ``C`` does not divide the spine uplinks the per-pair
    link count is None (rule ``uplinks_balanced``) and the per-switch loads use rounded-up counts.

    ``storage_ports`` ``U`` are storage-unit ports on the compute fabric (a converged storage
    network): on the switch of 1 tier; in 2 or 3 tiers on ``ceil(U / (k − u))`` storage leaves
    (``attach="leaves"``), which count among the leaves (so spines, pods, cores and leaf–spine
    links include them), or on the top tier's free ports (``attach="top"``).
    """
    endpoints = nodes * rails
    g = max(rails_per_leaf, 1)
    groups = ceil_div(rails, g)
    if tiers == 0:
        # A single node without a compute fabric: its GPUs talk over the scale-up link only.
        return FabricCounts(
            endpoints=endpoints, leaves=0, leaves_per_rail=0, pods=0, leaves_per_pod=0, spines=0,
            spines_per_pod=0, spine_up_ports=0, cores=0, links_per_leaf_spine=0, links_per_spine_core=0,
            node_leaf_links=0, leaf_spine_links=0, spine_core_links=0, leaf_ports_used=0, spine_ports_used=0,
            core_ports_used=0, ports_per_leaf=0, ports_per_spine=0, ports_per_core=0, storage_leaves=0,
            rail_groups=groups,
        )
    if tiers == 1:
        # One switch per rail group, g·n ports each; storage units only on the single switch (g = r).
        down = g * nodes
        return FabricCounts(
            endpoints=endpoints, leaves=groups, leaves_per_rail=1, pods=1, leaves_per_pod=groups, spines=0,
            spines_per_pod=0, spine_up_ports=0, cores=0, links_per_leaf_spine=0, links_per_spine_core=0,
            node_leaf_links=endpoints, leaf_spine_links=0, spine_core_links=0,
            leaf_ports_used=endpoints + storage_ports, spine_ports_used=0, core_ports_used=0,
            ports_per_leaf=down + storage_ports, ports_per_spine=0, ports_per_core=0, storage_leaves=0,
            rail_groups=groups, compute_leaves=groups, down=down,
        )
    x = max(leaves_per_rail, 1)
    down = g * ceil_div(nodes, x)
    if tiers == 2:
        spines = spines_2tier
        per_pair = up // spines if spines >= 1 else 0
    else:
        per_pair = max(links_per_leaf_spine, 1)
    top = attach == "top"
    free = radix - up
    storage_leaves = 0 if top or not storage_ports else (ceil_div(storage_ports, free) if free >= 1 else storage_ports)
    compute_leaves = groups * x
    leaves = compute_leaves + storage_leaves
    leaf_unit_ports, top_unit_ports = (0, storage_ports) if top else (storage_ports, 0)
    leaf_spine_links = leaves * up
    leaf_ports_used = endpoints + leaf_unit_ports + leaf_spine_links
    common = dict(tiers=tiers, endpoints=endpoints, leaves=leaves, leaves_per_rail=x, node_leaf_links=endpoints,
                  leaf_spine_links=leaf_spine_links, leaf_ports_used=leaf_ports_used, ports_per_leaf=down + up,
                  storage_leaves=storage_leaves, rail_groups=groups, compute_leaves=compute_leaves, down=down, up=up,
                  top_unit_ports=top_unit_ports)
    if tiers == 2:
        spine_used = leaf_spine_links + top_unit_ports
        return FabricCounts(
            pods=1, leaves_per_pod=leaves, spines=spines, spines_per_pod=spines, spine_up_ports=0, cores=0,
            links_per_leaf_spine=per_pair, links_per_spine_core=0, spine_core_links=0, spine_ports_used=spine_used,
            core_ports_used=0, ports_per_spine=ceil_div(leaf_spine_links, max(spines, 1)), ports_per_core=0,
            top_ports=spines * radix,
            top_ports_used=spine_used, **common,
        )
    # 3 tiers: a spine has floor(k/2) down-ports and u2 = k − floor(k/2) up-ports. With m links per
    # leaf-spine pair, pods hold P = floor(k/2)/m leaves and Q = u/m spines; spine j of every pod
    # joins plane j of C cores.
    m = per_pair
    pod_leaves = max((radix // 2) // m, 1)
    pod_spines = ceil_div(up, m)
    spine_up = radix - radix // 2
    pods = ceil_div(leaves, pod_leaves)
    spines = pods * pod_spines
    per_pair_sc = spine_up // cores_per_plane if cores_per_plane >= 1 and spine_up % cores_per_plane == 0 else None
    load_sc = ceil_div(spine_up, cores_per_plane) if cores_per_plane >= 1 else spine_up
    spine_core_links = spines * spine_up
    cores = pod_spines * cores_per_plane
    core_used = spine_core_links + top_unit_ports
    return FabricCounts(
        pods=pods, leaves_per_pod=pod_leaves, spines=spines, spines_per_pod=pod_spines, spine_up_ports=spine_up,
        cores=cores, links_per_leaf_spine=m if m in THREE_TIER_LINKS_PER_PAIR and up % m == 0 else None,
        links_per_spine_core=per_pair_sc, spine_core_links=spine_core_links,
        spine_ports_used=leaf_spine_links + spine_core_links, core_ports_used=core_used,
        ports_per_spine=min(pod_leaves, leaves) * m + spine_up, ports_per_core=pods * load_sc,
        top_ports=cores * radix, top_ports_used=core_used, **common,
    )


def pair_links(up: int, spines: int) -> list[tuple[int, int]]:
    """``(pairs, links per pair)`` of one leaf's ``up`` uplinks near-balanced over ``spines``
    spines (2 tiers): ``u mod S`` pairs of ``ceil(u/S)`` links, the rest of ``floor(u/S)``."""
    low, extra = divmod(up, spines)
    return [(n, links) for n, links in ((spines - extra, low), (extra, low + 1)) if n]


def spine_loads(leaves: int, up: int, spines: int) -> list[tuple[int, int]]:
    """``(spines, links)`` of a 2-tier spine tier taking ``T = leaves·u`` links dealt round-robin:
    ``T mod S`` spines carry ``ceil(T/S)``, the rest ``floor(T/S)``."""
    return pair_links(leaves * up, spines)


def fewest_assemblies(nodes: int, leaves: int, per_assembly: int) -> tuple[int, str]:
    """Whole assemblies of ``a`` nodes that ``x`` leaves of at most ``c = ceil(n/x)`` nodes each
    take, and how they were counted: ``ceil(n/a)`` when ``a`` divides ``c``; else, ``ρ = c mod a``,
    every leaf takes ``floor(c/a)`` full ones and each leaf holding more than ``c − ρ`` nodes one
    more, at least ``ceil((n − x·(c − ρ)) / ρ)`` leaves.

    >>> fewest_assemblies(9, 3, 2)[0]  # 3 + 3 + 3 nodes: two cables per leaf, three legs idle
    6
    >>> fewest_assemblies(10, 3, 2)[0]  # 4 + 4 + 2
    5
    """
    n, x, a = nodes, leaves, per_assembly
    c = ceil_div(n, x)
    rest = c % a
    if rest == 0:
        return ceil_div(n, a), f"ceil({n:,} nodes / {a} per assembly)"
    topped = ceil_div(n - x * (c - rest), rest)
    return (x * (c // a) + topped,
            f"({x:,} leaves × {c // a} of {a} nodes + one more on each of {topped:,} leaves of {c:,} nodes)")


def assemblies_needed(
    link_class: str, part: LinkPart, ports_per_cage: int, nodes: int, rails: int, counts: FabricCounts,
    links_per_leaf_spine: int, cores_per_plane: int, links_per_spine_core: int, rails_per_leaf: int = 1,
) -> tuple[int, str]:
    """Whole assemblies of ``part`` for a compute link class, and how they were counted.

    ``q`` links per assembly. Node–leaf: ``(r/h) · A`` with ``h = gcd(q, g)``, ``g`` the rails a
    leaf carries: an assembly takes ``h`` rails of ``q/h`` nodes, and each rail group's nodes are
    split over its leaves in whole assemblies (:func:`fewest_assemblies`). Leaf–spine and
    spine–core (``m``/``m2`` links per pair):

    * a one-piece cable (DAC, ACC, AOC) joins one pair of switches, so ``pairs · ceil(m / q)``
      (2 tiers: per leaf, its ``u mod S`` pairs of ``ceil(u/S)`` links and the rest of
      ``floor(u/S)``, :func:`pair_links`);
    * a transceiver kit's module ports are cabled one by one (one module's ports may reach
      different switches), so kits follow the cages the class fills: every switch fills
      ``ceil(its links of the class / ports_per_cage)`` cages, ``A`` on the upper tier and ``B``
      on the lower one, and a kit brings ``a_ends`` upper and ``b_ends`` lower modules:
      ``max(ceil(A / a_ends), ceil(B / b_ends))`` (2 tiers: the spines carry ``floor`` or ``ceil``
      of ``leaves·u / S``, :func:`spine_loads`).
    """
    q = part.links
    if link_class == "node-leaf":
        h = math.gcd(q, rails_per_leaf)  # rails of one node an assembly takes
        leaves = max(counts.compute_leaves // max(counts.rail_groups, 1), 1)
        per_share, how = fewest_assemblies(nodes, leaves, q // h)
        rails_text = f"{rails} rails" + (f" / {h} per assembly" if h > 1 else "")
        return rails // h * per_share, f"{rails_text} × {how}"
    c = counts
    if link_class == "leaf-spine":
        m, pairs = links_per_leaf_spine, c.leaves * c.spines_per_pod
        pair_text = f"{c.leaves:,} leaves × {c.spines_per_pod} spines"
    else:
        m, pairs = links_per_spine_core, c.spines * cores_per_plane
        pair_text = f"{c.spines:,} spines × {cores_per_plane} cores"
    near_balanced = link_class == "leaf-spine" and c.tiers == 2 and c.spines >= 1
    if part.one_piece and near_balanced:
        per_leaf = pair_links(c.up, c.spines)
        return (c.leaves * sum(n * ceil_div(links, q) for n, links in per_leaf),
                f"{c.leaves:,} leaves × ({' + '.join(f'{n} pairs × ceil({links} links / {q})' for n, links in per_leaf)})")
    if part.one_piece:
        return pairs * ceil_div(m, q), f"{pair_text} × ceil({m} links / {q} per assembly)"
    ppc = max(ports_per_cage, 1)
    if near_balanced:
        loads = spine_loads(c.leaves, c.up, c.spines)
        upper = sum(n * ceil_div(links, ppc) for n, links in loads)
        lower = c.leaves * ceil_div(c.up, ppc)
        upper_text = " + ".join(f"{n} spines × ceil({links} links / {ppc})" for n, links in loads)
        lower_text = f"{c.leaves:,} leaves × ceil({c.up} uplinks / {ppc})"
    elif link_class == "leaf-spine":
        # Spines above: a full pod's spine carries m links per leaf of the pod; the last pod may
        # hold fewer leaves (2 tiers: one pod of every leaf). Leaves below carry their uplinks.
        last = c.leaves - c.leaves_per_pod * (c.pods - 1)
        upper = c.spines_per_pod * ((c.pods - 1) * ceil_div(c.leaves_per_pod * m, ppc) + ceil_div(last * m, ppc))
        up = c.leaf_spine_links // max(c.leaves, 1)
        lower = c.leaves * ceil_div(up, ppc)
        upper_text = f"{c.spines_per_pod} spines × ceil({last} leaves × {m} / {ppc})"
        if c.pods > 1:
            upper_text = (f"{c.spines_per_pod} spines × ({c.pods - 1} full pods × ceil({c.leaves_per_pod} leaves × {m} "
                          f"/ {ppc}) + ceil({last} leaves × {m} / {ppc}))")
        lower_text = f"{c.leaves:,} leaves × ceil({up} uplinks / {ppc})"
    else:
        # Cores above: every core carries m2 links per pod. Spines below carry their uplinks.
        upper = c.cores * ceil_div(c.pods * m, ppc)
        lower = c.spines * ceil_div(c.spine_up_ports, ppc)
        upper_text = f"{c.cores:,} cores × ceil({c.pods} pods × {m} / {ppc})"
        lower_text = f"{c.spines:,} spines × ceil({c.spine_up_ports} uplinks / {ppc})"
    kits = max(ceil_div(upper, part.a_ends), ceil_div(lower, part.b_ends))
    return kits, (f"max(ceil({upper_text} cages / {part.a_ends}), ceil({lower_text} cages / {part.b_ends})) "
                  f"(kits by cages filled)")


def link_lengths_m(d: Distances, max_racks: int) -> dict[str, float]:
    """Cable run per link class. Leaves of every network (compute, storage, management) sit at the
    end of the row, so a device reaches its leaf over ``in_row_m``; spines, cores and management
    aggregation switches are ``across_rows_m`` away from the leaves. Every run adds ``slack_m``,
    and none is longer than the floor of the site's ``max_racks`` (:func:`floor_diagonal_m`, with
    the site's row size)."""
    in_row, across = d.in_row_m + d.slack_m, d.across_rows_m + d.slack_m
    runs = {
        "node-leaf": in_row, "leaf-spine": across, "spine-core": across,
        "node-storage": in_row, "storage-unit": in_row, "storage-leaf-spine": across, "storage-spine-core": across,
        "mgmt": in_row, "mgmt-uplink": across,
    }
    floor_m = floor_diagonal_m(max_racks, d)
    return runs if floor_m is None else {cls: min(run, floor_m) for cls, run in runs.items()}


def in_rack_classes(classes, *, one_rack: bool, switches_one_rack: bool) -> frozenset[str]:
    """The link classes whose every cable runs within one rack: all when everything is in one
    rack; leaf–spine and spine–core also when every compute switch is."""
    return frozenset(c for c in classes if one_rack or (switches_one_rack and c in ("leaf-spine", "spine-core")))


def in_one_row(racks: int, mixed: bool, racks_per_row: int | None) -> bool:
    """The design's racks stand in one row: when ``racks_per_row`` is given, as long as it holds
    them all; without it, mixed racks (at most eight) do and racks of one model each do not."""
    return mixed if racks_per_row is None else racks <= racks_per_row


def placed_runs_m(lengths_m: dict[str, float], in_rack_m: float, in_row_m: float, *, one_rack: bool,
                  switches_one_rack: bool, one_row: bool, floor_m: float | None = None) -> dict[str, float]:
    """Every link class's run where its ends sit (runs with slack): ``in_rack_m`` for the classes
    within one rack (:func:`in_rack_classes`); ``in_row_m`` between racks of one row;
    otherwise ``lengths_m``'s, a compute class's no longer than ``floor_m`` (the design's floor
    corner to corner, :func:`floor_diagonal_m`). A placement never lengthens a run."""
    runs = dict(lengths_m)
    inside = in_rack_classes(lengths_m, one_rack=one_rack, switches_one_rack=switches_one_rack)
    for link_class, run_m in lengths_m.items():
        if link_class in inside:
            runs[link_class] = min(in_rack_m, run_m)
        elif one_row:
            runs[link_class] = min(in_row_m, run_m)
        elif floor_m is not None and link_class in LINK_CLASSES:
            runs[link_class] = min(floor_m, run_m)
    return runs


def floor_diagonal_m(racks: int, d: Distances) -> float | None:
    """The longest cable between two racks of ``racks`` on the floor plan, with the site's row
    size ``P`` (None without it): at most ``rows = ceil(racks / P) + 2`` rows (node rows, the
    central network rows, node rows, each block ending in a short row at most), so at most
    ``ceil(in_rack_m + (P − 1) · rack_width_m + (rows − 1) · row_pitch_m + slack_m)``."""
    if d.racks_per_row is None:
        return None
    rows = ceil_div(racks, d.racks_per_row) + 2
    apart_m = (d.racks_per_row - 1) * d.rack_width_m + (rows - 1) * d.row_pitch_m
    return float(math.ceil(round(d.in_rack_m + apart_m + d.slack_m, 9)))


def too_long_in_rack(part: LinkPart, in_rack_m: float, slack_m: float) -> bool:
    """A one-piece cable is as long as its reach: within one rack it may be no longer than
    ``in_rack_m + slack_m``; a kit's fibre or a cord is cut to the run."""
    return part.one_piece and part.max_reach_m > in_rack_m + slack_m


def part_fits_cage(part: LinkPart, end: str, form_factor: str, ports_per_cage: int, gbps: int) -> bool:
    """End ``end`` ("a" or "b") of ``part`` plugs into a cage of ``form_factor`` carrying all its
    ``ports_per_cage`` logical ports at ``gbps``."""
    ff, ends = (part.a_form_factor, part.a_ends) if end == "a" else (part.b_form_factor, part.b_ends)
    return part.gbps == gbps and ff == form_factor and part.links == ends * ports_per_cage


def part_fits_node(part: LinkPart, form_factor: str, ports_per_cage: int, gbps: int) -> bool:
    """End *b* of ``part`` plugs into a node cage of ``form_factor`` carrying all its ports at ``gbps``."""
    return part_fits_cage(part, "b", form_factor, ports_per_cage, gbps)


def node_power_w(
    server_power_w: float, rails: int, form_factor: str, ports_per_cage: int, gbps: int, parts: list[LinkPart],
    nic_power_w: float = 0.0, fabric: bool = True,
) -> float:
    """Provisioned node power: the server at its maximum; with a fabric, plus its bought NICs
    (``nic_power_w`` each) and the hungriest fitting module in every node cage."""
    if not fabric:
        return server_power_w
    end_w = max((p.power_w_per_b_end for p in parts if part_fits_node(p, form_factor, ports_per_cage, gbps)), default=0.0)
    return server_power_w + rails * nic_power_w + ceil_div(rails, ports_per_cage) * end_w


def storage_nic_power_w(nic: Nic, bought: int, ports: int, gbps: int, parts: list[LinkPart]) -> float:
    """A node's dedicated storage side: ``bought`` storage NICs at ``nic.power_w`` (built-in ones
    are in the server's power) and, in each of its ``ports`` single-port storage cages, the
    hungriest module whose b-end fits that cage at the storage speed ``gbps``."""
    end_w = max((p.power_w_per_b_end for p in parts if part_fits_node(p, nic.port_form_factor, 1, gbps)), default=0.0)
    return bought * nic.power_w + ports * end_w


def switch_power_w(switch: Switch, parts: list[LinkPart]) -> float:
    """Provisioned switch power: the switch plus, in every cage, the hungriest module end that fits
    the cage (form factor and ports per cage) at a speed the switch runs."""
    ends_w = [
        p.power_w_per_a_end if end == "a" else p.power_w_per_b_end
        for p in parts
        for end in ("a", "b")
        for gbps, per_cage in switch.ports_per_cage.items()
        if part_fits_cage(p, end, switch.cage_form_factor, per_cage, gbps)
    ]
    return switch.power_w + switch.cages * max(ends_w, default=0.0)


RACK_COUNT_SLACK = 1e-9
"""Added to ``rack W / device W`` before flooring: a whole quotient can come out of binary floating
point a hair below its integer (32.3 kW is 32299.999999999996 W, so 32.3 kW / 8,075 W gives
3.9999999999999996), and the rack holds 4. No true quotient lies that close below an integer:
with powers in at most three decimals, ``k`` devices that exceed the rack exceed it by at least
0.001 W, far more than 1e-9 of any device's power."""


def devices_per_rack_by_power(rack: RackClass, device_power_w: float) -> int:
    """Identical devices one rack powers: ``floor(rack W / device W)`` (with :data:`RACK_COUNT_SLACK`).

    >>> rack = RackClass(id="r", name="r", source="estimate: doc", power_kw=32.3, rack_units=42, cooling="air")
    >>> devices_per_rack_by_power(rack, 8075.0)
    4
    """
    return math.floor(rack.power_kw * W_PER_KW / device_power_w + RACK_COUNT_SLACK)


def devices_per_rack_by_units(rack: RackClass, device_rack_units: int) -> int:
    """Identical devices one rack has room for: ``floor(rack U / device U)``."""
    return rack.rack_units // device_rack_units


def rack_cools(rack: RackClass, cooling: str) -> bool:
    """Air and rear-door racks cool air-cooled devices, liquid racks liquid-cooled ones."""
    return (rack.cooling == "liquid") == (cooling == "liquid")


def devices_per_rack(rack: RackClass, device_power_w: float, device_rack_units: int) -> int:
    """Identical devices one rack holds: ``min(floor(rack W / device W), floor(rack U / device U))``.
    The checker's rule and the fabric's rack plan both count with it."""
    return min(devices_per_rack_by_power(rack, device_power_w), devices_per_rack_by_units(rack, device_rack_units))
