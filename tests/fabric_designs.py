"""Hand-built designs (counts written out by hand from docs/model.md) for the fabric tests.

Each design names catalog items of :data:`CATALOG` (the built-in catalog plus the few test items
of :data:`ADDITIONS`); link and assembly counts are stated, not computed by topoopt.fabric, so the
tests compare two independent derivations. Every design has the three networks: the compute
fabric, a storage network (dedicated in 1 or 2 tiers, or converged on the compute fabric) and the
management network.
"""

from __future__ import annotations

import math

from topoopt.catalog import load_builtin_catalog
from topoopt.models.catalog import Catalog, LinkPart, Price, StorageTier
from topoopt.models.design import (
    Cost,
    CostLine,
    Design,
    FabricShape,
    LinkGroup,
    ManagementNetwork,
    ObjectiveValue,
    RackGroup,
    SolveResult,
    StorageChoice,
    StorageNetwork,
    SwitchGroup,
)
from topoopt.models.instance import CatalogAdditions
from topoopt.models.performance import Parallelism

PRICE_BOOK = "usd-capex"
TEST_SOURCE = "estimate: test item of the fabric tests"

# Test items: a twin-port OSFP to 4 × QSFP56 200G AOC and a cold object tier with QSFP56 200G
# ports (the built-in object store runs 25G only), so one design has a cold tier on a second part.
_BUILTIN = load_builtin_catalog()
ADDITIONS = CatalogAdditions(
    cables=[
        LinkPart(id="test-200g-twin-to-4x-qsfp56-aoc-30m", name="Test twin-port OSFP to 4 × 200G QSFP56 AOC",
                 source=TEST_SOURCE, media="aoc", gbps=200, links=4, a_form_factor="osfp-twin-finned", a_ends=1,
                 b_form_factor="qsfp56", b_ends=4, max_reach_m=30, power_w_per_a_end=15, power_w_per_b_end=6),
    ],
    storage=[StorageTier(id="test-object-200g", name="Test object store node, 2 × 200G", source=TEST_SOURCE,
                         kind="object", capacity_tb=1000, read_gb_per_s=10, write_gb_per_s=6, latency_class="high",
                         power_w=1200, rack_units=4, network_ports=2, port_speeds_gbps=[200, 100],
                         port_form_factor="qsfp56", protocols=["ib", "ethernet"])],
)
TEST_PRICES = {"test-200g-twin-to-4x-qsfp56-aoc-30m": 1800.0, "test-object-200g": 40000.0}


def _with_additions(builtin: Catalog, additions: CatalogAdditions) -> Catalog:
    """The built-in catalog with the additions (same id replaces), as an instance's ``catalog.add`` does."""
    merged = {}
    for kind in ("gpus", "servers", "nics", "interconnects", "switches", "cables", "racks", "storage", "models"):
        items = {item.id: item for item in getattr(builtin, kind)}
        items.update({item.id: item for item in getattr(additions, kind)})
        merged[kind] = list(items.values())
    return Catalog(**merged, price_books=builtin.price_books)


CATALOG = _with_additions(_BUILTIN, ADDITIONS)

# Provisioned power (docs/model.md, "Racks and power") and what one air-45kw rack (45 kW, 48 U) holds:
#   dgx-h100 node  10,200 W + 4 twin-flat cages × 17 W + the 4 QSFP112 cages of its 2 built-in
#                  cx7-qsfp112-2x200g storage NICs × 5 W (the hungriest 200G QSFP112 end:
#                  ndr200-dr4-splitter-kit-qsfp112-50m)                               = 10,288 W -> 4 per rack
#   dgx-a100 node   6,500 W + 8 qsfp56 cages × 6 W (HDR AOC end); converged: no storage NIC = 6,548 W -> 6 per rack
#   hgx-h100 node  10,000 W + 8 bought cx7-osfp × 25 W + 8 osfp-flat cages × 9 W
#                  + 1 bought cx7-qsfp112-2x200g storage NIC 25 W + 2 QSFP112 cages × 5 W = 10,307 W -> 4 per rack
#   qm9700            750 W + 32 cages × 17 W (no 800G part fits: it runs ≤ 400G) = 1,294 W -> 34 per rack
#   qm8700            300 W + 40 cages × 6 W (HDR / 2 × HDR100 AOC ends)           =   540 W -> 48 per rack (by U)
#   sn5600          1,200 W + 64 cages × 17 W                                     = 2,288 W -> 19 per rack
#   mgmt-48x1g-10g    150 W + 48 RJ45 cages × 0 W (patch cords draw nothing)         =   150 W -> 48 per rack (by U)
#   pfs-building-block 2,500 W, 4 U -> 12 per rack (by U); nvme-of-array 1,600 W, 2 U -> 24 per rack (by U)
#   test-object-200g 1,200 W, 4 U
# e.g. 45,000 / 10,288 = 4.37 and 48 / 8 U = 6, so 4 nodes; 45,000 / 1,294 = 34.8 and 48 / 1 U = 48, so 34.
# Management ports: every node and storage unit has 1 in-band + 1 OOB port, every compute and storage
# switch its one management port, every rack its 2 PDUs' one each; a management leaf has 48 − 2 = 46
# device ports; aggregation pairs take 46 leaves each (2 ports of each switch go to the site's core).


