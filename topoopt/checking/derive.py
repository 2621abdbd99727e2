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

OVERSUBSCRIPTION_RATIOS = (1, 2, 3)
RAIL_CHOICES = (1, 2, 4, 8)
LINK_CLASSES = ("node-leaf", "leaf-spine", "spine-core")


def leaf_split(radix: int, ratio: int) -> tuple[int, int]:
    """Leaf ``(down, up)`` ports for oversubscription ratio ρ: ``d = floor(k·ρ/(1+ρ))``, ``u = ceil(d/ρ)``."""
    down = radix * ratio // (1 + ratio)
    return down, ceil_div(down, ratio)


def split_ratio(radix: int, down: int, up: int) -> int | None:
    """The ratio ρ ∈ {1, 2, 3} whose leaf split is exactly ``(down, up)``, or None."""
    for ratio in OVERSUBSCRIPTION_RATIOS:
        if leaf_split(radix, ratio) == (down, up):
            return ratio
    return None


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
    """Leaves carrying storage units only (converged storage network, 2 or 3 tiers)."""


THREE_TIER_LINKS_PER_PAIR = (1, 2)
"""Links between a leaf and each spine of its pod in 3 tiers (2 lets a twin-port kit carry both)."""


def fabric_counts(
    nodes: int, rails: int, radix: int, tiers: int, down: int, up: int, spines_2tier: int, cores_per_plane: int,
    links_per_leaf_spine_3tier: int = 1, storage_ports: int = 0,
) -> FabricCounts:
    """Leaves, spines, cores, links and ports in use for one fabric choice (docs/model.md, Fabric).

    ``spines_2tier`` (2 tiers), ``links_per_leaf_spine_3tier`` and ``cores_per_plane`` (3 tiers)
    are free choices of the design; when they do not divide the uplinks, the per-pair link count is
    None (rule ``uplinks_balanced``) and the per-switch loads are computed with rounded-up counts.

    ``storage_ports`` are storage-unit ports on the compute fabric (a converged storage network):
    on the one switch of 1 tier, or on ``ceil(storage_ports / d)`` extra leaves of 2 or 3 tiers,
    which count among the leaves (so spines, pods, cores and leaf-spine links include them).
    """
    endpoints = nodes * rails
    if tiers == 0:
        # A single node without a compute fabric: its GPUs talk over the scale-up link only.
        return FabricCounts(
            endpoints=endpoints, leaves=0, leaves_per_rail=0, pods=0, leaves_per_pod=0, spines=0,
            spines_per_pod=0, spine_up_ports=0, cores=0, links_per_leaf_spine=0, links_per_spine_core=0,
            node_leaf_links=0, leaf_spine_links=0, spine_core_links=0, leaf_ports_used=0, spine_ports_used=0,
            core_ports_used=0, ports_per_leaf=0, ports_per_spine=0, ports_per_core=0, storage_leaves=0,
        )
    if tiers == 1:
        used = endpoints + storage_ports
        return FabricCounts(
            endpoints=endpoints, leaves=1, leaves_per_rail=1, pods=1, leaves_per_pod=1, spines=0,
            spines_per_pod=0, spine_up_ports=0, cores=0, links_per_leaf_spine=0, links_per_spine_core=0,
            node_leaf_links=endpoints, leaf_spine_links=0, spine_core_links=0, leaf_ports_used=used,
            spine_ports_used=0, core_ports_used=0, ports_per_leaf=used, ports_per_spine=0, ports_per_core=0,
            storage_leaves=0,
        )
    # Rail-optimized: rail i of every node lands on leaf group i, so each rail needs ceil(n/d) leaves.
    leaves_per_rail = ceil_div(nodes, down)
    storage_leaves = ceil_div(storage_ports, down)
    leaves = rails * leaves_per_rail + storage_leaves
    leaf_spine_links = leaves * up
    if tiers == 2:
        spines = spines_2tier
        per_pair = up // spines if spines >= 1 and up % spines == 0 else None
        load = ceil_div(up, spines) if spines >= 1 else up
        return FabricCounts(
            endpoints=endpoints, leaves=leaves, leaves_per_rail=leaves_per_rail, pods=1, leaves_per_pod=leaves,
            spines=spines, spines_per_pod=spines, spine_up_ports=0, cores=0, links_per_leaf_spine=per_pair,
            links_per_spine_core=0, node_leaf_links=endpoints, leaf_spine_links=leaf_spine_links,
            spine_core_links=0, leaf_ports_used=endpoints + storage_ports + leaf_spine_links,
            spine_ports_used=leaf_spine_links, core_ports_used=0, ports_per_leaf=down + up,
            ports_per_spine=leaves * load, ports_per_core=0, storage_leaves=storage_leaves,
        )
    # 3 tiers: a spine has floor(k/2) down-ports and u2 = k − floor(k/2) up-ports. With m links per
    # leaf-spine pair, pods hold P = floor(k/2)/m leaves and Q = u/m spines; spine j of every pod
    # joins plane j of C cores.
    m = max(links_per_leaf_spine_3tier, 1)
    per_pair = m if m in THREE_TIER_LINKS_PER_PAIR and up % m == 0 else None
    pod_leaves = max((radix // 2) // m, 1)
    pod_spines = ceil_div(up, m)
    spine_up = radix - radix // 2
    pods = ceil_div(leaves, pod_leaves)
    spines = pods * pod_spines
    per_pair_sc = spine_up // cores_per_plane if cores_per_plane >= 1 and spine_up % cores_per_plane == 0 else None
    load_sc = ceil_div(spine_up, cores_per_plane) if cores_per_plane >= 1 else spine_up
    spine_core_links = spines * spine_up
    return FabricCounts(
        endpoints=endpoints, leaves=leaves, leaves_per_rail=leaves_per_rail, pods=pods, leaves_per_pod=pod_leaves,
        spines=spines, spines_per_pod=pod_spines, spine_up_ports=spine_up, cores=pod_spines * cores_per_plane,
        links_per_leaf_spine=per_pair, links_per_spine_core=per_pair_sc, node_leaf_links=endpoints,
        leaf_spine_links=leaf_spine_links, spine_core_links=spine_core_links,
        leaf_ports_used=endpoints + storage_ports + leaf_spine_links,
        spine_ports_used=leaf_spine_links + spine_core_links, core_ports_used=spine_core_links,
        ports_per_leaf=down + up, ports_per_spine=min(pod_leaves, leaves) * m + spine_up,
        ports_per_core=pods * load_sc, storage_leaves=storage_leaves,
    )


def assemblies_needed(
    link_class: str, part: LinkPart, ports_per_cage: int, nodes: int, rails: int, counts: FabricCounts,
    links_per_leaf_spine: int, cores_per_plane: int, links_per_spine_core: int,
) -> tuple[int, str]:
    """Whole assemblies of ``part`` for a compute link class, and how they were counted.

    ``q`` links per assembly. Node–leaf: ``rails · ceil(n / q)`` (each rail's nodes are split over
    its leaves in whole assemblies). Leaf–spine and spine–core (``m``/``m2`` links per pair):

    * a one-piece cable (DAC, ACC, AOC) joins one pair of switches, so ``pairs · ceil(m / q)``;
    * a transceiver kit's module ports are cabled one by one (one module's ports may reach
      different switches), so kits follow the cages the class fills: every switch fills
      ``ceil(its links of the class / ports_per_cage)`` cages, ``A`` on the upper tier and ``B``
      on the lower one, and a kit brings ``a_ends`` upper and ``b_ends`` lower modules:
      ``max(ceil(A / a_ends), ceil(B / b_ends))``.
    """
    q = part.links
    if link_class == "node-leaf":
        return rails * ceil_div(nodes, q), f"{rails} rails × ceil({nodes:,} nodes / {q} per assembly)"
    c = counts
    if link_class == "leaf-spine":
        m, pairs = links_per_leaf_spine, c.leaves * c.spines_per_pod
        pair_text = f"{c.leaves:,} leaves × {c.spines_per_pod} spines"
    else:
        m, pairs = links_per_spine_core, c.spines * cores_per_plane
        pair_text = f"{c.spines:,} spines × {cores_per_plane} cores"
    if part.one_piece:
        return pairs * ceil_div(m, q), f"{pair_text} × ceil({m} links / {q} per assembly)"
    ppc = max(ports_per_cage, 1)
    if link_class == "leaf-spine":
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


def link_lengths_m(in_row_m: float, across_rows_m: float, slack_m: float) -> dict[str, float]:
    """Cable run per link class. Leaves of every network (compute, storage, management) sit at the
    end of the row, so a device reaches its leaf over ``in_row_m``; spines, cores and management
    aggregation switches are ``across_rows_m`` away from the leaves. Every run adds ``slack_m``."""
    in_row, across = in_row_m + slack_m, across_rows_m + slack_m
    return {
        "node-leaf": in_row, "leaf-spine": across, "spine-core": across,
        "node-storage": in_row, "storage-unit": in_row, "storage-leaf-spine": across,
        "mgmt": in_row, "mgmt-uplink": across,
    }


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


def devices_per_rack(rack: RackClass, device_power_w: float, device_rack_units: int) -> int:
    """Identical devices one rack holds: ``min(floor(rack W / device W), floor(rack U / device U))``.
    The checker's rule and the fabric's rack plan both count with it."""
    return min(devices_per_rack_by_power(rack, device_power_w), devices_per_rack_by_units(rack, device_rack_units))
