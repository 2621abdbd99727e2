"""Hand-built designs (counts written out by hand from docs/model.md) for the fabric tests.

Each design names built-in catalog items; link and assembly counts are stated, not computed by
topoopt.fabric, so the tests compare two independent derivations.
"""

from __future__ import annotations

import math

from topoopt.catalog import load_builtin_catalog
from topoopt.models.design import (
    Cost,
    CostLine,
    Design,
    FabricShape,
    LinkGroup,
    ObjectiveValue,
    RackGroup,
    SolveResult,
    StorageChoice,
    SwitchGroup,
)
from topoopt.models.performance import Parallelism

PRICE_BOOK = "usd-capex"

# Provisioned power (docs/model.md, "Racks and power") and what one air-45kw rack (45 kW, 48 U) holds:
#   dgx-h100 node  10,200 W + 4 twin-flat cages × 17 W                        = 10,268 W -> 4 per rack
#   dgx-a100 node   6,500 W + 8 qsfp56 cages × 6 W (HDR AOC end)              =  6,548 W -> 6 per rack
#   hgx-h100 node  10,000 W + 8 bought cx7-osfp × 25 W + 8 osfp-flat cages × 9 W = 10,272 W -> 4 per rack
#   qm9700            750 W + 32 cages × 17 W (no 800G part fits: it runs ≤ 400G) = 1,294 W -> 34 per rack
#   qm8700            300 W + 40 cages × 6 W (HDR / 2 × HDR100 AOC ends)           =   540 W -> 48 per rack (by U)
#   pfs-building-block 2,500 W, 4 U                                                          -> 12 per rack (by U)
# e.g. 45,000 / 10,268 = 4.38 and 48 / 8 U = 6, so 4 nodes; 45,000 / 1,294 = 34.8 and 48 / 1 U = 48, so 34.


def _links(between: str, count: int, part: str, per_assembly: int, length_m: float, gbps: int,
           assemblies: int | None = None) -> LinkGroup:
    return LinkGroup(between=between, count=count, part=part,
                     assemblies=assemblies if assemblies is not None else math.ceil(count / per_assembly),
                     length_m=length_m, gbps=gbps)


def _storage(tier: str, units: int) -> StorageChoice:
    item = load_builtin_catalog().by_id("storage")[tier]
    return StorageChoice(tier=tier, units=units, read_gbps=units * item.read_gb_per_s * 8,
                         write_gbps=units * item.write_gb_per_s * 8, capacity_tb=units * item.capacity_tb)


def _design(**fields) -> Design:
    fields.setdefault("parallelism", Parallelism(tp=8, pp=1, dp=fields["gpus"] // 8, zero_stage=1, microbatch=1))
    return Design(**fields)


def one_tier_8_gpu() -> Design:
    """1 × dgx-h100 on one qm9700: 8 rails = 8 links in 4 twin-port kits; one rack of each kind."""
    return _design(
        server="dgx-h100", gpu="h100-sxm", nodes=1, gpus=8, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=1, oversubscription=1.0, rail_optimized=False,
        fabric=FabricShape(tiers=1, switch="qm9700", leaves=1, spines=0, cores=0, leaf_down_ports=64,
                           leaf_up_ports=0, links_per_leaf_spine=0, pods=1, spines_per_pod=0, leaves_per_pod=1,
                           cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0, rail_optimized=False,
                           leaves_per_rail=1),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=1, ports_used=8)],
        links=[_links("node-leaf", 8, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400)],
        # 1 × 10,268 W; 1 × 1,294 W; 1 × 2,500 W.
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=1, nodes_per_rack=4, power_kw=10.268),
               RackGroup(rack_class="air-45kw", role="network", count=1, nodes_per_rack=0, power_kw=1.294),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=2.5)],
        storage=_storage("pfs-building-block", 1),
    )