def _links(between: str, count: int, part: str, per_assembly: int, length_m: float, gbps: int,
           assemblies: int | None = None, network: str = "compute") -> LinkGroup:
    return LinkGroup(network=network, between=between, count=count, part=part,
                     assemblies=assemblies if assemblies is not None else math.ceil(count / per_assembly),
                     length_m=length_m, gbps=gbps)


def _storage(tier: str, units: int) -> StorageChoice:
    item = CATALOG.by_id("storage")[tier]
    return StorageChoice(tier=tier, units=units, ports=units * item.network_ports,
                         read_gbps=units * item.read_gb_per_s * 8, write_gbps=units * item.write_gb_per_s * 8,
                         capacity_tb=units * item.capacity_tb)


def _management(ports: int, leaves: int, aggregation: int) -> tuple[ManagementNetwork, list[SwitchGroup], list[LinkGroup]]:
    """The management network of ``ports`` device ports on mgmt-48x1g-10g leaves (46 device ports,
    2 × 10G uplinks) with its switch and link groups (1G Cat6 to devices, 10G Cat6a uplinks)."""
    network = ManagementNetwork(switch="mgmt-48x1g-10g", ports=ports, leaves=leaves, aggregation=aggregation,
                                leaf_down_ports=46, link_gbps=1, uplink_gbps=10)
    uplinks = 2 * leaves if aggregation else 0
    switches = [SwitchGroup(network="management", tier="mgmt-leaf", model="mgmt-48x1g-10g", count=leaves,
                            ports_used=ports + uplinks)]
    links = [_links("mgmt", ports, "cat6-rj45-1g-100m", 1, 17, 1, network="management")]
    if aggregation:
        switches.append(SwitchGroup(network="management", tier="mgmt-aggregation", model="mgmt-48x1g-10g",
                                    count=aggregation, ports_used=uplinks))
        links.append(_links("mgmt-uplink", uplinks, "cat6a-rj45-10g-100m", 1, 52, 10, network="management"))
    return network, switches, links


