"""Storage and management network arithmetic, recomputed from the rules as pure functions.

Nothing here reads a design record: inputs are the free choices (storage switch tiers and spines,
the management switch's radix) and counts of ports; outputs are what those choices imply.

Storage network, dedicated (``E`` endpoint ports = node storage ports + storage-unit ports, ``k``
the storage switch's logical radix at the storage speed):

* 1 tier: one switch, ``E ≤ k``;
* 2 tiers: a leaf has ``d`` endpoint and ``u`` uplink ports, a split of
  :func:`storage_leaf_splits` (``d = floor(k·r / (r + 1))``, ``u = k − d`` for a ratio ``r`` of
  :data:`STORAGE_LEAF_RATIOS`; records before the split was recorded: ``d = u = floor(k/2)``);
  ``leaves = ceil(E / d)``; ``S`` spines, ``S`` dividing ``u``, every leaf reaching every spine
  with ``u / S`` links; a spine uses ``leaves · u / S ≤ k`` ports;
* 3 tiers: leaves as in 2 tiers; a spine has ``floor(k/2)`` down-ports and ``u2 = k − floor(k/2)``
  up; a pod holds ``P = floor(k/2) / m`` leaves and ``Q = u / m`` spines, every leaf reaching every
  spine of its pod with ``m`` links; ``pods = ceil(leaves / P)``, ``spines = pods · Q``; spine *j* of
  every pod reaches every core of plane *j*: ``Q`` planes of ``C`` cores (``C`` dividing ``u2``),
  ``m2 = u2 / C`` links per spine–core pair, a core using ``pods · m2 ≤ k`` ports.

Management network (``M`` management ports): a leaf has ``d`` device ports and 2 uplinks
(:func:`management_leaf`: ``d = k_m − 2`` of its ``k_m`` ports at its device speed, or all ``k_m``
when it has uplink cages of its own); ``leaves = ceil(M / d)``; past one leaf,
``2 · ceil(leaves / (k_a − 2))`` aggregation switches in pairs, ``k_a`` the aggregation model's
ports at the uplink speed (2 of each switch's go to the site's management core, outside the
design), each pair taking up to ``k_a − 2`` leaves, every leaf with one uplink to each switch of
its pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoopt.checking.text import ceil_div
from topoopt.models.catalog import LinkPart, Switch

STORAGE_LEAF_RATIOS = (1, 2, 3, 4, 6, 8)
"""Down:up port ratios a 2-tier storage leaf may have (estimate: usual storage-leaf oversubscriptions)."""
STORAGE_CAP_NEED_FACTOR = 8
STORAGE_CAP_NODE_GBPS = 400
"""Node–storage bandwidth cabled ≤ max(8 × the storage need, nodes × 400 Gb/s) (estimate: 2 × 200G
per node is the DGX reference architecture's storage attach)."""

MANAGEMENT_UPLINKS_PER_LEAF = 2
"""One uplink to each aggregation switch of the leaf's pair (two for redundancy)."""


@dataclass(frozen=True)
class StorageFabricCounts:
    """Counts implied by a dedicated storage network choice; per-switch loads for the busiest switch."""

    node_ports: int
    unit_ports: int
    unit_slots: int
    """Switch ports the units take at the storage speed (:func:`unit_slots`)."""
    endpoints: int
    down: int
    up: int
    leaves: int
    spines: int
    links_per_leaf_spine: int | None
    leaf_spine_links: int
    leaf_ports_used: int
    spine_ports_used: int
    ports_per_leaf: int
    ports_per_spine: int
    pods: int = 0
    """3 tiers: the pods, ``ceil(leaves / P)``."""
    cores: int = 0
    links_per_spine_core: int | None = 0
    spine_core_links: int = 0
    core_ports_used: int = 0
    ports_per_core: int = 0


def storage_leaf_splits(radix: int) -> list[tuple[int, int]]:
    """``(d, u)`` a 2-tier storage leaf of ``radix`` ports may have: per ratio ``r``,
    ``d = floor(k·r / (r + 1))`` endpoint ports, rounded down to a multiple of 4 from 4 on (whole
    cable assemblies of 1, 2 or 4 links per leaf), and the other ``u = k − d`` up, so ``d ≤ r · u``."""
    splits = []
    for ratio in STORAGE_LEAF_RATIOS:
        down = radix * ratio // (ratio + 1)
        down -= down % 4 if down >= 4 else 0
        if 1 <= down < radix and (down, radix - down) not in splits:
            splits.append((down, radix - down))
    return splits


def storage_cap_gbps(nodes: int, need_gbps: float) -> float:
    """The most node–storage bandwidth a dedicated storage network cables."""
    return max(STORAGE_CAP_NEED_FACTOR * need_gbps, nodes * STORAGE_CAP_NODE_GBPS)


def unit_slots(units: int, ports_per_unit: int, unit_gbps: int, link_gbps: int, part: LinkPart | None,
               ports_per_cage: int) -> int:
    """Switch ports at the network's speed ``link_gbps`` that ``units`` storage units take: their
    ports when they run that speed; at another speed (a cage runs one speed) the whole cages their
    assemblies fill, ``ceil(ports / links) · a_ends`` per unit, each worth the ``ports_per_cage``
    ports it carries at the network's speed (their ports when the part is unknown)."""
    if unit_gbps == link_gbps or part is None:
        return units * ports_per_unit
    return units * -(-ports_per_unit // part.links) * part.a_ends * ports_per_cage


def storage_fabric_counts(node_ports: int, unit_ports: int, radix: int, tiers: int, spines: int,
                          split: tuple[int, int] | None = None, unit_slots: int | None = None,
                          links_per_leaf_spine: int = 0, cores: int = 0) -> StorageFabricCounts:
    """Storage leaves, spines, cores, links and ports in use for ``tiers`` (1, 2 or 3), ``spines``
    (2 tiers) and the leaf ``split`` ``(d, u)`` (2 or 3 tiers; None: non-blocking ``floor(k/2)``
    each), the units taking ``unit_slots`` switch ports (None: their ports); 3 tiers: the links
    ``m`` between a leaf and each spine of its pod and the ``cores`` recorded.

    When ``spines`` (2 tiers) or the cores per plane (3 tiers) do not divide the uplinks the
    per-pair link count is None and the busiest switch's load is computed with the rounded-up count.
    """
    slots = unit_ports if unit_slots is None else unit_slots
    endpoints = node_ports + slots
    if tiers == 1:
        return StorageFabricCounts(
            node_ports=node_ports, unit_ports=unit_ports, unit_slots=slots, endpoints=endpoints, down=radix, up=0,
            leaves=1, spines=0,
            links_per_leaf_spine=0, leaf_spine_links=0, leaf_ports_used=endpoints, spine_ports_used=0,
            ports_per_leaf=endpoints, ports_per_spine=0,
        )
    down, up = split if split is not None else (radix // 2, radix // 2)
    leaves = ceil_div(endpoints, down) if down >= 1 else 0
    links = leaves * up
    if tiers == 3:
        return _three_tier_counts(node_ports, unit_ports, slots, radix, down, up, leaves, links_per_leaf_spine, cores)
    per_pair = up // spines if spines >= 1 and up % spines == 0 else None
    load = ceil_div(up, spines) if spines >= 1 else up
    return StorageFabricCounts(
        node_ports=node_ports, unit_ports=unit_ports, unit_slots=slots, endpoints=endpoints, down=down, up=up,
        leaves=leaves,
        spines=spines, links_per_leaf_spine=per_pair, leaf_spine_links=links, leaf_ports_used=endpoints + links,
        spine_ports_used=links, ports_per_leaf=down + up, ports_per_spine=leaves * load,
    )


def storage_pod(radix: int, up: int, links_per_leaf_spine: int) -> tuple[int, int, int]:
    """``(P, Q, u2)`` of a 3-tier storage network: leaves and spines per pod, spine uplinks."""
    m, half = links_per_leaf_spine, radix // 2
    return (half // m if m >= 1 else 0), (up // m if m >= 1 else 0), radix - half


def _three_tier_counts(node_ports: int, unit_ports: int, slots: int, radix: int, down: int, up: int, leaves: int,
                       m: int, cores: int) -> StorageFabricCounts:
    """The 3-tier counts (module docstring); the cores are the record's, the rest follows from it."""
    per_pod, spines_per_pod, spine_up = storage_pod(radix, up, m)
    pods = ceil_div(leaves, per_pod) if per_pod >= 1 else 0
    spines = pods * spines_per_pod
    per_plane = cores // spines_per_pod if spines_per_pod >= 1 and cores % spines_per_pod == 0 else 0
    per_pair = spine_up // per_plane if per_plane >= 1 and spine_up % per_plane == 0 else None
    load = ceil_div(spine_up, per_plane) if per_plane >= 1 else spine_up
    links, up_links = leaves * up, spines * spine_up
    return StorageFabricCounts(
        node_ports=node_ports, unit_ports=unit_ports, unit_slots=slots, endpoints=node_ports + slots, down=down, up=up,
        leaves=leaves, spines=spines, links_per_leaf_spine=m, leaf_spine_links=links,
        leaf_ports_used=node_ports + slots + links, spine_ports_used=links + up_links, ports_per_leaf=down + up,
        ports_per_spine=per_pod * m + spine_up, pods=pods, cores=cores, links_per_spine_core=per_pair,
        spine_core_links=up_links, core_ports_used=up_links, ports_per_core=pods * load,
    )


def storage_kits_by_cages(link_class: str, c: StorageFabricCounts, radix: int, ports_per_cage: int,
                          part: LinkPart) -> tuple[int, str]:
    """Transceiver kits of a storage switch-to-switch class, counted by the cages they fill (a
    module's ports are cabled one by one, so they may reach several switches):
    ``max(ceil(A / a_ends), ceil(B / b_ends))``, ``A`` (``B``) the cages on the upper (lower)
    switches, each ``ceil(its links / ports per cage)``. Leaf–spine: spines of ``leaves · m``
    links (3 tiers: ``P · m``, the last pod's ``last · m``), leaves of ``u``; spine–core: cores of
    ``pods · m2``, spines of ``u2``."""
    ppc = max(ports_per_cage, 1)
    if link_class == "storage-leaf-spine":
        m = c.links_per_leaf_spine or (ceil_div(c.up, c.spines) if c.spines else 0)
        lower, lower_text = c.leaves * ceil_div(c.up, ppc), f"{c.leaves:,} leaves × ceil({c.up} / {ppc})"
        if c.pods:
            per_pod, planes, _ = storage_pod(radix, c.up, m)
            last = c.leaves - per_pod * (c.pods - 1)
            upper = planes * ((c.pods - 1) * ceil_div(per_pod * m, ppc) + ceil_div(last * m, ppc))
            upper_text = (f"{planes} spines per pod × ({c.pods - 1} full pods × ceil({per_pod} × {m} / {ppc}) + "
                          f"ceil({last} × {m} / {ppc}))")
        else:
            upper = c.spines * ceil_div(c.leaves * m, ppc)
            upper_text = f"{c.spines} spines × ceil({c.leaves:,} × {m} / {ppc})"
    else:
        m2, spine_up = c.links_per_spine_core or 0, storage_pod(radix, c.up, 1)[2]
        upper = c.cores * ceil_div(c.pods * m2, ppc)
        upper_text = f"{c.cores:,} cores × ceil({c.pods} pods × {m2} / {ppc})"
        lower, lower_text = c.spines * ceil_div(spine_up, ppc), f"{c.spines:,} spines × ceil({spine_up} / {ppc})"
    kits = max(ceil_div(upper, part.a_ends), ceil_div(lower, part.b_ends))
    return kits, (f"max(ceil({upper_text} cages / {part.a_ends}), ceil({lower_text} cages / {part.b_ends})) "
                  f"(kits by cages filled)")


def switch_protocol(interconnect_protocol: str) -> str:
    """The switch protocol an interconnect needs: ``ib`` → InfiniBand, ``roce``/``tcp`` → Ethernet."""
    return "ib" if interconnect_protocol == "ib" else "ethernet"


@dataclass(frozen=True)
class ManagementLeaf:
    """A management leaf model's ports: device speed and ports, uplink speed, and the cage its
    uplinks plug into (form factor, ports per cage)."""

    device_gbps: int
    down: int
    uplink_gbps: int
    uplink_cage: tuple[str, int]
    own_uplink_cages: bool


def management_leaf(switch: Switch) -> ManagementLeaf:
    """Device ports at the lowest speed of the device cages; two uplinks at the highest speed of
    the uplink cages when the switch has them (all device cages stay device ports), else at the
    highest speed of the device cages, taking two of them."""
    low = min(switch.ports_per_cage)
    if switch.uplink_cages:
        high = max(switch.uplink_ports_per_cage)
        return ManagementLeaf(low, switch.radix(low), high,
                              (switch.uplink_cage_form_factor, switch.uplink_ports_per_cage[high]), True)
    high = max(switch.ports_per_cage)
    return ManagementLeaf(low, switch.radix(low) - MANAGEMENT_UPLINKS_PER_LEAF, high,
                          (switch.cage_form_factor, switch.ports_per_cage[high]), False)


@dataclass(frozen=True)
class ManagementCounts:
    ports: int
    leaf_down_ports: int
    leaves_per_pair: int
    """Leaves an aggregation pair takes: its switches' ports at the uplink speed less the 2 each
    keeps for the site's management core (0 or less: none can be aggregated)."""
    leaves: int
    aggregation: int
    device_links: int
    uplinks: int
    leaf_ports_used: int
    aggregation_ports_used: int


def management_counts(ports: int, down: int, aggregation_radix: int) -> ManagementCounts:
    """Leaves of ``down ≥ 1`` device ports for ``ports`` management ports and, past one leaf,
    aggregation pairs of ``aggregation_radix`` ports at the uplink speed, 2 of which each switch
    keeps for the site's management core."""
    leaves = max(ceil_div(ports, down), 1)
    per_pair = aggregation_radix - MANAGEMENT_UPLINKS_PER_LEAF
    pairs = ceil_div(leaves, per_pair) if leaves > 1 and per_pair > 0 else 0
    uplinks = MANAGEMENT_UPLINKS_PER_LEAF * leaves if leaves > 1 else 0
    return ManagementCounts(
        ports=ports, leaf_down_ports=down, leaves_per_pair=per_pair, leaves=leaves, aggregation=2 * pairs,
        device_links=ports, uplinks=uplinks, leaf_ports_used=ports + uplinks,
        aggregation_ports_used=uplinks,
    )


def management_ports(devices: list[tuple[int, int, int]]) -> int:
    """``Σ count · (in_band + oob_ports)`` over ``(count, in_band, oob_ports)`` of every managed
    device kind: one in-band port per server and storage unit, none per switch (managed in band
    over its data ports), plus its out-of-band (BMC or management) ports."""
    return sum(count * (in_band + oob) for count, in_band, oob in devices)


def assemblies_needed(link_class: str, links_per_assembly: int, devices: int, ports_per_device: int,
                      pairs: int = 0, links_per_pair: int = 0) -> tuple[int, str]:
    """Whole assemblies for a storage or management link class, and how they were counted.

    An assembly joins one switch cage to one device cage, or fans one cage out to ``q`` ports:
    * ``node-storage``: storage port *i* of every node is counted like a compute rail, its nodes
      split over the switches in whole assemblies: ``P · ceil(n / q)``;
    * ``storage-unit``: per unit, as a fan-out does not span units: ``units · ceil(ports / q)``
      (per tier);
    * ``mgmt``: every management port on its own: ``ceil(M / q)``;
    * switch-to-switch classes (``storage-leaf-spine``, ``storage-spine-core``, ``mgmt-uplink``)
      per pair of switches:
      ``pairs · ceil(links per pair / q)``.
    """
    q = links_per_assembly
    if link_class in ("storage-leaf-spine", "storage-spine-core", "mgmt-uplink"):
        return (pairs * ceil_div(links_per_pair, q),
                f"{pairs:,} switch pairs × ceil({links_per_pair} links / {q} per assembly)")
    if link_class == "node-storage":
        return (ports_per_device * ceil_div(devices, q),
                f"{ports_per_device} ports × ceil({devices:,} nodes / {q} per assembly)")
    if link_class == "storage-unit":
        return (devices * ceil_div(ports_per_device, q),
                f"{devices:,} units × ceil({ports_per_device} ports / {q} per assembly)")
    return ceil_div(devices * ports_per_device, q), f"ceil({devices * ports_per_device:,} ports / {q} per assembly)"