def two_tier_32_dgx() -> Design:
    """32 × dgx-h100, 8 rails, qm9700 (64 × 400G): one SU of 8 leaves (32 down / 32 up) and 4 spines
    with 8 links per leaf–spine pair; 256 node links, 256 leaf–spine links."""
    return _design(
        server="dgx-h100", gpu="h100-sxm", nodes=32, gpus=256, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=2, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=2, switch="qm9700", leaves=8, spines=4, cores=0, leaf_down_ports=32,
                           leaf_up_ports=32, links_per_leaf_spine=8, pods=1, spines_per_pod=4, leaves_per_pod=8,
                           cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0, rail_optimized=True,
                           leaves_per_rail=1),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=8, ports_used=512),
                  SwitchGroup(tier="spine", model="qm9700", count=4, ports_used=256)],
        links=[_links("node-leaf", 256, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
               _links("leaf-spine", 256, "ndr-dr4-twin-kit-500m", 2, 52, 400)],
        # 32 / 4 = 8 racks of 4 × 10,268 = 41,072 W; 12 switches × 1,294 = 15,528 W; 2 × 2,500 = 5,000 W.
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=8, nodes_per_rack=4, power_kw=41.072),
               RackGroup(rack_class="air-45kw", role="network", count=1, nodes_per_rack=0, power_kw=15.528),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=5.0)],
        storage=_storage("pfs-building-block", 2),
    )


def three_tier_dgx_a100() -> Design:
    """48 × dgx-a100-80gb, 8 HDR rails, qm8700 at 200G (k = 40): leaves 20 down / 20 up,
    3 leaves per rail (16 nodes each) = 24 leaves; pods of 20 leaves → 2 pods × 20 spines = 40;
    20 planes of 1 core with 20 links per spine–core pair (a core uses 2 × 20 = 40 ports).
    Node links 384, leaf–spine 24 × 20 = 480, spine–core 40 × 20 = 800; single-link parts."""
    return _design(
        server="dgx-a100-80gb", gpu="a100-80gb-sxm", nodes=48, gpus=384, interconnect="ib-hdr", nic="cx6-hdr",
        nics_per_node=8, link_gbps=200, tiers=3, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=3, switch="qm8700", leaves=24, spines=40, cores=20, leaf_down_ports=20,
                           leaf_up_ports=20, links_per_leaf_spine=1, pods=2, spines_per_pod=20, leaves_per_pod=20,
                           cores_per_plane=1, spine_up_ports=20, links_per_spine_core=20, rail_optimized=True,
                           leaves_per_rail=3),
        switches=[SwitchGroup(tier="leaf", model="qm8700", count=24, ports_used=864),
                  SwitchGroup(tier="spine", model="qm8700", count=40, ports_used=1280),
                  SwitchGroup(tier="core", model="qm8700", count=20, ports_used=800)],
        links=[_links("node-leaf", 384, "hdr-aoc-30m", 1, 17, 200),
               _links("leaf-spine", 480, "hdr-aoc-100m", 1, 52, 200),
               _links("spine-core", 800, "hdr-aoc-100m", 1, 52, 200)],
        # 48 / 6 = 8 racks of 6 × 6,548 = 39,288 W; 84 switches: ceil(84 / 48) = 2 racks, the fullest
        # 48 × 540 = 25,920 W; 1 × 2,500 W.
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=8, nodes_per_rack=6, power_kw=39.288),
               RackGroup(rack_class="air-45kw", role="network", count=2, nodes_per_rack=0, power_kw=25.92),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=2.5)],
        storage=_storage("pfs-building-block", 1),
    )


def two_tier_hgx_odd(nodes: int = 21) -> Design:
    """``nodes`` × hgx-h100 with 8 × cx7-osfp (single-port flat cages) on qm9700 through
    ndr-sr4-kit-50m breakout kits (one twin-port switch module → two NIC modules).
    Assemblies are stated as ``ceil(links / 2)``, the model's count."""
    leaves_per_rail = math.ceil(nodes / 32)
    leaves = 8 * leaves_per_rail
    spines = 4 * leaves_per_rail  # a spine takes 64 ports: leaves × 32 / spines links
    switches = leaves + spines
    # 4 nodes of 10,272 W and 34 switches of 1,294 W per rack (see the table at the top).
    node_rack_w, switch_rack_w = min(nodes, 4) * 10_272, min(switches, 34) * 1_294
    return _design(
        server="hgx-h100", gpu="h100-sxm", nodes=nodes, gpus=8 * nodes, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=2, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=2, switch="qm9700", leaves=leaves, spines=spines, cores=0, leaf_down_ports=32,
                           leaf_up_ports=32, links_per_leaf_spine=32 // spines, pods=1, spines_per_pod=spines,
                           leaves_per_pod=leaves,
                           cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0, rail_optimized=True,
                           leaves_per_rail=leaves_per_rail),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=leaves, ports_used=8 * nodes + 32 * leaves),
                  SwitchGroup(tier="spine", model="qm9700", count=spines, ports_used=32 * leaves)],
        links=[_links("node-leaf", 8 * nodes, "ndr-sr4-kit-50m", 2, 17, 400),
               _links("leaf-spine", 32 * leaves, "ndr-dr4-twin-kit-500m", 2, 52, 400)],
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=math.ceil(nodes / 4), nodes_per_rack=4,
                         power_kw=node_rack_w / 1000),
               RackGroup(rack_class="air-45kw", role="network", count=math.ceil(switches / 34), nodes_per_rack=0,
                         power_kw=switch_rack_w / 1000),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=2.5)],
        storage=_storage("pfs-building-block", 1),
    )