def _design(**fields) -> Design:
    fields.setdefault("parallelism", Parallelism(tp=8, pp=1, dp=fields["gpus"] // 8, zero_stage=1, microbatch=1))
    return Design(**fields)


def _dgx_storage_network(nodes: int, switch: str, tiers: int, leaves: int, spines: int, unit_ports: int,
                         need_gbps: float) -> StorageNetwork:
    """DGX H100: its 2 built-in dual-port cx7-qsfp112-2x200g = 4 × 200G = 800 Gb/s per node."""
    return StorageNetwork(mode="dedicated", nic="cx7-qsfp112-2x200g", nics_per_node=2, ports_per_node=4, link_gbps=200,
                          node_gbps=800, need_gbps=need_gbps, switch=switch, tiers=tiers, leaves=leaves,
                          spines=spines, compute_storage_leaves=0, unit_ports=unit_ports)


def one_tier_8_gpu() -> Design:
    """1 × dgx-h100 on one qm9700: 8 rails = 8 links in 4 twin-port kits. Storage: 1 tier, one qm9700
    at 200G takes the node's 4 storage ports (a 4-way splitter kit per port, as the model counts
    them: 4 × ceil(1 / 4)), the hot nvme-of-array's 4 (one kit) and the cold test-object-200g's 2
    (one 4-way AOC, half used): 10 ports. Management: the node's and the 2 units' 2 ports each and
    the 2 switches' one each, and the rack's 2 PDUs = 10 on one leaf. Everything in one mixed rack:
    10,288 + 2 × 1,294 + 150 + 1,600 + 1,200 = 15,826 W in 8 + 1 + 1 + 1 + 2 + 4 = 17 U."""
    management, mgmt_switches, mgmt_links = _management(ports=10, leaves=1, aggregation=0)
    return _design(
        server="dgx-h100", gpu="h100-sxm", nodes=1, gpus=8, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=1, oversubscription=1.0, rail_optimized=False,
        fabric=FabricShape(tiers=1, switch="qm9700", leaves=1, spines=0, cores=0, leaf_down_ports=8,
                           leaf_up_ports=0, links_per_leaf_spine=0, pods=1, spines_per_pod=0, leaves_per_pod=1,
                           cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0, rail_optimized=False,
                           leaves_per_rail=1, rails_per_leaf=8),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=1, ports_used=8),
                  SwitchGroup(network="storage", tier="storage-leaf", model="qm9700", count=1, ports_used=10),
                  *mgmt_switches],
        links=[_links("node-leaf", 8, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
               _links("node-storage", 4, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, assemblies=4,
                      network="storage"),
               _links("storage-unit", 4, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, network="storage"),
               _links("storage-unit", 2, "test-200g-twin-to-4x-qsfp56-aoc-30m", 4, 17, 200, network="storage"),
               *mgmt_links],
        racks=[RackGroup(rack_class="air-45kw", role="mixed", count=1, nodes_per_rack=1, power_kw=15.826,
                         holds={"qm9700": 2, "mgmt-48x1g-10g": 1, "nvme-of-array": 1, "test-object-200g": 1})],
        storage=_storage("nvme-of-array", 1),
        cold_storage=_storage("test-object-200g", 1),
        storage_network=_dgx_storage_network(1, "qm9700", tiers=1, leaves=1, spines=0, unit_ports=6, need_gbps=104),
        management_network=management,
    )


def two_tier_32_dgx() -> Design:
    """32 × dgx-h100, 8 rails, qm9700 (64 × 400G): one SU of 8 leaves (32 down / 32 up) and 4 spines
    with 8 links per leaf–spine pair; 256 node links, 256 leaf–spine links.

    Storage, 2 tiers of qm9700 at 200G (k = 128: 64 down / 64 up per leaf): 32 × 4 node ports +
    2 nvme-of-array × 4 = 136 ports → 3 leaves (64, 64, 8); 2 spines, 32 links per leaf–spine pair
    (a spine uses 3 × 32 = 96 ports); 192 leaf–spine links, 8 per 4-link kit per pair = 48 kits.
    Management: (32 nodes + 2 units) × 2 + (12 compute + 5 storage switches) × 1 + 11 racks × 2
    PDUs = 107 ports → 3 leaves (46, 46, 15) and one aggregation pair (6 uplinks)."""
    management, mgmt_switches, mgmt_links = _management(ports=107, leaves=3, aggregation=2)
    return _design(
        server="dgx-h100", gpu="h100-sxm", nodes=32, gpus=256, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=2, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=2, switch="qm9700", leaves=8, spines=4, cores=0, leaf_down_ports=32,
                           leaf_up_ports=32, links_per_leaf_spine=8, pods=1, spines_per_pod=4, leaves_per_pod=8,
                           cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0, rail_optimized=True,
                           leaves_per_rail=1),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=8, ports_used=512),
                  SwitchGroup(tier="spine", model="qm9700", count=4, ports_used=256),
                  SwitchGroup(network="storage", tier="storage-leaf", model="qm9700", count=3, ports_used=136 + 192),
                  SwitchGroup(network="storage", tier="storage-spine", model="qm9700", count=2, ports_used=192),
                  *mgmt_switches],
        links=[_links("node-leaf", 256, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
               _links("leaf-spine", 256, "ndr-dr4-twin-kit-500m", 2, 52, 400),
               _links("node-storage", 128, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, network="storage"),
               _links("storage-unit", 8, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, network="storage"),
               _links("storage-leaf-spine", 192, "ndr200-dr4-twin-kit-500m", 4, 52, 200, network="storage"),
               *mgmt_links],
        # 32 / 4 = 8 racks of 4 × 10,288 = 41,152 W; 12 + 5 qm9700 in one rack (17 × 1,294 = 21,998 W)
        # and 5 management switches in another; 2 × 1,600 W of storage in one rack.
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=8, nodes_per_rack=4, power_kw=41.152),
               RackGroup(rack_class="air-45kw", role="network", count=2, nodes_per_rack=0, power_kw=21.998),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=3.2)],
        storage=_storage("nvme-of-array", 2),
        storage_network=_dgx_storage_network(32, "qm9700", tiers=2, leaves=3, spines=2, unit_ports=8,
                                             need_gbps=3200),
        management_network=management,
    )


def three_tier_dgx_a100() -> Design:
    """48 × dgx-a100-80gb, 8 HDR rails, qm8700 at 200G (k = 40): leaves split 20 down / 20 up,
    3 leaves per rail (16 nodes each: 16 down-ports in use) = 24 node leaves, plus 1 leaf for the
    storage units of the converged storage network (pfs-building-block: 8 × 200G QSFP56 ports ≤
    k − u = 20) = 25 leaves;
    pods of 20 leaves → 2 pods × 20 spines = 40; 20 planes of 1 core with 20 links per spine–core
    pair (a core uses 2 × 20 = 40 ports). Node links 384, storage-unit 8, leaf–spine 25 × 20 = 500,
    spine–core 40 × 20 = 800; single-link parts.
    Management: (48 nodes + 1 unit) × 2 + 85 switches × 1 + 12 racks × 2 PDUs = 207 ports →
    5 leaves, 1 pair."""
    management, mgmt_switches, mgmt_links = _management(ports=207, leaves=5, aggregation=2)
    return _design(
        server="dgx-a100-80gb", gpu="a100-80gb-sxm", nodes=48, gpus=384, interconnect="ib-hdr", nic="cx6-hdr",
        nics_per_node=8, link_gbps=200, tiers=3, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=3, switch="qm8700", leaves=25, spines=40, cores=20, leaf_down_ports=16,
                           leaf_up_ports=20, links_per_leaf_spine=1, pods=2, spines_per_pod=20, leaves_per_pod=20,
                           cores_per_plane=1, spine_up_ports=20, links_per_spine_core=20, rail_optimized=True,
                           leaves_per_rail=3),
        switches=[SwitchGroup(tier="leaf", model="qm8700", count=25, ports_used=384 + 8 + 500),
                  SwitchGroup(tier="spine", model="qm8700", count=40, ports_used=500 + 800),
                  SwitchGroup(tier="core", model="qm8700", count=20, ports_used=800),
                  *mgmt_switches],
        links=[_links("node-leaf", 384, "hdr-aoc-30m", 1, 17, 200),
               _links("storage-unit", 8, "hdr-aoc-30m", 1, 17, 200, network="storage"),
               _links("leaf-spine", 500, "hdr-aoc-100m", 1, 52, 200),
               _links("spine-core", 800, "hdr-aoc-100m", 1, 52, 200),
               *mgmt_links],
        # 48 / 6 = 8 racks of 6 × 6,548 = 39,288 W; 85 qm8700: ceil(85 / 48) = 2 racks, the fullest
        # 48 × 540 = 25,920 W; 7 management switches in a third; 1 × 2,500 W.
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=8, nodes_per_rack=6, power_kw=39.288),
               RackGroup(rack_class="air-45kw", role="network", count=3, nodes_per_rack=0, power_kw=25.92),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=2.5)],
        storage=_storage("pfs-building-block", 1),
        storage_network=StorageNetwork(mode="converged", nic=None, nics_per_node=0, ports_per_node=8, link_gbps=200,
                                       node_gbps=1600, need_gbps=2000, switch=None, tiers=0, leaves=0, spines=0,
                                       compute_storage_leaves=1, unit_ports=8),
        management_network=management,
    )


def two_tier_hgx_odd(nodes: int = 21) -> Design:
    """``nodes`` × hgx-h100 with 8 × cx7-osfp (single-port flat cages) on qm9700 through
    ndr-sr4-kit-50m breakout kits (one twin-port switch module → two NIC modules); ``ceil(nodes /
    32)`` leaves per rail, the fullest holding ``ceil(nodes / leaves per rail)`` nodes (its
    down-ports in use), 32 uplinks (more than the wiring needs: the fabric is for wiring tests).
    Assemblies are stated as ``ceil(links / 2)``, the model's count.

    Storage: one bought dual-port cx7-qsfp112-2x200g per node at 200G on one qm9700 (1 tier, 128
    ports): node ports first, a 4-way splitter kit per storage port of 4 nodes (``2 · ceil(nodes /
    4)``), then the nvme-of-array's 4 ports on a fresh cage (one kit). Management: the nodes and the
    unit 2 ports each, the compute switches and the storage switch one each, every rack's 2 PDUs."""
    leaves_per_rail = math.ceil(nodes / 32)
    leaves = 8 * leaves_per_rail
    spines = 4 * leaves_per_rail  # a spine takes 64 ports: leaves × 32 / spines links
    switches = leaves + spines
    # Compute racks, qm9700 racks, one rack of management switches, one storage rack.
    racks = math.ceil(nodes / 4) + math.ceil((switches + 1) / 34) + 1 + 1
    mgmt_ports = 2 * (nodes + 1) + switches + 1 + 2 * racks
    mgmt_leaves = math.ceil(mgmt_ports / 46)
    management, mgmt_switches, mgmt_links = _management(mgmt_ports, mgmt_leaves, 2 if mgmt_leaves > 1 else 0)
    # 4 nodes of 10,307 W, 34 qm9700 of 1,294 W and 48 management switches of 150 W per rack.
    node_rack_w, switch_rack_w = min(nodes, 4) * 10_307, min(switches + 1, 34) * 1_294
    return _design(
        server="hgx-h100", gpu="h100-sxm", nodes=nodes, gpus=8 * nodes, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=2, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=2, switch="qm9700", leaves=leaves, spines=spines, cores=0,
                           leaf_down_ports=math.ceil(nodes / leaves_per_rail),
                           leaf_up_ports=32, links_per_leaf_spine=32 // spines, pods=1, spines_per_pod=spines,
                           leaves_per_pod=leaves,
                           cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0, rail_optimized=True,
                           leaves_per_rail=leaves_per_rail),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=leaves, ports_used=8 * nodes + 32 * leaves),
                  SwitchGroup(tier="spine", model="qm9700", count=spines, ports_used=32 * leaves),
                  SwitchGroup(network="storage", tier="storage-leaf", model="qm9700", count=1,
                              ports_used=2 * nodes + 4),
                  *mgmt_switches],
        links=[_links("node-leaf", 8 * nodes, "ndr-sr4-kit-50m", 2, 17, 400),
               _links("leaf-spine", 32 * leaves, "ndr-dr4-twin-kit-500m", 2, 52, 400),
               _links("node-storage", 2 * nodes, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200,
                      assemblies=2 * math.ceil(nodes / 4), network="storage"),
               _links("storage-unit", 4, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, network="storage"),
               *mgmt_links],
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=math.ceil(nodes / 4), nodes_per_rack=4,
                         power_kw=node_rack_w / 1000),
               RackGroup(rack_class="air-45kw", role="network", count=math.ceil((switches + 1) / 34) + 1,
                         nodes_per_rack=0, power_kw=switch_rack_w / 1000),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=1.6)],
        storage=_storage("nvme-of-array", 1),
        storage_network=StorageNetwork(mode="dedicated", nic="cx7-qsfp112-2x200g", nics_per_node=1,
                                       ports_per_node=2, link_gbps=200, node_gbps=400, need_gbps=100 * nodes, switch="qm9700", tiers=1,
                                       leaves=1, spines=0, compute_storage_leaves=0, unit_ports=4),
        management_network=management,
    )