def result_for(design: Design) -> SolveResult:
    """A SolveResult whose cost lines price the design's counts from the built-in USD book."""
    catalog = load_builtin_catalog()
    book = next(b for b in catalog.price_books if b.id == PRICE_BOOK)
    per_part: dict[str, int] = {}
    for group in design.links:
        per_part[group.part] = per_part.get(group.part, 0) + group.assemblies
    rack_class = design.racks[0].rack_class
    quantities = [("server", design.server, design.nodes)]
    # NICs are bought for servers without built-in ones, and only when there is a fabric to attach.
    if catalog.by_id("servers")[design.server].builtin_compute_nics is None and design.tiers > 0:
        quantities.append(("nic", design.nic, design.nodes * design.nics_per_node))
    quantities += [("switch", design.fabric.switch, sum(g.count for g in design.switches))]
    quantities += [("cable", part, count) for part, count in per_part.items()]
    quantities += [("rack", rack_class, sum(g.count for g in design.racks)),
                   ("storage", design.storage.tier, design.storage.units)]
    lines = []
    for category, item, quantity in quantities:
        price = book.prices[item]
        unit = round(price.price)
        lines.append(CostLine(category=category, item=item, quantity=quantity, unit_price=unit,
                              total=unit * quantity, source=price.source))
    cost = Cost(basis=book.basis, currency=book.currency, total=sum(line.total for line in lines), breakdown=lines)
    return SolveResult(status="optimal", objective=ObjectiveValue(kind="min_cost", value=cost.total, bound=cost.total,
                                                                  gap=0.0),
                       design=design, cost=cost)


def three_tier_16k() -> Design:
    """2,048 × dgx-h100 (16,384 GPUs), 8 rails, qm9700 at 400G (k = 64): 64 leaves per rail =
    512 leaves (32 down / 32 up); pods of 32 leaves → 16 pods × 32 spines = 512; 32 planes of 8
    cores with 4 links per spine–core pair (a core uses 16 × 4 = 64 ports) = 256 cores.
    16,384 links in each of the three classes, all in twin-port kits of 2."""
    return _design(
        server="dgx-h100", gpu="h100-sxm", nodes=2048, gpus=16384, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=3, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=3, switch="qm9700", leaves=512, spines=512, cores=256, leaf_down_ports=32,
                           leaf_up_ports=32, links_per_leaf_spine=1, pods=16, spines_per_pod=32, leaves_per_pod=32,
                           cores_per_plane=8, spine_up_ports=32, links_per_spine_core=4, rail_optimized=True,
                           leaves_per_rail=64),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=512, ports_used=32768),
                  SwitchGroup(tier="spine", model="qm9700", count=512, ports_used=32768),
                  SwitchGroup(tier="core", model="qm9700", count=256, ports_used=16384)],
        links=[_links("node-leaf", 16384, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
               _links("leaf-spine", 16384, "ndr-dr4-twin-kit-500m", 2, 52, 400),
               _links("spine-core", 16384, "ndr-dr4-twin-kit-500m", 2, 52, 400)],
        # 2,048 / 4 = 512 racks of 4 × 10,268 = 41,072 W; 1,280 switches / 34 per rack -> 38 racks,
        # the fullest 34 × 1,294 = 43,996 W; 8 × 2,500 = 20,000 W in one rack (12 fit by U).
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=512, nodes_per_rack=4, power_kw=41.072),
               RackGroup(rack_class="air-45kw", role="network", count=38, nodes_per_rack=0, power_kw=43.996),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=20.0)],
        storage=_storage("pfs-building-block", 8),
    )