def three_tier_16k() -> Design:
    """2,048 × dgx-h100 (16,384 GPUs), 8 rails, qm9700 at 400G (k = 64): 64 leaves per rail =
    512 leaves (32 down / 32 up); pods of 32 leaves → 16 pods × 32 spines = 512; 32 planes of 8
    cores with 4 links per spine–core pair (a core uses 16 × 4 = 64 ports) = 256 cores.
    16,384 links in each of the three classes, all in twin-port kits of 2.

    Storage, 2 tiers of sn5600 at 200G (k = 256: 128 down / 128 up): 2,048 × 4 node ports + 8
    nvme-of-array × 4 = 8,224 ports → 65 leaves (64 full of node ports, the last with the 32 unit
    ports); 64 spines with 2 links per leaf–spine pair (a spine uses 65 × 2 = 130 ports):
    65 × 128 = 8,320 leaf–spine links, one 4-link kit per pair (half used) = 4,160 kits.
    Management: (2,048 nodes + 8 units) × 2 + (1,280 compute + 129 storage switches) × 1 + 562
    racks × 2 PDUs = 6,645 ports → 145 leaves (144 × 46 + 21) and 2 × ceil(145 / 46) = 8
    aggregation switches (153 management switches, 4 racks of them: 562 racks in all)."""
    management, mgmt_switches, mgmt_links = _management(ports=6645, leaves=145, aggregation=8)
    return _design(
        server="dgx-h100", gpu="h100-sxm", nodes=2048, gpus=16384, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=3, oversubscription=1.0, rail_optimized=True,
        fabric=FabricShape(tiers=3, switch="qm9700", leaves=512, spines=512, cores=256, leaf_down_ports=32,
                           leaf_up_ports=32, links_per_leaf_spine=1, pods=16, spines_per_pod=32, leaves_per_pod=32,
                           cores_per_plane=8, spine_up_ports=32, links_per_spine_core=4, rail_optimized=True,
                           leaves_per_rail=64),
        switches=[SwitchGroup(tier="leaf", model="qm9700", count=512, ports_used=32768),
                  SwitchGroup(tier="spine", model="qm9700", count=512, ports_used=32768),
                  SwitchGroup(tier="core", model="qm9700", count=256, ports_used=16384),
                  SwitchGroup(network="storage", tier="storage-leaf", model="sn5600", count=65,
                              ports_used=8224 + 8320),
                  SwitchGroup(network="storage", tier="storage-spine", model="sn5600", count=64, ports_used=8320),
                  *mgmt_switches],
        links=[_links("node-leaf", 16384, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
               _links("leaf-spine", 16384, "ndr-dr4-twin-kit-500m", 2, 52, 400),
               _links("spine-core", 16384, "ndr-dr4-twin-kit-500m", 2, 52, 400),
               _links("node-storage", 8192, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, network="storage"),
               _links("storage-unit", 32, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, network="storage"),
               # Kits by the cages filled: 64 spines × ceil(65 leaves × 2 / 4) = 2,112 above,
               # 65 leaves × ceil(128 / 4) = 2,080 below.
               _links("storage-leaf-spine", 8320, "ndr200-dr4-twin-kit-500m", 4, 52, 200, assemblies=2112,
                      network="storage"),
               *mgmt_links],
        # 2,048 / 4 = 512 racks of 4 × 10,288 = 41,152 W. Network racks: 1,280 qm9700 / 34 per rack
        # -> 38 (the fullest 34 × 1,294 = 43,996 W); 129 sn5600 / 19 -> 7; 153 management switches
        # / 48 -> 4; 49 in all. 8 × 1,600 W = 12,800 W of storage in one rack (24 fit by U).
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=512, nodes_per_rack=4, power_kw=41.152),
               RackGroup(rack_class="air-45kw", role="network", count=49, nodes_per_rack=0, power_kw=43.996),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=12.8)],
        storage=_storage("nvme-of-array", 8),
        storage_network=_dgx_storage_network(2048, "sn5600", tiers=2, leaves=65, spines=64, unit_ports=32,
                                             need_gbps=2560),
        management_network=management,
    )


def one_tier_converged() -> Design:
    """2 × dgx-a100-80gb on one qm8700 (40 × 200G): 16 node ports, then the pfs-building-block's 8
    ports on the same switch (converged storage network, no storage leaves): 24 ports in use.
    Management: (2 nodes + 1 unit) × 2 + 1 switch × 1 + 4 racks × 2 PDUs = 15 ports on one leaf.
    Racks: 2 × 6,548 W nodes in one; the qm8700 (540 W) and the management leaf (150 W) in a rack
    each (racks hold one switch model); the unit in a storage rack."""
    management, mgmt_switches, mgmt_links = _management(ports=15, leaves=1, aggregation=0)
    return _design(
        server="dgx-a100-80gb", gpu="a100-80gb-sxm", nodes=2, gpus=16, interconnect="ib-hdr", nic="cx6-hdr",
        nics_per_node=8, link_gbps=200, tiers=1, oversubscription=1.0, rail_optimized=False,
        fabric=FabricShape(tiers=1, switch="qm8700", leaves=1, spines=0, cores=0, leaf_down_ports=16,
                           leaf_up_ports=0, links_per_leaf_spine=0, pods=1, spines_per_pod=0, leaves_per_pod=1,
                           cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0, rail_optimized=False,
                           leaves_per_rail=1, rails_per_leaf=8),
        switches=[SwitchGroup(tier="leaf", model="qm8700", count=1, ports_used=24), *mgmt_switches],
        links=[_links("node-leaf", 16, "hdr-aoc-30m", 1, 17, 200),
               _links("storage-unit", 8, "hdr-aoc-30m", 1, 17, 200, network="storage"),
               *mgmt_links],
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=1, nodes_per_rack=6, power_kw=13.096),
               RackGroup(rack_class="air-45kw", role="network", count=2, nodes_per_rack=0, power_kw=0.54),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0, power_kw=2.5)],
        storage=_storage("pfs-building-block", 1),
        storage_network=StorageNetwork(mode="converged", nic=None, nics_per_node=0, ports_per_node=8, link_gbps=200,
                                       node_gbps=1600, need_gbps=800, switch=None, tiers=0, leaves=0, spines=0,
                                       compute_storage_leaves=0, unit_ports=8),
        management_network=management,
    )


# ---------------------------------------------------------------------------------------------
# The widened fabric space (schema 1.5): 16 × dgx-h100 (8 NDR rails at 400G) on qm9700 (k = 64:
# 32 twin-port cages), four ways. A node link is one port of a twin-port kit at the leaf:
# node–leaf assemblies = rails · ceil(16 / 2) = 64 (at g ≥ 2 a leaf cage holds two rails of one
# node, still 64). Storage (dedicated): the 2 built-in cx7-qsfp112-2x200g of each node = 4 × 200G
# ports on one qm9700 at 200G (k = 128): 64 node ports (4 × ceil(16 / 4) = 16 splitter kits) + the
# nvme-of-array's 4 (1 kit) = 68. Racks: 4 nodes of 10,288 W per rack -> 4 compute racks.


def _dgx16(fabric: FabricShape, compute: list[SwitchGroup], compute_links: list[LinkGroup], *, oversubscription=1.0,
           converged: bool = False) -> Design:
    """16 × dgx-h100 on ``fabric`` with a dedicated 1-tier storage network (or, ``converged``,
    2 nvme-of-array-400g units on the spines' free ports: ``compute`` and ``compute_links`` carry
    them) and the management network of every device."""
    switches = sum(g.count for g in compute)
    if converged:
        units = 2
        storage_switches, storage_links = [], []
        storage_network = StorageNetwork(mode="converged", nic=None, nics_per_node=0, ports_per_node=8, link_gbps=400,
                                         node_gbps=3200, need_gbps=1600, switch=None, tiers=0, leaves=0, spines=0,
                                         compute_storage_leaves=0, converged_attach="top", unit_ports=8)
        storage = _storage("nvme-of-array-400g", units)
    else:
        units = 1
        storage_switches = [SwitchGroup(network="storage", tier="storage-leaf", model="qm9700", count=1, ports_used=68)]
        storage_links = [_links("node-storage", 64, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, assemblies=16,
                                network="storage"),
                         _links("storage-unit", 4, "ndr200-dr4-splitter-kit-qsfp112-50m", 4, 17, 200, network="storage")]
        storage_network = _dgx_storage_network(16, "qm9700", tiers=1, leaves=1, spines=0, unit_ports=4, need_gbps=1600)
        storage = _storage("nvme-of-array", 1)
    # A switch has one management port; the 7 racks (4 compute, 2 network, 1 storage) 2 PDUs each.
    mgmt_ports = 2 * (16 + units) + switches + len(storage_switches) + 2 * 7
    mgmt_leaves = math.ceil(mgmt_ports / 46)
    management, mgmt_switches, mgmt_links = _management(mgmt_ports, mgmt_leaves, 2 if mgmt_leaves > 1 else 0)
    qm9700 = switches + len(storage_switches)
    # Converged: no storage-NIC cage power, 10,200 + 4 × 17 = 10,268 W, still 4 per rack.
    node_w = 10_268 if converged else 10_288
    return _design(
        server="dgx-h100", gpu="h100-sxm", nodes=16, gpus=128, interconnect="ib-ndr", nic="cx7-osfp",
        nics_per_node=8, link_gbps=400, tiers=fabric.tiers, oversubscription=oversubscription,
        rail_optimized=fabric.rail_optimized, fabric=fabric,
        switches=[*compute, *storage_switches, *mgmt_switches],
        links=[*compute_links, *storage_links, *mgmt_links],
        racks=[RackGroup(rack_class="air-45kw", role="compute", count=4, nodes_per_rack=4, power_kw=4 * node_w / 1000),
               RackGroup(rack_class="air-45kw", role="network", count=2, nodes_per_rack=0, power_kw=qm9700 * 1.294),
               RackGroup(rack_class="air-45kw", role="storage", count=1, nodes_per_rack=0,
                         power_kw=units * (1.7 if converged else 1.6))],
        storage=storage,
        storage_network=storage_network,
        management_network=management,
    )


def _shape(**fields) -> FabricShape:
    defaults = dict(switch="qm9700", spines=0, cores=0, leaf_up_ports=0, links_per_leaf_spine=0, pods=1,
                    spines_per_pod=0, cores_per_plane=0, spine_up_ports=0, links_per_spine_core=0)
    return FabricShape(**{**defaults, **fields})


def _two_tier_8_leaves(spines: int, up: int, links_per_pair: int, assemblies: int | None = None) -> Design:
    """16 × dgx-h100, rail-optimized (1 leaf per rail): 8 qm9700 leaves of 16 down-ports in use
    and ``up`` uplinks, ``links_per_pair`` to each of ``spines`` spines; 128 node links (64 kits)
    and ``8 · up`` leaf–spine links on twin kits (``assemblies`` of them, else one per 2 links)."""
    fabric = _shape(tiers=2, leaves=8, spines=spines, leaf_down_ports=16, leaf_up_ports=up,
                    links_per_leaf_spine=links_per_pair, spines_per_pod=spines, leaves_per_pod=8, rail_optimized=True,
                    leaves_per_rail=1, rails_per_leaf=1)
    return _dgx16(fabric, [SwitchGroup(tier="leaf", model="qm9700", count=8, ports_used=128 + 8 * up),
                           SwitchGroup(tier="spine", model="qm9700", count=spines, ports_used=8 * up)],
                  [_links("node-leaf", 128, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
                   _links("leaf-spine", 8 * up, "ndr-dr4-twin-kit-500m", 2, 52, 400, assemblies=assemblies)])


def two_tier_16_dgx() -> Design:
    """The non-blocking 16 × dgx-h100 of docs/model.md: rail-optimized (g = 1), 1 leaf per rail =
    8 leaves of 16 down-ports in use and u = 16 uplinks, 2 spines with L = 8 links per leaf–spine
    pair (a spine's 64 ports full): 128 node links (64 kits), 128 leaf–spine links (64 twin kits:
    2 spines × 32 cages = 8 leaves × 8 cages). Management: (16 nodes + 1 unit) × 2 + 11 switches
    + 7 racks × 2 PDUs = 59 ports -> 2 leaves and an aggregation pair."""
    return _two_tier_8_leaves(spines=2, up=16, links_per_pair=8)


def two_tier_4_rails_per_leaf() -> Design:
    """16 × dgx-h100 with 4 rails per leaf (g = 4): 2 rail groups (rails 1–4, 5–8) × 2 leaves
    (8 nodes each: 32 down-ports in use), u = 32 = 4 spines × 8 links (1:1; x·(u − S + 1) = 58 ≤
    g·n = 64); a spine uses 4 × 8 = 32 ports. 128 node links (a leaf cage takes two rails of one
    node: 64 kits), 128 leaf–spine links (64 kits)."""
    fabric = _shape(tiers=2, leaves=4, spines=4, leaf_down_ports=32, leaf_up_ports=32, links_per_leaf_spine=8,
                    spines_per_pod=4, leaves_per_pod=4, rail_optimized=True, leaves_per_rail=2, rails_per_leaf=4)
    return _dgx16(fabric, [SwitchGroup(tier="leaf", model="qm9700", count=4, ports_used=128 + 128),
                           SwitchGroup(tier="spine", model="qm9700", count=4, ports_used=128)],
                  [_links("node-leaf", 128, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
                   _links("leaf-spine", 128, "ndr-dr4-twin-kit-500m", 2, 52, 400)])


def rail_only_16_dgx() -> Design:
    """16 × dgx-h100 rail-only (1 tier, g = 4): one qm9700 per rail group, each taking rails 1–4
    (or 5–8) of every node: 16 × 4 = 64 ports, full; no link between the two. 128 node links,
    64 kits. Management: (16 nodes + 1 unit) × 2 + 3 switches + 7 racks × 2 PDUs = 51 ports -> 2
    leaves and an aggregation pair."""
    fabric = _shape(tiers=1, leaves=2, leaf_down_ports=64, leaves_per_pod=2, rail_optimized=False, leaves_per_rail=1,
                    rails_per_leaf=4, rail_only=True)
    return _dgx16(fabric, [SwitchGroup(tier="leaf", model="qm9700", count=2, ports_used=128)],
                  [_links("node-leaf", 128, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400)])


def converged_on_spines_16_dgx() -> Design:
    """16 × dgx-h100, rail-optimized, 8 leaves of 16 down / 16 up, 4 spines × L = 4 (a spine uses
    8 × 4 = 32 ports, 32 free; x·(u − S + 1) = 13 ≤ 16), and a converged storage network whose 2
    nvme-of-array-400g units (4 × 400G QSFP112 each, 8 ports) sit on the spines' free ports
    (``converged_attach = top``: U + leaves·u = 8 + 128 ≤ S·k = 256): one 2-link twin-to-QSFP112
    kit per 2 unit ports, 2 per unit = 4 kits, one per spine. Management: (16 nodes + 2 units) × 2
    + 12 switches + 7 racks × 2 PDUs = 62 ports -> 2 leaves and an aggregation pair."""
    fabric = _shape(tiers=2, leaves=8, spines=4, leaf_down_ports=16, leaf_up_ports=16, links_per_leaf_spine=4,
                    spines_per_pod=4, leaves_per_pod=8, rail_optimized=True, leaves_per_rail=1, rails_per_leaf=1)
    return _dgx16(fabric, [SwitchGroup(tier="leaf", model="qm9700", count=8, ports_used=128 + 128),
                           SwitchGroup(tier="spine", model="qm9700", count=4, ports_used=128 + 8)],
                  [_links("node-leaf", 128, "ndr-sr4-twin-to-twin-flat-kit-50m", 2, 17, 400),
                   _links("storage-unit", 8, "ndr-qsfp112-sr4-kit-50m", 2, 17, 400, network="storage"),
                   _links("leaf-spine", 128, "ndr-dr4-twin-kit-500m", 2, 52, 400)],
                  converged=True)


def near_balanced_16_dgx() -> Design:
    """16 × dgx-h100, rail-optimized, 8 leaves of 16 down / 16 up over 10 spines, which 16 does not
    divide: near-balanced, every leaf 2 links to 6 spines and 1 to 4 (x·(u − S + 1) = 7 ≤ 16).
    The 128 leaf–spine links are dealt round-robin: 128 = 10 × 12 + 8, so 8 spines carry 13 links
    (7 twin-port cages) and 2 carry 12 (6 cages): 8 × 7 + 2 × 6 = 68 spine cages against 8 leaves ×
    8 = 64 leaf cages, so 68 twin kits of one cage per end (not 128 / 2 = 64)."""
    return _two_tier_8_leaves(spines=10, up=16, links_per_pair=1, assemblies=68)


def odd_uplinks_16_dgx() -> Design:
    """16 × dgx-h100, rail-optimized, 8 leaves of 16 down / 15 up, each reaching 5 spines with 3
    links (15:16 oversubscribed). A leaf's 15 uplinks fill 8 twin cages, its 8th half; a spine's
    24 links 12 cages. Spine j takes a leaf's uplinks 3j..3j+2, so of the leaf's uplink cages
    (uplinks 0+1, 2+3, …, 14) the 2nd and the 5th (2+3: spines 0 and 1; 8+9: spines 2 and 3)
    carry links of two spines. Twin kits by the cages filled: max(5 × 12, 8 × 8) = 64 for 120
    links, one a leaf cage, 16 of them (2 a leaf) reaching two spines."""
    return _two_tier_8_leaves(spines=5, up=15, links_per_pair=3, assemblies=64)


WIDENED = [two_tier_16_dgx, two_tier_4_rails_per_leaf, rail_only_16_dgx, converged_on_spines_16_dgx,
           near_balanced_16_dgx]
"""The designs of the widened fabric space (rail groups, rail-only, sized uplinks, storage on top)."""


def result_for(design: Design) -> SolveResult:
    """A SolveResult whose cost lines price the design's counts from the built-in USD book (and
    :data:`TEST_PRICES` for the test items)."""
    book = next(b for b in _BUILTIN.price_books if b.id == PRICE_BOOK)
    prices = dict(book.prices)
    prices.update({item: Price(price=price, provenance="estimate", source=TEST_SOURCE)
                   for item, price in TEST_PRICES.items()})
    servers = CATALOG.by_id("servers")
    quantities = [("server", design.server, design.nodes)]
    # NICs are bought for servers without built-in ones, and only when there is a fabric to attach.
    if servers[design.server].builtin_compute_nics is None and design.tiers > 0:
        quantities.append(("nic", design.nic, design.nodes * design.nics_per_node))
    sn = design.storage_network
    builtin_storage = servers[design.server].builtin_storage_nics
    if sn.nic is not None and not (builtin_storage is not None and builtin_storage.nic == sn.nic):
        quantities.append(("nic", sn.nic, design.nodes * sn.nics_per_node))
    for model in dict.fromkeys(g.model for g in design.switches):
        quantities.append(("switch", model, sum(g.count for g in design.switches if g.model == model)))
    for part in dict.fromkeys(g.part for g in design.links):
        quantities.append(("cable", part, sum(g.assemblies for g in design.links if g.part == part)))
    quantities += [("rack", design.racks[0].rack_class, sum(g.count for g in design.racks)),
                   ("storage", design.storage.tier, design.storage.units)]
    if design.cold_storage is not None:
        quantities.append(("storage", design.cold_storage.tier, design.cold_storage.units))
    lines = []
    for category, item, quantity in quantities:
        unit = round(prices[item].price)
        lines.append(CostLine.priced(category, item, quantity, unit, prices[item], book.id))
    cost = Cost(basis=book.basis, currency=book.currency, total=sum(line.total for line in lines), breakdown=lines)
    return SolveResult(status="optimal", objective=ObjectiveValue(kind="min_cost", value=cost.total, bound=cost.total,
                                                                  gap=0.0),
                       design=design, cost=cost)
